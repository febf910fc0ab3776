package sim

import (
	"fmt"
	"math/rand"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/clock"
)

// Sched is a deterministic scheduler for a simulated job (a
// clock.Scheduler, handed to the runtime as runtime.Options.Clock): the
// job's goroutines — its driver, every subtask, every asynchronous
// snapshot writer — run one at a time, each while it holds the baton,
// and give it up wherever they would wait (clock.Choose) or between two
// steps of a mailbox loop. The baton goes to one of the goroutines whose
// wait is over, drawn from a random source seeded with the run's seed;
// when no goroutine can go on, virtual time (a clock.Fake) jumps to the
// next timer. Given the seed, a run takes the same steps in the same
// order, and Trace records them.
type Sched struct {
	*clock.Fake
	mu struct {
		sync.Mutex
		rnd *rand.Rand
		// gs are the live goroutines in the order they were started; all
		// but the baton holder wait in wake for the baton.
		gs  []*simG
		cur *simG // the baton holder; nil while no goroutine runs
		// started: a goroutine was started (Close then waits for idle).
		started bool
	}
	trace *Trace
	steps atomic.Int64
	stop  chan struct{}
	// idle is closed when the last goroutine exits.
	idle chan struct{}
}

type simG struct {
	name  string
	ready func() bool
	wake  chan struct{}
}

// Epoch is where a simulation's virtual time starts.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// NewSched returns a scheduler seeded with seed, recording into trace
// (nil: no record), for one job run. Close ends it.
func NewSched(seed int64, trace *Trace) *Sched {
	s := &Sched{Fake: clock.NewFake(Epoch), trace: trace, stop: make(chan struct{}), idle: make(chan struct{})}
	s.mu.rnd = rand.New(rand.NewSource(seed))
	go s.watchdog()
	return s
}

// Close waits until the job's goroutines have exited (the job's own
// goroutine ends just after Run returned: its exit is the trace's last
// step) and stops the watchdog.
func (s *Sched) Close() {
	s.mu.Lock()
	started := s.mu.started
	s.mu.Unlock()
	if started {
		<-s.idle
	}
	close(s.stop)
}

var _ clock.Scheduler = (*Sched)(nil)

func always() bool { return true }

// Go implements clock.Scheduler: the new goroutine waits for the baton,
// or takes it at once when no goroutine of the simulation runs (the job's
// first, started by the test).
func (s *Sched) Go(name string, f func()) {
	g := &simG{name: name, ready: always, wake: make(chan struct{}, 1)}
	s.mu.Lock()
	s.mu.gs = append(s.mu.gs, g)
	s.mu.started = true
	first := s.mu.cur == nil
	if first {
		s.mu.cur = g
	}
	s.mu.Unlock()
	go func() {
		<-g.wake
		defer s.exit(g)
		f()
	}()
	if first {
		s.record("run " + name)
		g.wake <- struct{}{}
	}
}

// Wait implements clock.Scheduler.
func (s *Sched) Wait(ready func() bool) {
	s.mu.Lock()
	me := s.mu.cur
	if me == nil {
		panic("sim: Wait called outside the simulation's goroutines")
	}
	me.ready = ready
	next := s.pickLocked()
	s.mu.Unlock()
	if next == me {
		return
	}
	next.wake <- struct{}{}
	<-me.wake
}

// exit hands the baton on when g's goroutine ends.
func (s *Sched) exit(g *simG) {
	s.mu.Lock()
	for i, x := range s.mu.gs {
		if x == g {
			s.mu.gs = append(s.mu.gs[:i], s.mu.gs[i+1:]...)
			break
		}
	}
	s.record("exit " + g.name)
	if len(s.mu.gs) == 0 {
		s.mu.cur = nil
		s.mu.Unlock()
		close(s.idle)
		return
	}
	next := s.pickLocked()
	s.mu.Unlock()
	next.wake <- struct{}{}
}

// pickLocked chooses the next baton holder among the goroutines whose
// wait is over, advancing virtual time to the next timer while there is
// none. A simulation where nothing can ever go on again is a bug of the
// runtime's waits: it panics naming the goroutines.
func (s *Sched) pickLocked() *simG {
	for {
		var ready []*simG
		for _, g := range s.mu.gs {
			if g.ready() {
				ready = append(ready, g)
			}
		}
		if len(ready) > 0 {
			g := ready[s.mu.rnd.Intn(len(ready))]
			g.ready = nil
			s.record("run " + g.name)
			s.mu.cur = g
			s.steps.Add(1)
			return g
		}
		next, ok := s.Next()
		if !ok {
			panic(fmt.Sprintf("sim: deadlock: no goroutine can go on and no timer is set; waiting: %s", s.namesLocked()))
		}
		s.record(fmt.Sprintf("time %v", next.Sub(Epoch)))
		s.AdvanceTo(next) // timers fire here: sends, and AfterFunc calls
	}
}

func (s *Sched) namesLocked() string {
	var ns []string
	for _, g := range s.mu.gs {
		ns = append(ns, g.name)
	}
	return strings.Join(ns, ", ")
}

func (s *Sched) record(step string) {
	if s.trace != nil {
		s.trace.Add(step)
	}
}

// watchdog panics, with every goroutine's stack, when the baton has not
// moved for a minute while goroutines live: one of them waits outside
// the scheduler (a channel operation or lock the runtime does not route
// through clock.Choose), which the simulation cannot see.
func (s *Sched) watchdog() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last, since := int64(-1), time.Now()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		n := s.steps.Load()
		s.mu.Lock()
		live := len(s.mu.gs)
		s.mu.Unlock()
		if n != last || live == 0 {
			last, since = n, time.Now()
			continue
		}
		if time.Since(since) > time.Minute {
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
			panic("sim: the baton has not moved for a minute: a goroutine waits outside the scheduler")
		}
	}
}

// Trace is the record of a simulated run: each step the scheduler took
// (which goroutine it ran, virtual time jumps) and what the harness adds
// (faults injected, commits, checkpoint events). Safe for concurrent use.
type Trace struct {
	mu    sync.Mutex
	steps []string
}

// Add appends a step.
func (t *Trace) Add(step string) {
	t.mu.Lock()
	t.steps = append(t.steps, step)
	t.mu.Unlock()
}

// Steps returns the steps so far.
func (t *Trace) Steps() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.steps...)
}

// FirstDifference compares two traces: "" when equal, else where and how
// they part.
func FirstDifference(a, b []string) string {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("step %d of %d/%d: %q vs %q", i, len(a), len(b), a[i], b[i])
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("one trace is a prefix of the other: %d vs %d steps", len(a), len(b))
	}
	return ""
}
