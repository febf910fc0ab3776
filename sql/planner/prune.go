package planner

import (
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// Column pruning below joins (Flink's ProjectJoinTransposeRule and
// friends): a join keeps every row of its sides in state, so each side
// first drops the columns its query block never names. Nexmark q4 joins
// auctions and bids and reads four of their seventeen columns; without
// pruning the join state held all of them, long free-text ones included.
//
// What a block can name is read from its canonical SQL text
// (parser.NamesOf): a column stays when any identifier anywhere in the
// block — its select list, WHERE, ON, GROUP BY, HAVING, windows, nested
// subqueries — has its name (case aside), when a t.* of the block names
// its table, or when it is the rowtime, a window column or one the plan
// added ($…). An unqualified * keeps them all. Names match more than they
// need to (a table alias, a nested field or a word of another scope keeps
// a column of that name), never less.

// colNeeds is what the query block being planned can read.
type colNeeds struct {
	all bool // SELECT *: every column
	// aggregates: the block groups the rows of a window TVF it reads
	// alone and unfiltered (FROM TABLE(…) GROUP BY, no WHERE), so what
	// reads the TVF's rows is the aggregation, which keeps accumulators,
	// not rows (see prunedTVFInput).
	aggregates bool
	parser.Names
}

// needsOf returns what block s can read.
func needsOf(s *parser.Select) *colNeeds {
	for _, it := range s.Items {
		if st, ok := it.Expr.(*parser.Star); ok && len(st.Qualifier) == 0 {
			return &colNeeds{all: true}
		}
	}
	shallow := *s
	shallow.From = withoutDerived(s.From)
	_, tvf := s.From.(*parser.TableFunc)
	return &colNeeds{Names: parser.NamesOf(&shallow), aggregates: tvf && len(s.GroupBy) > 0 && s.Where == nil}
}

// placeholder stands for a derived table's query in the text pruning
// reads: the block cannot name what is inside one (a LATERAL one aside),
// and its aliases there would keep the columns they name.
var placeholder = &parser.Query{Body: &parser.Select{Items: []*parser.SelectItem{{Expr: &parser.Ident{Parts: []string{"_"}}}}}}

// withoutDerived returns t with each derived table's query, unless it is
// LATERAL, replaced by a placeholder, and its column list dropped.
func withoutDerived(t parser.TableExpr) parser.TableExpr {
	switch t := t.(type) {
	case *parser.DerivedTable:
		if t.Lateral {
			return t
		}
		return &parser.DerivedTable{Pos: t.Pos, Query: placeholder, Alias: t.Alias}
	case *parser.Join:
		j := *t
		j.Left, j.Right = withoutDerived(t.Left), withoutDerived(t.Right)
		return &j
	}
	return t
}

// withStatement makes n the statement whose names prunedTVFInput reads,
// unless one is being planned already (n is part of it), until the
// returned function is called.
func (p *Planner) withStatement(n parser.Node) func() {
	if p.stmt != nil {
		return func() {}
	}
	names := parser.NamesOf(n)
	p.stmt = &names
	return func() { p.stmt = nil }
}

// withNeeds makes s the block whose names pruning reads, until the
// returned function restores the enclosing block's.
func (p *Planner) withNeeds(s *parser.Select) func() {
	outer := p.needs
	p.needs = needsOf(s)
	return func() { p.needs = outer }
}

// keeps reports whether column i of in can be read.
func (n *colNeeds) keeps(in *Rel, i int) bool {
	c := in.Cols[i]
	return n.all || n.Words[strings.ToLower(c.Name)] || (c.Qualifier != "" && n.StarOf[strings.ToLower(c.Qualifier)]) ||
		strings.HasPrefix(c.Name, "$") || i == in.RowTime || (in.win != nil && (i == in.win.start || i == in.win.end))
}

// pruned returns in projected onto the columns the block being planned
// can read (see the top of this file), or in itself when it reads them
// all (or none: a side must keep its width for the join's keys).
func (p *Planner) pruned(in *Rel) *Rel {
	from := p.keptCols(in)
	if from == nil {
		return in
	}
	evals, cols, rowtime := pickOf(in, from)
	return projectRel(in, evals, cols, from, rowtime)
}

// keptCols returns the columns of in the block being planned can read,
// or nil when that is all of them (or none).
func (p *Planner) keptCols(in *Rel) []int {
	if p.needs == nil || p.needs.all || in.tvf != nil {
		return nil
	}
	var from []int
	for i := range in.Cols {
		if p.needs.keeps(in, i) {
			from = append(from, i)
		}
	}
	if len(from) == 0 || len(from) == len(in.Cols) {
		return nil
	}
	return from
}

// pickOf returns the projection of in onto its columns from: their
// expressions, columns and the rowtime's index among them (-1: none).
func pickOf(in *Rel, from []int) ([]*expr.Compiled, []expr.Column, int) {
	cols := make([]expr.Column, len(from))
	evals := make([]*expr.Compiled, len(from))
	rowtime := -1
	for k, i := range from {
		cols[k], evals[k] = in.Cols[i], fieldRef(i, in.Cols[i].Type)
		if i == in.RowTime {
			rowtime = k
		}
	}
	return evals, cols, rowtime
}

// prunedTVFInput is the table under a window TVF pruned to the columns
// its query block can read, as pruned does below joins: Nexmark q5 counts
// bids by auction and window, and built a row of all seven bid columns
// per bid for it. Only where nothing changes but the width of the rows
// that flow:
//   - the block aggregates the TVF's rows, read alone and unfiltered
//     (FROM TABLE(…) GROUP BY): the aggregation keeps accumulators, so
//     no state holds the rows pruned (a window rank, deduplication or
//     join over the TVF keeps them, and a restore of a checkpoint taken
//     before would meet rows of the old width); an aggregation that
//     describes its state by its input rows (a one-phase window
//     aggregation) also accepts the unpruned description (stateSchema);
//   - the projection fuses into the Calc the table ends in (a view's): a
//     Calc node of its own would copy every row once more. So the table
//     must be a Calc, and the query — all the job's INSERTs, when planned
//     together (PlanInserts) — must name it only after TABLE, in window
//     TVFs: read elsewhere too (q7 joins the bid view), the view's Calc is
//     shared and nothing fuses into it. (The queries' texts, not the views
//     they read: a view reading the table too still leaves the projection
//     a node of its own, numbered aside, see projectAside.)
//
// Readers pruning alike share the pruned rows (the reuse key extends the
// view's), and window aggregations that were shared stay shared (their
// reuse key reads the view's, prunedFrom). TABLE(…) AS t with t.* keeps
// every column.
func (p *Planner) prunedTVFInput(in *Rel, table parser.Name, alias string) *Rel {
	name := strings.ToLower(table[len(table)-1])
	if in.Op != "Calc" || in.reuseKey == "" || p.needs == nil || !p.needs.aggregates || p.stmt == nil ||
		p.stmt.TableArgs[name] == 0 || p.stmt.Uses[name] != p.stmt.TableArgs[name] ||
		(alias != "" && p.needs.StarOf[strings.ToLower(alias)]) {
		return in
	}
	from := p.keptCols(in)
	if from == nil {
		return in
	}
	evals, cols, rowtime := pickOf(in, from)
	r := projectRel(in, evals, cols, from, rowtime)
	r.reuseKey = in.reuseKey + "|" + r.Detail
	r.prunedFrom = in
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.projectAside("Calc", ins[0], evals), nil
	}
	return r
}

// unpruned is r's input before prunedTVFInput narrowed it, or r.
func unpruned(r *Rel) *Rel {
	if r.prunedFrom != nil {
		return r.prunedFrom
	}
	return r
}
