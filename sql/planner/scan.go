package planner

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
	"github.com/weirstream/weir/watermark"
)

// planTableName resolves a name in FROM: a CTE, a view, or a table.
func (p *Planner) planTableName(t *parser.TableName) (*Rel, error) {
	if t.ForSystemTime != nil { // a temporal or lookup join takes it off before it plans its table
		return nil, &Error{Pos: t.ForSystemTime.Position(), Msg: fmt.Sprintf("FOR SYSTEM_TIME AS OF %s on %s read on its own (time travel) "+
			"is not supported: Weir's catalog keeps no past versions of a table", parser.Format(t.ForSystemTime), formatName(t.Name)),
			Hint: "as the right side of a JOIN … ON it is a temporal join (AS OF a rowtime) or a lookup join (AS OF a PROCTIME() attribute)"}
	}
	name := t.Name[len(t.Name)-1]
	alias := name
	if t.Alias != "" {
		alias = t.Alias
	}
	if q := p.cte(name); q != nil {
		return p.planNamedQuery(q, alias, t.Columns)
	}
	if v, ok := p.Catalog.View(t.Name); ok {
		cols := t.Columns
		if len(cols) == 0 {
			cols = v.Columns
		}
		r, err := p.planNamedQuery(v.Query, alias, cols)
		if err == nil {
			r.reuseKey = "view:" + formatName(t.Name)
		}
		return r, err
	}
	tb, ok := p.Catalog.Table(t.Name)
	if !ok {
		e := &Error{Pos: t.Pos, Msg: fmt.Sprintf("object %q not found", name)}
		if s := p.Catalog.Suggest(name); s != "" {
			e.Hint = fmt.Sprintf("did you mean %q?", s)
		}
		return nil, e
	}
	return p.scan(tb, alias)
}

func (p *Planner) planNamedQuery(q *parser.Query, alias string, cols []string) (*Rel, error) {
	r, err := p.Plan(q)
	if err != nil {
		return nil, err
	}
	return renamed(r, alias, cols)
}

// renamed gives r's columns the qualifier alias (and new names, if any).
func renamed(r *Rel, alias string, names []string) (*Rel, error) {
	if len(names) > 0 && len(names) != len(r.Cols) {
		return nil, fmt.Errorf("alias %s lists %d column names for %d columns", alias, len(names), len(r.Cols))
	}
	out := *r
	out.Cols = requalify(r.Cols, alias)
	for i, n := range names {
		out.Cols[i].Name = n
	}
	return &out, nil
}

// updatingSource tells whether t's source emits a changelog: an updating
// connector (upsert-kafka), or a kafka or filesystem table in a changelog
// format (debezium-json, canal-json, maxwell-json), as in Flink, where
// the format's changelog mode is the source's.
func (p *Planner) updatingSource(t *catalog.Table) bool {
	if p.Connectors.Updating[t.Connector()] {
		return true
	}
	if f := p.Connectors.UpdatingWhen[t.Connector()]; f != nil && f(t) {
		return true
	}
	switch t.Connector() {
	case "kafka", "filesystem":
		return format.IsChangelog(valueFormatName(t))
	}
	return false
}

