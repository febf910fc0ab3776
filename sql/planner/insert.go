package planner

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// PlanInsert plans INSERT INTO table query: the query, a cast to the
// table's physical columns, and the table's sink. A sink that takes only
// inserts rejects a query whose result updates, naming both.
func (p *Planner) PlanInsert(ins *parser.Insert) (*Rel, error) {
	t, ok := p.Catalog.Table(ins.Table)
	if !ok {
		name := ins.Table[len(ins.Table)-1]
		e := &Error{Pos: ins.Pos, Msg: fmt.Sprintf("table %q not found", name)}
		if s := p.Catalog.Suggest(name); s != "" {
			e.Hint = fmt.Sprintf("did you mean %q?", s)
		}
		return nil, e
	}
	q, err := p.planInsertQuery(ins, t)
	if err != nil {
		return nil, err
	}
	q, err = p.conform(ins, t, q)
	if err != nil {
		return nil, err
	}
	if err := checkOptions(t); err != nil {
		return nil, err
	}
	spec, err := p.Connectors.sink(t)
	if err != nil {
		return nil, err
	}
	if !q.InsertOnly && !spec.AcceptsUpdates {
		return nil, &Error{Pos: ins.Pos, Msg: fmt.Sprintf(
			"table sink %q (connector %q) only accepts inserts, but the query's result is updated by %s",
			t.Name, t.Connector(), q.UpdatesFrom),
			Hint: "write to a sink that takes updates (upsert-kafka, or jdbc with a PRIMARY KEY), or make the query append-only (a window aggregation instead of GROUP BY)"}
	}
	if !q.InsertOnly && len(t.PrimaryKey) == 0 && spec.NeedsKey {
		return nil, &Error{Pos: ins.Pos, Msg: fmt.Sprintf("table sink %q receives updates (from %s) but declares no PRIMARY KEY", t.Name, q.UpdatesFrom),
			Hint: "add PRIMARY KEY (…) NOT ENFORCED to the table"}
	}
	return p.sinkRel(t, p.sinkInput(t, q), spec), nil
}

// planInsertQuery plans the query of an INSERT; a bare VALUES is planned
// knowing the sink's column types.
func (p *Planner) planInsertQuery(ins *parser.Insert, t *catalog.Table) (*Rel, error) {
	q := ins.Query
	v, ok := q.Body.(*parser.Values)
	if !ok || len(q.With) > 0 || len(q.OrderBy) > 0 || q.Limit != nil {
		return p.Plan(q)
	}
	return p.planInsertValues(v, t, insertColumns(ins, t))
}

// insertColumns are the sink columns an INSERT writes, in the query's
// order: its column list, else every persisted column (physical and
// non-VIRTUAL metadata, in declaration order).
func insertColumns(ins *parser.Insert, t *catalog.Table) []string {
	if len(ins.Columns) > 0 {
		return ins.Columns
	}
	return t.Persisted()
}

// sinkFields are the fields of the rows t's sink takes: the physical
// columns, then the metadata columns an INSERT writes, as their keys'
// types (meta).
func sinkFields(t *catalog.Table, meta []MetadataKey) (fields []types.Field, declared []types.Type) {
	for _, f := range t.Physical() {
		fields, declared = append(fields, f), append(declared, f.Type)
	}
	for i, c := range t.WrittenMetadata() {
		fields, declared = append(fields, types.Field{Name: c.Name, Type: meta[i].Type}), append(declared, c.Type)
	}
	return fields, declared
}

