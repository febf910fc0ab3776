package task

import (
	"context"
	"errors"
	"testing"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state/heap"
)

// closer records that it was closed, then fails as told.
type closer struct {
	operator.Base
	closed bool
	fail   func() error
}

func (c *closer) Close() error { c.closed = true; return c.fail() }

// TestCloseChainGuardsEveryOperator: a panic in one operator's Close does
// not stop the others from closing; Run returns every failure, each naming
// its operator and the subtask.
func TestCloseChainGuardsEveryOperator(t *testing.T) {
	fs, err := checkpointstorage.OpenFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := event.SubtaskID{Vertex: "chain", Index: 2}
	ops := []*closer{
		{fail: func() error { panic("boom") }},
		{fail: func() error { return errors.New("disk full") }},
		{fail: func() error { return nil }},
	}
	var chain []ChainedOperator
	for i, op := range ops {
		uid := []string{"a", "b", "c"}[i]
		chain = append(chain, ChainedOperator{UID: uid, Op: op, Ctx: &operator.Context{Subtask: id, UID: uid,
			Parallelism: 3, MaxParallelism: 128, Metrics: &operator.Metrics{}, OperatorState: heap.NewOperatorBackend()}})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Run opens the chain, sees the cancellation and closes
	st := New(Spec{ID: id, Mode: ExactlyOnce, Gate: NewInputGate([]int{0}, 4), Storage: fs,
		Reports: make(chan Report, 8), Mail: make(chan Mail, 1), Chain: chain})
	err = st.Run(ctx)
	want := []string{
		"task: subtask chain (2): operator a panicked while closing: boom (stack in the log)",
		"task: subtask chain (2): operator b: close: disk full",
	}
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *CloseError
		if errors.As(e, &ce) {
			got = append(got, ce.Error())
		}
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("close errors %q, want %q (Run: %v)", got, want, err)
	}
	for i, op := range ops {
		if !op.closed {
			t.Errorf("operator %d not closed", i)
		}
	}
}
