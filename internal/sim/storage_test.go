package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
)

// checkpointIDs returns the ids of completed and failed checkpoints, in
// event order, checking they strictly increase.
func checkpointIDs(t *testing.T, run string, ev *events) []int64 {
	t.Helper()
	var ids []int64
	for _, e := range ev.all() {
		if e.Kind == runtime.EventCheckpointCompleted || e.Kind == runtime.EventCheckpointFailed {
			if len(ids) > 0 && e.Checkpoint <= ids[len(ids)-1] {
				t.Errorf("%s: checkpoint %d after %d; events: %s", run, e.Checkpoint, ids[len(ids)-1], ev)
			}
			ids = append(ids, e.Checkpoint)
		}
	}
	if len(ids) == 0 {
		t.Fatalf("%s: no checkpoint; events: %s", run, ev)
	}
	return ids
}

func nextID(t *testing.T, dir string) event.CheckpointID {
	t.Helper()
	s, err := checkpointstorage.OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.NextID()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Scenario 8: checkpoint ids keep increasing after a process restart. Run 1
// (with a failover inside) is stopped mid-stream; run 2, a new process on
// the same directory, resumes from the latest checkpoint and finishes;
// run 3 starts fresh on the same directory. Each run's ids are above every
// id an earlier run used, completed or not (the persisted counter).
func TestCheckpointIDsIncreaseAcrossProcessRestart(t *testing.T) {
	const keys, perKey = 4, 1500
	dir, store := t.TempDir(), NewStore()
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 2, Burst: 10, Pause: time.Millisecond, Unbounded: true}
	bounded := *src
	bounded.Unbounded = false
	f := NewPlan(After("notify", 2), Crash("process", 50))
	jg := seqJob{Source: src, SourcePar: 2, Faults: f, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: store}}.jobGraph(t)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ev1, after := &events{}, 0
	opts := testOptions(dir, 10*time.Millisecond)
	opts.Listener = ev1.listener(func(e runtime.Event) {
		if e.Kind == runtime.EventCheckpointCompleted && f.Count() == 1 {
			if after++; after == 3 {
				cancel()
			}
		}
	})
	if _, err := runtime.Run(ctx, jg, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("run 1 ended with %v, want cancellation; events: %s", err, ev1)
	}
	ids1 := checkpointIDs(t, "run 1", ev1)
	if len(ev1.of(runtime.EventFailover)) != 1 {
		t.Fatalf("run 1: events %s, want one failover", ev1)
	}
	next1 := nextID(t, dir)
	completed1 := ev1.ids(runtime.EventCheckpointCompleted)
	last1 := completed1[len(completed1)-1]

	ev2 := &events{}
	jg = seqJob{Source: &bounded, SourcePar: 2, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: store}}.jobGraph(t)
	opts = testOptions(dir, 10*time.Millisecond)
	opts.Restore = "latest"
	opts.Listener = ev2.listener(nil)
	if _, err := runJob(context.Background(), jg, opts); err != nil {
		t.Fatalf("run 2: %v", err)
	}
	if r := ev2.ids(runtime.EventRestored); len(r) != 1 || r[0] != last1 {
		t.Errorf("run 2 restored %v, want [%d] (run 1's latest)", r, last1)
	}
	ids2 := checkpointIDs(t, "run 2", ev2)
	checkOutput(t, 0, store.Committed(), keys, perKey, true)
	next2 := nextID(t, dir)

	ev3, fresh := &events{}, NewStore()
	jg = seqJob{Source: &bounded, SourcePar: 2, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: fresh}}.jobGraph(t)
	opts = testOptions(dir, 10*time.Millisecond)
	opts.Listener = ev3.listener(nil)
	if _, err := runJob(context.Background(), jg, opts); err != nil {
		t.Fatalf("run 3: %v", err)
	}
	ids3 := checkpointIDs(t, "run 3", ev3)
	checkOutput(t, 0, fresh.Committed(), keys, perKey, true)

	for _, c := range []struct {
		name      string
		ids, prev []int64
		next      event.CheckpointID
	}{{"run 2", ids2, ids1, next1}, {"run 3", ids3, ids2, next2}} {
		if c.ids[0] < int64(c.next) || c.ids[0] <= slices.Max(c.prev) {
			t.Errorf("%s's ids %v do not all exceed the earlier run's %v (next id on disk was %d)", c.name, c.ids, c.prev, c.next)
		}
	}
	s, _ := checkpointstorage.OpenFS(dir)
	onDisk, err := s.Completed()
	if err != nil || len(onDisk) == 0 || int64(onDisk[0]) <= slices.Max(ids2) {
		t.Errorf("completed on disk after run 3: %v (%v), want only run 3's (> %d)", onDisk, err, slices.Max(ids2))
	}
	t.Logf("run 1 %v, run 2 %v, run 3 %v", ids1, ids2, ids3)
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Scenario 9: a truncated latest _metadata makes the restore fall back to
// the previous checkpoint, loudly. The job stops at the instant its 4th
// checkpoint n completes (two retained: n-1 and n); n's _metadata is then
// cut in half, as a torn write would leave it. A new process restoring
// "latest" reports n as corrupt (event and error log) and restores n-1,
// with exact output.
func TestTruncatedLatestMetadataFallsBack(t *testing.T) {
	const keys, perKey = 4, 1500
	store := NewStore()
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 2, Burst: 10, Pause: time.Millisecond, Unbounded: true}
	jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: store}}.jobGraph(t)
	opts := testOptions(t.TempDir(), 10*time.Millisecond)
	opts.Retained = 2
	at := runUntil(t, jg, opts, store, 4)
	completed := at.ev.ids(runtime.EventCheckpointCompleted)
	prev := completed[slices.Index(completed, int64(at.id))-1]

	meta := filepath.Join(at.dir, fmt.Sprintf("chk-%d", at.id), "_metadata")
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meta, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}

	st, v, ev, logs := at.store.Clone(), &Violations{}, &events{}, &syncBuffer{}
	bounded := *src
	bounded.Unbounded = false
	jg = seqJob{Source: &bounded, SourcePar: 2, KeyedPar: 2, V: v, Sink: &TxSink{Store: st}}.jobGraph(t)
	opts = testOptions(at.dir, 10*time.Millisecond)
	opts.Retained = 2
	opts.Restore = "latest"
	opts.Listener = ev.listener(nil)
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	res, err := runJob(context.Background(), jg, opts)
	if err != nil {
		t.Fatalf("job failed: %v; events: %s", err, ev)
	}
	corrupt := ev.of(runtime.EventCorruptCheckpointSkipped)
	if len(corrupt) != 1 {
		t.Fatalf("events %s; want one corrupt checkpoint skipped", ev)
	}

	t.Run("fallback", func(t *testing.T) {
		c := corrupt[0]
		if !errors.Is(c.Err, checkpointstorage.ErrCorrupt) || !strings.Contains(c.Err.Error(), fmt.Sprintf("checkpoint %d skipped", at.id)) {
			t.Errorf("corrupt event error %v; want ErrCorrupt naming checkpoint %d", c.Err, at.id)
		}
		if r := ev.ids(runtime.EventRestored); len(r) != 1 || r[0] != prev || res.Restarts != 0 || res.RestoredFrom != event.CheckpointID(prev) {
			t.Errorf("restored %v (result: from %d, %d restarts), want [%d]; events: %s", r, res.RestoredFrom, res.Restarts, prev, ev)
		}
		if all := ev.all(); all[0].Kind != runtime.EventCorruptCheckpointSkipped || all[1].Kind != runtime.EventRestored {
			t.Errorf("events %s; want the corrupt skip reported first, then the restore", ev)
		}
		if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, fmt.Sprintf("chk-%d", at.id)) {
			t.Errorf("no error log naming chk-%d; logs:\n%s", at.id, l)
		}
		checkOutput(t, 0, st.Committed(), keys, perKey, true)
		if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
			t.Errorf("sequence checker saw %d gaps and %d repeats", g, r)
		}
		if l := st.Lingering(); len(l) != 0 {
			t.Errorf("lingering transactions: %v", l)
		}
	})
	t.Run("event-names-checkpoint", func(t *testing.T) {
		if corrupt[0].Checkpoint != int64(at.id) {
			t.Errorf("EventCorruptCheckpointSkipped has Checkpoint %d, want %d (the skipped checkpoint; only the error text names it)",
				corrupt[0].Checkpoint, at.id)
		}
	})
}

