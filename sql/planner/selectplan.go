package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

func (p *Planner) planSelect(s *parser.Select) (*Rel, error) {
	if s.From == nil {
		return p.planSelectNoFrom(s)
	}
	defer p.withNeeds(s)()
	in, err := p.planFromWhere(s)
	if err != nil {
		return nil, err
	}
	overs, err := collectOverCalls(s)
	if err != nil {
		return nil, err
	}
	if len(overs) > 0 {
		return p.planOver(s, in, overs)
	}
	aggs := collectAggregates(s)
	if len(s.GroupBy) > 0 || len(aggs) > 0 {
		out, err := p.planAggregate(s, in, aggs)
		if err != nil || !s.Distinct {
			return out, err
		}
		return p.distinct(out) // SELECT DISTINCT of the aggregated rows
	}
	if err := p.checkNoTVF(in, s); err != nil {
		return nil, err
	}
	resolve := in.common
	if itemsHaveSubquery(s.Items) {
		sc := scalarCols{}
		if in, err = p.planItemSubqueries(in, s.Items, sc); err != nil {
			return nil, err
		}
		resolve = sc.resolve(in, resolve) // the join appends: in's columns keep their places
	}
	out, err := p.project(in, s.Items, resolve)
	if err != nil || !s.Distinct {
		return out, err
	}
	return p.distinct(out)
}

// planSelectNoFrom plans SELECT exprs [WHERE cond] without FROM as Flink
// does: one row of VALUES (Calcite reads it from a one-row Values and
// reduces the projection into it), filtered by the WHERE. The columns are
// named by their aliases, else EXPR$0, EXPR$1, ….
func (p *Planner) planSelectNoFrom(s *parser.Select) (*Rel, error) {
	if len(s.GroupBy) > 0 || s.Having != nil || len(collectAggregates(s)) > 0 {
		// Calcite's FROM is then a one-row Values, aggregated as any input.
		one := &parser.Values{Pos: s.Pos, Rows: [][]parser.Expr{{&parser.NumberLit{Pos: s.Pos, Text: "0", Kind: parser.Integer}}}}
		from := *s
		from.From = &parser.DerivedTable{Pos: s.Pos, Query: &parser.Query{Pos: s.Pos, Body: one}, Alias: "$values", Columns: []string{"$zero"}}
		return p.planSelect(&from)
	}
	row := make([]parser.Expr, len(s.Items))
	for i, it := range s.Items {
		if _, ok := it.Expr.(*parser.Star); ok {
			return nil, &Error{Pos: it.Pos, Msg: "SELECT * without FROM has no columns to select",
				Hint: "name the values, or add a FROM clause"}
		}
		row[i] = it.Expr
	}
	r, err := p.planValues(&parser.Values{Pos: s.Pos, Rows: [][]parser.Expr{row}})
	if err != nil {
		return nil, err
	}
	if s.Where != nil { // before the aliases: WHERE cannot see them, as in Flink
		if r, err = p.filter(r, s.Where, nil); err != nil {
			return nil, err
		}
	}
	r.Cols = slices.Clone(r.Cols)
	for i, it := range s.Items {
		if it.Alias != "" {
			r.Cols[i].Name = it.Alias
		}
	}
	return r, nil
}

// planFromWhere plans FROM and WHERE; a Top-N or deduplication subquery
// (ROW_NUMBER … WHERE rn <= N) becomes a rank operator here.
func (p *Planner) planFromWhere(s *parser.Select) (*Rel, error) {
	if rp, ok := findRankPattern(s); ok {
		return p.planRank(s, rp)
	}
	if s.Where != nil && hasSubquery(s.Where) {
		return p.planWhereSubqueries(s)
	}
	if len(s.GroupBy) == 0 && len(collectAggregates(s)) == 0 {
		if r, err := p.planHoisted(s); r != nil || err != nil {
			return r, err
		}
	}
	return p.planSourceWhere(s.From, s.Where)
}

// readsInputOnly reports whether cond reads only columns of in (a window
// TVF's input, not the window columns the TVF adds).
func (p *Planner) readsInputOnly(cond parser.Expr, in *Rel) bool {
	_, err := expr.Compile(cond, p.scope(in.Cols))
	return err == nil
}

