// Package planner turns Flink-dialect SQL queries into Weir stream graphs.
// A query becomes a tree of relational nodes (Rel), each knowing its output
// columns, its changelog mode (insert-only, or with updates and which
// operator produces them), its upsert key and its time attribute; the tree
// is then built into graph nodes running sql/exec operators, with hash
// exchanges in front of every keyed operator.
package planner

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// Rel is one node of a query plan.
type Rel struct {
	// Op names the operator, as EXPLAIN prints it ("Calc", "GroupAggregate").
	Op string
	// Detail describes its arguments for EXPLAIN.
	Detail string
	Inputs []*Rel
	// Cols are the output columns, in row order.
	Cols []expr.Column
	// InsertOnly is true when the output has only +I rows.
	InsertOnly bool
	// UpdatesFrom names the operator that first produces updates on this
	// path (for a clear error at a sink that cannot take them).
	UpdatesFrom string
	// NoDeletes: an updating result without -D rows (a group aggregation
	// over an insert-only input: a group never disappears).
	NoDeletes bool
	// RowTime is the index of the event-time attribute in Cols, or -1.
	RowTime int
	// upsertKey, when known, are the columns that identify a row of an
	// updating output: every change of one key comes from one producer
	// in order (a group aggregation's keys, an upsert source's PRIMARY
	// KEY). nil: unknown (a join's output).
	upsertKey []int
	// uniqueKey, when known, are columns no two rows of the result share
	// at one time, updating or not: a table's PRIMARY KEY, a
	// deduplication's partition keys. What keys a versioned table (an
	// event-time temporal join's right side, temporal.go).
	uniqueKey []int
	// hashedBy, when set, are the columns the rows were last hash
	// partitioned by, in key order, with no exchange since (a keyed
	// operator and the Calcs chained to it). nil: unknown.
	hashedBy []int
	// tvf is set on a window table function, which a following window
	// aggregation reads instead of building it.
	tvf *tvfInfo
	// win, when set, names the window_start and window_end columns that
	// come unchanged from an event-time window TVF or window aggregation
	// (Flink's window properties), so that a ROW_NUMBER partitioned by
	// them plans a window rank (windowrank.go).
	win *windowCols
	// reuseKey, when set, names what the Rel computes, so that the
	// builder builds Rels of one key once: "scan:t" for a table, "view:v"
	// for a view, and a window aggregation's key over a keyed input.
	reuseKey string
	// prunedFrom is the Rel a pruning projection under a window TVF
	// narrowed (prunedTVFInput), nil for any other.
	prunedFrom *Rel
	// common, when set, reads the sub-expressions the SELECT shares with
	// its WHERE from the columns that compute them (see cse.go).
	common func(parser.Expr) (*expr.Compiled, error)
	// state, when set, says what a keyed operator keeps (its key and
	// values), for its graph.StateSchema; nil: its inputs' rows.
	state *stateCols
	// stateFormat, when set, names how the operator's state encodes its
	// rows when that is not the original RowCodec encoding ("binary
	// rows"): part of the state fingerprint, so an older Weir, which
	// cannot read it, refuses the checkpoint.
	stateFormat string
	// build adds the node's operator(s) to the graph, given the graph nodes
	// of its inputs, and returns its own (last) node.
	build func(b *builder, in []*graph.Node) (*graph.Node, error)
}

// ChangelogMode prints the mode as Flink's EXPLAIN CHANGELOG_MODE does.
func (r *Rel) ChangelogMode() string {
	if r.InsertOnly {
		return "[I]"
	}
	if r.NoDeletes {
		return "[I,UB,UA]"
	}
	return "[I,UB,UA,D]"
}

// withMode copies the changelog mode and time attribute of in.
func (r *Rel) withMode(in *Rel) *Rel {
	r.InsertOnly, r.UpdatesFrom, r.NoDeletes = in.InsertOnly, in.UpdatesFrom, in.NoDeletes
	return r
}

// updating marks r as the producer of updates.
func (r *Rel) updating(name string) *Rel {
	r.InsertOnly, r.UpdatesFrom = false, name
	return r
}

// colIndex finds a column by name (unqualified), or -1.
func (r *Rel) colIndex(name string) int {
	for i, c := range r.Cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Explain prints the plan tree, one node a line, inputs indented.
func Explain(r *Rel, changelog bool) string {
	var b strings.Builder
	explain(&b, r, 0, changelog)
	return b.String()
}

func explain(b *strings.Builder, r *Rel, depth int, changelog bool) {
	fmt.Fprintf(b, "%s%s(%s)", strings.Repeat("   ", depth), r.Op, r.Detail)
	if changelog {
		fmt.Fprintf(b, ", changelogMode=%s", r.ChangelogMode())
	}
	b.WriteByte('\n')
	for _, in := range r.Inputs {
		explain(b, in, depth+1, changelog)
	}
}

func colNames(cols []expr.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// unqualified strips qualifiers: the columns of a derived table or a
// named subquery are only reachable through its alias.
func requalify(cols []expr.Column, q string) []expr.Column {
	out := make([]expr.Column, len(cols))
	for i, c := range cols {
		out[i] = expr.Column{Qualifier: q, Name: c.Name, Type: c.Type}
	}
	return out
}
