package task

import (
	"testing"
	"time"
)

// TestWindowRates: a window's idle and back-pressured time become ms per
// second (capped at 1000), busy the rest of the second; counts per second.
func TestWindowRates(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		prev, cur totals
		elapsed   time.Duration
		want      rates
	}{
		{totals{}, totals{idle: 1000 * ms, backPressured: 3000 * ms, recordsIn: 500, bytesOut: 10}, 5 * time.Second,
			rates{idleMs: 200, backPressuredMs: 600, busyMs: 200, recordsIn: 100, bytesOut: 2}},
		{totals{idle: 100 * ms, recordsOut: 7}, totals{idle: 100 * ms, recordsOut: 7}, 2 * time.Second,
			rates{busyMs: 1000}},
		// Rounding can make the waits a little over the window: capped.
		{totals{}, totals{idle: 1001 * ms}, time.Second, rates{idleMs: 1000}},
		{totals{}, totals{idle: time.Second}, 0, rates{}},
	} {
		if got := windowRates(c.prev, c.cur, c.elapsed); got != c.want {
			t.Errorf("windowRates(%+v, %+v, %v) = %+v, want %+v", c.prev, c.cur, c.elapsed, got, c.want)
		}
	}
}
