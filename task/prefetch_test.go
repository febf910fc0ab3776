package task

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// readingAhead logs what it reads ahead and what it processes, on each
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

// TestSubtaskReadsAheadEachBatch: the head of a chain that reads ahead
// (operator.Prefetcher) is handed a batch of more than one record, with
// its input (here the second), before it processes the batch's records,
// when the chooser says so: not in its first trial's batches, in its
// second's.
func TestSubtaskReadsAheadEachBatch(t *testing.T) {
	gate := NewInputGate([]int{0, 1}, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	op := &readingAhead{done: make(chan struct{})}
	opCtx := &operator.Context{Subtask: event.SubtaskID{Vertex: "ra", Index: 0}, UID: "ra", Parallelism: 1,
		MaxParallelism: 128, Metrics: &operator.Metrics{}, Now: func() int64 { return time.Now().UnixMilli() }}
	st := New(Spec{ID: opCtx.Subtask, Gate: gate, Reports: make(chan Report, 16), Mail: make(chan Mail, 4), Now: time.Now,
		Chain: []ChainedOperator{{UID: "ra", Op: op, Ctx: opCtx}}})
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	send := func(ch int, vs ...int) {
		if err := gate.Channel(ch).Send(ctx, event.Batch{Records: recs(vs...)}); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	send(1, 1) // one record: never read ahead
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
	select {
	case <-op.done:
	case <-time.After(10 * time.Second):
		t.Fatal("record 6 not processed")
	}
	cancel()
	<-done
	if !slices.Equal(op.log, want) {
		t.Fatalf("the operator saw %q,\nwant %q", op.log, want)
	}
}

// TestPrefetchChooserKeepsTheFasterWay: after a trial without and one with
// read-ahead, the chooser keeps the way that took less time per record
// for its keep batches, then tries again; batches not counted (other
// work among their records) do not sway it.
func TestPrefetchChooserKeepsTheFasterWay(t *testing.T) {
	c := newPrefetchChooser(3, 5)
	run := func(per [2]time.Duration, batches int) []bool {
		var used []bool
		for range batches {
			on := c.use()
			used = append(used, on)
			d := per[0]
			if on {
				d = per[1]
			}
			c.took(100, 100*d, true)
		}
		return used
	}
	f, tr := false, true
	if got, want := run([2]time.Duration{200, 100}, 11), []bool{f, f, f, tr, tr, tr, tr, tr, tr, tr, tr}; !slices.Equal(got, want) {
		t.Fatalf("read-ahead faster: used %v, want %v", got, want)
	}
	if got, want := run([2]time.Duration{100, 200}, 11), []bool{f, f, f, tr, tr, tr, f, f, f, f, f}; !slices.Equal(got, want) {
		t.Fatalf("read-ahead slower: used %v, want %v", got, want)
	}
	for range 3 { // a trial without, its one slow batch not counted
		c.took(100, time.Second, c.n != 0)
	}
	for range 3 {
		c.took(100, 100*150, true)
	}
	if !c.use() {
		t.Fatal("a batch not counted swayed the choice")
	}
}
