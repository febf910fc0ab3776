package exec

import "testing"

// TestRankedRowsDoNotOverlap: the rows diffRanks emits share one
// allocation but not their memory: each is capped, so appending to one
// (a downstream Calc may) cannot write into the next.
func TestRankedRowsDoNotOverlap(t *testing.T) {
	tn := &TopN{opts: TopNOptions{N: 3}}
	before := []rankedRow{{fields: []any{"a", int64(1)}}}
	after := []rankedRow{{fields: []any{"c", int64(0)}}, {fields: []any{"a", int64(1)}}}
	rr := tn.rankedRows(3, before, after)
	x := rr.next(before[0], 1)
	y := rr.next(after[0], 1)
	z := rr.next(after[1], 2)
	_ = append(x, "spill")
	_ = append(y, "spill")
	if len(x) != 3 || cap(x) != 3 || y[0] != "c" || y[2] != int64(1) || z[0] != "a" || z[2] != int64(2) {
		t.Fatalf("x %v (cap %d), y %v, z %v", x, cap(x), y, z)
	}
}
