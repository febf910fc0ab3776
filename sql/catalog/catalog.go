// Package catalog holds the tables and views a SQL session declares: their
// columns (physical, computed, metadata), watermark, primary key and
// connector options, as Flink's in-memory catalog does.
package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// Table is a table declared by CREATE TABLE.
type Table struct {
	Name       string
	Columns    []*parser.ColumnDef
	Watermark  *parser.Watermark
	PrimaryKey []string
	// PartitionedBy are the PARTITIONED BY columns, in order.
	PartitionedBy []string
	Options       map[string]string
	// OptionPos is where each WITH option is written, for errors about it.
	OptionPos map[string]parser.Pos
	Temporary bool
	Pos       parser.Pos
}

// OptionAt returns where option key is written: its position in the WITH
// clause, or the table's when it is not there.
func (t *Table) OptionAt(key string) parser.Pos {
	if p, ok := t.OptionPos[key]; ok {
		return p
	}
	return t.Pos
}

// View is a view declared by CREATE VIEW.
type View struct {
	Name    string
	Columns []string
	Query   *parser.Query
	Pos     parser.Pos
}

// Physical returns the physical columns, in order: what a source produces
// and a sink consumes.
func (t *Table) Physical() []types.Field {
	var out []types.Field
	for _, c := range t.Columns {
		if c.Kind == parser.PhysicalColumn {
			out = append(out, types.Field{Name: c.Name, Type: c.Type})
		}
	}
	return out
}

// WrittenMetadata returns the metadata columns an INSERT writes (those not
// VIRTUAL), in order: a sink takes their values after the physical ones.
func (t *Table) WrittenMetadata() []*parser.ColumnDef {
	var out []*parser.ColumnDef
	for _, c := range t.Columns {
		if c.Kind == parser.MetadataColumn && !c.Virtual {
			out = append(out, c)
		}
	}
	return out
}

// Persisted returns the names of the columns an INSERT writes, in
// declaration order: the physical and the non-VIRTUAL metadata columns
// (Flink's persisted columns).
func (t *Table) Persisted() []string {
	var out []string
	for _, c := range t.Columns {
		if c.Kind == parser.PhysicalColumn || c.Kind == parser.MetadataColumn && !c.Virtual {
			out = append(out, c.Name)
		}
	}
	return out
}

// Connector is the table's 'connector' option.
func (t *Table) Connector() string { return t.Options["connector"] }

// Column finds a column by name.
func (t *Table) Column(name string) (*parser.ColumnDef, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}

// Catalog is a session's tables and views, by name.
type Catalog struct {
	tables map[string]*Table
	views  map[string]*View
}

// New returns an empty catalog.
func New() *Catalog { return &Catalog{tables: map[string]*Table{}, views: map[string]*View{}} }

// ErrExists and ErrNotFound classify catalog errors.
var (
	ErrExists   = fmt.Errorf("catalog: object already exists")
	ErrNotFound = fmt.Errorf("catalog: object not found")
)

// objectName is the last part of a possibly qualified name (Weir has one
// catalog and one database).
func objectName(n parser.Name) string { return n[len(n)-1] }

// CreateTable adds the table of stmt.
func (c *Catalog) CreateTable(stmt *parser.CreateTable) error {
	name := objectName(stmt.Name)
	if c.exists(name) {
		if stmt.IfNotExists {
			return nil
		}
		return fmt.Errorf("line %d:%d: table %q already exists: %w", stmt.Line, stmt.Col, name, ErrExists)
	}
	t := &Table{Name: name, Columns: stmt.Columns, Watermark: stmt.Watermark, Options: map[string]string{},
		OptionPos: map[string]parser.Pos{}, Temporary: stmt.Temporary, Pos: stmt.Pos, PartitionedBy: stmt.PartitionedBy}
	if stmt.PrimaryKey != nil {
		t.PrimaryKey = stmt.PrimaryKey.Columns
	}
	for _, o := range stmt.Options {
		t.Options[o.Key] = o.Value
		t.OptionPos[o.Key] = o.Pos
	}
	if err := validate(t); err != nil {
		return err
	}
	c.tables[name] = t
	return nil
}

func validate(t *Table) error {
	seen := map[string]bool{}
	for _, col := range t.Columns {
		if seen[col.Name] {
			return fmt.Errorf("line %d:%d: table %q has two columns named %q", col.Line, col.Col, t.Name, col.Name)
		}
		seen[col.Name] = true
	}
	for _, k := range t.PrimaryKey {
		if !seen[k] {
			return fmt.Errorf("line %d:%d: primary key column %q is not a column of table %q", t.Pos.Line, t.Pos.Col, k, t.Name)
		}
	}
	if w := t.Watermark; w != nil && !seen[w.Column] {
		return fmt.Errorf("line %d:%d: WATERMARK FOR %q: the table has no such column", w.Line, w.Col, w.Column)
	}
	if t.Options["connector"] == "" {
		return fmt.Errorf("line %d:%d: table %q has no 'connector' option; add WITH ('connector' = '…')", t.Pos.Line, t.Pos.Col, t.Name)
	}
	return nil
}

// CreateView adds the view of stmt.
func (c *Catalog) CreateView(stmt *parser.CreateView) error {
	name := objectName(stmt.Name)
	if c.exists(name) {
		if stmt.IfNotExists {
			return nil
		}
		return fmt.Errorf("line %d:%d: view %q already exists: %w", stmt.Line, stmt.Col, name, ErrExists)
	}
	c.views[name] = &View{Name: name, Columns: stmt.Columns, Query: stmt.Query, Pos: stmt.Pos}
	return nil
}

// Drop removes a table or view.
func (c *Catalog) Drop(name parser.Name, ifExists bool) error {
	n := objectName(name)
	if !c.exists(n) {
		if ifExists {
			return nil
		}
		return fmt.Errorf("%q: %w", n, ErrNotFound)
	}
	delete(c.tables, n)
	delete(c.views, n)
	return nil
}

func (c *Catalog) exists(name string) bool { return c.tables[name] != nil || c.views[name] != nil }

// Table returns a table by name.
func (c *Catalog) Table(name parser.Name) (*Table, bool) {
	t, ok := c.tables[objectName(name)]
	return t, ok
}

// View returns a view by name.
func (c *Catalog) View(name parser.Name) (*View, bool) {
	v, ok := c.views[objectName(name)]
	return v, ok
}

// Names lists tables and views, sorted (SHOW TABLES).
func (c *Catalog) Names() []string {
	var out []string
	for n := range c.tables {
		out = append(out, n)
	}
	for n := range c.views {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TableNames lists the tables, sorted (SHOW TABLES in the SQL client,
// which lists views apart).
func (c *Catalog) TableNames() []string {
	out := make([]string, 0, len(c.tables))
	for n := range c.tables {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ViewNames lists the views, sorted (SHOW VIEWS).
func (c *Catalog) ViewNames() []string {
	out := make([]string, 0, len(c.views))
	for n := range c.views {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Suggest returns the known name closest to name, for "did you mean".
func (c *Catalog) Suggest(name string) string {
	best, bestD := "", 3
	for _, n := range c.Names() {
		if d := distance(strings.ToLower(n), strings.ToLower(name)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
