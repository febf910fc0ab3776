package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
)

var _ operator.Prefetcher = (*GroupAggregate)(nil)

// TestGroupAggregatePrefetchChangesNothing: a GroupAggregate of shared
// DISTINCT sets over an insert-only input emits the same rows whether or
// not its batches were prefetched (Prefetch, see runPrefetched), with and
// without mini-batches, on the heap and on Pebble, across a restore.
func TestGroupAggregatePrefetchChangesNothing(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		for _, miniBatch := range []int{0, 7} {
			t.Run(fmt.Sprintf("%s/miniBatch=%d", backend, miniBatch), func(t *testing.T) {
				for seed := int64(1); seed <= 3; seed++ {
					rng := rand.New(rand.NewSource(seed))
					mkRow := randomDistinctRow(rng)
					steps := make([]step, 600)
					for i := range steps {
						steps[i] = step{input: 1, row: event.Row{Kind: event.Insert, Fields: mkRow()}}
					}
					opts := GroupAggOptions{GroupKeys: []int{0}, Aggs: distinctCalls, InputInsertOnly: true, MiniBatchSize: miniBatch}
					mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewGroupAggregate(opts) })}
					samePrefetched(t, seed, backend == "pebble", mk, steps)
				}
			})
		}
	}
}

// samePrefetched fails unless the chain mk emits for steps what it emits
// with its batches prefetched — each batch (a run of up to 16 steps of one
// input) before it is processed, or the batch after it, or its rows
// reversed, or it as the other input's — whose keys processing must not
// take for rows they are not of.
func samePrefetched(t *testing.T, seed int64, pebble bool, mk []newStage, steps []step) {
	t.Helper()
	want := runPrefetched(t, pebble, mk, steps, nil)
	got := runPrefetched(t, pebble, mk, steps, rand.New(rand.NewSource(seed)))
	if !slices.Equal(got, want) {
		t.Fatalf("seed %d: prefetched, the output differs:\n%s", seed, diffLines(want, got))
	}
	if len(want) == 0 {
		t.Fatalf("seed %d: no output", seed)
	}
}

// runPrefetched processes steps in batches, prefetched as rng picks (none
// without rng), checkpointing and restoring halfway; it returns the
// output.
func runPrefetched(t *testing.T, pebble bool, mk []newStage, steps []step, rng *rand.Rand) []string {
	t.Helper()
	dir := func() string {
		if pebble {
			return t.TempDir()
		}
		return ""
	}
	all := keygroup.Range{Start: 0, End: maxPar - 1}
	var clock int64
	c := openSubtaskOn(t, dir(), mk, &clock, nil, all)
	rs := make([]event.Record, len(steps))
	for i, s := range steps {
		rs[i] = event.Record{Value: s.row, Timestamp: event.NoTimestamp}
	}
	batches := batchesOf(steps)
	var out []string
	for b, span := range batches {
		if b == len(batches)/2 {
			parts := c.snapshot(t, 1)
			out = append(out, c.out.take()...)
			c = openSubtaskOn(t, dir(), mk, &clock, parts, all)
		}
		input, batch := steps[span[0]].input, rs[span[0]:span[1]]
		if rng != nil {
			p := c.head().op.(operator.Prefetcher)
			switch rng.Intn(5) {
			case 0:
				p.Prefetch(batch, input)
			case 1:
				if b+1 < len(batches) {
					next := batches[b+1]
					p.Prefetch(rs[next[0]:next[1]], steps[next[0]].input)
				}
			case 2:
				rev := slices.Clone(batch)
				slices.Reverse(rev)
				p.Prefetch(rev, input)
			case 3:
				p.Prefetch(batch, 3-input)
			}
		}
		for _, r := range batch {
			if err := c.process(t, input, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.finish(t)
	return append(out, c.out.take()...)
}

// batchesOf cuts steps into runs of one input, each of 1 to 16 steps:
// [start, end) pairs.
func batchesOf(steps []step) [][2]int {
	rng := rand.New(rand.NewSource(int64(len(steps))))
	var out [][2]int
	for i := 0; i < len(steps); {
		end := i + 1
		for limit := i + 1 + rng.Intn(16); end < min(limit, len(steps)) && steps[end].input == steps[i].input; end++ {
		}
		out = append(out, [2]int{i, end})
		i = end
	}
	return out
}
