package exec

import (
	"testing"
	"time"
)

// TestWindowColumnsShareBoxes: the columns of a window seen again are the
// same boxes (no allocation), and every answer is the window's own, also
// when more windows cycle than the cache holds and when only window_time
// differs.
func TestWindowColumnsShareBoxes(t *testing.T) {
	var c windowColumns
	check := func(win windowRange, wt int64) {
		t.Helper()
		s, e, w := c.of(win, wt)
		if s.(time.Time) != millisTime(win.Start) || e.(time.Time) != millisTime(win.End) || w.(time.Time) != millisTime(wt) {
			t.Fatalf("of(%v, %d) = %v, %v, %v", win, wt, s, e, w)
		}
	}
	for round := 0; round < 3; round++ {
		for i := int64(0); i < 12; i++ { // more windows than entries
			check(windowRange{i * 2000, i*2000 + 10_000}, i*2000+9_999)
		}
	}
	win := windowRange{0, 10_000}
	check(win, 9_999)
	check(win, 10_000) // same window, another window_time
	hop := []windowRange{{0, 10_000}, {2000, 12_000}, {4000, 14_000}, {6000, 16_000}, {8000, 18_000}}
	for _, w := range hop {
		c.of(w, w.End-1)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, w := range hop {
			c.of(w, w.End-1)
		}
	})
	if allocs != 0 {
		t.Fatalf("HOP's 5 windows seen again allocate %v times per round, want 0", allocs)
	}
}
