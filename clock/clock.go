// Package clock is the runtime's source of time: the current time, timers,
// tickers and delayed calls. Real is the wall clock; a simulation hands the
// runtime a clock of its own (runtime.Options.Clock), so that every wait on
// the runtime's path — the driver's tick, a subtask's processing-time
// wake-up, a source's watermark interval, a commit retry's backoff — follows
// simulated time. It imports nothing of Weir's.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// NewTimer returns a timer whose channel receives the time once d has
	// passed (time.NewTimer).
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker whose channel receives the time every d
	// (time.NewTicker); d must be positive.
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f on a goroutine of its own once d has passed
	// (time.AfterFunc). The timer's channel is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer (time.Timer).
type Timer interface {
	// C is the channel the time is sent on; nil for AfterFunc's timers.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped
	// it (false: it had fired or was stopped).
	Stop() bool
	// Reset makes the timer fire d from now; it reports whether it had
	// been active.
	Reset(d time.Duration) bool
}

// Ticker sends the time at intervals (time.Ticker).
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Real is the wall clock: the time package's functions.
var Real Clock = realClock{}

// Or returns c, or Real when c is nil: the default of every Clock option.
func Or(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

// Since is the time passed on c since t.
func Since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }

// Sleep waits d on c, or until ctx is done; it reports whether the whole
// of d passed.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	tc, done := t.C(), ctx.Done()
	if s := SchedulerOf(c); s != nil {
		i := Choose(s, Pending(tc), Done(ctx))
		tc, done = Only(i, 0, tc), Only(i, 1, done)
	}
	select {
	case <-tc:
		return true
	case <-done:
		return false
	}
}

type realClock struct{}

func (realClock) Now() time.Time                   { return time.Now() }
func (realClock) NewTimer(d time.Duration) Timer   { return realTimer{time.NewTimer(d)} }
func (realClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }
