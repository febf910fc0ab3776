package task

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// readingAhead logs what it prefetches and what it processes, on each
// input.
type readingAhead struct {
	operator.Base
	log  []string
	done chan struct{}
}

func (r *readingAhead) Prefetch(rs []event.Record, input int) {
	vs := make([]any, len(rs))
	for i, rec := range rs {
		vs[i] = rec.Value
	}
	r.log = append(r.log, fmt.Sprint("ahead", input, vs))
}

func (r *readingAhead) ProcessElement(rec event.Record) error  { return r.process(1, rec) }
func (r *readingAhead) ProcessElement2(rec event.Record) error { return r.process(2, rec) }

func (r *readingAhead) process(input int, rec event.Record) error {
	r.log = append(r.log, fmt.Sprint(input, ":", rec.Value))
	if rec.Value == 6 {
		close(r.done)
	}
	return nil
}

// runAhead runs a subtask whose chain is op alone on gate's inputs; wait
// waits until op has processed record 6, then stops the subtask.
func runAhead(t *testing.T, gate *InputGate, op operator.Operator, done chan struct{}) (ctx context.Context, wait func()) {
	ctx, cancel := context.WithCancel(context.Background())
	opCtx := &operator.Context{Subtask: event.SubtaskID{Vertex: "ra", Index: 0}, UID: "ra", Parallelism: 1,
		MaxParallelism: 128, Metrics: &operator.Metrics{}, Now: func() int64 { return time.Now().UnixMilli() }}
	st := New(Spec{ID: opCtx.Subtask, Gate: gate, Reports: make(chan Report, 16), Mail: make(chan Mail, 4), Now: time.Now,
		Chain: []ChainedOperator{{UID: "ra", Op: op, Ctx: opCtx}}})
	ran := make(chan error, 1)
	go func() { ran <- st.Run(ctx) }()
	return ctx, func() {
		defer cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("record 6 not processed")
		}
		cancel()
		<-ran
	}
}

