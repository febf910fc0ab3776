package task

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
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

// TestBlockedSubtaskKeepsPublishing: a subtask blocked for good on an
// output credit keeps publishing its back-pressured time while it waits,
// so its ratio rises to 1 (1000 ms per second) and stays there; before, it
// kept the ratio of its last window before the wait.
func TestBlockedSubtaskKeepsPublishing(t *testing.T) {
	g := NewInputGate([]int{0}, 1)
	out := g.Channel(0)
	sub := &metrics.Subtask{}
	acct := newTimeAccount(sub, clock.Real)
	acct.window = 20 * time.Millisecond
	published := make(chan float64, 1000)
	acct.duringWait = func() {
		acct.publish(sub, totals{}, false)
		published <- sub.BackPressuredMsPerSecond.Load()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		if err := out.send(ctx, event.Batch{}, acct); err != nil { // takes the only credit
			done <- err
			return
		}
		done <- out.send(ctx, event.Batch{}, acct) // no credit comes back
	}()
	// blockedPublish is longer than the window: from the second publish
	// on, each window lies wholly inside the wait.
	var got []float64
	for len(got) < 3 {
		select {
		case v := <-published:
			got = append(got, v)
		case err := <-done:
			t.Fatalf("send returned %v while blocked", err)
		case <-time.After(10 * time.Second):
			t.Fatalf("the blocked subtask published %v in 10 s, want 3 windows", got)
		}
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("send: %v, want context.Canceled", err)
	}
	for _, v := range got[1:] {
		if math.Abs(v-1000) > 1e-6 {
			t.Errorf("back-pressured ms per second while blocked: %v, want 1000", got)
		}
	}
	if sub.BackPressured.Load() || acct.backPressured < 2*blockedPublish {
		t.Errorf("after the wait: isBackPressured %v, back-pressured time %v", sub.BackPressured.Load(), acct.backPressured)
	}
}
