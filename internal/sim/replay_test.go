package sim

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/weirstream/weir/task"
)

// simSeed replays one seed of the simulated soak: -seed N, or
// WEIR_SIM_SEED=N.
var simSeed = flag.Int64("seed", 0, "replay this seed of the simulated soak (also WEIR_SIM_SEED)")

// replaySeed is the seed asked for, or 0.
func replaySeed(t *testing.T) int64 {
	if *simSeed != 0 {
		return *simSeed
	}
	if s := os.Getenv("WEIR_SIM_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("WEIR_SIM_SEED=%q: %v", s, err)
		}
		return n
	}
	return 0
}

// simulated runs seed of the exactly-once soak under a Sched and returns
// its trace and what is wrong with its outcome (nil: nothing).
func simulated(t *testing.T, seed int64, loseCommit int) (trace []string, problems []string) {
	return simulatedWith(t, soakConfig{seed: seed, loseCommit: loseCommit})
}

// simulatedWith is simulated with cfg's seed and options (unaligned
// checkpoints, a planted bug).
func simulatedWith(t *testing.T, cfg soakConfig) (trace []string, problems []string) {
	t.Helper()
	keys, perKey := 12, 400
	tr := &Trace{}
	seed := cfg.seed
	cfg.mode, cfg.failures, cfg.simulate, cfg.trace = task.ExactlyOnce, 6, true, tr
	r := runSoak(t, cfg, keys, perKey)
	problems, _ = outputProblems(seed, r.committed, keys, perKey, true)
	if l := r.store.Lingering(); len(l) != 0 {
		problems = append(problems, fmt.Sprintf("seed %d: lingering transactions: %v", seed, l))
	}
	if g, rep := r.v.Gaps.Load(), r.v.Repeats.Load(); g != 0 || rep != 0 {
		problems = append(problems, fmt.Sprintf("seed %d: sequence checker saw %d gaps and %d repeats", seed, g, rep))
	}
	return tr.Steps(), problems
}

// replayHint is how to run seed again.
func replayHint(seed int64) string {
	return fmt.Sprintf("replay with: WEIR_SIM_SEED=%d go test ./internal/sim -run 'TestSoakSimulated|TestSoakReplaysSeed'", seed)
}

// TestSoakSimulated is the exactly-once soak under the deterministic
// scheduler, one run per seed, with aligned checkpoints (seeds 1-10) and
// unaligned ones (seeds 1-3); a failing seed prints how to replay it.
func TestSoakSimulated(t *testing.T) {
	t.Run("aligned", func(t *testing.T) { simulatedSeeds(t, 10, false) })
	t.Run("unaligned", func(t *testing.T) { simulatedSeeds(t, 3, true) })
}

func simulatedSeeds(t *testing.T, seeds int64, unaligned bool) {
	from, to := int64(1), seeds
	if s := replaySeed(t); s != 0 {
		from, to = s, s
	}
	for seed := from; seed <= to; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			cfg := soakConfig{seed: seed, unaligned: unaligned}
			if unaligned {
				cfg.processRate = 0.001 // as TestSoakUnaligned
			}
			trace, problems := simulatedWith(t, cfg)
			for _, p := range problems {
				t.Error(p)
			}
			if t.Failed() {
				t.Log(replayHint(seed))
			}
			t.Logf("%d steps", len(trace))
		})
	}
}

// TestSoakReplaysSeed runs one seed of the simulated soak twice and
// requires the same trace, step for step; then it plants a bug — the sink
// loses one commit, at a point the seed picks — and requires that the
// failing run replays to the same trace and the same failure.
func TestSoakReplaysSeed(t *testing.T) {
	seed := replaySeed(t)
	if seed == 0 {
		seed = 7
	}
	first, p1 := simulated(t, seed, 0)
	second, p2 := simulated(t, seed, 0)
	if d := FirstDifference(first, second); d != "" {
		t.Fatalf("seed %d: the replay took other steps: %s", seed, d)
	}
	if len(p1) != 0 || len(p2) != 0 {
		t.Fatalf("seed %d: the soak failed: %v; %s", seed, p1, replayHint(seed))
	}
	lose := 1 + int(seed%5)
	bad, q1 := simulated(t, seed, lose)
	again, q2 := simulated(t, seed, lose)
	if len(q1) == 0 {
		t.Fatalf("seed %d: losing commit %d went unnoticed", seed, lose)
	}
	if d := FirstDifference(bad, again); d != "" {
		t.Fatalf("seed %d: the failing run did not replay: %s", seed, d)
	}
	if fmt.Sprint(q1) != fmt.Sprint(q2) {
		t.Fatalf("seed %d: the replay failed otherwise:\n%v\n%v", seed, q1, q2)
	}
	t.Logf("seed %d: %d steps replayed; with commit %d lost, %d steps replayed to the same failure: %s",
		seed, len(first), lose, len(bad), q1[0])
}
