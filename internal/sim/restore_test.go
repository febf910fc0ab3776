package sim

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/runtime"
)

// Scenario 2: restore, checkpoint at once, fail again, restore: nothing
// lost, nothing duplicated. The source is gated so that the first
// checkpoint after the restore holds exactly the restored state; the
// second crash comes right after it completes, so the second restore reads
// state that was itself restored and snapshotted again without any record
// in between (source positions, keyed state, the sink's commit log).
func TestRestoreCheckpointAtOnceFailAgain(t *testing.T) {
	const keys, perKey = 6, 300
	f := NewPlan(
		After("notify", 4),    // two checkpoints completed; the first, gated, is empty
		Crash("process", 100), // crash 1, mid-stream
		After("restore", 1),   // attempt 2 restores
		Crash("notify", 1),    // crash 2: as attempt 2's first checkpoint completes
		After("restore", 1),   // attempt 3 restores
	)
	store, v := NewStore(), &Violations{}
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 10, Pause: time.Millisecond}
	jg := seqJob{Source: GatedSource{src}, SourcePar: 2, Faults: f, KeyedPar: 3, V: v,
		Sink: &TxSink{Store: store}}.jobGraph(t)
	dir := t.TempDir()
	ev := &events{}
	opts := testOptions(dir, 10*time.Millisecond)
	opts.Retained = 1000 // keep every checkpoint, to compare them afterwards
	opts.Listener = ev.listener(nil)
	res, err := runJob(context.Background(), jg, opts)
	if err != nil {
		t.Fatalf("job failed: %v (plan %s)", err, f.PlanState())
	}
	if !f.PlanDone() || len(f.Fired) != 2 || res.Restarts != 2 {
		t.Fatalf("plan %s, restarts %d; want both crashes and 2 restarts", f.PlanState(), res.Restarts)
	}
	restored := ev.ids(runtime.EventRestored)
	if len(restored) != 2 || restored[0] == 0 {
		t.Fatalf("restored %v, want two restores of completed checkpoints; events: %s", restored, ev)
	}
	// Between the first restore and the second failover exactly one
	// checkpoint completed, and the second restore took it.
	all := ev.all()
	i := slices.IndexFunc(all, func(e runtime.Event) bool { return e.Kind == runtime.EventRestored })
	var between []int64
	for _, e := range all[i+1:] {
		if e.Kind == runtime.EventFailover {
			break
		}
		if e.Kind == runtime.EventCheckpointCompleted {
			between = append(between, e.Checkpoint)
		}
	}
	if len(between) != 1 || between[0] != restored[1] {
		t.Fatalf("checkpoints completed between restore %d and the second failover: %v; second restore %d; events: %s",
			restored[0], between, restored[1], ev)
	}
	a, b := event.CheckpointID(restored[0]), event.CheckpointID(restored[1])
	posA, posB := sourcePositions(t, dir, a, src), sourcePositions(t, dir, b, src)
	if fmt.Sprint(posA) != fmt.Sprint(posB) {
		t.Errorf("checkpoint %d taken at once after restoring %d has source positions %v, want the restored %v", b, a, posB, posA)
	}
	checkOutput(t, 0, store.Committed(), keys, perKey, true)
	if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
		t.Errorf("sequence checker saw %d gaps and %d repeats", g, r)
	}
	if l := store.Lingering(); len(l) != 0 {
		t.Errorf("lingering transactions: %v", l)
	}
	t.Logf("events: %s", ev)
}

