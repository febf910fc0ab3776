package jdbc

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"

	"github.com/weirstream/weir/event"
)

// tableInfo is the sink's table as resolved once at start: the columns the
// row fields fill and the key columns used to upsert and delete.
type tableInfo struct {
	name    string // as configured
	quoted  string
	columns []string
	keys    []string // empty: append (plain INSERT)
	keyIdx  []int    // positions of keys in columns
	// ident names a row in messages: keys, or the table's primary key when
	// the sink appends.
	ident    []string
	identIdx []int
	types    map[string]string
	d        dialect
}

// loadTable reads the catalog: columns (unless given), the primary key
// (unless given or Append), and every column's type for error messages.
func loadTable(ctx context.Context, d dialect, s session, o *Options) (*tableInfo, error) {
	rows, err := d.columns(ctx, s, o.Table)
	if pgCode(err) == "42P01" { // undefined_table: the regclass cast refused the name
		rows, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jdbc: reading the columns of table %q: %w", o.Table, err)
	}
	if len(rows) == 0 {
		return nil, permanent(fmt.Errorf("jdbc: table %q not found (%s); create it first or fix 'table-name'", o.Table, d.name()))
	}
	t := &tableInfo{name: o.Table, quoted: quoteQualified(o.Table, d.quoteIdent), types: map[string]string{}, d: d}
	var all []string
	for _, r := range rows {
		all = append(all, r[0])
		t.types[r[0]] = r[1]
	}
	t.columns = o.Columns
	if len(t.columns) == 0 {
		t.columns = all
	}
	for _, c := range t.columns {
		if _, ok := t.types[c]; !ok {
			return nil, permanent(fmt.Errorf("jdbc: table %q has no column %q (it has %s)", o.Table, c, strings.Join(all, ", ")))
		}
	}
	pk, err := d.primaryKey(ctx, s, o.Table)
	if err != nil {
		return nil, fmt.Errorf("jdbc: reading the primary key of table %q: %w", o.Table, err)
	}
	if !t.covers(pk) { // the sink does not write the whole key (e.g. AUTO_INCREMENT): append
		pk = nil
	}
	t.keys = o.PrimaryKey
	if len(t.keys) == 0 && !o.Append {
		t.keys = pk
	}
	if t.keyIdx, err = t.indexes(t.keys); err != nil {
		return nil, err
	}
	if len(o.PrimaryKey) > 0 {
		if err := checkDeclaredKey(ctx, d, s, o); err != nil {
			return nil, err
		}
	}
	t.ident, t.identIdx = t.keys, t.keyIdx
	if len(t.ident) == 0 {
		t.ident = pk
		t.identIdx, _ = t.indexes(pk)
	}
	return t, nil
}

// checkDeclaredKey refuses a declared primary key that the table has no
// unique index for: the upsert would fail at every write (PostgreSQL: "no
// unique or exclusion constraint matching the ON CONFLICT specification")
// or never update (MySQL: every row appended).
func checkDeclaredKey(ctx context.Context, d dialect, s session, o *Options) error {
	uniques, err := d.uniqueKeys(ctx, s, o.Table)
	if err != nil {
		return fmt.Errorf("jdbc: reading the unique keys of table %q: %w", o.Table, err)
	}
	if d.upsertServed(o.PrimaryKey, uniques) {
		return nil
	}
	has := "no primary key or unique index"
	if len(uniques) > 0 {
		parts := make([]string, len(uniques))
		for i, u := range uniques {
			parts[i] = "(" + strings.Join(u, ", ") + ")"
		}
		has = "unique keys " + strings.Join(parts, ", ")
	}
	return permanent(fmt.Errorf("jdbc: sink for table %q: the declared PRIMARY KEY (%s) is not a unique key of "+
		"the table, which has %s (%s); upserts by the declared key need one: declare the table's key, or add a "+
		"unique index on (%s)", o.Table, strings.Join(o.PrimaryKey, ", "), has, d.name(), strings.Join(o.PrimaryKey, ", ")))
}

