package session

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weirstream/weir/sql/parser"
)

// Described is one column as DESCRIBE shows it, in Flink's columns.
type Described struct {
	Name string
	// Type is the type without NOT NULL ("(computed)" for a computed
	// column); an event-time attribute ends in " *ROWTIME*", as in Flink.
	Type string
	// Null is "TRUE", "FALSE", or "" for a computed column.
	Null string
	// Key is "PRI(id, ...)" on a primary key column, else "".
	Key string
	// Extras is a computed column's "AS expr".
	Extras string
	// Watermark is the watermark expression on the rowtime column.
	Watermark string
}

// Describe returns the columns of table or view name, as DESCRIBE shows
// them; a view's are those of its query, planned. found is false when
// there is no such table or view.
func (s *Session) Describe(name parser.Name) (cols []Described, found bool, err error) {
	if t, ok := s.Catalog.Table(name); ok {
		return describeTable(t.Columns, t.PrimaryKey, t.Watermark), true, nil
	}
	if _, ok := s.Catalog.View(name); !ok {
		return nil, false, nil
	}
	p, err := s.planner()
	if err != nil {
		return nil, true, err
	}
	vcols, rowtime, err := p.ViewColumns(name)
	if err != nil {
		return nil, true, fmt.Errorf("view %s: %w", strings.Join(name, "."), err)
	}
	for i, c := range vcols {
		d := Described{Name: c.Name, Type: parser.FormatType(c.Type), Null: "TRUE"}
		if !c.Type.Nullable {
			d.Type, d.Null = strings.TrimSuffix(d.Type, " NOT NULL"), "FALSE"
		}
		if i == rowtime {
			d.Type += " *ROWTIME*"
		}
		cols = append(cols, d)
	}
	return cols, true, nil
}

// describeTable describes a table's declared columns.
func describeTable(defs []*parser.ColumnDef, pk []string, wm *parser.Watermark) []Described {
	var out []Described
	for _, c := range defs {
		d := Described{Name: c.Name, Type: parser.FormatType(c.Type), Null: "TRUE"}
		if !c.Type.Nullable {
			d.Type, d.Null = strings.TrimSuffix(d.Type, " NOT NULL"), "FALSE"
		}
		if slices.Contains(pk, c.Name) {
			d.Key = "PRI(" + strings.Join(pk, ", ") + ")"
		}
		if c.Expr != nil {
			d.Type, d.Null, d.Extras = "(computed)", "", "AS "+parser.Format(c.Expr)
		}
		if wm != nil && wm.Column == c.Name {
			d.Type += " *ROWTIME*"
			d.Watermark = parser.Format(wm.Expr)
		}
		out = append(out, d)
	}
	return out
}
