package clock

import "context"

// Scheduler is a Clock that also runs the goroutines waiting on it, one at
// a time: a deterministic simulation's (internal/sim). Each goroutine of
// the runtime's path runs only while it holds the scheduler's baton and
// gives it up at each point where it would wait for another goroutine or
// for time; the scheduler hands the baton to one of the goroutines able to
// go on, chosen by its seeded random source, and when none is, it advances
// its virtual time to the next timer. A run is then a function of the seed.
//
// The runtime finds the Scheduler by a type assertion on its Clock
// (SchedulerOf); with the wall clock there is none, and each wait is the
// plain select it always was.
type Scheduler interface {
	Clock
	// Go starts f on a goroutine of the simulation, which runs once the
	// scheduler hands it the baton; name names it in the trace.
	Go(name string, f func())
	// Wait gives up the baton until ready reports true; the scheduler
	// calls ready (a read of channel lengths and flags, without side
	// effects) while no other goroutine runs. Wait may return at once.
	Wait(ready func() bool)
}

// SchedulerOf returns c's Scheduler, or nil when c is not one.
func SchedulerOf(c Clock) Scheduler {
	s, _ := c.(Scheduler)
	return s
}

// Go starts f as a goroutine of s, or as a plain goroutine when s is nil.
func Go(s Scheduler, name string, f func()) {
	if s == nil {
		go f()
		return
	}
	s.Go(name, f)
}

// Choose waits on s until one of ready holds, and returns the index of the
// first that does. A Go select picks at random among its ready cases,
// which no seed repeats; a select of the runtime's path therefore keeps,
// under a Scheduler, only the channel Choose picked (Only) and sets the
// others to nil, so that it takes the case Choose saw ready.
func Choose(s Scheduler, ready ...func() bool) int {
	chosen := -1
	s.Wait(func() bool {
		chosen = FirstReady(ready...)
		return chosen >= 0
	})
	return chosen
}

// FirstReady is the index of the first of ready that holds, or -1: what a
// non-blocking select (one with a default) picks in a simulation.
func FirstReady(ready ...func() bool) int {
	for i, r := range ready {
		if r() {
			return i
		}
	}
	return -1
}

// Only returns c when chosen is k, or else the zero value (a nil channel,
// never ready in a select).
func Only[C any](chosen, k int, c C) C {
	if chosen == k {
		return c
	}
	var none C
	return none
}

// Pending is ready when c holds a value to receive. An unbuffered channel
// never is: a simulation sends on none.
func Pending[T any](c <-chan T) func() bool { return func() bool { return len(c) > 0 } }

// Room is ready when a send on the buffered channel c does not wait.
func Room[T any](c chan<- T) func() bool { return func() bool { return len(c) < cap(c) } }

// Closed is ready when c, a channel that signals by being closed (a
// context's Done, a source reader's Available), is closed. It receives
// from c: a value sent on c instead would be taken, so such a channel must
// signal only by closing.
func Closed(c <-chan struct{}) func() bool {
	return func() bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
}

// Done is Closed for ctx.
func Done(ctx context.Context) func() bool {
	return func() bool { return ctx.Err() != nil }
}
