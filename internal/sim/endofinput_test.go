package sim

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/runtime"
)

// Scenario 5: at the end of input the final checkpoint commits the tail,
// and the job does not end before that commit. Periodic checkpoints never
// come (interval 1h, or off), so everything the sink wrote is committed by
// the final checkpoint alone: when Run returns — and already when the
// Finished event fires — the store holds the whole input and no
// transaction is left open or prepared.
func TestFinalCheckpointCommitsTail(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
	}{{"interval=1h", time.Hour}, {"interval=off", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			const keys, perKey, sinks = 8, 250, 3
			store, v, dir := NewStore(), &Violations{}, t.TempDir()
			src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 50}
			jg := seqJob{Source: src, SourcePar: 2, KeyedPar: sinks, V: v, Sink: &TxSink{Store: store}}.jobGraph(t)
			ev := &events{}
			var atFinish int
			var lingeringAtFinish []string
			opts := testOptions(dir, tc.interval)
			opts.Restart = runtime.NoRestart{}
			opts.Listener = ev.listener(func(e runtime.Event) {
				if e.Kind == runtime.EventFinished {
					atFinish, lingeringAtFinish = len(store.Committed()), store.Lingering()
				}
			})
			res, err := runJob(context.Background(), jg, opts)
			committed, lingering := store.Committed(), store.Lingering() // the moment Run returned
			if err != nil {
				t.Fatal(err)
			}
			checkOutput(t, 0, committed, keys, perKey, true)
			if len(lingering) != 0 {
				t.Errorf("transactions left open or prepared when Run returned: %v", lingering)
			}
			if atFinish != keys*perKey || len(lingeringAtFinish) != 0 {
				t.Errorf("at the Finished event: %d of %d committed, lingering %v", atFinish, keys*perKey, lingeringAtFinish)
			}
			if got := ev.String(); len(ev.of(runtime.EventCheckpointCompleted)) != 1 ||
				ev.all()[len(ev.all())-1].Kind != runtime.EventFinished {
				t.Fatalf("events %q; want one completed checkpoint, then finished", got)
			}
			id := event.CheckpointID(ev.ids(runtime.EventCheckpointCompleted)[0])
			if len(res.Checkpoints) != 1 {
				t.Errorf("coordinator history has %d checkpoints, want only the final one", len(res.Checkpoints))
			}
			fs, err := checkpointstorage.OpenFS(dir)
			if err != nil {
				t.Fatal(err)
			}
			m, err := fs.ReadMetadata(id)
			if err != nil {
				t.Fatal(err)
			}
			if !m.Final {
				t.Errorf("checkpoint %d metadata: Final=false, want true", id)
			}
			// One transaction per sink subtask, pre-committed by the final
			// checkpoint and committed once; the ones opened after it aborted.
			var prepared int
			for _, tx := range store.Txns() {
				switch {
				case tx.Checkpoint == id && tx.Status == "committed":
					prepared++
				case tx.Checkpoint == 0 && tx.Status == "aborted" && len(tx.Records) == 0:
				default:
					t.Errorf("unexpected transaction %s: checkpoint %d, %s, %d records", tx.Name, tx.Checkpoint, tx.Status, len(tx.Records))
				}
			}
			if prepared != sinks || store.CommitCount() != sinks {
				t.Errorf("%d transactions committed by the final checkpoint, %d commits; want %d each", prepared, store.CommitCount(), sinks)
			}
			if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
				t.Errorf("sequence checker saw %d gaps and %d repeats", g, r)
			}
		})
	}
}

// The final checkpoint's commit crashes: the job must not end on it. It
// restores the final checkpoint, commits what it pre-committed, finds the
// input ended, takes a new final checkpoint and only then finishes.
func TestFinalCommitCrashIsRetried(t *testing.T) {
	const keys, perKey = 8, 250
	store, v := NewStore(), &Violations{}
	f := NewPlan(Crash("commit", 1))
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 50}
	jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 3, V: v, Sink: &TxSink{Store: store, Faults: f}}.jobGraph(t)
	ev := &events{}
	opts := testOptions(t.TempDir(), time.Hour)
	noCommitRetries(&opts) // the crash must reach the restore path
	opts.Restart = runtime.FixedDelay{Attempts: 1}
	opts.Listener = ev.listener(nil)
	res, err := runJob(context.Background(), jg, opts)
	committed, lingering := store.Committed(), store.Lingering()
	if err != nil {
		t.Fatalf("job failed: %v; events: %s", err, ev)
	}
	c := ev.ids(runtime.EventCheckpointCompleted)
	if r := ev.ids(runtime.EventRestored); !f.PlanDone() || res.Restarts != 1 || len(c) != 2 || len(r) != 1 || r[0] != c[0] {
		t.Fatalf("plan %s, %d restarts, events %s; want the final checkpoint, a crash, its restore, a new final checkpoint",
			f.PlanState(), res.Restarts, ev)
	}
	checkOutput(t, 0, committed, keys, perKey, true)
	if len(lingering) != 0 {
		t.Errorf("transactions left open or prepared when Run returned: %v", lingering)
	}
	if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
		t.Errorf("sequence checker saw %d gaps and %d repeats", g, r)
	}
}
