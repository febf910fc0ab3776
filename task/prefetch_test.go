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
// (operator.Prefetcher) is handed each batch of more than one record, with
// its input, before it processes the batch's records.
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
	for _, b := range []struct {
		ch int
		vs []int
	}{{0, []int{1, 2, 3}}, {1, []int{4}}, {1, []int{5, 6}}} {
		if err := gate.Channel(b.ch).Send(ctx, event.Batch{Records: recs(b.vs...)}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-op.done:
	case <-time.After(10 * time.Second):
		t.Fatal("record 6 not processed")
	}
	cancel()
	<-done
	want := []string{"ahead1 [1 2 3]", "1:1", "1:2", "1:3", "2:4", "ahead2 [5 6]", "2:5", "2:6"}
	if !slices.Equal(op.log, want) {
		t.Fatalf("the operator saw %q, want %q", op.log, want)
	}
}