// TestSubtaskPrefetchesEachBatch: the head of a chain that prefetches
// (operator.Prefetcher) is handed a batch of more than one record, with
// its input (here the second), before it processes the batch's records,
// when the chooser says so: not in its first trial's batches, in its
// second's.
func TestSubtaskPrefetchesEachBatch(t *testing.T) {
	gate := NewInputGate([]int{0, 1}, 4)
	op := &readingAhead{done: make(chan struct{})}
	ctx, wait := runAhead(t, gate, op, op.done)
	send := func(ch int, vs ...int) {
		if err := gate.Channel(ch).Send(ctx, event.Batch{Records: recs(vs...)}); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	send(1, 1) // one record: never prefetched
	want = append(want, "2:1")
	v := 100
	for trial := range 2 { // one channel: batches of two keep their order
		for range prefetchTrial {
			send(1, v, v+1)
			if trial == 1 {
				want = append(want, fmt.Sprintf("ahead2 [%d %d]", v, v+1))
			}
			want = append(want, fmt.Sprintf("2:%d", v), fmt.Sprintf("2:%d", v+1))
			v += 2
		}
	}
	send(1, 6)
	want = append(want, "2:6")
	wait()
	if !slices.Equal(op.log, want) {
		t.Fatalf("the operator saw %q,\nwant %q", op.log, want)
	}
}

// TestPrefetchChooserKeepsTheFasterWay: after a trial without and one with
// prefetching, the chooser keeps the way that took less time per record
// (not per batch: the batches differ in size) for its keep batches, then
// tries again; a tie keeps prefetching off.
func TestPrefetchChooserKeepsTheFasterWay(t *testing.T) {
	c := newPrefetchChooser(3, 5)
	// run feeds a cycle's batches (two trials of 3, a keep of 5) of 100,
	// 10, 100, … records taking per[way] per record; it returns the way
	// each batch was processed.
	run := func(per [2]time.Duration, batches int) []bool {
		var used []bool
		for i := range batches {
			on := c.use()
			if c.trying() != (i < 6) {
				t.Fatalf("batch %d of a cycle: trying %v", i, c.trying())
			}
			used = append(used, on)
			d, rows := per[0], 100-90*(i%2)
			if on {
				d = per[1]
			}
			c.took(rows, time.Duration(rows)*d, true)
		}
		return used
	}
	f, tr := false, true
	if got, want := run([2]time.Duration{200, 100}, 11), []bool{f, f, f, tr, tr, tr, tr, tr, tr, tr, tr}; !slices.Equal(got, want) {
		t.Fatalf("prefetching faster: used %v, want %v", got, want)
	}
	if got, want := run([2]time.Duration{100, 200}, 11), []bool{f, f, f, tr, tr, tr, f, f, f, f, f}; !slices.Equal(got, want) {
		t.Fatalf("prefetching slower: used %v, want %v", got, want)
	}
	if got, want := run([2]time.Duration{100, 100}, 11), []bool{f, f, f, tr, tr, tr, f, f, f, f, f}; !slices.Equal(got, want) {
		t.Fatalf("a tie: used %v, want %v", got, want)
	}
	// Per batch, the trial with prefetching (batches of 10, 100, 10
	// records at 150 ns) took less than the one without (100, 10, 100 at
	// 100 ns); per record it took more.
	c = newPrefetchChooser(3, 5)
	for i, x := range []struct {
		rows int
		per  time.Duration
	}{{100, 100}, {10, 100}, {100, 100}, {10, 150}, {100, 150}, {10, 150}} {
		if c.use() != (i >= 3) {
			t.Fatalf("batch %d: use %v", i, c.use())
		}
		c.took(x.rows, time.Duration(x.rows)*x.per, true)
	}
	if c.use() {
		t.Fatal("kept prefetching, slower per record")
	}
}

// TestPrefetchChooserIgnoresBatchesNotCounted: a batch whose time could
// not be read does not sway the choice.
func TestPrefetchChooserIgnoresBatchesNotCounted(t *testing.T) {
	c := newPrefetchChooser(3, 5)
	for i := range 6 {
		d, counted := 100*time.Nanosecond, true
		if c.use() {
			d = 150
		}
		if i == 0 {
			d, counted = time.Hour, false
		}
		c.took(100, 100*d, counted)
	}
	if c.use() {
		t.Fatal("a batch not counted swayed the choice to prefetching")
	}
}

// TestThreadSpanLeavesOutPauses: a span counts the CPU time its thread
// spends between start and end, less the pauses; a pause or end twice
// adds nothing.
func TestThreadSpanLeavesOutPauses(t *testing.T) {
	if _, ok := threadClock(); !ok {
		t.Fatal("the thread clock cannot be read")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	spin := func(d time.Duration) { // until the thread has run d
		from, _ := threadClock()
		for now := from; now-from < int64(d); now, _ = threadClock() {
		}
	}
	var s threadSpan
	s.start()
	spin(5 * time.Millisecond)
	s.pause()
	spin(30 * time.Millisecond)
	s.pause()
	s.resume()
	spin(5 * time.Millisecond)
	d, ok := s.end()
	if !ok || d < 10*time.Millisecond || d >= 30*time.Millisecond {
		t.Fatalf("span of 10 ms run around a 30 ms pause: %v, counted %v", d, ok)
	}
	if d2, ok := s.end(); ok || d2 != 0 {
		t.Fatalf("a span ended twice: %v, %v", d2, ok)
	}
}

// TestThreadSpanBroken: a span whose clock failed, or went back, is not
// counted, even if the clock works again; a span never started neither.
func TestThreadSpanBroken(t *testing.T) {
	defer func(c func() (int64, bool)) { threadClock = c }(threadClock)
	readings := []struct {
		ns int64
		ok bool
	}{}
	threadClock = func() (int64, bool) {
		r := readings[0]
		readings = readings[1:]
		return r.ns, r.ok
	}
	for name, rs := range map[string][]struct {
		ns int64
		ok bool
	}{
		"failed":    {{100, true}, {0, false}, {300, true}, {400, true}},
		"went back": {{100, true}, {50, true}, {300, true}, {400, true}},
	} {
		readings = rs
		var s threadSpan
		s.start()
		s.pause()
		s.resume()
		if d, ok := s.end(); ok {
			t.Fatalf("%s: counted, %v", name, d)
		}
	}
	readings = []struct {
		ns int64
		ok bool
	}{{100, true}, {150, true}, {300, true}, {400, true}}
	var s threadSpan
	s.start()
	s.pause()
	s.resume()
	if d, ok := s.end(); !ok || d != 150 {
		t.Fatalf("a span of 50 + 100 ns: %v, counted %v", d, ok)
	}
	var never threadSpan
	if _, ok := never.end(); ok {
		t.Fatal("a span never started counts")
	}
}

// clockedAhead is readingAhead whose prefetch makes its batch look slow or
// fast on the fake thread clock (see TestSubtaskKeepsTheWayTheClockSays).
type clockedAhead struct {
	readingAhead
	ahead bool // the batch being processed was prefetched
	last  int  // the last record processed
}

func (c *clockedAhead) Prefetch(rs []event.Record, input int) {
	c.ahead = true
	c.readingAhead.Prefetch(rs, input)
}

func (c *clockedAhead) ProcessElement(rec event.Record) error {
	c.last, _ = rec.Value.(int)
	return c.readingAhead.ProcessElement(rec)
}

// TestSubtaskKeepsTheWayTheClockSays: the subtask times its trial batches
// by the thread clock — read only in them: at a batch's start and end, and
// around the batches it admits between records — and processes
// the batches after the trials the way that took less: without prefetching
// when the prefetched batches measured slower, with it when faster.
func TestSubtaskKeepsTheWayTheClockSays(t *testing.T) {
	for _, prefetchFaster := range []bool{false, true} {
		t.Run(fmt.Sprint("prefetchFaster=", prefetchFaster), func(t *testing.T) {
			op := &clockedAhead{readingAhead: readingAhead{done: make(chan struct{})}}
			var now int64
			const first = 100 + 2*2*prefetchTrial // the first record after the trials
			reads, keptReads := 0, 0
			defer func(c func() (int64, bool)) { threadClock = c }(threadClock)
			threadClock = func() (int64, bool) {
				reads++
				if op.last >= first {
					keptReads++
				}
				switch {
				case !op.ahead:
					now += 100
				case prefetchFaster:
					now += 10
				default:
					now += 1000
				}
				op.ahead = false // a batch's second read ends its span
				return now, true
			}
			gate := NewInputGate([]int{0}, 4)
			ctx, wait := runAhead(t, gate, op, op.done)
			const kept = 50 // batches after the trials
			v := 100
			for range 2*prefetchTrial + kept {
				if err := gate.Channel(0).Send(ctx, event.Batch{Records: recs(v, v+1)}); err != nil {
					t.Fatal(err)
				}
				v += 2
			}
			if err := gate.Channel(0).Send(ctx, event.Batch{Records: recs(6)}); err != nil {
				t.Fatal(err)
			}
			wait()
			aheads := 0
			for _, l := range op.log {
				var x int
				if _, err := fmt.Sscanf(l, "ahead1 [%d", &x); err == nil && x >= first {
					aheads++
				}
			}
			if want := map[bool]int{false: 0, true: kept}[prefetchFaster]; aheads != want {
				t.Fatalf("%d of the %d batches after the trials prefetched, want %d", aheads, kept, want)
			}
			if keptReads > 0 || reads < 2*2*prefetchTrial {
				t.Fatalf("the thread clock was read %d times after the trials and %d in all, want none and 2 or more for each of the %d trial batches",
					keptReads, reads, 2*prefetchTrial)
			}
		})
	}
}
