package clock

import (
	"sync"
	"time"
)

// Fake is a clock that moves only when told to (Advance, AdvanceTo): the
// simulation's virtual time. Due timers fire in the order of their time,
// and of their creation for equal times, so a run that advances a Fake the
// same way sees the same firings. A timer's channel holds one value, and a
// tick that finds it full is dropped, as time.Ticker drops ticks for a slow
// receiver. AfterFunc's f runs on the goroutine that advances the clock,
// not a goroutine of its own: it must not wait for that goroutine.
type Fake struct {
	mu struct {
		sync.Mutex
		now    time.Time
		seq    uint64
		timers []*fakeTimer
	}
}

// NewFake returns a Fake reading start.
func NewFake(start time.Time) *Fake {
	f := &Fake{}
	f.mu.now = start
	return f
}

type fakeTimer struct {
	f      *Fake
	c      chan time.Time
	fn     func()
	at     time.Time
	period time.Duration // > 0 for a ticker
	seq    uint64
	active bool
	listed bool // in Fake.mu.timers
}

// Now implements Clock.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.now
}

// NewTimer implements Clock.
func (f *Fake) NewTimer(d time.Duration) Timer {
	return f.add(&fakeTimer{c: make(chan time.Time, 1)}, d)
}

// NewTicker implements Clock.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	return fakeTicker{f.add(&fakeTimer{c: make(chan time.Time, 1), period: d}, d)}
}

type fakeTicker struct{ t *fakeTimer }

func (k fakeTicker) C() <-chan time.Time { return k.t.c }
func (k fakeTicker) Stop()               { k.t.Stop() }

// AfterFunc implements Clock; f runs on the advancing goroutine.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	return f.add(&fakeTimer{fn: fn}, d)
}

func (f *Fake) add(t *fakeTimer, d time.Duration) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t.f = f
	f.armLocked(t, d)
	return t
}

// armLocked (re)starts t to fire d from now, after every timer armed
// before it for the same time.
func (f *Fake) armLocked(t *fakeTimer, d time.Duration) {
	f.mu.seq++
	t.at, t.seq, t.active = f.mu.now.Add(d), f.mu.seq, true
	if !t.listed {
		t.listed = true
		f.mu.timers = append(f.mu.timers, t)
	}
}

// Next returns when the earliest active timer fires; ok is false when
// none is active.
func (f *Fake) Next() (at time.Time, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := f.earliestLocked(); t != nil {
		return t.at, true
	}
	return time.Time{}, false
}

// earliestLocked is the active timer that fires first, or nil; it drops
// inactive timers from the list.
func (f *Fake) earliestLocked() *fakeTimer {
	var best *fakeTimer
	live := f.mu.timers[:0]
	for _, t := range f.mu.timers {
		if !t.active {
			t.listed = false
			continue
		}
		live = append(live, t)
		if best == nil || t.at.Before(best.at) || t.at.Equal(best.at) && t.seq < best.seq {
			best = t
		}
	}
	clear(f.mu.timers[len(live):])
	f.mu.timers = live
	return best
}

// Advance moves the clock d forward, firing on the way every timer that
// falls due, each at its own time.
func (f *Fake) Advance(d time.Duration) { f.AdvanceTo(f.Now().Add(d)) }

// AdvanceTo moves the clock to to (never back), firing on the way every
// timer due by then, each with the clock at its time.
func (f *Fake) AdvanceTo(to time.Time) {
	for f.fireNext(to) {
	}
	f.mu.Lock()
	if to.After(f.mu.now) {
		f.mu.now = to
	}
	f.mu.Unlock()
}

// fireNext fires the earliest timer due by to, if any.
func (f *Fake) fireNext(to time.Time) bool {
	f.mu.Lock()
	t := f.earliestLocked()
	if t == nil || t.at.After(to) {
		f.mu.Unlock()
		return false
	}
	if t.at.After(f.mu.now) {
		f.mu.now = t.at
	}
	now := f.mu.now
	if t.period > 0 {
		f.armLocked(t, t.period)
	} else {
		t.active = false
	}
	f.mu.Unlock()
	if t.fn != nil {
		t.fn()
		return true
	}
	select {
	case t.c <- now:
	default: // the receiver has not taken the last one: dropped
	}
	return true
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.active
	t.active = false
	t.drain()
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.active
	t.drain()
	t.f.armLocked(t, d)
	return was
}

// drain empties the channel on Stop and Reset: no stale time is received
// after them, as with the time package's timers since Go 1.23.
func (t *fakeTimer) drain() {
	select {
	case <-t.c:
	default:
	}
}
