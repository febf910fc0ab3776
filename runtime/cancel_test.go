package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/task"
)

// blockingSink's writer blocks in Write until its context is cancelled, as
// a database write waiting for a lock does.
type blockingSink struct{ entered chan struct{} }

func (s blockingSink) CreateWriter(w operator.WriterContext) (operator.SinkWriter, error) {
	return blockingWriter{ctx: w.Context, entered: s.entered}, nil
}
func (blockingSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type blockingWriter struct {
	nopWriter
	ctx     context.Context
	entered chan struct{}
}

func (w blockingWriter) Write(event.Record) error {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.ctx.Done()
	return w.ctx.Err()
}

// Stopping a job (weir run's SIGINT cancels its context) ends a sink write
// that is blocked: the writer's context is the subtask's.
func TestCancelEndsBlockedSinkWrite(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sink := blockingSink{entered: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, sinkJob(t, countSource{n: 3}, sink), Options{Mode: task.AtMostOnce})
		done <- err
	}()
	select {
	case <-sink.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the sink never got a record")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run returned %v after the cancel; want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the job did not stop while its sink write was blocked")
	}
}

// failingSink fails to open with err.
type failingSink struct{ err error }

func (s failingSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return nil, s.err
}
func (failingSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

// A failure marked operator.ErrNonRestartable (a misconfigured sink) fails
// the job once instead of restarting it forever.
func TestNonRestartableFailsOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	bad := fmt.Errorf("table t not found: %w", operator.ErrNonRestartable)
	res, err := Run(ctx, sinkJob(t, countSource{n: 3}, failingSink{err: bad}),
		Options{Mode: task.AtMostOnce, Restart: FixedDelay{Attempts: -1, Delay: time.Millisecond}})
	if !errors.Is(err, operator.ErrNonRestartable) || res.Restarts != 0 {
		t.Fatalf("%d restarts, err %v; want one failure", res.Restarts, err)
	}
}

func TestRestartable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errors.New("broker went away"), true},
		{fmt.Errorf("table t: %w", operator.ErrNonRestartable), false},
		{fmt.Errorf("sink: %w", operator.ErrNeverCommits), false},
		{fmt.Errorf("restore: %w", operator.ErrDataLoss), false},
		{fmt.Errorf("subtask s panicked: %w", fmt.Errorf("state %q: %w", "m", state.ErrIncompatible)), false},
	} {
		if got := Restartable(c.err); got != c.want {
			t.Errorf("Restartable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// Two jobs sharing a checkpoint directory would corrupt each other's
// checkpoints: the second is refused, naming the first, until the first
// ends.
func TestSecondJobOnCheckpointDirRefused(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Mode: task.ExactlyOnce, CheckpointDir: dir}
	opts.Checkpoint.Interval = time.Hour
	sink := blockingSink{entered: make(chan struct{}, 1)}
	first := opts
	first.JobID = "orders-h6"
	c, err := Start(context.Background(), sinkJob(t, countSource{n: 3}, sink), first)
	if err != nil {
		t.Fatal(err)
	}
	second := opts
	second.JobID = "report-h6"
	_, err = Start(context.Background(), sinkJob(t, countSource{n: 3}, sink), second)
	want := fmt.Sprintf(`runtime: job "report-h6": checkpointstorage: checkpoint directory %s is in use by job "orders-h6" (pid %d`, dir, os.Getpid())
	if !errors.Is(err, checkpointstorage.ErrLocked) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("second Start: %v\nwant an error starting %q", err, want)
	}
	c.Cancel()
	if _, err := c.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	c2, err := Start(context.Background(), sinkJob(t, countSource{n: 3}, sink), second)
	if err != nil {
		t.Fatalf("Start once the first job ended: %v", err)
	}
	c2.Cancel()
	_, _ = c2.Wait()
}
