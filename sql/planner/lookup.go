package planner

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weirstream/weir/connector/filesystem"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// lookupJoin plans `l JOIN t FOR SYSTEM_TIME AS OF l.proctime AS a ON …`:
// Flink's lookup join. Equalities between a column of t and an expression
// of l are the lookup key; the rest of ON (and, for an inner join, the
// WHERE conjuncts that read t) filter the matches. The table is read whole
// when the join opens (see exec.LookupJoin).
func (p *Planner) lookupJoin(j *parser.Join, l *Rel, tn *parser.TableName, where []parser.Expr) (*Rel, []parser.Expr, error) {
	if j.Kind != parser.InnerJoin && j.Kind != parser.LeftJoin {
		return nil, nil, errAt(j.Pos, "a lookup join (FOR SYSTEM_TIME AS OF) is JOIN or LEFT JOIN, not %s", j.Kind)
	}
	if err := checkProcTimeAsOf(l, tn.ForSystemTime); err != nil {
		return nil, nil, err
	}
	t, ok := p.Catalog.Table(tn.Name)
	if !ok {
		return nil, nil, errAt(tn.Pos, "FOR SYSTEM_TIME AS OF: table %q not found (lookup joins read tables, not views)", formatName(tn.Name))
	}
	if err := p.Connectors.checkLookup(t); err != nil {
		return nil, nil, &Error{Pos: tn.Pos, Msg: err.Error()}
	}
	alias := tn.Name[len(tn.Name)-1]
	if tn.Alias != "" {
		alias = tn.Alias
	}
	var phys []expr.Column
	for _, f := range t.Physical() {
		phys = append(phys, expr.Column{Qualifier: alias, Name: f.Name, Type: f.Type})
	}
	cols, _, computed, err := p.tableColumns(t, alias, phys)
	if err != nil {
		return nil, nil, err
	}
	r := &Rel{RowTime: -1, Cols: cols}
	conds, rest, leftOnly := asOfConds(j, l, r, where)
	if l, err = p.filterAll(l, leftOnly); err != nil {
		return nil, nil, err
	}
	opts := exec.LookupJoinOptions{Type: exec.InnerJoin, RightArity: len(r.Cols), Table: t.Name}
	if j.Kind == parser.LeftJoin {
		opts.Type = exec.LeftJoin
	}
	var other []parser.Expr
	for _, c := range conds {
		ri, le, ok := p.lookupKey(l, r, c)
		if !ok {
			other = append(other, c)
			continue
		}
		k, err := expr.Compile(le, p.scope(l.Cols))
		if err != nil {
			return nil, nil, err
		}
		opts.RightKeys, opts.LeftKeys = append(opts.RightKeys, ri), append(opts.LeftKeys, k.Eval)
	}
	if len(opts.RightKeys) == 0 {
		return nil, nil, &Error{Pos: j.Pos, Msg: fmt.Sprintf("a lookup join of %s needs an equality between a column of %s and an expression of the other side", t.Name, t.Name),
			Hint: "e.g. ON mod(b.auction, 10000) = s.key"}
	}
	if err := p.Connectors.lookupSource(t, &opts, computed); err != nil {
		return nil, nil, err
	}
	cols = append(append([]expr.Column(nil), l.Cols...), r.Cols...)
	if opts.Condition, err = p.joinCondition(other, cols, len(l.Cols)); err != nil {
		return nil, nil, err
	}
	out := &Rel{Op: "LookupJoin", Detail: fmt.Sprintf("table=[%s], joinType=[%s], where=[%s]", t.Name, j.Kind, parser.Format(j.On)),
		Inputs: []*Rel{l}, Cols: cols, RowTime: l.RowTime}
	out.withMode(l)
	out.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		n, err := b.checkedOp("LookupJoin", opOf(exec.NewLookupJoin, opts))
		if err != nil {
			return nil, err
		}
		b.forward(ins[0], n, 0)
		b.pickable(n, len(cols), func(idx []int) bool {
			picked := opts
			picked.Output = idx
			f, err := checked("LookupJoin", opOf(exec.NewLookupJoin, picked))
			if err == nil {
				n.NewOperator = f
			}
			return err == nil
		})
		return n, nil
	}
	if _, err := exec.NewLookupJoin(opts); err != nil {
		return nil, nil, err
	}
	return out, rest, nil
}