// conform maps the query's columns onto the table's sink fields: by the
// INSERT's column list, else by position; types are cast as needed.
func (p *Planner) conform(ins *parser.Insert, t *catalog.Table, q *Rel) (*Rel, error) {
	meta, err := p.writtenMetadata(t)
	if err != nil {
		return nil, err
	}
	fields, declared := sinkFields(t, meta)
	names := insertColumns(ins, t)
	if len(names) != len(q.Cols) {
		return nil, errAt(ins.Pos, "INSERT INTO %s: the query has %d columns, the target has %d (%s)", t.Name, len(q.Cols), len(names), strings.Join(names, ", "))
	}
	evals := make([]*expr.Compiled, len(fields))
	from := make([]int, len(fields)) // the query column each sink column copies unchanged, or -1
	for i, f := range fields {
		src := indexOf(names, f.Name)
		from[i] = -1
		if src < 0 {
			evals[i] = &expr.Compiled{Type: f.Type, Eval: func([]any) (any, error) { return nil, nil }}
			continue
		}
		if q.Cols[src].Type.Base() == f.Type.Base() {
			from[i] = src
		}
		if from := q.Cols[src].Type; !assignable(from, declared[i]) {
			return nil, &Error{Pos: ins.Pos, Msg: fmt.Sprintf("INSERT INTO %s: column %s: the query gives %s, the table takes %s",
				t.Name, f.Name, from.Base(), declared[i].Base()), Hint: "CAST it explicitly"}
		}
		c, err := expr.CastTo(fieldRef(src, q.Cols[src].Type), declared[i], p.scope(q.Cols))
		if err == nil {
			c, err = expr.CastTo(c, f.Type, p.scope(q.Cols))
		}
		if err != nil {
			return nil, errAt(ins.Pos, "INSERT INTO %s: column %s: %v", t.Name, f.Name, err)
		}
		evals[i] = c
	}
	cols := make([]expr.Column, len(fields))
	for i, f := range fields {
		cols[i] = expr.Column{Name: f.Name, Type: f.Type}
	}
	out := p.calcOver(q, evals, cols)
	out.upsertKey, out.hashedBy = keyThrough(q.upsertKey, from), keyThrough(q.hashedBy, from)
	return out, nil
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

func (p *Planner) sinkRel(t *catalog.Table, q *Rel, spec SinkSpec) *Rel {
	r := &Rel{Op: "Sink", Detail: fmt.Sprintf("table=[%s], fields=[%s]", t.Name, colNames(q.Cols)), Inputs: []*Rel{q},
		Cols: q.Cols, RowTime: -1}
	r.withMode(q)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		n := b.op("Sink: "+t.Name, func() operator.Operator { return operator.NewSinkOperator(spec.Sink) })
		n.Kind = graph.KindSink
		if q.Op == "Exchange" {
			b.hash(ins[0], n, exec.FieldKeyOf(q.hashedBy...), 0)
			return n, nil
		}
		b.forward(ins[0], n, 0)
		return n, nil
	}
	return r
}

// typeFamily groups types that convert into each other implicitly.
func typeFamily(t types.Type) int {
	switch {
	case t.IsNumeric():
		return 1
	case t.IsString():
		return 2
	case t.Kind == types.Timestamp || t.Kind == types.TimestampLTZ || t.Kind == types.Date:
		return 3
	case t.Kind == types.Time:
		return 6
	case t.Kind == types.Boolean:
		return 4
	case t.Kind == types.Bytes:
		return 5
	}
	return 10 + int(t.Kind)
}

// assignable reports whether a query column of type from may be written
// into a sink column of type to without an explicit CAST (Flink refuses
// e.g. STRING into BIGINT at planning time).
func assignable(from, to types.Type) bool {
	return from.Kind == types.Null || typeFamily(from) == typeFamily(to)
}

// PlanInserts plans INSERTs that run as one job (a script's, a statement
// set's), as PlanInsert plans each: what one of them reads the others may
// read too, so pruning under a window TVF (prunedTVFInput) reads all
// their texts — a view that another INSERT reads whole is shared, and a
// pruning projection would copy its rows once more.
func (p *Planner) PlanInserts(inss []*parser.Insert) ([]*Rel, error) {
	if p.stmt == nil {
		names := parser.NewNames()
		for _, ins := range inss {
			names.Add(parser.NamesOf(ins.Query))
		}
		p.stmt = &names
		defer func() { p.stmt = nil }()
	}
	out := make([]*Rel, 0, len(inss))
	for _, ins := range inss {
		r, err := p.PlanInsert(ins)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// PlanCollect plans a bare query whose rows, with their RowKinds, go to
// sink: the SQL client's SELECT, whose result it shows. The sink takes
// every change the query makes.
func (p *Planner) PlanCollect(q *parser.Query, sink operator.Sink) (*Rel, error) {
	r, err := p.Plan(q)
	if err != nil {
		return nil, err
	}
	return p.sinkRel(&catalog.Table{Name: "collect"}, r, SinkSpec{Sink: sink, AcceptsUpdates: true}), nil
}
