package sim

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
)

// TestUnalignedRestoreAtOtherParallelism stops the soak job right after an
// unaligned checkpoint that holds channel state (at timeout 0, output
// channel state too) completed (later snapshots
// fail, so it stays the latest), then restores it with the keyed Check and
// the sink at parallelism 2 and 4 instead of 3: the in-flight records of
// the old subtasks, and those the sources' barriers overtook in their
// output queues, go to the new owners of their key groups and replay
// before new input, and the output is exactly once.
func TestUnalignedRestoreAtOtherParallelism(t *testing.T) {
	for _, c := range []struct {
		par     int
		timeout time.Duration
	}{{2, 0}, {4, time.Millisecond}} {
		t.Run(fmt.Sprintf("par=%d/timeout=%v", c.par, c.timeout), func(t *testing.T) {
			unalignedRescale(t, c.par, c.timeout)
		})
	}
}

func unalignedRescale(t *testing.T, par int, timeout time.Duration) {
	const keys, perKey = 12, 4000
	store, v, dir := NewStore(), &Violations{}, t.TempDir()
	opts := func() runtime.Options {
		o := runtime.Options{Mode: task.ExactlyOnce, CheckpointDir: dir, ChannelCredits: 1, BatchSize: 3,
			Restart: runtime.NoRestart{}}
		o.Checkpoint.Interval = 5 * time.Millisecond
		o.Checkpoint.TolerableFailures = -1
		o.Checkpoint.Unaligned, o.Checkpoint.AlignedTimeout = true, timeout
		return o
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Run 1, at parallelism 3: halt after the first checkpoint whose
	// channel state is not empty.
	var halt atomic.Bool
	var stoppedAt int64
	o := opts()
	o.Listener = func(e runtime.Event) {
		if e.Kind != runtime.EventCheckpointCompleted || halt.Load() {
			return
		}
		for _, ts := range e.Stats.Tasks {
			// Unaligned from the first barrier, the sources' barriers
			// overtake their output queues: wait for a checkpoint with
			// output channel state, replayed at the new receivers.
			if ts.Metrics.PersistedBytes > 0 && (timeout > 0 || ts.Metrics.PersistedOutputBytes > 0) {
				stoppedAt = e.Checkpoint
				halt.Store(true)
			}
		}
	}
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 50, Pause: time.Millisecond}
	jg, err := buildSoakGraphWith(src, nil, v, &TxSink{Store: store}, 3, &halt).JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.Run(ctx, jg, o); !errors.Is(err, errHalted) {
		t.Fatalf("run 1 ended with %v, want it halted after a checkpoint with channel state", err)
	}

	// Run 2 restores it at parallelism par and runs to the end.
	o = opts()
	o.Restore = runtime.RestoreLatest
	var restored int64
	o.Listener = func(e runtime.Event) {
		if e.Kind == runtime.EventRestored {
			restored = e.Checkpoint
		}
	}
	src = &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 50, Pause: time.Millisecond}
	if jg, err = buildSoakGraphWith(src, nil, v, &TxSink{Store: store}, par, nil).JobGraph(); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.Run(ctx, jg, o); err != nil {
		t.Fatalf("run 2: %v", err)
	}
	if restored != stoppedAt {
		t.Fatalf("run 2 restored checkpoint %d, want %d (the one with channel state)", restored, stoppedAt)
	}
	checkOutput(t, 0, store.Committed(), keys, perKey, true)
	if g, rep := v.Gaps.Load(), v.Repeats.Load(); g != 0 || rep != 0 {
		t.Errorf("sequence checker saw %d gaps and %d repeats", g, rep)
	}
}