// Scenario 3: the same checkpoint restored twice gives the same result. A
// job over an unbounded source stops at its 3rd completed checkpoint; two
// fresh runs restore that checkpoint, each into its own copy of the
// storage and of the external store as they were at that instant. Both
// commit exactly the remainder: every element at or after the
// checkpoint's source positions, plus the elements of transactions the
// checkpoint pre-committed but nobody had committed yet.
func TestSameCheckpointRestoredTwice(t *testing.T) {
	const keys, perKey = 6, 1200
	store := NewStore()
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 10, Pause: time.Millisecond, Unbounded: true}
	jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 3, V: &Violations{}, Sink: &TxSink{Store: store}}.jobGraph(t)
	at := runUntil(t, jg, testOptions(t.TempDir(), 10*time.Millisecond), store, 3)

	pos := sourcePositions(t, at.dir, at.id, src)
	before := multiset[Seq](at.store.Committed())
	want := minus(t, seqInput(keys, perKey), before)
	// Cross-check the remainder from the checkpoint itself.
	fromChk := map[Seq]int{}
	for k := 0; k < keys; k++ {
		for q := pos[k]; q < perKey; q++ {
			fromChk[Seq{k, q}]++
		}
	}
	for _, tx := range at.store.Txns() {
		if tx.Status == "prepared" && tx.Checkpoint <= at.id {
			for _, r := range tx.Records {
				fromChk[r.(Seq)]++
			}
		}
	}
	if d := diffMultisets(fromChk, want); d != "" {
		t.Fatalf("store and checkpoint %d disagree on what is left: %s", at.id, d)
	}
	if n := total(want); n == 0 || n == keys*perKey {
		t.Fatalf("checkpoint %d is not mid-stream: %d of %d elements left", at.id, n, keys*perKey)
	}

	var got [2]map[Seq]int
	for i := range got {
		dir := filepath.Join(t.TempDir(), "run")
		if err := copyDir(at.dir, dir); err != nil {
			t.Fatal(err)
		}
		st, v, ev := at.store.Clone(), &Violations{}, &events{}
		bounded := *src
		bounded.Unbounded = false
		jg := seqJob{Source: &bounded, SourcePar: 2, KeyedPar: 3, V: v, Sink: &TxSink{Store: st}}.jobGraph(t)
		opts := testOptions(dir, 10*time.Millisecond)
		opts.Restore = filepath.Join(dir, fmt.Sprintf("chk-%d", at.id))
		opts.Listener = ev.listener(nil)
		res, err := runJob(context.Background(), jg, opts)
		if err != nil {
			t.Fatalf("restore %d: %v", i+1, err)
		}
		if r := ev.ids(runtime.EventRestored); len(r) != 1 || r[0] != int64(at.id) || res.Restarts != 0 {
			t.Fatalf("restore %d: restored %v with %d restarts, want checkpoint %d once", i+1, r, res.Restarts, at.id)
		}
		got[i] = multiset[Seq](st.Committed()[len(at.store.Committed()):])
		if d := diffMultisets(got[i], want); d != "" {
			t.Errorf("restore %d committed a remainder other than expected: %s", i+1, d)
		}
		checkOutput(t, 0, st.Committed(), keys, perKey, true)
		if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
			t.Errorf("restore %d: sequence checker saw %d gaps and %d repeats", i+1, g, r)
		}
		if l := st.Lingering(); len(l) != 0 {
			t.Errorf("restore %d: lingering transactions: %v", i+1, l)
		}
	}
	if d := diffMultisets(got[1], got[0]); d != "" {
		t.Errorf("the two restores of checkpoint %d differ: %s", at.id, d)
	}
	t.Logf("checkpoint %d: %d elements committed before, %d after", at.id, total(before), total(want))
}

