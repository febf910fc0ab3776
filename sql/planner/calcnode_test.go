package planner

import (
	"reflect"
	"testing"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// A projection that only picks columns of the projection below it (a
// query's SELECT of a view's columns, a sink's columns as the query gives
// them) becomes one projection evaluating only the expressions picked;
// after a filter, or of a computed expression, it stays a stage of its
// own. Every form gives the rows of projecting stage by stage.
func TestProjectionOfColumnsFusesIntoTheOneBelow(t *testing.T) {
	bigint := types.Type{Kind: types.BigInt, Nullable: true}
	cols := []expr.Column{{Name: "a", Type: bigint}, {Name: "b", Type: bigint}}
	compile := func(src string, cols []expr.Column) *expr.Compiled {
		e, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		c, err := expr.Compile(e, &expr.Scope{Columns: cols})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	calls := 0
	counted := &expr.Compiled{Type: bigint, Eval: func(row []any) (any, error) { calls++; return row[1], nil }}
	// Stage 1: [a + 1, b * 10, counted(b)]; stage 2 picks columns 1 and 0
	// (names: x, y, z); stage 3 picks its column 1 then 0 (a ColumnRef, as
	// the sink's conversion makes).
	xyz := []expr.Column{{Name: "x", Type: bigint}, {Name: "y", Type: bigint}, {Name: "z", Type: bigint}}
	stage1 := []*expr.Compiled{compile("a + 1", cols), compile("b * 10", cols), counted}
	stage2 := []*expr.Compiled{compile("y", xyz), compile("x", xyz)}
	stage3 := []*expr.Compiled{fieldRef(1, bigint), fieldRef(0, bigint)}

	b := &builder{g: &graph.StreamGraph{}, parallelism: 1}
	src := b.g.AddNode(&graph.Node{Name: "src", UID: "src", Parallelism: 1})
	n := b.project("Calc", src, stage1)
	if b.project("Calc", n, stage2) != n || b.project("Calc", n, stage3) != n {
		t.Fatal("a projection did not fuse into the Calc below")
	}
	if got := len(b.calcs[n].stages); got != 1 {
		t.Fatalf("%d stages, want the three projections as one", got)
	}
	row := []any{int64(4), int64(5)}
	got, err := b.calcs[n].stages[0].Project(row)
	// Stage by stage: [5, 50, 5] → [50, 5] → [5, 50].
	if err != nil || !reflect.DeepEqual(got, []any{int64(5), int64(50)}) || calls != 0 {
		t.Fatalf("fused projection %v, %v (%d calls of the unpicked expression), want [5 50] and none", got, err, calls)
	}

	// A filter between, or a computed expression, keeps a stage apart.
	b2 := &builder{g: &graph.StreamGraph{}, parallelism: 1}
	src2 := b2.g.AddNode(&graph.Node{Name: "src", UID: "src", Parallelism: 1})
	m := b2.project("Calc", src2, stage1)
	b2.calc("Calc", m, &exec.Calc{Filter: func([]any) (bool, error) { return true, nil }})
	b2.project("Calc", m, stage2)
	b2.project("Calc", m, []*expr.Compiled{compile("x + y", xyz)})
	if got := len(b2.calcs[m].stages); got != 4 {
		t.Fatalf("%d stages, want 4 (projection, filter, projection, projection)", got)
	}
}

// A deduplication's row number, appended by a Calc, and dropped by the
// projection after it (SELECT of the input's columns, Nexmark q18): the
// Calc passes the deduplication's rows on as they are. Any other pick
// (another order, fewer columns, the row number) still projects.
func TestRowNumberDroppedPassesRowsThrough(t *testing.T) {
	bigint := types.Type{Kind: types.BigInt, Nullable: true}
	cols := []expr.Column{{Name: "a", Type: bigint}, {Name: "b", Type: bigint}}
	row := []any{int64(4), int64(5)}
	for _, tc := range []struct {
		picks []int
		want  []any // nil: the row itself, passed through
	}{
		{[]int{0, 1}, nil},
		{[]int{1, 0}, []any{int64(5), int64(4)}},
		{[]int{0}, []any{int64(4)}},
		{[]int{0, 1, 2}, []any{int64(4), int64(5), int64(1)}},
		{[]int{2}, []any{int64(1)}},
	} {
		b := &builder{g: &graph.StreamGraph{}, parallelism: 1}
		src := b.g.AddNode(&graph.Node{Name: "dedup", UID: "dedup", Parallelism: 1})
		n := b.withRowNumber(src, cols)
		evals := make([]*expr.Compiled, len(tc.picks))
		for i, j := range tc.picks {
			evals[i] = fieldRef(j, bigint)
		}
		if b.project("Calc", n, evals) != n {
			t.Fatalf("picks %v: the projection did not fuse into the row number's Calc", tc.picks)
		}
		stages := b.calcs[n].stages
		if len(stages) != 1 {
			t.Fatalf("picks %v: %d stages, want 1", tc.picks, len(stages))
		}
		s := stages[0]
		if tc.want == nil {
			if s.Project != nil || s.Filter != nil {
				t.Errorf("picks %v: the stage projects, want the rows passed through", tc.picks)
			}
			continue
		}
		got, err := s.Project(row)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("picks %v: %v, %v; want %v", tc.picks, got, err, tc.want)
		}
	}
}

// A projection of columns right after a node that can emit only some of
// its columns (a lookup join) folds into it, composing with one folded
// before; a computed expression, or a node another edge reads already,
// gets a Calc of its own.
func TestProjectionFoldsIntoPickableNode(t *testing.T) {
	bigint := types.Type{Kind: types.BigInt, Nullable: true}
	refs := func(idx ...int) []*expr.Compiled {
		out := make([]*expr.Compiled, len(idx))
		for i, j := range idx {
			out[i] = fieldRef(j, bigint)
		}
		return out
	}
	b := &builder{g: &graph.StreamGraph{}, parallelism: 1}
	n := b.g.AddNode(&graph.Node{Name: "LookupJoin", UID: "lj", Parallelism: 1})
	var set [][]int
	b.pickable(n, 4, func(idx []int) bool { set = append(set, idx); return true })
	c := b.project("Calc", n, refs(3, 0, 2))
	if want := [][]int{{3, 0, 2}}; !reflect.DeepEqual(set, want) {
		t.Fatalf("the node was set to emit %v, want %v", set, want)
	}
	// The Calc stays (operators keep their uids), passing rows through,
	// and a pick of what the node emits, in order, keeps it so.
	if c == n || b.project("Calc", c, refs(0, 1, 2)) != c {
		t.Fatal("the folded projection's Calc is not a node of its own")
	}
	if st := b.calcs[c].stages; len(st) != 1 || st[0].Project != nil || st[0].Filter != nil {
		t.Fatalf("the folded projection's Calc does not pass rows through: %d stages", len(st))
	}
	if b.project("Calc", n, refs(1)) == n || len(set) != 1 { // read by the Calc now
		t.Fatal("a projection folded into a node another edge reads")
	}
	e, err := parser.ParseExpr("a + 1")
	if err != nil {
		t.Fatal(err)
	}
	plus, err := expr.Compile(e, &expr.Scope{Columns: []expr.Column{{Name: "a", Type: bigint}}})
	if err != nil {
		t.Fatal(err)
	}
	b2 := &builder{g: &graph.StreamGraph{}, parallelism: 1}
	m := b2.g.AddNode(&graph.Node{Name: "LookupJoin", UID: "lj", Parallelism: 1})
	b2.pickable(m, 2, func([]int) bool { t.Fatal("set on a node read already"); return false })
	if b2.project("Calc", m, []*expr.Compiled{plus}) == m {
		t.Fatal("a computed expression folded into the node")
	}
	if b2.project("Calc", m, refs(1)) == m {
		t.Fatal("a projection folded into a node another edge reads")
	}
}

// TestProjectAsideKeepsUIDs: a projection a planner change adds (column
// pruning under a window TVF) fuses into the unread Calc before it, adding
// no node; where it cannot, its node's uid is numbered aside, and the
// operators added after it get the uids they had without it.
func TestProjectAsideKeepsUIDs(t *testing.T) {
	bigint := types.Type{Kind: types.BigInt, Nullable: true}
	pick := []*expr.Compiled{fieldRef(1, bigint)}
	b := &builder{g: &graph.StreamGraph{}, parallelism: 1}
	src := b.op("Source", nil)
	c := b.project("Calc", src, []*expr.Compiled{fieldRef(0, bigint), fieldRef(1, bigint)})
	if got := b.projectAside("Calc", c, pick); got != c {
		t.Fatalf("the projection did not fuse into the unread Calc: node %s", got.UID)
	}
	b.markRead(c)
	aside := b.projectAside("Calc", c, pick)
	next := b.op("GroupAggregate", nil)
	if aside == c || aside.UID != "sql-2-1-calc" || next.UID != "sql-3-groupaggregate" {
		t.Fatalf("uids %s, %s, %s, %s; want sql-1-source, sql-2-calc, sql-2-1-calc, sql-3-groupaggregate",
			src.UID, c.UID, aside.UID, next.UID)
	}
}