// scan reads table t: the connector's source (physical columns), then the
// computed columns; watermarks come from the table's WATERMARK clause.
func (p *Planner) scan(t *catalog.Table, alias string) (*Rel, error) {
	phys := t.Physical()
	physCols := make([]expr.Column, len(phys))
	for i, f := range phys {
		physCols[i] = expr.Column{Qualifier: alias, Name: f.Name, Type: f.Type}
	}
	cols, evals, computed, err := p.tableColumns(t, alias, physCols)
	var computedEvals []*expr.Compiled // the projection to the full row, if any
	if computed != nil {
		computedEvals = evals
	}
	if err != nil {
		return nil, err
	}
	r := &Rel{Op: "TableSourceScan", Detail: fmt.Sprintf("table=[%s], fields=[%s]", t.Name, colNames(cols)),
		Cols: cols, InsertOnly: !p.updatingSource(t), RowTime: -1, uniqueKey: primaryKeyCols(t, cols)}
	if !r.InsertOnly {
		r.UpdatesFrom = fmt.Sprintf("TableSourceScan(table=[%s], connector=[%s])", t.Name, t.Connector())
		if f := valueFormatName(t); format.IsChangelog(f) {
			r.UpdatesFrom = fmt.Sprintf("TableSourceScan(table=[%s], connector=[%s], format=[%s])", t.Name, t.Connector(), f)
		}
		r.upsertKey = primaryKeyCols(t, cols)
	}
	wm, err := p.watermarkOf(t, cols, evals)
	if err != nil {
		return nil, err
	}
	if wm != nil {
		r.RowTime = wm.col
		r.Cols[wm.col].Type.TimeAttr = "rowtime"
	}
	r.reuseKey = "scan:" + t.Name
	r.build = func(b *builder, _ []*graph.Node) (*graph.Node, error) {
		return p.buildScan(b, t, wm, computedEvals)
	}
	return r, nil
}

// tableColumns returns every column of t in order, how to compute each
// from the source's row (the physical columns, then each metadata column
// as its key's type) and, when that is not the row itself, the projection
// from the source's row to the full row.
func (p *Planner) tableColumns(t *catalog.Table, alias string, phys []expr.Column) ([]expr.Column, []*expr.Compiled, func([]any) ([]any, error), error) {
	meta, err := p.metadataOf(t)
	if err != nil {
		return nil, nil, nil, err
	}
	src := slices.Clone(phys)
	for i, c := range meta.cols {
		src = append(src, expr.Column{Qualifier: alias, Name: c.Name, Type: meta.keys[i].Type})
	}
	var cols []expr.Column
	var evals []*expr.Compiled
	physIdx, metaIdx := 0, 0
	for _, c := range t.Columns {
		var e *expr.Compiled
		switch c.Kind {
		case parser.PhysicalColumn:
			e = fieldRef(physIdx, phys[physIdx].Type)
			physIdx++
		case parser.ComputedColumn:
			if e, err = expr.Compile(c.Expr, p.scope(src)); err != nil {
				return nil, nil, nil, err
			}
		default:
			i := len(phys) + metaIdx
			if e, err = expr.CastTo(fieldRef(i, src[i].Type), c.Type, p.scope(src)); err != nil {
				return nil, nil, nil, errAt(c.Pos, "metadata column %s: %v", c.Name, err)
			}
			metaIdx++
		}
		cols = append(cols, expr.Column{Qualifier: alias, Name: c.Name, Type: e.Type})
		evals = append(evals, e)
	}
	if len(evals) == len(phys) {
		return cols, evals, nil, nil
	}
	return cols, evals, projector(evals), nil
}

func fieldRef(i int, t types.Type) *expr.Compiled { return expr.ColumnRef(i, t) }