// Scenario 4: a crash after pre-commit and before commit; the restore
// commits exactly once. Three places of the crash:
//   - the checkpoint never completed: its pre-committed transactions are
//     aborted and their records replayed;
//   - it completed, and the commit crashed before taking effect: the
//     restore commits the restored committables;
//   - the commit took effect and the crash came before the runtime knew:
//     the restore commits again, which the idempotent commit absorbs.
func TestCrashBetweenPreCommitAndCommit(t *testing.T) {
	const keys, perKey = 6, 300
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 10, Pause: time.Millisecond}
	run := func(t *testing.T, job seqJob, store *Store) (*events, *runtime.Result) {
		t.Helper()
		job.Source, job.SourcePar, job.KeyedPar, job.V = src, 2, 2, &Violations{}
		ev := &events{}
		opts := testOptions(t.TempDir(), 10*time.Millisecond)
		noCommitRetries(&opts) // the crash must reach the restore path
		opts.Listener = ev.listener(nil)
		res, err := runJob(context.Background(), job.jobGraph(t), opts)
		if err != nil {
			t.Fatalf("job failed: %v; events: %s", err, ev)
		}
		if res.Restarts != 1 {
			t.Fatalf("%d restarts, want 1; events: %s", res.Restarts, ev)
		}
		checkOutput(t, 0, store.Committed(), keys, perKey, true)
		if g, r := job.V.Gaps.Load(), job.V.Repeats.Load(); g != 0 || r != 0 {
			t.Errorf("sequence checker saw %d gaps and %d repeats", g, r)
		}
		if l := store.Lingering(); len(l) != 0 {
			t.Errorf("lingering transactions: %v", l)
		}
		return ev, res
	}

	t.Run("checkpoint-incomplete", func(t *testing.T) {
		store := NewStore()
		// "presink" snapshots after the sink in its chain pre-committed.
		f := NewPlan(After("notify", 4), Crash("snapshot", 1))
		ev, _ := run(t, seqJob{PreSink: f, Sink: &TxSink{Store: store}}, store)
		if !f.PlanDone() {
			t.Fatalf("plan: %s", f.PlanState())
		}
		completed := ev.ids(runtime.EventCheckpointCompleted)
		restored := ev.ids(runtime.EventRestored)
		if len(restored) != 1 {
			t.Fatalf("restored %v; events: %s", restored, ev)
		}
		aborted := 0
		for _, tx := range store.Txns() {
			switch {
			case tx.Checkpoint == 0:
			case slices.Contains(completed, int64(tx.Checkpoint)):
				if tx.Status != "committed" {
					t.Errorf("%s of completed checkpoint %d is %s", tx.Name, tx.Checkpoint, tx.Status)
				}
			default:
				if tx.Status != "aborted" || int64(tx.Checkpoint) <= restored[0] {
					t.Errorf("%s pre-committed for checkpoint %d, which never completed, is %s (restored %d)",
						tx.Name, tx.Checkpoint, tx.Status, restored[0])
				}
				aborted++
			}
		}
		if aborted == 0 {
			t.Errorf("no pre-committed transaction of the crashed checkpoint; the crash came too early")
		}
	})

	for _, point := range []string{"commit", "after-commit"} {
		t.Run("crash-at-"+point, func(t *testing.T) {
			store := NewStore()
			f := NewPlan(Crash(point, 3))
			sink := &RecordingSink{Sink: &TxSink{Store: store, Faults: f}}
			run(t, seqJob{Sink: sink}, store)
			if !f.PlanDone() {
				t.Fatalf("plan: %s", f.PlanState())
			}
			calls := sink.Calls()
			failed := slices.IndexFunc(calls, func(c CommitCall) bool { return IsInjected(c.Err) })
			if failed < 0 || len(calls[failed].Committables) == 0 {
				t.Fatalf("no failed commit with committables among %+v", calls)
			}
			status := map[string]string{}
			for _, tx := range store.Txns() {
				status[tx.Name] = tx.Status
			}
			for _, name := range calls[failed].Committables {
				if status[name] != "committed" {
					t.Errorf("%s, whose commit crashed, ended %s", name, status[name])
				}
				again := slices.ContainsFunc(calls[failed+1:], func(c CommitCall) bool {
					return c.Err == nil && slices.Contains(c.Committables, name)
				})
				if !again {
					t.Errorf("%s, whose commit crashed, was never committed again after the restore", name)
				}
			}
			committed := 0
			for _, s := range status {
				if s == "committed" {
					committed++
				}
			}
			if c := store.CommitCount(); c != committed {
				t.Errorf("store applied %d commits for %d committed transactions", c, committed)
			}
		})
	}
}

// A restore from a checkpoint path outside CheckpointDir (a checkpoint
// copied elsewhere, or another job's) must read the state files next to
// that checkpoint, as checkpointstorage.Resolve documents.
func TestRestoreFromPathOutsideCheckpointDir(t *testing.T) {
	const keys, perKey = 4, 1500
	store := NewStore()
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 2, Burst: 10, Pause: time.Millisecond, Unbounded: true}
	jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: store}}.jobGraph(t)
	at := runUntil(t, jg, testOptions(t.TempDir(), 10*time.Millisecond), store, 3)

	st, ev := at.store.Clone(), &events{}
	bounded := *src
	bounded.Unbounded = false
	jg = seqJob{Source: &bounded, SourcePar: 2, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: st}}.jobGraph(t)
	opts := testOptions(t.TempDir(), 10*time.Millisecond) // a new, empty directory
	opts.Restore = filepath.Join(at.dir, fmt.Sprintf("chk-%d", at.id))
	opts.Restart = runtime.NoRestart{}
	opts.Listener = ev.listener(nil)
	if _, err := runJob(context.Background(), jg, opts); err != nil {
		t.Fatalf("restoring %s into checkpoint directory %s: %v", opts.Restore, opts.CheckpointDir, err)
	}
	if r := ev.ids(runtime.EventRestored); len(r) != 1 || r[0] != int64(at.id) {
		t.Errorf("restored %v, want [%d]", r, at.id)
	}
	checkOutput(t, 0, st.Committed(), keys, perKey, true)
}

