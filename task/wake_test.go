package task

import (
	"context"
	"time"

	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// later registers, at Open, one processing-time callback 200 ms ahead.
type later struct{ timed }

func (o *later) Open(ctx *operator.Context) error {
	if err := o.Base.Open(ctx); err != nil {
		return err
	}
	o.goroutine = goroutineID()
	ctx.ProcessingTime.RegisterTimer(ctx.Now()+200, o.callback("due"))
	return nil
}

// An idle subtask still wakes for a processing-time callback: with no
// input, no mail and no metrics (so no rate window to publish), the only
// wake-up it arms after its first tick is the callback's time. Without
// it the subtask would block for good and the callback never run.
func TestIdleSubtaskWakesForItsCallback(t *testing.T) {
	h := startHarness(t, &later{}, false, true)
	h.expect("due")
	// And then it waits: a record is handled at once, its callback later.
	h.send(event.Batch{Records: []event.Record{{Value: "x", Timestamp: event.NoTimestamp}}})
	h.expect("in x", "late x")
}

// endingSource is bounded and empty: its reader has nothing until
// release is closed, then its next Poll ends the input.
type endingSource struct {
	scriptSource
	release chan struct{}
}

func (s *endingSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &endingReader{scriptReader: scriptReader{ready: s.release}}, nil
}

type endingReader struct{ scriptReader }

func (r *endingReader) Poll(operator.ReaderOutput) (operator.ReaderStatus, error) {
	select {
	case <-r.ready:
		return operator.EndOfInput, nil
	default:
		return operator.NothingAvailable, nil
	}
}

// An at-most-once bounded source is done in the step its input ends: the
// loop must end then, not wait for a wake-up that no longer comes. A
// source idle long enough to arm none (here 300 ms without input) whose
// input then ended hung (jobs of two sources in the SQL tests, until their
// timeouts).
func TestEndedSourceDoesNotWaitForAWakeUp(t *testing.T) {
	id := event.SubtaskID{Vertex: "src"}
	opCtx := &operator.Context{Subtask: id, UID: "probe", Parallelism: 1, MaxParallelism: 128, Metrics: &operator.Metrics{}}
	release := make(chan struct{})
	st := New(Spec{ID: id, Mail: make(chan Mail, 1), Now: time.Now, Mode: AtMostOnce, Reports: make(chan Report, 16),
		Chain:    []ChainedOperator{{UID: "probe", Op: &wmProbe{last: event.MinWatermark}, Ctx: opCtx}},
		Counters: &Counters{},
		Source: &SourceSpec{UID: "src", Name: "Source: empty", Parallelism: 1,
			Source: &endingSource{scriptSource: scriptSource{bounded: true}, release: release}}})
	done := make(chan error, 1)
	go func() { done <- st.Run(context.Background()) }()
	time.Sleep(300 * time.Millisecond) // idle: no wake-up armed any more
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the source subtask did not end with its input")
	}
}
