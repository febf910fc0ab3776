package task

import (
	"time"

	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
)

// The subtask's processing-time wake-up. A ticker every TimerTick made an
// idle subtask wake 100 times a second for nothing: at 5,000 subtasks,
// 500,000 wake-ups a second of a job with no data. Instead the mailbox
// loop arms one timer, after every step, for the earliest moment that
// needs it, and an idle subtask with nothing due blocks on its inputs and
// mail alone (checkpoint triggers and completions arrive as mail):
//
//   - a processing-time callback (keyed timers among them): at its time;
//   - a barrier alignment in progress, an unaligned checkpoint's
//     channel state being persisted, or an aligned barrier waiting in an
//     output queue: every TimerTick (the aligned timeout is checked on
//     the tick);
//   - after activity (records, mail): every TimerTick while it lasts, for
//     the metrics, the buffer debloater and incremental TTL cleanup — as
//     in Flink, whose incremental cleanup runs on state access, an idle
//     subtask cleans nothing;
//   - once activity stopped: at the end of each rate window until one
//     whole window without activity is published (its rates 0, idle 1000
//     ms/s); then the metrics stay true without wake-ups (see deepIdle).
//
// A test's Spec.Ticks replaces all of this: every value is a wake-up.

// wake is the timer the mailbox loop waits on for processing time.
type wake struct {
	timer clock.Timer
	// at is when the timer fires; zero when it is stopped.
	at time.Time
	// lastTick is when onTick last ran.
	lastTick time.Time
	// active: something happened since the last tick.
	active bool
	// settle is how many rate windows still need publishing since the
	// activity stopped (2: the first may hold some of it).
	settle int
	// deep: the subtask waits with no wake-up armed (see waitIdle).
	deep bool
	// dirty: activity began since the timer was armed, so it may be
	// needed earlier; ptsNext is the earliest processing-time callback
	// when it was armed. Without either change rearm has nothing to do,
	// which keeps it cheap between the batches of a busy subtask.
	dirty   bool
	ptsNext event.Timestamp
}

// settleWindows is how many rate windows an idle subtask publishes after
// its last activity: the first may hold some of it, the second is quiet.
const settleWindows = 2

// ticks returns the wake-up channel for processing time and a function
// that stops it.
func (t *Subtask) ticks() (<-chan time.Time, func()) {
	if t.spec.Ticks != nil {
		return t.spec.Ticks, func() {}
	}
	tm := t.spec.Clock.NewTimer(time.Hour)
	tm.Stop()
	t.wake = &wake{timer: tm, lastTick: t.spec.Clock.Now(), active: true, settle: settleWindows}
	return tm.C(), func() { tm.Stop() }
}

// touch records activity: the next wake-up comes within TimerTick.
func (t *Subtask) touch() {
	w := t.wake
	if w == nil || w.active {
		return
	}
	w.active, w.settle, w.dirty = true, settleWindows, true
	if w.deep {
		t.wakeFromDeep()
	}
}

// ticked is called by onTick: the activity counted so far is handled.
func (t *Subtask) ticked(windowClosed bool) {
	w := t.wake
	if w == nil {
		return
	}
	w.lastTick, w.at = t.spec.Clock.Now(), time.Time{}
	if !w.active && windowClosed && w.settle > 0 {
		w.settle--
	}
	w.active = false
}

// rearm sets the timer to the next wake-up the subtask needs, if it is
// earlier than the armed one (or none is armed). A timer firing early is
// harmless: onTick runs and the loop re-arms.
func (t *Subtask) rearm() {
	w := t.wake
	if w == nil || !w.at.IsZero() && !w.dirty && t.pts.Next() >= w.ptsNext {
		return
	}
	w.dirty = false
	next, ok := t.nextWake()
	if !ok || !w.at.IsZero() && !next.Before(w.at) {
		return
	}
	w.at, w.ptsNext = next, t.pts.Next()
	w.timer.Reset(max(0, next.Sub(t.spec.Clock.Now())))
}

// nextWake is the earliest moment the subtask needs to run onTick; ok is
// false when nothing needs it.
func (t *Subtask) nextWake() (time.Time, bool) {
	w := t.wake
	var next time.Time
	earliest := func(at time.Time) {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	if w.active || t.unal != nil || len(t.queued) > 0 || t.aligning() {
		earliest(w.lastTick.Add(t.spec.TimerTick))
	}
	if t.stopping == 0 && t.pts.Len() > 0 {
		// In the job's clock (spec.Now), which may be a test's: the wait
		// is its distance from now, on the subtask's clock.
		due := t.pts.Next() - t.spec.Now().UnixMilli()
		earliest(t.spec.Clock.Now().Add(time.Duration(max(0, due)) * time.Millisecond))
	}
	if w.settle > 0 && t.acct != nil && t.spec.Metrics != nil {
		earliest(t.acct.win.at.Add(t.acct.window))
	}
	return next, !next.IsZero()
}

// aligning reports whether a barrier alignment is in progress.
func (t *Subtask) aligning() bool {
	if t.barriers == nil {
		return false
	}
	_, _, _, _, ok := t.barriers.Pending()
	return ok
}

// waitIdle is called before the mailbox loop blocks: it arms the wake-up
// and, when none is needed, publishes the metrics and marks the group
// idle since now (deep idle), so a reader counts the idle time since
// (accumulateIdleTime) without the subtask waking to publish it. A source
// subtask's periodic watermark does not end deep idle; work does (touch).
func (t *Subtask) waitIdle(now time.Time) {
	t.rearm()
	w := t.wake
	if w == nil || !w.at.IsZero() || w.deep {
		return
	}
	w.deep = true
	t.publishMetrics(false)
	if g := t.spec.Metrics; g != nil {
		g.IdleSince.Store(now.UnixMilli())
	}
}

// waitEnd ends a wait of the mailbox loop begun at since.
func (t *Subtask) waitEnd(since time.Time) { t.acct.idleEnd(since) }

// wakeFromDeep ends the deep idle waitIdle began, once there is work: the
// idle time is published, and readers stop adding the wait in progress.
func (t *Subtask) wakeFromDeep() {
	t.wake.deep = false
	t.publishMetrics(false)
	if g := t.spec.Metrics; g != nil {
		g.IdleSince.Store(0)
	}
}