// Scenario 10: after a crash mid-checkpoint and a restart, storage holds
// no file that no retained checkpoint references. TornOp crashes subtask 1
// in its snapshot of a checkpoint once subtask 0 has written its files for
// it, leaving a partly written chk-N. When the job restores (and again when
// it ends) the directory holds exactly the _metadata and state files of the
// retained checkpoints and the id counter.
func TestNoUnreferencedFilesAfterCrashMidCheckpoint(t *testing.T) {
	const keys, perKey = 6, 400
	dir, store, v := t.TempDir(), NewStore(), &Violations{}
	torn := &TornSnapshot{Dir: dir, AfterCompleted: 2, Wait: 5 * time.Second}
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 10, Pause: time.Millisecond,
		EndWhen: func() bool { return torn.Torn.Load() != 0 }} // on a slow machine the data could end first
	jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 3, V: v, Sink: &TxSink{Store: store},
		NewMid: func() operator.Operator { return &TornOp{T: torn} }, MidUID: "torn"}.jobGraph(t)
	var partial []string
	var atRestore string
	var listErr error
	ev := &events{}
	opts := testOptions(dir, 10*time.Millisecond)
	opts.Retained = 2
	opts.Listener = ev.listener(func(e runtime.Event) {
		var err error
		switch e.Kind {
		case runtime.EventFailover:
			var files []string
			files, err = listFiles(dir)
			prefix := fmt.Sprintf("chk-%d/", torn.Torn.Load())
			for _, f := range files {
				if strings.HasPrefix(f, prefix) {
					partial = append(partial, f)
				}
			}
		case runtime.EventRestored:
			atRestore, err = storageDiff(dir)
		}
		listErr = errors.Join(listErr, err)
	})
	res, err := runJob(context.Background(), jg, opts)
	if err != nil {
		t.Fatalf("job failed: %v; events: %s", err, ev)
	}
	if listErr != nil {
		t.Fatal(listErr)
	}
	if res.Restarts != 1 || len(ev.of(runtime.EventRestored)) != 1 {
		t.Fatalf("%d restarts, events %s; want one crash and one restore", res.Restarts, ev)
	}
	id := torn.Torn.Load()
	if len(partial) == 0 || slices.Contains(partial, fmt.Sprintf("chk-%d/_metadata", id)) {
		t.Fatalf("at the failover chk-%d held %v; want a partly written checkpoint without _metadata", id, partial)
	}
	if atRestore != "" {
		t.Errorf("after the restart (at restore): %s", atRestore)
	}
	if d, err := storageDiff(dir); err != nil || d != "" {
		t.Errorf("at the end: %s %v", d, err)
	}
	checkOutput(t, 0, store.Committed(), keys, perKey, true)
	if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
		t.Errorf("sequence checker saw %d gaps and %d repeats", g, r)
	}
	t.Logf("torn checkpoint %d left %v", id, partial)
}

