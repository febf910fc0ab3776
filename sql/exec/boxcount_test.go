package exec

import "testing"

// TestBoxCount checks that boxCount keeps every count's value, within
// countBoxes and past it, and that folding rows into a count past Go's
// own boxes (0 to 255) allocates nothing while countBoxes holds it.
func TestBoxCount(t *testing.T) {
	for _, n := range []int64{-1 << 40, -1, 0, 1, 255, 256, int64(len(countBoxes)) - 1, int64(len(countBoxes)), 1 << 40} {
		if got, ok := boxCount(n).(int64); !ok || got != n {
			t.Fatalf("boxCount(%d) = %v", n, boxCount(n))
		}
	}
	a := aggregator{calls: []AggCall{{Kind: CountStar}, {Kind: Count, Arg: 0}}, insertOnly: true}
	acc := a.newAcc()
	row := []any{"x"}
	for i := 0; i < 1000; i++ { // past 255
		if err := a.accumulate(acc, row, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := a.accumulate(acc, row, false, nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("accumulating a count of about %d allocates %.1f times a row, want 0", rows(acc), allocs)
	}
	if got, want := rows(acc), int64(1000+1001); got != want {
		t.Fatalf("rows %d, want %d", got, want)
	}
	if got := a.result(acc); got[0] != int64(2001) || got[1] != int64(2001) {
		t.Fatalf("result %v, want [2001 2001]", got)
	}
}