// filter keeps rows whose condition is TRUE.
func (p *Planner) filter(in *Rel, cond parser.Expr, resolve func(parser.Expr) (*expr.Compiled, error)) (*Rel, error) {
	if in.tvf != nil && resolve == nil && p.readsInputOnly(cond, in.tvf.input) {
		// Filter below the window TVF, so a window aggregation still sees
		// it. A condition on the window columns filters the TVF's rows,
		// which still carry their windows (Rel.win): a window aggregation
		// over them reads each row's window (attachedWindow).
		f, err := p.filter(in.tvf.input, cond, nil)
		if err != nil {
			return nil, err
		}
		f.RowTime = in.tvf.input.RowTime
		t := *in.tvf
		t.input = f
		return p.tvfRel(&t, in.Cols[len(in.Cols)-1].Qualifier), nil
	}
	sc := p.scope(in.Cols)
	sc.Resolve = resolve
	c, err := expr.Compile(cond, sc)
	if err != nil {
		return nil, err
	}
	if c.Type.Kind != types.Boolean && c.Type.Kind != types.Null {
		return nil, errAt(cond.Position(), "the condition %s is %s, not BOOLEAN", parser.Format(cond), c.Type)
	}
	pred := func(row []any) (bool, error) {
		v, err := c.Eval(row)
		return expr.IsTrue(v), err
	}
	r := &Rel{Op: "Calc", Detail: "where=[" + parser.Format(cond) + "]", Inputs: []*Rel{in}, Cols: in.Cols, RowTime: in.RowTime,
		win: in.win, upsertKey: in.upsertKey, uniqueKey: in.uniqueKey, hashedBy: in.hashedBy}
	r.withMode(in)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.calc("Calc", ins[0], &exec.Calc{Filter: pred}), nil
	}
	return r, nil
}

// project computes the SELECT list.
func (p *Planner) project(in *Rel, items []*parser.SelectItem, resolve func(parser.Expr) (*expr.Compiled, error)) (*Rel, error) {
	sc := p.scope(in.Cols)
	sc.Resolve = resolve
	var evals []*expr.Compiled
	var cols []expr.Column
	var from []int // the input column each output column copies, or -1
	rowtime := -1
	for i, it := range items {
		if st, ok := it.Expr.(*parser.Star); ok {
			if err := starOverUsing(in, st); err != nil {
				return nil, err
			}
			for j, c := range in.Cols {
				if strings.HasPrefix(c.Name, "$") {
					continue // a column the plan added (rank number, hidden count): not the query's
				}
				if len(st.Qualifier) == 0 || st.Qualifier[len(st.Qualifier)-1] == c.Qualifier {
					if j == in.RowTime {
						rowtime = len(cols)
					}
					evals = append(evals, fieldRef(j, c.Type))
					cols = append(cols, expr.Column{Name: c.Name, Type: c.Type})
					from = append(from, j)
				}
			}
			continue
		}
		c, err := expr.Compile(it.Expr, sc)
		if err != nil {
			return nil, err
		}
		name := itemName(it, i)
		idx := identIndex(in, it.Expr)
		if resolve != nil && idx >= 0 {
			if r, _ := resolve(it.Expr); r != nil {
				idx = -1 // resolved to something else (an aggregate's window column)
			}
		}
		from = append(from, idx)
		if (idx >= 0 && idx == in.RowTime) || (rowtime < 0 && isGroupWindowRowtime(it.Expr, c)) {
			rowtime = len(cols)
		} else if c.Type.TimeAttr != "proctime" {
			c.Type.TimeAttr = "" // a rowtime stays one only where it is read as is
		}
		evals = append(evals, c)
		cols = append(cols, expr.Column{Name: name, Type: c.Type})
	}
	return projectRel(in, evals, cols, from, rowtime), nil
}

