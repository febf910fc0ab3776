package sim

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/debloat"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/pebble"
	"github.com/weirstream/weir/task"
)

// soakConfig is one run of the exactly-once soak.
type soakConfig struct {
	seed     int64
	mode     task.Mode
	failures int
	// backend is the keyed state backend; nil is the runtime's default
	// (heap).
	backend state.BackendFactory
	// unaligned and alignedTimeout configure unaligned checkpoints.
	unaligned      bool
	alignedTimeout time.Duration
	// processRate overrides the rate of crashes per record processed
	// (default 0.003).
	processRate float64
	// debloat turns buffer debloating on, with a 1 ms target recomputed
	// every millisecond: senders' batches change size while barriers,
	// crashes and restores go on.
	debloat bool
	// simulate runs the job under a Sched seeded with seed (virtual time,
	// one goroutine at a time), recording into trace: a deterministic run.
	simulate bool
	trace    *Trace
	// loseCommit plants a bug in the sink (TxSink.LoseCommit).
	loseCommit int
}

type soakResult struct {
	committed []any
	faults    *Faults
	v         *Violations
	res       *runtime.Result
	store     *Store
	// unaligned counts the acknowledgements of completed checkpoints a
	// task took unaligned, persisted the bytes of channel state they wrote.
	unaligned, persisted int64
	// replays counts the restores of a checkpoint that held channel state.
	replays int
	// outputPersisted and outputReplays are persisted and replays for
	// output channel state alone: batches a barrier overtook in a sender's
	// output queue.
	outputPersisted int64
	outputReplays   int
}

// buildSoakGraph: SeqSource (p=2, 3 splits) → CrashOp (forward, chained)
// → keyBy → SeqChecker (p=3) → TxSink (p=3, chained).
func buildSoakGraph(src *SeqSource, f *Faults, v *Violations, sink *TxSink) *graph.StreamGraph {
	return buildSoakGraphWith(src, f, v, sink, 3, nil)
}

// buildSoakGraphWith is buildSoakGraph with Check and Sink at parallelism
// par, and halt handed to the CrashOps (see CrashOp.Halt).
func buildSoakGraphWith(src *SeqSource, f *Faults, v *Violations, sink *TxSink, par int, halt *atomic.Bool) *graph.StreamGraph {
	g := &graph.StreamGraph{JobName: "soak"}
	s := g.AddNode(&graph.Node{Name: "Source: seq", UID: "seq", Parallelism: 2, Source: src})
	c := g.AddNode(&graph.Node{Name: "Crash", UID: "crash", Parallelism: 2,
		NewOperator: func() operator.Operator {
			return &CrashOp{Faults: f, SlowSubtask: 1, SlowEvery: 40, SlowFor: 2 * time.Millisecond, Halt: halt}
		}})
	key := func(x any) any { return x.(Seq).Key }
	k := g.AddNode(&graph.Node{Name: "Check", UID: "check", Parallelism: par, KeySelector: key,
		NewOperator: func() operator.Operator { return &SeqChecker{V: v} }})
	o := g.AddNode(&graph.Node{Name: "Sink: tx", UID: "sink", Parallelism: par,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(sink) }})
	g.Connect(&graph.Edge{From: s.ID, To: c.ID})
	g.Connect(&graph.Edge{From: c.ID, To: k.ID, Partitioning: graph.Hash, Key: key})
	g.Connect(&graph.Edge{From: k.ID, To: o.ID})
	return g
}

