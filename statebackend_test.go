package weir_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
	"github.com/weirstream/weir/state/pebble"
)

type keyedAmount struct {
	Key    string
	Amount int
}

// TestRestoreAcrossStateBackends runs a keyed running sum in three phases
// on one checkpoint directory, each restoring the previous phase's final
// checkpoint with another backend at another parallelism: heap at 2,
// Pebble at 3, heap at 1. Every phase must continue every key's sum
// exactly where the previous one left it. Pebble takes full (canonical)
// checkpoints here, which any backend restores; its default, incremental
// checkpoints, restore on Pebble only (a savepoint moves between backends).
func TestRestoreAcrossStateBackends(t *testing.T) {
	dir := t.TempDir()
	phases := []struct {
		backend state.BackendFactory
		par     int
	}{
		{heap.Factory{}, 2},
		{pebble.Factory{Options: pebble.Options{LocalDir: t.TempDir(), DisableIncremental: true}}, 3},
		{heap.Factory{}, 1},
		{pebble.Factory{Options: pebble.Options{LocalDir: t.TempDir(), DisableIncremental: true}}, 2},
	}
	totals := map[string]int{}
	var all []keyedAmount // every phase's input so far
	for i, ph := range phases {
		in := make([]keyedAmount, 200)
		for j := range in {
			in[j] = keyedAmount{fmt.Sprintf("k%d", (j*7+i)%13), i*1000 + j}
		}
		all = append(all, in...)
		env := weir.NewEnvironment().SetParallelism(1).EnableCheckpointing(time.Hour, weir.ExactlyOnce, dir).
			SetStateBackend(ph.backend)
		env.RuntimeOptions().Restart = runtime.NoRestart{}
		if i > 0 {
			env.RuntimeOptions().Restore = runtime.RestoreLatest
		}
		// The source, at parallelism 1 in every phase, reads the inputs of
		// all phases so far from its restored position: the new phase's.
		src := weir.FromSlice(env, all, "in").UID("in")
		env.SetParallelism(ph.par)
		sums := weir.Reduce(weir.KeyBy(src, func(a keyedAmount) string { return a.Key }),
			func(a, b keyedAmount) keyedAmount { return keyedAmount{a.Key, a.Amount + b.Amount} }).UID("sum")
		sink := &apiSink[keyedAmount]{}
		weir.SinkTo(sums, sink, "out")
		res := runJob(t, env)
		if i > 0 && res.RestoredFrom == 0 {
			t.Fatalf("phase %d did not restore", i)
		}
		want := map[string][]int{}
		for _, a := range in {
			totals[a.Key] += a.Amount
			want[a.Key] = append(want[a.Key], totals[a.Key])
		}
		got := map[string][]int{}
		for _, a := range sink.values() {
			got[a.Key] = append(got[a.Key], a.Amount)
		}
		for k, w := range want {
			if !slices.Equal(got[k], w) {
				t.Fatalf("phase %d (%s at parallelism %d), key %s: running sums %v, want %v",
					i, ph.backend.Type(), ph.par, k, got[k], w)
			}
		}
	}
}
