package task

import (
	"runtime"
	"time"
)

// prefetchChooser decides whether the subtask has its chain's head
// prefetch the state of each batch (operator.Prefetcher). Prefetching
// pays when the state a batch touches is out of the CPU's caches and
// costs when it is in them, and only the run tells which: Nexmark q16's DISTINCT sets of
// millions of values at 10 M events gained in pairs of whole runs (and
// broke even measured inside one run, bench/nexmark/README.md), q15's,
// which the caches hold, lose. So it times the records of trial batches without, then trial
// batches with, and keeps the faster way per record for keep batches
// before trying again (state grows). A pure state machine: the subtask
// passes each trial batch's time (threadSpan: the CPU time of the
// subtask's thread, the goroutine locked to it, less what ran between its
// records that was not its records': admitBetween's barriers, snapshots). Wall time on a machine
// shared by more busy threads than cores swung 2.3 to 8 µs per record
// between trials of one query, and the choice with it.
type prefetchChooser struct {
	trial, keep int
	phase       int // trying without, trying with (0, 1), keeping (2)
	n           int // batches so far in the phase
	rows, ns    [2]int64
	on          bool // the way kept
}

// newPrefetchChooser starts with a trial.
func newPrefetchChooser(trial, keep int) *prefetchChooser {
	return &prefetchChooser{trial: trial, keep: keep}
}

// use reports whether to prefetch the next batch.
func (c *prefetchChooser) use() bool {
	if c.phase < 2 {
		return c.phase == 1
	}
	return c.on
}

// trying reports whether the next batch is a trial's: one whose time
// took wants.
func (c *prefetchChooser) trying() bool { return c.phase < 2 }

// took records that the last batch's rows took d (in a trial; outside
// one, d is not read); a batch not counted (its time could not be read)
// only counts toward the trial's length.
func (c *prefetchChooser) took(rows int, d time.Duration, counted bool) {
	if c.phase < 2 && counted {
		c.rows[c.phase] += int64(rows)
		c.ns[c.phase] += int64(d)
	}
	c.n++
	switch {
	case c.phase < 2 && c.n >= c.trial:
		c.phase, c.n = c.phase+1, 0
		if c.phase == 2 {
			r, ns := c.rows, c.ns
			// per record: float64, as ns × rows could overflow an int64
			c.on = r[0] > 0 && r[1] > 0 && float64(ns[1])/float64(r[1]) < float64(ns[0])/float64(r[0])
			c.rows, c.ns = [2]int64{}, [2]int64{}
		}
	case c.phase == 2 && c.n >= c.keep:
		c.phase, c.n = 0, 0
	}
}

// threadClock reads the clock threadSpan measures by (a variable for
// tests).
var threadClock = readThreadClock

// threadSpan measures the CPU time a batch's records take on the
// subtask's thread (threadClock), paused around other work. The span
// locks the goroutine to its thread: a goroutine that blocks (on an
// output's credit) and resumes on its thread would otherwise count what
// other goroutines ran there meanwhile. A span whose clock could not be
// read, or went back, is not counted.
type threadSpan struct {
	on, paused, broken bool
	at, sum            int64
}

func (s *threadSpan) start() {
	runtime.LockOSThread()
	s.on = true
	s.resume()
}

func (s *threadSpan) pause() {
	if !s.on || s.paused {
		return
	}
	s.paused = true
	if s.broken {
		return
	}
	ns, ok := threadClock()
	if !ok || ns < s.at {
		s.broken = true
		return
	}
	s.sum += ns - s.at
}

func (s *threadSpan) resume() {
	if !s.on {
		return
	}
	s.paused = false
	if s.broken {
		return
	}
	var ok bool
	if s.at, ok = threadClock(); !ok {
		s.broken = true
	}
}

// end returns the span's time, and whether it counts; it unlocks the
// thread.
func (s *threadSpan) end() (time.Duration, bool) {
	if !s.on {
		return 0, false
	}
	s.pause()
	s.on = false
	runtime.UnlockOSThread()
	return time.Duration(s.sum), !s.broken
}
