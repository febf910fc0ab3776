package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/task"
)

// badClose is an operator whose Close fails: with an error, or a panic.
type badClose struct {
	operator.Base
	panics bool
}

func (o *badClose) Close() error {
	if o.panics {
		var m map[string]int
		m["flushed"]++ // a nil-map write: the kind of bug a Close has
	}
	return errors.New("flush on close: connection reset")
}

func closeJob(t *testing.T, panics bool) *graph.JobGraph {
	g := &graph.StreamGraph{JobName: "close-test"}
	s := g.AddNode(&graph.Node{Name: "Source: numbers", Parallelism: 1, Source: countSource{n: 3, bounded: true}})
	k := g.AddNode(&graph.Node{Name: "Closer", UID: "closer", Parallelism: 1,
		NewOperator: func() operator.Operator { return &badClose{panics: panics} }})
	g.Connect(&graph.Edge{From: s.ID, To: k.ID})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	return jg
}

// TestCloseFailureFailsTheJob: an operator's Close error, or its panic,
// fails the job with an error naming the operator and the subtask (a
// panic used to kill the process; an error was dropped and the job
// reported success), and the result lists it among the failures.
func TestCloseFailureFailsTheJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		panics bool
		want   string
	}{
		{"error", false, "operator closer: close: flush on close: connection reset"},
		{"panic", true, "operator closer panicked while closing: assignment to entry in nil map"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := Run(ctx, closeJob(t, tc.panics), Options{Mode: task.AtMostOnce, Restart: NoRestart{}})
			var ce *task.CloseError
			if !errors.As(err, &ce) || ce.Operator != "closer" || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "subtask "+ce.Subtask.String()) {
				t.Fatalf("Run = %v; want a CloseError of operator closer saying %q", err, tc.want)
			}
			if len(res.Failures) != 1 || !errors.As(res.Failures[0], &ce) {
				t.Errorf("Result.Failures = %v, want the close failure", res.Failures)
			}
		})
	}
}
