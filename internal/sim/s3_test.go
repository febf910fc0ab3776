package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/runtime"
)

// End to end on the S3 test server: a job checkpointing to s3:// crashes
// mid-stream and fails over from its checkpoint in the bucket; it is then
// killed right after a checkpoint completes (before any sink commits it),
// and a new run restores "latest" from the bucket and finishes. Every
// element is committed exactly once. The crash comes in the snapshot of the
// third checkpoint, so that it has a checkpoint to fail over to whatever the
// machine's speed; the source is gated (no record before an attempt's first
// checkpoint completes), so the checkpoint of the kill holds the restored
// state and what came after it.
func TestS3CheckpointCrashKillRestore(t *testing.T) {
	srv := testsvc.S3(t)
	loc := fmt.Sprintf("s3://%s/sim/%d", srv.Bucket, time.Now().UnixNano())
	storage := checkpointstorage.Options{S3: checkpointstorage.S3Options{Endpoint: srv.Endpoint, Region: srv.Region,
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}}
	const keys, perKey = 4, 200
	store, v := NewStore(), &Violations{}
	f := NewPlan(After("notify", 2), Crash("snapshot", 1))
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 10, Pause: time.Millisecond, Unbounded: true}
	jg := seqJob{Source: GatedSource{src}, SourcePar: 1, Faults: f, KeyedPar: 2, V: v, Sink: &TxSink{Store: store}}.jobGraph(t)

	// Run 1: crash, fail over, then killed after two more checkpoints.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ev, after, killedAt := &events{}, 0, event.CheckpointID(0)
	opts := testOptions(loc, 10*time.Millisecond)
	opts.CheckpointStorage = storage
	opts.Listener = ev.listener(func(e runtime.Event) {
		if e.Kind == runtime.EventCheckpointCompleted && f.PlanDone() && len(ev.of(runtime.EventRestored)) > 0 {
			if after++; after == 2 {
				killedAt = event.CheckpointID(e.Checkpoint)
				cancel() // on the driver goroutine: nothing of this checkpoint is committed yet
			}
		}
	})
	res, err := runtime.Run(ctx, jg, opts)
	if killedAt == 0 || res.Restarts != 1 {
		t.Fatalf("run 1 ended (%v) with %d restarts, before the kill; plan %s; events: %s", err, res.Restarts, f.PlanState(), ev)
	}
	if r := ev.ids(runtime.EventRestored); len(r) != 1 || r[0] == 0 {
		t.Fatalf("run 1 restored %v, want one failover from a checkpoint in %s", r, loc)
	}

	t.Logf("run 1: %s", ev)
	// Run 2: a new process restores the latest checkpoint from S3.
	bounded := *src
	bounded.Unbounded = false
	jg = seqJob{Source: &bounded, SourcePar: 1, Faults: NewPlan(), KeyedPar: 2, V: v, Sink: &TxSink{Store: store}}.jobGraph(t)
	ev2 := &events{}
	opts = testOptions(loc, 10*time.Millisecond)
	opts.CheckpointStorage = storage
	opts.Restore = "latest"
	opts.Listener = ev2.listener(nil)
	if _, err := runJob(context.Background(), jg, opts); err != nil {
		t.Fatalf("run 2: %v", err)
	}
	if r := ev2.ids(runtime.EventRestored); len(r) != 1 || r[0] != int64(killedAt) {
		t.Fatalf("run 2 restored %v, want checkpoint %d, the last of run 1", r, killedAt)
	}
	t.Logf("run 2: %s", ev2)
	checkOutput(t, 0, store.Committed(), keys, perKey, true)
	if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
		t.Errorf("sequence checker saw %d gaps and %d repeats", g, r)
	}
	if l := store.Lingering(); len(l) != 0 {
		t.Errorf("lingering transactions: %v", l)
	}
	cleanS3(t, loc, storage)
}

// cleanS3 deletes what the test left under loc.
func cleanS3(t *testing.T, loc string, opts checkpointstorage.Options) {
	s, err := checkpointstorage.Open(loc, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids, err := s.Completed()
	for _, id := range ids {
		err = s.Discard(id)
	}
	if err != nil {
		t.Error(err)
	}
}