func runSoak(t *testing.T, cfg soakConfig, keys, perKey int) soakResult {
	t.Helper()
	rates := map[string]float64{"process": cmp.Or(cfg.processRate, 0.003), "snapshot": 0.05, "restore": 0.05,
		"notify": 0.05, "prepare": 0.03, "commit": 0.05, "after-commit": 0.05}
	f := NewFaults(cfg.seed, cfg.failures, rates)
	v := &Violations{}
	store := NewStore()
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 50, Pause: time.Millisecond, Faults: f}
	sink := &TxSink{Store: store, Faults: f, AtLeastOnce: cfg.mode == task.AtLeastOnce, LoseCommit: cfg.loseCommit}
	jg, err := buildSoakGraph(src, f, v, sink).JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	opts := runtime.Options{Mode: cfg.mode, CheckpointDir: t.TempDir(), ChannelCredits: 1, BatchSize: 3,
		Restart: runtime.FixedDelay{Attempts: cfg.failures + 5, Delay: 0}, StateBackend: cfg.backend}
	opts.Checkpoint.Interval = 5 * time.Millisecond
	opts.Checkpoint.TolerableFailures = -1
	opts.Checkpoint.Unaligned, opts.Checkpoint.AlignedTimeout = cfg.unaligned, cfg.alignedTimeout
	if cfg.debloat {
		opts.Debloat = debloat.Options{Enabled: true, Target: time.Millisecond, Period: time.Millisecond}
	}
	if cfg.simulate {
		sched := NewSched(cfg.seed, cfg.trace)
		defer sched.Close()
		opts.Clock, src.Clock = sched, sched
		f.Trace, sink.Trace = cfg.trace, cfg.trace
	}
	var r soakResult
	withChannelState, withOutputState := map[int64]bool{}, map[int64]bool{}
	opts.Listener = func(e runtime.Event) {
		if cfg.trace != nil {
			cfg.trace.Add(fmt.Sprintf("event %d checkpoint %d attempt %d", e.Kind, e.Checkpoint, e.Attempt))
		}
		if e.Kind == runtime.EventRestored && withChannelState[e.Checkpoint] {
			r.replays++
		}
		if e.Kind == runtime.EventRestored && withOutputState[e.Checkpoint] {
			r.outputReplays++
		}
		if e.Kind != runtime.EventCheckpointCompleted || e.Stats == nil {
			return
		}
		for _, ts := range e.Stats.Tasks {
			if ts.Metrics.Unaligned {
				r.unaligned++
			}
			r.persisted += ts.Metrics.PersistedBytes
			r.outputPersisted += ts.Metrics.PersistedOutputBytes
			withChannelState[e.Checkpoint] = withChannelState[e.Checkpoint] || ts.Metrics.PersistedBytes > 0
			withOutputState[e.Checkpoint] = withOutputState[e.Checkpoint] || ts.Metrics.PersistedOutputBytes > 0
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := runtime.Run(ctx, jg, opts)
	if err != nil {
		t.Fatalf("seed %d: job failed: %v (faults fired: %v)", cfg.seed, err, f.Fired)
	}
	r.committed, r.faults, r.v, r.res, r.store = store.Committed(), f, v, res, store
	return r
}

// multiset counts committed elements by (key, seq) and checks each input
// element is there: exactly once (exact) or at least once.
func checkOutput(t *testing.T, seed int64, got []any, keys, perKey int, exact bool) (dups int) {
	t.Helper()
	problems, dups := outputProblems(seed, got, keys, perKey, exact)
	for _, p := range problems {
		t.Error(p)
	}
	return dups
}

// outputProblems is checkOutput's verdict: what is wrong with the
// committed output, and the number of duplicates.
func outputProblems(seed int64, got []any, keys, perKey int, exact bool) (problems []string, dups int) {
	count := map[Seq]int{}
	for _, x := range got {
		count[x.(Seq)]++
	}
	for k := 0; k < keys; k++ {
		for q := 0; q < perKey; q++ {
			n := count[Seq{k, q}]
			if n == 0 {
				problems = append(problems, fmt.Sprintf("seed %d: element (key %d, seq %d) lost", seed, k, q))
			}
			if n > 1 {
				dups += n - 1
			}
		}
	}
	if extra := len(got) - keys*perKey - dups; extra != 0 {
		problems = append(problems, fmt.Sprintf("seed %d: %d committed elements are not in the input", seed, extra))
	}
	if exact && dups > 0 {
		problems = append(problems, fmt.Sprintf("seed %d: %d duplicates in exactly-once mode", seed, dups))
	}
	return problems, dups
}

const soakSeeds = 20

func TestSoakExactlyOnce(t *testing.T) {
	soakExactlyOnce(t, 1, soakSeeds, func(*testing.T) state.BackendFactory { return nil })
}

// TestSoakExactlyOncePebble is the soak on the Pebble backend, for a few
// seeds: every failover restores keyed state from a checkpoint into a new
// Pebble instance, whose directory is removed when its attempt ends.
func TestSoakExactlyOncePebble(t *testing.T) {
	var dirs []string
	root := t.TempDir()
	soakExactlyOnce(t, 1, 4, func(t *testing.T) state.BackendFactory {
		dir := filepath.Join(root, t.Name())
		dirs = append(dirs, dir)
		return pebble.Factory{Options: pebble.Options{LocalDir: dir}}
	})
	if len(dirs) == 0 {
		t.Fatal("no run")
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("state.backend.local-dir %s was never created: %v", d, err)
		}
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("state.backend.local-dir %s keeps %d entries after the job: %v", d, len(ents), ents)
		}
	}
}