// After a restore from an explicitly chosen checkpoint, a failover before
// the run completes a checkpoint of its own must restore that same
// checkpoint again, as Flink does (the restored checkpoint joins the
// completed-checkpoint store), not whatever is newest in the directory.
func TestFailoverAfterRestoreFromPathKeepsThatCheckpoint(t *testing.T) {
	const keys, perKey = 4, 1500
	store := NewStore()
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 2, Burst: 10, Pause: time.Millisecond, Unbounded: true}
	jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: store}}.jobGraph(t)
	opts := testOptions(t.TempDir(), 10*time.Millisecond)
	opts.Retained = 3
	at := runUntil(t, jg, opts, store, 4) // the copy holds chk-(n-2) … chk-n
	older := at.id - 1

	st, ev, v := at.store.Clone(), &events{}, &Violations{}
	bounded := *src
	bounded.Unbounded = false
	f := NewPlan(Crash("restore", 1)) // the first attempt dies while restoring
	jg = seqJob{Source: &bounded, SourcePar: 2, Faults: f, KeyedPar: 2, V: v, Sink: &TxSink{Store: st}}.jobGraph(t)
	opts = testOptions(at.dir, 10*time.Millisecond)
	opts.Retained = 3
	opts.Restore = filepath.Join(at.dir, fmt.Sprintf("chk-%d", older))
	opts.Restart = runtime.FixedDelay{Attempts: 2}
	opts.Listener = ev.listener(nil)
	_, err := runJob(context.Background(), jg, opts)
	if r := ev.ids(runtime.EventRestored); len(r) < 2 || r[0] != int64(older) || r[1] != int64(older) {
		t.Errorf("restored %v after asking for checkpoint %d (newest in the directory: %d); want [%d %d]",
			r, older, at.id, older, older)
	}
	if err != nil {
		t.Fatalf("job failed: %v; events: %s", err, ev)
	}
	checkOutput(t, 0, st.Committed(), keys, perKey, true)
}

// A job started fresh (Restore "") in a directory that holds an earlier
// run's checkpoints must, on a failover before it completes a checkpoint
// of its own, start fresh again — not restore the earlier run's state.
func TestFailoverOfFreshStartIgnoresEarlierRun(t *testing.T) {
	const keys, perKey = 4, 300
	dir := t.TempDir()
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 2, Burst: 10, Pause: time.Millisecond}
	first := NewStore()
	jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: first}}.jobGraph(t)
	if _, err := runJob(context.Background(), jg, testOptions(dir, 10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, 0, first.Committed(), keys, perKey, true)

	second, ev := NewStore(), &events{}
	f := NewPlan(Crash("process", 20))
	jg = seqJob{Source: src, SourcePar: 2, Faults: f, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: second}}.jobGraph(t)
	opts := testOptions(dir, time.Hour) // no checkpoint of its own before the crash
	opts.Restart = runtime.FixedDelay{Attempts: 2}
	opts.Listener = ev.listener(nil)
	res, err := runJob(context.Background(), jg, opts)
	if r := ev.ids(runtime.EventRestored); len(r) != 0 {
		t.Errorf("the fresh run restored %v (the earlier run's checkpoints) on failover; want a fresh restart", r)
	}
	if err != nil {
		t.Fatalf("job failed: %v; events: %s", err, ev)
	}
	if res.Restarts != 1 || res.RestoredFrom != 0 {
		t.Errorf("restarts %d, restored from %d; want 1 restart from scratch", res.Restarts, res.RestoredFrom)
	}
	checkOutput(t, 0, second.Committed(), keys, perKey, true)
}