// projector evaluates each expression over a row.
func projector(evals []*expr.Compiled) func([]any) ([]any, error) {
	into := projectorInto(evals)
	return func(row []any) ([]any, error) {
		out := make([]any, len(evals))
		if err := into(out, row); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// projectorInto evaluates each expression over a row into out.
func projectorInto(evals []*expr.Compiled) func(out, row []any) error {
	return expr.ProjectInto(evals)
}

// projectStage is a Calc stage that projects each row through evals. A
// column that is the current instant (PROCTIME() AS p_time) the Calc
// fills from its subtask's processing time (one reading for up to 16
// rows of a batch), instead of reading the wall clock for each row (see
// exec.Calc.Now).
func projectStage(evals []*expr.Compiled) *exec.Calc {
	c := &exec.Calc{Width: len(evals), Prefix: isIdentity(evals, len(evals))}
	into := evals
	for i, e := range evals {
		if !e.IsCurrentTimestamp() {
			continue
		}
		if c.Now == nil {
			into = append([]*expr.Compiled(nil), evals...)
			c.NowValue = expr.CurrentTimestamp
		}
		c.Now = append(c.Now, i)
		into[i] = &expr.Compiled{Type: e.Type, Eval: func([]any) (any, error) { return nil, nil }}
	}
	c.Project, c.ProjectInto = projector(into), projectorInto(into)
	return c
}

// wmSpec is a table's watermark: the rowtime column, how to read it from a
// physical row, and the out-of-orderness bound.
type wmSpec struct {
	col   int
	ts    func(physical []any) (any, error)
	delay time.Duration
}

func (p *Planner) watermarkOf(t *catalog.Table, cols []expr.Column, evals []*expr.Compiled) (*wmSpec, error) {
	w := t.Watermark
	if w == nil {
		return nil, nil
	}
	col := -1
	for i, c := range cols {
		if c.Name == w.Column {
			col = i
		}
	}
	if k := cols[col].Type.Kind; k != types.Timestamp && k != types.TimestampLTZ {
		return nil, errAt(w.Pos, "WATERMARK FOR %s: the rowtime column must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), it is %s", w.Column, cols[col].Type)
	}
	delay, err := watermarkDelay(w)
	if err != nil {
		return nil, err
	}
	spec := &wmSpec{col: col, delay: delay}
	// Only the rowtime column is computed for the timestamp, not the row.
	spec.ts = evals[col].Eval
	return spec, nil
}

// watermarkDelay reads `ts` or `ts - INTERVAL '…' unit`: a bounded
// out-of-orderness strategy.
func watermarkDelay(w *parser.Watermark) (time.Duration, error) {
	switch e := w.Expr.(type) {
	case *parser.Ident:
		if e.Parts[len(e.Parts)-1] == w.Column {
			return 0, nil
		}
	case *parser.Binary:
		id, ok1 := e.L.(*parser.Ident)
		iv, ok2 := e.R.(*parser.IntervalLit)
		if e.Op == parser.Sub && ok1 && ok2 && id.Parts[len(id.Parts)-1] == w.Column {
			ms, _, err := expr.IntervalValue(iv)
			if err != nil {
				return 0, err
			}
			return time.Duration(ms) * time.Millisecond, nil
		}
	}
	return 0, errAt(w.Pos, "unsupported watermark expression: use %s or %s - INTERVAL 'n' unit", w.Column, w.Column)
}

func (p *Planner) buildScan(b *builder, t *catalog.Table, wm *wmSpec, computed []*expr.Compiled) (*graph.Node, error) {
	if err := checkOptions(t); err != nil {
		return nil, err
	}
	src, err := p.Connectors.source(t)
	if err != nil {
		return nil, err
	}
	n := b.g.AddNode(&graph.Node{Name: "Source: " + t.Name, UID: b.uid("source-" + t.Name), Parallelism: b.parallelism, Source: src})
	if wm != nil {
		n.Watermarks = &watermark.Strategy{MaxOutOfOrderness: wm.delay, IdleTimeout: p.Config.IdleTimeout, MaxFutureSkew: p.Config.MaxFutureSkew}
		n.Timestamps = rowTimestamp(wm.ts)
	}
	if computed == nil {
		return n, nil
	}
	return b.project("Calc", n, computed), nil
}

// rowTimestamp reads a row's event time in ms; a NULL or unreadable time
// gives a record without a timestamp (it does not move the watermark).
func rowTimestamp(ts func([]any) (any, error)) operator.TimestampAssigner {
	return func(v any) event.Timestamp {
		r, ok := v.(event.Row)
		if !ok {
			return event.NoTimestamp
		}
		x, err := ts(r.Fields)
		if err != nil {
			return event.NoTimestamp
		}
		switch t := x.(type) {
		case time.Time:
			return t.UnixMilli()
		case int64:
			return t
		}
		return event.NoTimestamp
	}
}
