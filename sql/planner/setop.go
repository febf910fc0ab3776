package planner

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// planSetOp plans UNION ALL, and UNION as UNION ALL + DISTINCT (Calcite's
// UnionToDistinctRule, which Flink's streaming planner applies too).
//
// Each output column has the least restrictive type of the two inputs'
// columns at its position (Calcite's SqlValidator derives a set
// operation's row type with leastRestrictive, under FlinkTypeSystem):
// INT and BIGINT give BIGINT, DECIMAL(5, 2) and INT give DECIMAL(12, 2),
// CHAR(1) and CHAR(3) give VARCHAR(3); it is nullable when either side
// is. An input whose column has another type goes through a Calc that
// casts it, as Calcite's type coercion inserts CASTs under a set
// operation, so every row leaving the union carries values of the
// declared types (an INT side's numbers become decimals in a DECIMAL
// column, a DECIMAL(5, 2) side's values are rescaled to the wider scale).
func (p *Planner) planSetOp(s *parser.SetOp) (*Rel, error) {
	l, r, cols, err := p.setOpInputs(s)
	if err != nil {
		return nil, err
	}
	if s.Op != parser.Union {
		return p.intersectExcept(s, l, r, cols)
	}
	u := unionRel(l, r, cols)
	if s.All {
		return u, nil
	}
	return p.distinct(u)
}

// setOpInputs plans both inputs of a set operation and casts them to
// the columns of its result.
func (p *Planner) setOpInputs(s *parser.SetOp) (l, r *Rel, cols []expr.Column, err error) {
	if l, err = p.planBody(s.Left); err != nil {
		return nil, nil, nil, err
	}
	if r, err = p.planBody(s.Right); err != nil {
		return nil, nil, nil, err
	}
	if cols, err = unionColumns(s, l, r); err != nil {
		return nil, nil, nil, err
	}
	if l, err = p.castInput(l, cols); err != nil {
		return nil, nil, nil, err
	}
	if r, err = p.castInput(r, cols); err != nil {
		return nil, nil, nil, err
	}
	for i := range cols {
		// A cast that may overflow (to a DECIMAL capped at 38 digits) gives NULL.
		cols[i].Type.Nullable = l.Cols[i].Type.Nullable || r.Cols[i].Type.Nullable
	}
	return l, r, cols, nil
}

// unionColumns derives a union's columns: the left input's names, and per
// position the least restrictive type of both inputs. Two types with no
// common one (INT and STRING) fail as Calcite's "Type mismatch in column
// n of UNION", naming both.
func unionColumns(s *parser.SetOp, l, r *Rel) ([]expr.Column, error) {
	op := setOpName(s)
	if len(l.Cols) != len(r.Cols) {
		return nil, &Error{Pos: s.Pos, Msg: fmt.Sprintf("column count mismatch in %s: the left input has %d columns, the right %d",
			op, len(l.Cols), len(r.Cols)), Hint: "select the same number of columns on both sides"}
	}
	cols := make([]expr.Column, len(l.Cols))
	for i, lc := range l.Cols {
		lt, rt := lc.Type, r.Cols[i].Type
		t, ok := expr.LeastRestrictive([]types.Type{lt, rt})
		if !ok {
			return nil, &Error{Pos: s.Pos,
				Msg: fmt.Sprintf("type mismatch in column %d (%s) of %s: the left input gives %s, the right %s, which have no common type",
					i+1, lc.Name, op, lt.Base(), rt.Base()),
				Hint: "CAST the column on one side to the other side's type"}
		}
		// A time attribute of both sides stays one (FlinkTypeFactory keeps
		// a type all inputs share as it is); leastRestrictive drops it.
		if lt.TimeAttr == rt.TimeAttr && lt.Base() == rt.Base() {
			t.TimeAttr = lt.TimeAttr
		}
		cols[i] = expr.Column{Name: lc.Name, Type: t}
	}
	return cols, nil
}

func setOpName(s *parser.SetOp) string {
	if s.All {
		return s.Op.String() + " ALL"
	}
	return s.Op.String()
}

// castInput fits in to cols: a Calc that casts each column whose type
// differs from its column's in more than nullability, or in itself when
// none does (Calcite casts nothing for nullability alone).
func (p *Planner) castInput(in *Rel, cols []expr.Column) (*Rel, error) {
	evals := make([]*expr.Compiled, len(cols))
	out := make([]expr.Column, len(cols))
	selects := make([]string, len(cols))
	casts := false
	for i, c := range in.Cols {
		evals[i], out[i], selects[i] = fieldRef(i, c.Type), c, c.Name
		to := cols[i].Type
		if c.Type.Base() == to.Base() {
			continue
		}
		cast, err := expr.CastTo(fieldRef(i, c.Type), to, p.scope(in.Cols))
		if err != nil {
			return nil, err
		}
		casts = true
		evals[i], out[i].Type = cast, cast.Type
		selects[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", c.Name, to.Base(), c.Name)
	}
	if !casts {
		return in, nil
	}
	r := p.calcOver(in, evals, out)
	r.Detail = "select=[" + strings.Join(selects, ", ") + "]" // as Flink's Calc shows a CAST
	return r, nil
}

// unionRel merges l and r, whose columns already have cols' types. Its
// changelog is insert-only when both inputs are.
func unionRel(l, r *Rel, cols []expr.Column) *Rel {
	u := &Rel{Op: "Union", Detail: "all=[true], union=[" + colNames(cols) + "]", Inputs: []*Rel{l, r}, Cols: cols,
		RowTime: -1, InsertOnly: l.InsertOnly && r.InsertOnly}
	if !u.InsertOnly {
		u.UpdatesFrom = l.UpdatesFrom
		if u.UpdatesFrom == "" {
			u.UpdatesFrom = r.UpdatesFrom
		}
	}
	u.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		n := b.op("Union", func() operator.Operator { return &exec.Calc{} })
		b.forward(ins[0], n, 0)
		b.forward(ins[1], n, 0)
		return n, nil
	}
	return u
}