// projectRel is a Calc projecting in through evals into cols, whose
// column i copies input column from[i] (-1: computed), with the rowtime at
// rowtime (-1: none): the window columns and keys that pass through keep
// their meaning.
func projectRel(in *Rel, evals []*expr.Compiled, cols []expr.Column, from []int, rowtime int) *Rel {
	r := &Rel{Op: "Calc", Detail: "select=[" + colNames(cols) + "]", Inputs: []*Rel{in}, Cols: cols, RowTime: rowtime,
		win: in.win.through(from), upsertKey: keyThrough(in.upsertKey, from),
		uniqueKey: keyThrough(in.uniqueKey, from), hashedBy: keyThrough(in.hashedBy, from)}
	r.withMode(in)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.project("Calc", ins[0], evals), nil
	}
	return r
}

// itemName is an output column's name: its alias, the column it reads, or
// EXPR$i as Flink names unnamed expressions.
func itemName(it *parser.SelectItem, i int) string {
	if it.Alias != "" {
		return it.Alias
	}
	switch e := it.Expr.(type) {
	case *parser.Ident:
		return e.Parts[len(e.Parts)-1]
	case *parser.FieldAccess:
		return e.Field
	}
	return fmt.Sprintf("EXPR$%d", i)
}

// identIndex returns the column e names directly, or -1.
func identIndex(in *Rel, e parser.Expr) int {
	id, ok := e.(*parser.Ident)
	if !ok {
		return -1
	}
	name := id.Parts[len(id.Parts)-1]
	for i, c := range in.Cols {
		if c.Name == name && ((len(id.Parts) == 1 && !c.Shadowed) || (len(id.Parts) > 1 && id.Parts[len(id.Parts)-2] == c.Qualifier)) {
			return i
		}
	}
	return -1
}

// distinct is SELECT DISTINCT: a group aggregation on every column.
func (p *Planner) distinct(in *Rel) (*Rel, error) {
	keys := make([]int, len(in.Cols))
	for i := range keys {
		keys[i] = i
	}
	// A group aggregate without calls, as Flink plans DISTINCT: its row is
	// the keys alone, so a duplicate leaves it unchanged and nothing is
	// emitted — unless a state TTL is set, when the unchanged row is sent
	// again as -U/+U (see groupAgg). The aggregate still counts the
	// group's rows, to retract it when the last one is retracted.
	agg, err := p.groupAgg(in, keys, nil, append([]expr.Column(nil), in.Cols...))
	if err != nil {
		return nil, err
	}
	agg.Detail = "distinct=[" + colNames(in.Cols) + "]"
	if local := agg.Inputs[0]; local.Op == localAggOp {
		local.Detail = agg.Detail
	}
	return agg, nil
}

// calcOver projects in through evals into cols.
func (p *Planner) calcOver(in *Rel, evals []*expr.Compiled, cols []expr.Column) *Rel {
	r := &Rel{Op: "Calc", Detail: "select=[" + colNames(cols) + "]", Inputs: []*Rel{in}, Cols: cols, RowTime: -1}
	r.withMode(in)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.project("Calc", ins[0], evals), nil
	}
	return r
}

// starOverUsing refuses an unqualified * over a JOIN … USING: the SQL
// standard lists each USING column once, first, and Weir does not expand
// it so yet. A qualified t.* lists t's columns, USING ones included.
func starOverUsing(in *Rel, st *parser.Star) error {
	if len(st.Qualifier) > 0 {
		return nil
	}
	for _, c := range in.Cols {
		if c.Shadowed {
			return &Error{Pos: st.Pos, Msg: "SELECT * over JOIN … USING is not supported yet",
				Hint: fmt.Sprintf("list the columns, or select l.*, r.* (both copies of %s)", c.Name)}
		}
	}
	return nil
}

// isGroupWindowRowtime reports a legacy group window's TUMBLE_ROWTIME,
// HOP_ROWTIME or SESSION_ROWTIME, read from the window aggregation: a
// rowtime attribute of the result, as in Flink (a MATCH_RECOGNIZE or a
// window over the aggregation can order by it).
func isGroupWindowRowtime(e parser.Expr, c *expr.Compiled) bool {
	f, ok := e.(*parser.FuncCall)
	return ok && c.Type.TimeAttr == "rowtime" && (f.Name == "TUMBLE_ROWTIME" || f.Name == "HOP_ROWTIME" || f.Name == "SESSION_ROWTIME")
}