func (t *tableInfo) indexes(cols []string) ([]int, error) {
	var out []int
	for _, k := range cols {
		i := t.index(k)
		if i < 0 {
			return nil, permanent(fmt.Errorf("jdbc: sink for table %q: key column %q is not among the columns %s",
				t.name, k, strings.Join(t.columns, ", ")))
		}
		out = append(out, i)
	}
	return out, nil
}

func (t *tableInfo) covers(cols []string) bool {
	for _, c := range cols {
		if t.index(c) < 0 {
			return false
		}
	}
	return true
}

func (t *tableInfo) index(col string) int {
	for i, c := range t.columns {
		if c == col {
			return i
		}
	}
	return -1
}

func (t *tableInfo) isAppend() bool { return len(t.keys) == 0 }

// keyText is "id=5" or "k=1, seq=2"; "" without a key.
func (t *tableInfo) keyText(r event.Row) string {
	parts := make([]string, len(t.identIdx))
	for i, c := range t.identIdx {
		if c >= len(r.Fields) {
			return ""
		}
		parts[i] = t.ident[i] + "=" + fieldText(r.Fields[c])
	}
	return strings.Join(parts, ", ")
}

// check rejects a row that cannot be written at all: wrong width, or a
// retraction into a table without a key.
func (t *tableInfo) check(r event.Row) error {
	if len(r.Fields) != len(t.columns) {
		return fmt.Errorf("jdbc: table %q: row %s has %d fields, want %d (columns %s)",
			t.name, r, len(r.Fields), len(t.columns), strings.Join(t.columns, ", "))
	}
	if t.isAppend() && !r.Kind.IsAccumulate() {
		return fmt.Errorf("jdbc: table %q: %s row %s needs a key to delete by, but the sink appends "+
			"(declare the table's primary key, or filter retractions upstream)", t.name, r.Kind, r)
	}
	return nil
}

// keyOf is a canonical text of r's key, for reducing a buffer by key.
func (t *tableInfo) keyOf(r event.Row) string {
	var b strings.Builder
	for _, c := range t.keyIdx {
		v := r.Fields[c]
		if dv, err := driver.DefaultParameterConverter.ConvertValue(v); err == nil {
			v = dv
		}
		switch v := v.(type) {
		case time.Time:
			fmt.Fprintf(&b, "t%d\x00", v.UnixNano())
		case []byte:
			fmt.Fprintf(&b, "s%s\x00", v)
		default:
			fmt.Fprintf(&b, "%T%v\x00", v, v)
		}
	}
	return b.String()
}

// insertSQL is INSERT of n rows, an upsert when the table has a key.
func (t *tableInfo) insertSQL(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(t.quoted)
	b.WriteString(" (")
	for i, c := range t.columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.d.quoteIdent(c))
	}
	b.WriteString(") VALUES ")
	t.tuples(&b, n, len(t.columns))
	if !t.isAppend() {
		b.WriteString(t.d.upsert(t.columns, t.keys))
	}
	return b.String()
}

// deleteSQL deletes n keys.
func (t *tableInfo) deleteSQL(n int) string {
	var b strings.Builder
	b.WriteString("DELETE FROM ")
	b.WriteString(t.quoted)
	b.WriteString(" WHERE ")
	if len(t.keys) == 1 {
		b.WriteString(t.d.quoteIdent(t.keys[0]))
		b.WriteString(" IN (")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t.d.placeholder(i + 1))
		}
		b.WriteString(")")
		return b.String()
	}
	b.WriteString("(")
	for i, k := range t.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.d.quoteIdent(k))
	}
	b.WriteString(") IN (")
	t.tuples(&b, n, len(t.keys))
	b.WriteString(")")
	return b.String()
}

// tuples writes n tuples of width placeholders: (?, ?), (?, ?) …
func (t *tableInfo) tuples(b *strings.Builder, n, width int) {
	p := 1
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for j := 0; j < width; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t.d.placeholder(p))
			p++
		}
		b.WriteString(")")
	}
}
