package task

import (
	"time"

	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/metrics"
)

// RateWindow is the span the per-second rates and the busy, idle and
// back-pressured time ratios of a subtask are measured over, as Flink's
// meters and time gauges update every 5 s.
const RateWindow = 5 * time.Second

// timeAccount splits a subtask's wall time, as Flink's task does, into
// idle (its goroutine waits for input, mail or a timer: nothing to do),
// back-pressured (it waits for an output credit: downstream is slower)
// and busy (the rest: running operators). Only the subtask goroutine
// touches it; it measures with the subtask's Clock (the wall clock's
// monotonic reading unless a simulation replaces it), never the job's Now
// (tests fake that one, and a wait is real time).
type timeAccount struct {
	clock clock.Clock
	// sched is clock's Scheduler in a simulation (nil otherwise): a credit
	// wait goes through it.
	sched               clock.Scheduler
	start               time.Time
	idle, backPressured time.Duration
	// group is the subtask's metrics group (nil without metrics): its
	// BackPressured flag is set during each wait for a credit.
	group *metrics.Subtask
	// win is where the current rate window started.
	win windowMark
	// window is how long a rate window lasts (RateWindow; tests shorten it).
	window time.Duration
	// waitSince is when the credit wait in progress began (zero: none).
	// publish counts it up to now, so a subtask blocked for good shows a
	// back-pressured ratio rising to 1, not the ratio of its last window
	// before the wait.
	waitSince time.Time
	// duringWait, if set, publishes the subtask's metrics; a credit wait
	// calls it every blockedPublish while it lasts (the mailbox loop, which
	// publishes at each tick, does not run then).
	duringWait func()
}

// blockedPublish is how often a subtask blocked on a credit publishes its
// metrics.
const blockedPublish = 100 * time.Millisecond

// totals are what a rate window is measured between.
type totals struct {
	idle, backPressured                      time.Duration
	recordsIn, recordsOut, bytesIn, bytesOut int64
}

type windowMark struct {
	at time.Time
	totals
}

func newTimeAccount(g *metrics.Subtask, c clock.Clock) *timeAccount {
	now := c.Now()
	return &timeAccount{clock: c, sched: clock.SchedulerOf(c), start: now, group: g, win: windowMark{at: now}, window: RateWindow}
}

// waitStart is called when the subtask must wait for a credit; waitEnd
// once it got one (or gave up). Nil-safe.
func (a *timeAccount) waitStart() {
	if a == nil {
		return
	}
	if a.group != nil {
		a.group.BackPressured.Store(true)
	}
	a.waitSince = a.clock.Now()
}

// waitEnd ends the wait waitStart began (publish may have counted a part
// of it already: it moves waitSince).
func (a *timeAccount) waitEnd() {
	if a == nil {
		return
	}
	a.backPressured += clock.Since(a.clock, a.waitSince)
	a.waitSince = time.Time{}
	if a.group != nil {
		a.group.BackPressured.Store(false)
	}
}

// waitTick returns a channel that fires while a credit wait lasts, when
// the subtask should publish its metrics (nil: never), and its stop.
func (a *timeAccount) waitTick() (<-chan time.Time, func()) {
	if a == nil || a.duringWait == nil {
		return nil, func() {}
	}
	tk := a.clock.NewTicker(blockedPublish)
	return tk.C(), tk.Stop
}

// scheduler is the simulation's scheduler, or nil (also for a nil
// account).
func (a *timeAccount) scheduler() clock.Scheduler {
	if a == nil {
		return nil
	}
	return a.sched
}

// idleEnd adds the time since since, which the subtask spent waiting for
// something to do.
func (a *timeAccount) idleEnd(since time.Time) { a.idle += clock.Since(a.clock, since) }

// publish stores the accumulated times into g and, once RateWindow has
// passed since the window began (or when final, at the subtask's exit),
// the rates and ratios of the window; then a new window begins. It
// reports whether the window closed.
func (a *timeAccount) publish(g *metrics.Subtask, cur totals, final bool) bool {
	now := a.clock.Now()
	if !a.waitSince.IsZero() {
		a.backPressured += now.Sub(a.waitSince)
		a.waitSince = now
	}
	cur.idle, cur.backPressured = a.idle, a.backPressured
	busy := max(0, now.Sub(a.start)-a.idle-a.backPressured)
	g.AccumulateIdleMs.Store(a.idle.Milliseconds())
	g.AccumulateBackPressuredMs.Store(a.backPressured.Milliseconds())
	g.AccumulateBusyMs.Store(busy.Milliseconds())
	elapsed := now.Sub(a.win.at)
	if elapsed < a.window && !(final && elapsed > 0) {
		return false
	}
	r := windowRates(a.win.totals, cur, elapsed)
	g.IdleMsPerSecond.Store(r.idleMs)
	g.BackPressuredMsPerSecond.Store(r.backPressuredMs)
	g.BusyMsPerSecond.Store(r.busyMs)
	g.RecordsInPerSecond.Store(r.recordsIn)
	g.RecordsOutPerSecond.Store(r.recordsOut)
	g.BytesInPerSecond.Store(r.bytesIn)
	g.BytesOutPerSecond.Store(r.bytesOut)
	a.win = windowMark{at: now, totals: cur}
	return true
}

// rates are a window's per-second values.
type rates struct {
	idleMs, backPressuredMs, busyMs          float64
	recordsIn, recordsOut, bytesIn, bytesOut float64
}

// windowRates is what happened per second between two totals taken
// elapsed apart: idle and back-pressured ms per second (each at most
// 1000) and busy the rest, as Flink's busyTimeMsPerSecond; counts per
// second.
func windowRates(prev, cur totals, elapsed time.Duration) rates {
	if elapsed <= 0 {
		return rates{}
	}
	sec := elapsed.Seconds()
	perSec := func(d int64) float64 { return float64(d) / sec }
	msPerSec := func(d time.Duration) float64 { return min(1000, max(0, float64(d)/float64(time.Millisecond)/sec)) }
	r := rates{
		idleMs:          msPerSec(cur.idle - prev.idle),
		backPressuredMs: msPerSec(cur.backPressured - prev.backPressured),
		recordsIn:       perSec(cur.recordsIn - prev.recordsIn),
		recordsOut:      perSec(cur.recordsOut - prev.recordsOut),
		bytesIn:         perSec(cur.bytesIn - prev.bytesIn),
		bytesOut:        perSec(cur.bytesOut - prev.bytesOut),
	}
	r.busyMs = max(0, 1000-r.idleMs-r.backPressuredMs)
	return r
}
