package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// temporalJoin plans `l [LEFT] JOIN v FOR SYSTEM_TIME AS OF l.rowtime ON …`,
// Flink's event-time temporal join: v is a versioned table — a table or
// view with a primary key (a declared PRIMARY KEY, a deduplication's
// partition keys) and an event-time attribute — and each row of l joins
// the version of v valid at its time (exec.TemporalJoin). The equalities
// between columns of the two sides are the join key and must include v's
// primary key; the rest of ON, and for an inner join the WHERE conjuncts
// that read v, filter the joined rows (not v's versions: a filtered-out
// version still ends the one before it). WHERE conjuncts that read l
// alone filter l first.
func (p *Planner) temporalJoin(j *parser.Join, l *Rel, tn *parser.TableName, where []parser.Expr) (*Rel, []parser.Expr, error) {
	if j.Kind != parser.InnerJoin && j.Kind != parser.LeftJoin {
		return nil, nil, errAt(j.Pos, "Temporal table join currently only supports INNER JOIN and LEFT JOIN, but was %s", j.Kind)
	}
	lt := identIndex(l, tn.ForSystemTime)
	plain := *tn
	plain.ForSystemTime = nil
	r, err := p.planTableName(&plain)
	if err != nil {
		return nil, nil, err
	}
	rt, err := versionedTable(tn, r)
	if err != nil {
		return nil, nil, err
	}
	conds, rest, leftOnly := asOfConds(j, l, r, where)
	if l, err = p.filterAll(l, leftOnly); err != nil {
		return nil, nil, err
	}
	opts := exec.TemporalJoinOptions{Type: exec.InnerJoin, LeftTime: lt, RightTime: rt, LeftArity: len(l.Cols), RightArity: len(r.Cols)}
	if j.Kind == parser.LeftJoin {
		opts.Type = exec.LeftJoin
	}
	var other []parser.Expr
	for _, c := range conds {
		if li, ri, ok := equiPair(l, r, c); ok {
			opts.LeftKeys, opts.RightKeys = append(opts.LeftKeys, li), append(opts.RightKeys, ri)
			continue
		}
		other = append(other, c)
	}
	if err := checkVersionKey(j, tn, r, opts.RightKeys); err != nil {
		return nil, nil, err
	}
	cols := append(append([]expr.Column(nil), l.Cols...), r.Cols...)
	if opts.Condition, err = p.joinCondition(other, cols, len(l.Cols)); err != nil {
		return nil, nil, err
	}
	if _, err := exec.NewTemporalJoin(opts); err != nil {
		return nil, nil, err
	}
	for i := len(l.Cols); i < len(cols); i++ {
		cols[i].Type.TimeAttr = "" // the versioned side's time is a plain timestamp after the join
	}
	out := &Rel{Op: "TemporalJoin", Detail: fmt.Sprintf("joinType=[%s], where=[%s], asOf=[%s]", j.Kind, formatOn(j.On), parser.Format(tn.ForSystemTime)),
		Inputs: []*Rel{l, r}, Cols: cols, RowTime: l.RowTime}
	out.withMode(l)
	lk, rk := exec.FieldKeyOf(opts.LeftKeys...), exec.FieldKeyOf(opts.RightKeys...)
	out.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.keyedTwoInput("TemporalJoin", opOf(exec.NewTemporalJoin, opts), lk, rk, ins)
	}
	return out, rest, nil
}

func formatOn(on parser.Expr) string {
	if on == nil {
		return ""
	}
	return parser.Format(on)
}

// asOfConds sorts the ON and WHERE of a join FOR SYSTEM_TIME AS OF (a
// temporal or a lookup join): conds join (ON, and for an inner join the
// WHERE conjuncts that read the right side), leftOnly filter the left
// side first (inner join only), rest filter the join's output.
func asOfConds(j *parser.Join, l, r *Rel, where []parser.Expr) (conds, rest, leftOnly []parser.Expr) {
	if j.On != nil {
		conds = conjuncts(j.On)
	}
	for _, c := range where {
		switch side := sideOf(l, r, c); {
		case j.Kind == parser.InnerJoin && side == sideLeft:
			leftOnly = append(leftOnly, c)
		case j.Kind == parser.InnerJoin && side&sideRight != 0 && side != sideUnknown:
			conds = append(conds, c)
		default:
			rest = append(rest, c)
		}
	}
	return conds, rest, leftOnly
}

// versionedTable checks that r, the table or view after FOR SYSTEM_TIME
// AS OF, is versioned, and returns its event-time column.
func versionedTable(tn *parser.TableName, r *Rel) (int, error) {
	if len(r.uniqueKey) == 0 {
		return 0, &Error{Pos: tn.Pos, Msg: fmt.Sprintf("Temporal Table Join requires primary key in versioned table, but no primary key can be found for %s", formatName(tn.Name)),
			Hint: "declare PRIMARY KEY (…) NOT ENFORCED on the table, or join a view that keeps the last row per key (ROW_NUMBER() OVER (PARTITION BY key ORDER BY rowtime DESC) = 1)"}
	}
	rt := r.RowTime
	if rt < 0 {
		rt = slices.IndexFunc(r.Cols, func(c expr.Column) bool { return c.Type.TimeAttr == "rowtime" })
	}
	if rt < 0 {
		return 0, &Error{Pos: tn.Pos, Msg: fmt.Sprintf("Event-Time Temporal Table Join requires both primary key and row time attribute in versioned table, "+
			"but no row time attribute can be found for %s", formatName(tn.Name)),
			Hint: "give the table a WATERMARK FOR its time column"}
	}
	return rt, nil
}

// checkVersionKey refuses a join whose equalities do not cover the
// versioned table's primary key: a key would have more than one version
// at a time.
func checkVersionKey(j *parser.Join, tn *parser.TableName, r *Rel, rkeys []int) error {
	for _, k := range r.uniqueKey {
		if !slices.Contains(rkeys, k) {
			names := make([]string, len(r.uniqueKey))
			for i, c := range r.uniqueKey {
				names[i] = r.Cols[c].Name
			}
			pos := j.Pos
			if j.On != nil {
				pos = j.On.Position()
			}
			return &Error{Pos: pos, Msg: fmt.Sprintf("Temporal table's primary key [%s] must be included in the equivalence condition of temporal join, "+
				"but current temporal join condition is [%s]", strings.Join(names, ", "), formatOn(j.On)),
				Hint: fmt.Sprintf("join ON an equality with each primary key column of %s", formatName(tn.Name))}
		}
	}
	return nil
}
