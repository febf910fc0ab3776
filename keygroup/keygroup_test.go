package keygroup

import "testing"

// Every key group belongs to exactly one subtask, the ranges tile
// [0, maxParallelism) in order, and OperatorIndex agrees with RangeFor.
func TestRangesTileKeyGroups(t *testing.T) {
	for _, maxP := range []int{1, 7, 128, 300} {
		for p := 1; p <= maxP && p <= 40; p++ {
			next := 0
			for i := 0; i < p; i++ {
				r := RangeFor(maxP, p, i)
				if r.Start != next {
					t.Fatalf("max=%d p=%d subtask %d starts at %d, want %d", maxP, p, i, r.Start, next)
				}
				for g := r.Start; g <= r.End; g++ {
					if got := OperatorIndex(g, maxP, p); got != i {
						t.Fatalf("max=%d p=%d group %d: OperatorIndex=%d, RangeFor says %d", maxP, p, g, got, i)
					}
				}
				next = r.End + 1
			}
			if next != maxP {
				t.Fatalf("max=%d p=%d ranges end at %d", maxP, p, next)
			}
		}
	}
}

func TestHashKeyStableAndSpread(t *testing.T) {
	if HashKey("account-1") != HashKey("account-1") || HashKey(42) != HashKey(42) {
		t.Fatal("hash not deterministic")
	}
	type k struct {
		A string
		B int
	}
	if HashKey(k{"x", 1}) != HashKey(k{"x", 1}) || HashKey(k{"x", 1}) == HashKey(k{"x", 2}) {
		t.Fatal("struct keys hash wrongly")
	}
	counts := make([]int, 128)
	for i := 0; i < 128*100; i++ {
		counts[ForKey(i, 128)]++
	}
	for g, c := range counts {
		if c < 50 || c > 150 {
			t.Fatalf("key group %d got %d of 12800 sequential int keys; spread is poor", g, c)
		}
	}
}
