// Package savepointtest takes a job through savepoints in integration
// tests: it runs the job until the test's condition holds and stops it
// with a savepoint (sources stop, sinks commit, the job ends), so that the
// test can restore the savepoint at another parallelism or on another
// state backend and compare the external system with results computed
// from the input. The savepoint tests of internal/sim, sql/session and
// cmd/weir share it.
package savepointtest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/runtime"
)

// Limit bounds every wait of this package: a bound on a hang, never on
// the machine's speed.
const Limit = 2 * time.Minute

// Wait polls cond every 20 ms until it holds, and fails the test with
// what when Limit passes first.
func Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", Limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stopped is the outcome of StopWhen.
type Stopped struct {
	// Path is the location of the savepoint the stop wrote.
	Path string
	// Restored is the checkpoint id the run restored (0: it started
	// empty).
	Restored int64
	// Result is the run's result.
	Result *runtime.Result
}

// StopWhen starts jg with opts (opts.Restore, if set, restores a
// savepoint), waits until ready holds (what says what it waits for), then
// stops the job with a savepoint under dir and waits for the job to end.
// A job that fails, or ends before the stop, fails the test. opts.Listener
// is kept (called first).
func StopWhen(t testing.TB, jg *graph.JobGraph, opts runtime.Options, dir, what string, ready func() bool) Stopped {
	t.Helper()
	var restored atomic.Int64
	then := opts.Listener
	opts.Listener = func(e runtime.Event) {
		if then != nil {
			then(e)
		}
		if e.Kind == runtime.EventRestored {
			restored.Store(e.Checkpoint)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*Limit)
	defer cancel()
	job, err := runtime.Start(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	Wait(t, what, func() bool {
		select {
		case <-job.Done():
			return true
		default:
			return ready()
		}
	})
	path, err := job.StopWithSavepoint(ctx, dir, false)
	if err != nil {
		job.Cancel()
		_, werr := job.Wait()
		t.Fatalf("stop with savepoint (waiting for %s): %v; the job: %v", what, err, werr)
	}
	res, err := job.Wait()
	if err != nil {
		t.Fatalf("job after its stop-with-savepoint: %v", err)
	}
	return Stopped{Path: path, Restored: restored.Load(), Result: res}
}