// TestSoakUnaligned is the exactly-once soak with unaligned checkpoints:
// from the first barrier (aligned timeout 0), and switching after an
// aligned timeout of 2 ms. Tiny credits, a slowed subtask and seeded
// crashes make barriers overtake in-flight batches; each run checks that
// unaligned checkpoints completed with channel state in them, so that the
// restores replay it.
func TestSoakUnaligned(t *testing.T) {
	for _, timeout := range []time.Duration{0, 2 * time.Millisecond} {
		t.Run(fmt.Sprintf("timeout=%v", timeout), func(t *testing.T) {
			var sum soakResult
			soakRuns(t, 1, 5, func(cfg *soakConfig) {
				// Fewer crashes per record than the aligned soak, so that
				// checkpoints with channel state complete and get restored.
				cfg.unaligned, cfg.alignedTimeout, cfg.processRate = true, timeout, 0.001
			}, func(r soakResult) {
				sum.unaligned, sum.persisted, sum.replays = sum.unaligned+r.unaligned, sum.persisted+r.persisted, sum.replays+r.replays
				sum.outputPersisted += r.outputPersisted
				sum.outputReplays += r.outputReplays
			})
			if sum.unaligned == 0 || sum.persisted == 0 || sum.replays == 0 {
				t.Errorf("%d unaligned acknowledgements, %d bytes of channel state, %d restores replaying it: "+
					"the unaligned path was not exercised", sum.unaligned, sum.persisted, sum.replays)
			}
			// Barriers overtook batches in output queues, and restores
			// replayed them at the receivers: a batch lost or replayed twice
			// fails the exact count of soakRuns. With a timeout the sources'
			// barriers start aligned in their queues and turn into priority
			// events there once it passed.
			if sum.outputPersisted == 0 || sum.outputReplays == 0 {
				t.Errorf("%d bytes of output channel state, %d restores replaying it: no barrier overtook an output queue",
					sum.outputPersisted, sum.outputReplays)
			}
			t.Logf("%d unaligned acknowledgements, %d bytes of channel state (%d of output state), %d restores replaying it (%d with output state)",
				sum.unaligned, sum.persisted, sum.outputPersisted, sum.replays, sum.outputReplays)
		})
	}
}

// TestSoakDebloat is the exactly-once soak with buffer debloating, aligned
// and unaligned: batches cut at sizes that change while checkpoints,
// crashes and restores go on lose and duplicate nothing.
func TestSoakDebloat(t *testing.T) {
	for _, unaligned := range []bool{false, true} {
		t.Run(fmt.Sprintf("unaligned=%v", unaligned), func(t *testing.T) {
			soakRuns(t, 1, 3, func(cfg *soakConfig) {
				cfg.debloat, cfg.unaligned = true, unaligned
				if unaligned {
					cfg.processRate = 0.001
				}
			}, nil)
		})
	}
}

func soakExactlyOnce(t *testing.T, from, to int64, backend func(*testing.T) state.BackendFactory) {
	soakRuns(t, from, to, func(cfg *soakConfig) { cfg.backend = backend(t) }, nil)
}

// soakRuns runs the exactly-once soak for seeds from..to, with configure
// applied to each run's config, and hands each result to check (if set).
func soakRuns(t *testing.T, from, to int64, configure func(*soakConfig), check func(soakResult)) {
	keys, perKey := 12, 400
	for seed := from; seed <= to; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			cfg := soakConfig{seed: seed, mode: task.ExactlyOnce, failures: 6}
			configure(&cfg)
			r := runSoak(t, cfg, keys, perKey)
			if check != nil {
				check(r)
			}
			if r.faults.Count() < 5 {
				t.Fatalf("only %d failures injected (%v); the soak needs at least 5", r.faults.Count(), r.faults.Fired)
			}
			checkOutput(t, seed, r.committed, keys, perKey, true)
			if g, rep := r.v.Gaps.Load(), r.v.Repeats.Load(); g != 0 || rep != 0 {
				t.Errorf("sequence checker saw %d gaps and %d repeats", g, rep)
			}
			if l := r.store.Lingering(); len(l) != 0 {
				t.Errorf("lingering transactions: %v", l)
			}
			// Two crashes in one attempt make one restart.
			if r.res.Restarts < 1 || r.res.Restarts > r.faults.Count() {
				t.Errorf("restarts %d, injected failures %d", r.res.Restarts, r.faults.Count())
			}
		})
	}
}

func TestSoakAtLeastOnce(t *testing.T) {
	keys, perKey := 12, 400
	total := 0
	for seed := int64(1); seed <= soakSeeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := runSoak(t, soakConfig{seed: seed, mode: task.AtLeastOnce, failures: 6}, keys, perKey)
			if r.faults.Count() < 5 {
				t.Fatalf("only %d failures injected (%v)", r.faults.Count(), r.faults.Fired)
			}
			total += checkOutput(t, seed, r.committed, keys, perKey, false)
			if g := r.v.Gaps.Load(); g != 0 {
				t.Errorf("sequence checker saw %d gaps (loss) in at-least-once mode", g)
			}
		})
	}
	if total == 0 {
		t.Errorf("at-least-once runs with failures showed no duplicates at all; the replay path is not exercised")
	}
	t.Logf("at-least-once: %d duplicates over %d seeds", total, soakSeeds)
}