// Storage keeps no files of a declined checkpoint either, even when
// another subtask's asynchronous write for it finishes after the job
// discarded the checkpoint's directory. (All checkpoints are retained, so
// Retain never gets to delete older directories and hide a leftover.)
func TestDeclinedCheckpointLeavesNoFiles(t *testing.T) {
	const keys, perKey = 4, 300
	dir, store := t.TempDir(), NewStore()
	race := &DeclineRace{Target: 3, Wait: 5 * time.Second}
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 2, Burst: 10, Pause: time.Millisecond,
		EndWhen: race.Failed.Load} // on a slow machine the data could end before checkpoint 3
	jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: store},
		NewMid: func() operator.Operator { return &DeclineOp{R: race} }, MidUID: "decline"}.jobGraph(t)
	ev := &events{}
	opts := testOptions(dir, 10*time.Millisecond)
	opts.Retained = 1000
	opts.Listener = ev.listener(func(e runtime.Event) {
		if e.Kind == runtime.EventCheckpointFailed && e.Checkpoint == int64(race.Target) {
			race.Failed.Store(true)
		}
	})
	if _, err := runJob(context.Background(), jg, opts); err != nil {
		t.Fatalf("job failed: %v; events: %s", err, ev)
	}
	if f := ev.ids(runtime.EventCheckpointFailed); !slices.Equal(f, []int64{int64(race.Target)}) {
		t.Fatalf("failed checkpoints %v, want [%d]; events: %s", f, race.Target, ev)
	}
	checkOutput(t, 0, store.Committed(), keys, perKey, true)
	if d, err := storageDiff(dir); err != nil || d != "" {
		t.Errorf("at the end (late write after the discard: %v): %s %v", race.Late.Load(), d, err)
	}
}

// Issue 11, bug 9: every run is killed the instant its checkpoint is
// recorded (its _metadata written, before Retain runs). Each run restores
// the latest checkpoint from the previous run's directory as it was at the
// kill. With one checkpoint retained, a restore brings the directory back
// to one — the restored checkpoint — so a kill leaves at most two; before
// the fix each run added one (four after three runs).
func TestRetentionBoundAfterKillsRightAfterCheckpoints(t *testing.T) {
	const keys, perKey = 4, 1500
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 2, Burst: 10, Pause: time.Millisecond, Unbounded: true}
	store := NewStore()
	opts := testOptions(t.TempDir(), 10*time.Millisecond)
	for run := 1; run <= 3; run++ {
		jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: store}}.jobGraph(t)
		if run > 1 {
			opts.Restore = runtime.RestoreLatest
		}
		var atRestore []event.CheckpointID
		var listErr error
		dir := opts.CheckpointDir
		runOpts := opts
		runOpts.Listener = func(e runtime.Event) {
			if e.Kind == runtime.EventRestored {
				s, _ := checkpointstorage.OpenFS(dir)
				atRestore, listErr = s.Completed()
			}
		}
		at := runUntil(t, jg, runOpts, store, 1)
		if listErr != nil {
			t.Fatal(listErr)
		}
		if run > 1 && len(atRestore) != 1 {
			t.Errorf("run %d: completed checkpoints at the restore %v, want only the restored one", run, atRestore)
		}
		s, _ := checkpointstorage.OpenFS(at.dir)
		left, err := s.Completed()
		if err != nil || len(left) > 2 {
			t.Errorf("run %d killed after checkpoint %d left %v (%v), want at most 2", run, at.id, left, err)
		}
		store, opts.CheckpointDir = at.store, at.dir
	}
}
