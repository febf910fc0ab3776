package planner

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// planValues plans VALUES (…), (…) as Flink does: each column takes the
// least restrictive type of its values (INT and DECIMAL(2, 1) give
// DECIMAL(11, 1); a NULL makes it nullable; CHARs of different lengths give
// VARCHAR), every value is cast to it, and the rows are read by a bounded,
// insert-only source at parallelism 1 (StreamExecValues). The columns are
// named EXPR$0, EXPR$1, … until an alias renames them.
//
// The values are computed here, once: the source holds rows, not
// expressions, so a restored job emits the rows the first run would have.
func (p *Planner) planValues(v *parser.Values) (*Rel, error) {
	cells, err := p.compileValues(v)
	if err != nil {
		return nil, err
	}
	cols, err := valuesColumns(cells, p.valuesTarget)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, len(cells))
	for i, row := range cells {
		if rows[i], err = p.evalValuesRow(row, cols); err != nil {
			return nil, err
		}
	}
	r := &Rel{Op: "Values", Detail: "tuples=[" + valuesTuples(rows, cols) + "]", Cols: cols, InsertOnly: true, RowTime: -1}
	r.build = func(b *builder, _ []*graph.Node) (*graph.Node, error) {
		return b.g.AddNode(&graph.Node{Name: "Source: Values", UID: b.uid("values"), Parallelism: 1,
			Source: exec.NewValuesSource(rows)}), nil
	}
	return r, nil
}

// compileValues type-checks every value; all rows must be as wide as the
// first.
func (p *Planner) compileValues(v *parser.Values) ([][]*expr.Compiled, error) {
	width := len(v.Rows[0])
	cells := make([][]*expr.Compiled, len(v.Rows))
	for i, row := range v.Rows {
		if len(row) != width {
			return nil, &Error{Pos: row[0].Position(),
				Msg:  fmt.Sprintf("VALUES row %d has %d values, but row 1 has %d", i+1, len(row), width),
				Hint: "give every row of VALUES the same number of values"}
		}
		cells[i] = make([]*expr.Compiled, width)
		for j, e := range row {
			c, err := expr.Compile(e, p.scope(nil))
			if err != nil {
				return nil, err
			}
			if c.Interval != expr.NotInterval {
				return nil, errAt(e.Position(), "VALUES cannot hold an interval (%s)", parser.Format(e))
			}
			cells[i][j] = c
		}
	}
	return cells, nil
}

// valuesColumns derives each column's type: the least restrictive type of
// its values. A value that has no common type with the values above it
// fails at its position. A column of NULLs alone takes its type from
// target, the sink's column in INSERT INTO … VALUES (Calcite infers a
// NULL's type from the INSERT's target row); elsewhere it fails (Flink:
// "Illegal use of 'NULL'").
func valuesColumns(cells [][]*expr.Compiled, target []types.Type) ([]expr.Column, error) {
	cols := make([]expr.Column, len(cells[0]))
	for j := range cols {
		var ts []types.Type
		for i, row := range cells {
			ts = append(ts, row[j].Type)
			if _, ok := expr.LeastRestrictive(ts); !ok {
				prev, _ := expr.LeastRestrictive(ts[:i])
				return nil, &Error{Pos: row[j].Src.Position(),
					Msg: fmt.Sprintf("VALUES column %d: row %d gives %s, which has no common type with the %s of the rows above",
						j+1, i+1, row[j].Type.Base(), prev.Base()),
					Hint: "CAST the values of the column to one type"}
			}
		}
		t, _ := expr.LeastRestrictive(ts)
		if t.Kind == types.Null && j < len(target) {
			t = target[j]
			t.Nullable, t.TimeAttr = true, ""
		}
		if t.Kind == types.Null {
			return nil, &Error{Pos: cells[0][j].Src.Position(), Msg: fmt.Sprintf("VALUES column %d is NULL in every row, so it has no type", j+1),
				Hint: "CAST one of its NULLs to the column's type, e.g. CAST(NULL AS STRING)"}
		}
		cols[j] = expr.Column{Name: fmt.Sprintf("EXPR$%d", j), Type: t}
	}
	return cols, nil
}

// evalValuesRow casts each value of a row to its column's type and
// computes it.
func (p *Planner) evalValuesRow(row []*expr.Compiled, cols []expr.Column) ([]any, error) {
	out := make([]any, len(row))
	for j, c := range row {
		cast, err := expr.CastTo(c, cols[j].Type, p.scope(nil))
		if err != nil {
			return nil, err
		}
		if out[j], err = cast.Eval(nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// valuesTuples prints the rows for EXPLAIN as Flink's Values node does,
// [{ 1, 'a' }, { 2, 'b' }] (Flink writes a string literal _UTF-16LE'a').
func valuesTuples(rows [][]any, cols []expr.Column) string {
	parts := make([]string, len(rows))
	for i, row := range rows {
		vals := make([]string, len(row))
		for j, v := range row {
			vals[j] = valuesLiteral(v, cols[j].Type)
		}
		parts[i] = "{ " + strings.Join(vals, ", ") + " }"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func valuesLiteral(v any, t types.Type) string {
	switch {
	case v == nil:
		return "null" // Calcite's RexLiteral prints NULL in lower case
	case t.IsString():
		return "'" + strings.ReplaceAll(expr.ValueString(v, t, nil), "'", "''") + "'"
	}
	return expr.ValueString(v, t, nil)
}

// planInsertValues plans the VALUES of INSERT INTO t [(cols)] VALUES …,
// whose NULL-only columns take the types of the columns they go to.
func (p *Planner) planInsertValues(v *parser.Values, t *catalog.Table, names []string) (*Rel, error) {
	target := make([]types.Type, len(names))
	for i, n := range names {
		target[i] = types.Type{Kind: types.Null, Nullable: true}
		if c, ok := t.Column(n); ok && c.Kind != parser.ComputedColumn {
			target[i] = c.Type
		}
	}
	p.valuesTarget = target
	defer func() { p.valuesTarget = nil }()
	return p.planValues(v)
}