// computedLoad appends a lookup table's computed columns to each row it
// loads.
func computedLoad(load func() ([][]any, error), computed func([]any) ([]any, error)) func() ([][]any, error) {
	return func() ([][]any, error) {
		rows, err := load()
		if err != nil {
			return nil, err
		}
		return computeRows(rows, computed)
	}
}

// computeRows appends the computed columns to each physical row.
func computeRows(rows [][]any, computed func([]any) ([]any, error)) ([][]any, error) {
	out := make([][]any, len(rows))
	for i, row := range rows {
		var err error
		if out[i], err = computed(row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkProcTimeAsOf refuses FOR SYSTEM_TIME AS OF anything but a time
// attribute of the left input (a rowtime one plans a temporal join
// instead, temporal.go).
func checkProcTimeAsOf(l *Rel, asOf parser.Expr) error {
	if i := identIndex(l, asOf); i >= 0 && l.Cols[i].Type.TimeAttr == "proctime" {
		return nil
	}
	return &Error{Pos: asOf.Position(), Msg: fmt.Sprintf("FOR SYSTEM_TIME AS OF %s: Temporal table join currently only "+
		"supports 'FOR SYSTEM_TIME AS OF' left table's time attribute field", parser.Format(asOf)),
		Hint: "write AS OF a time attribute of the left table: o.order_time with a WATERMARK for an event-time temporal join, o.proc_time with proc_time AS PROCTIME() for a lookup join"}
}

// lookupKey recognises `r.col = <expression of l>` (either order), the
// expression possibly a constant (Flink's lookup on a constant key). A
// pair whose types would not compare as equal keys (an INT column and a
// DOUBLE expression) stays a condition, where = compares as SQL does.
func (p *Planner) lookupKey(l, r *Rel, e parser.Expr) (int, parser.Expr, bool) {
	b, ok := e.(*parser.Binary)
	if !ok || b.Op != parser.Eq {
		return 0, nil, false
	}
	for _, pair := range [][2]parser.Expr{{b.L, b.R}, {b.R, b.L}} {
		ri := identIndex(r, pair[0])
		if ri < 0 || identIndex(l, pair[0]) >= 0 {
			continue
		}
		if side := sideOf(l, r, pair[1]); side != sideLeft && side != 0 {
			continue
		}
		t, err := expr.InferType(pair[1], p.scope(l.Cols))
		if err == nil && sameKeyKind(t, r.Cols[ri].Type) {
			return ri, pair[1], true
		}
	}
	return 0, nil, false
}

// sameKeyKind reports whether values of a and b are equal exactly when
// their key encodings are (integers of any width are widened alike; NULL
// matches nothing anyway).
func sameKeyKind(a, b types.Type) bool {
	switch {
	case a.Kind == types.Null:
		return true
	case a.IsInteger() && b.IsInteger():
		return true
	case a.IsString() && b.IsString():
		return true
	}
	return a.Kind == b.Kind && a.Kind != types.Array && a.Kind != types.Map && a.Kind != types.Row
}

// checkLookup checks a lookup-joined table's options and that its
// connector can be looked up.
func (c *Connectors) checkLookup(t *catalog.Table) error {
	if err := checkOptions(t); err != nil {
		return err
	}
	_, byKey := c.KeyLookups[t.Connector()]
	if _, whole := c.Lookups[t.Connector()]; !byKey && !whole {
		return c.noConnector(t, "cannot be read by a lookup join", "lookup connectors",
			strings.Join(slices.Sorted(maps.Keys(c.lookupNames())), ", "))
	}
	return nil
}

func (c *Connectors) lookupNames() map[string]bool {
	out := map[string]bool{}
	for k := range c.Lookups {
		out[k] = true
	}
	for k := range c.KeyLookups {
		out[k] = true
	}
	return out
}

// lookupSource sets how the join reads t: by key (opts.Lookup) when its
// connector can, else whole (opts.Load). computed, when set, adds the
// table's computed columns to each physical row.
func (c *Connectors) lookupSource(t *catalog.Table, opts *exec.LookupJoinOptions, computed func([]any) ([]any, error)) error {
	f, ok := c.KeyLookups[t.Connector()]
	if !ok {
		load, err := c.Lookups[t.Connector()](t)
		if err != nil {
			return atTable(t, err)
		}
		if computed != nil {
			load = computedLoad(load, computed)
		}
		opts.Load = load
		return nil
	}
	keys, err := physicalKeys(t, opts.RightKeys)
	if err != nil {
		return err
	}
	open, err := f(t, keys)
	if err != nil {
		return atTable(t, err)
	}
	if computed != nil {
		open = computedLookup(open, computed)
	}
	opts.Lookup = open
	return nil
}

// physicalKeys maps key columns of a table (in declaration order) to its
// physical columns, which a per-key lookup queries; a computed or metadata
// key column cannot be looked up.
func physicalKeys(t *catalog.Table, cols []int) ([]int, error) {
	phys := make([]int, len(t.Columns))
	n := 0
	for i, c := range t.Columns {
		phys[i] = -1
		if c.Kind == parser.PhysicalColumn {
			phys[i], n = n, n+1
		}
	}
	out := make([]int, len(cols))
	for i, c := range cols {
		if out[i] = phys[c]; out[i] < 0 {
			return nil, errAt(t.Columns[c].Pos, "table %q: a lookup join queries %s by its physical columns; %s is computed",
				t.Name, t.Name, t.Columns[c].Name)
		}
	}
	return out, nil
}

// computedLookup adds a table's computed columns to each row a per-key
// lookup returns.
func computedLookup(open func() (exec.LookupFunc, error), computed func([]any) ([]any, error)) func() (exec.LookupFunc, error) {
	return func() (exec.LookupFunc, error) {
		f, err := open()
		if err != nil {
			return nil, err
		}
		return computedRows{LookupFunc: f, computed: computed}, nil
	}
}

type computedRows struct {
	exec.LookupFunc
	computed func([]any) ([]any, error)
}

func (c computedRows) Lookup(ctx context.Context, key []any) ([][]any, error) {
	rows, err := c.LookupFunc.Lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	return computeRows(rows, c.computed)
}

// fileLookup reads a filesystem table whole: the file at 'path', or every
// file in that directory (not hidden ones).
func fileLookup(t *catalog.Table) (func() ([][]any, error), error) {
	ff, err := fileFormat(t)
	if err != nil {
		return nil, err
	}
	path := ff.path
	if ff.changelog != nil {
		// A versioned table from a changelog would need the temporal join
		// on its changes (FOR SYSTEM_TIME AS OF a row's time), not a load.
		return nil, fmt.Errorf("table %q: a lookup join reads a table whole; the filesystem connector in '%s' gives changes, "+
			"which lookup joins do not read yet", t.Name, t.Options["format"])
	}
	return func() ([][]any, error) {
		files := []string{path}
		if st, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("table %q: %w", t.Name, err)
		} else if st.IsDir() {
			entries, err := os.ReadDir(path)
			if err != nil {
				return nil, err
			}
			files = files[:0]
			for _, e := range entries {
				if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(e.Name(), "_") {
					files = append(files, filepath.Join(path, e.Name()))
				}
			}
		}
		var rows [][]any
		for _, name := range files {
			var err error // not the enclosing err: subtasks load concurrently
			if ff.bulk != nil {
				rows, err = readBulkRows(name, ff.bulk, rows)
			} else {
				rows, err = readRows(name, ff.row, rows)
			}
			if err != nil {
				return nil, fmt.Errorf("table %q: %w", t.Name, err)
			}
		}
		return rows, nil
	}, nil
}

func readRows(name string, f interface{ Decode([]byte) ([]any, error) }, rows [][]any) ([][]any, error) {
	file, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		row, err := f.Decode(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

// readBulkRows appends the rows of a bulk format's file (parquet).
func readBulkRows(name string, b filesystem.BulkFormat, rows [][]any) ([][]any, error) {
	file, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, err
	}
	r, err := b.OpenReader(name, file, st.Size())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
}
