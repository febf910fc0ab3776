package expr

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// ident compiles a column reference: col, t.col, col.field…, t.col.field….
func (c *compiler) ident(id *parser.Ident) (*Compiled, error) {
	idx, rest, err := c.resolve(id)
	if err != nil {
		return nil, err
	}
	col := c.s.Columns[idx]
	name := col.Name
	out := &Compiled{Type: col.Type, Src: id, Eval: func(row []any) (any, error) {
		if idx >= len(row) {
			return nil, evalErr(id.Pos, "row has %d fields, column %q is field %d", len(row), name, idx+1)
		}
		return row[idx], nil
	}}
	if len(rest) == 0 {
		out.column = &columnRef{self: out, index: idx}
	}
	for _, f := range rest {
		if out, err = c.field(out, f, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// resolve finds the column an identifier names and returns its index and
// the remaining parts, which name fields of a ROW column. A qualified
// reference (t.col) wins over a ROW field path (col.field).
func (c *compiler) resolve(id *parser.Ident) (int, []string, error) {
	eq := func(a, b string) bool { return a == b }
	for pass := 0; pass < 2; pass++ {
		if pass == 1 {
			if !c.s.CaseInsensitive {
				break
			}
			eq = strings.EqualFold
		}
		if len(id.Parts) >= 2 {
			m := c.match(func(col Column) bool { return eq(col.Qualifier, id.Parts[0]) && eq(col.Name, id.Parts[1]) })
			if len(m) == 1 {
				return m[0], id.Parts[2:], nil
			}
			if len(m) > 1 {
				return 0, nil, c.ambiguous(id, m, strings.Join(id.Parts[:2], "."))
			}
		}
		m := c.match(func(col Column) bool { return eq(col.Name, id.Parts[0]) && !col.Shadowed })
		if len(m) == 1 {
			return m[0], id.Parts[1:], nil
		}
		if len(m) > 1 {
			return 0, nil, c.ambiguous(id, m, id.Parts[0])
		}
	}
	return 0, nil, c.unknown(id)
}

func (c *compiler) match(pred func(Column) bool) []int {
	var out []int
	for i, col := range c.s.Columns {
		if pred(col) {
			out = append(out, i)
		}
	}
	return out
}

func (c *compiler) ambiguous(id *parser.Ident, idx []int, name string) error {
	var alts []string
	for _, i := range idx {
		col := c.s.Columns[i]
		if col.Qualifier != "" {
			alts = append(alts, quoteName(col.Qualifier)+"."+quoteName(col.Name))
		}
	}
	hint := ""
	if len(alts) > 1 {
		hint = "qualify it: " + strings.Join(alts, " or ")
	}
	return hintAt(id, hint, "column %s is ambiguous", quoteName(name))
}

// unknown explains an unresolved identifier, suggesting the nearest name.
func (c *compiler) unknown(id *parser.Ident) error {
	name := strings.Join(id.Parts, ".")
	if len(id.Parts) >= 2 {
		var cols []string
		for _, col := range c.s.Columns {
			if col.Qualifier == id.Parts[0] {
				cols = append(cols, col.Name)
			}
		}
		if len(cols) > 0 {
			return hintAt(id, suggest(id.Parts[1], cols), "column %s not found in table %s",
				quoteName(id.Parts[1]), quoteName(id.Parts[0]))
		}
	}
	var names []string
	for _, col := range c.s.Columns {
		names = append(names, col.Name)
		if col.Qualifier != "" && len(id.Parts) >= 2 {
			names = append(names, col.Qualifier+"."+col.Name)
		}
	}
	word := id.Parts[0]
	if len(id.Parts) >= 2 && !c.isQualifier(id.Parts[0]) && !c.isColumn(id.Parts[0]) {
		word = id.Parts[0] + "." + id.Parts[1]
	}
	return hintAt(id, suggest(word, names), "unknown column %s", quoteName(name))
}

func (c *compiler) isQualifier(q string) bool {
	for _, col := range c.s.Columns {
		if col.Qualifier == q {
			return true
		}
	}
	return false
}

func (c *compiler) isColumn(n string) bool {
	for _, col := range c.s.Columns {
		if col.Name == n {
			return true
		}
	}
	return false
}

// suggest is the hint for a name that matched nothing: the nearest
// candidate, or the list of candidates when it is short.
func suggest(word string, candidates []string) string {
	for _, cand := range candidates {
		if strings.EqualFold(cand, word) && cand != word {
			return fmt.Sprintf("did you mean %s? names are case-sensitive", quoteName(cand))
		}
	}
	if best, ok := closest(word, candidates); ok {
		return fmt.Sprintf("did you mean %s?", quoteName(best))
	}
	if len(candidates) == 0 {
		return "the input has no columns"
	}
	if len(candidates) <= 12 {
		q := make([]string, len(candidates))
		for i, cand := range candidates {
			q[i] = quoteName(cand)
		}
		return "available columns: " + strings.Join(q, ", ")
	}
	return ""
}

// quoteName prints a name in back-quotes, as Flink's messages do.
func quoteName(n string) string { return "`" + n + "`" }

// field compiles x.name on a ROW value.
func (c *compiler) field(x *Compiled, name string, at parser.Node) (*Compiled, error) {
	t := x.Type
	if t.Kind != types.Row {
		return nil, errAt(at, "cannot access field %s of a value of type %s", quoteName(name), typeName(t))
	}
	idx := -1
	for i, f := range t.Fields {
		if f.Name == name {
			idx = i
			break
		}
	}
	if idx < 0 && c.s.CaseInsensitive {
		for i, f := range t.Fields {
			if strings.EqualFold(f.Name, name) {
				idx = i
				break
			}
		}
	}
	if idx < 0 {
		names := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			names[i] = f.Name
		}
		return nil, hintAt(at, strings.Replace(suggest(name, names), "columns", "fields", 1),
			"type %s has no field %s", typeName(t), quoteName(name))
	}
	ft := t.Fields[idx].Type
	ft.Nullable = ft.Nullable || t.Nullable
	ft.TimeAttr = ""
	inner := x.Eval
	pos := at.Position()
	return &Compiled{Type: ft, Const: x.Const, Eval: func(row []any) (any, error) {
		v, err := inner(row)
		if err != nil || v == nil {
			return nil, err
		}
		r, ok := v.([]any)
		if !ok || idx >= len(r) {
			return nil, evalErr(pos, "value %s is not a ROW with field %s", showValue(v), quoteName(name))
		}
		return r[idx], nil
	}}, nil
}
