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
// not each batch was read ahead (Prefetch) first — the batch itself, the
// one after it (whose keys the rows processed must not take), its rows
// reversed — with and without mini-batches, on the heap and on Pebble,
// across a restore.
func TestGroupAggregatePrefetchChangesNothing(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		for _, miniBatch := range []int{0, 7} {
			t.Run(fmt.Sprintf("%s/miniBatch=%d", backend, miniBatch), func(t *testing.T) {
				for seed := int64(1); seed <= 3; seed++ {
					rng := rand.New(rand.NewSource(seed))
					mkRow := randomDistinctRow(rng)
					rs := make([]event.Record, 600)
					for i := range rs {
						rs[i] = event.Record{Value: event.Row{Kind: event.Insert, Fields: mkRow()}, Timestamp: event.NoTimestamp}
					}
					opts := GroupAggOptions{GroupKeys: []int{0}, Aggs: distinctCalls, InputInsertOnly: true, MiniBatchSize: miniBatch}
					want := runPrefetched(t, backend == "pebble", opts, rs, nil)
					got := runPrefetched(t, backend == "pebble", opts, rs, rand.New(rand.NewSource(seed)))
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d: read ahead, the output differs:\n%s", seed, diffLines(want, got))
					}
				}
			})
		}
	}
}

// runPrefetched processes rs in batches of 1 to 16 records, each read
// ahead first as rng picks (none without rng), checkpointing and
// restoring halfway; it returns the output.
func runPrefetched(t *testing.T, pebble bool, opts GroupAggOptions, rs []event.Record, rng *rand.Rand) []string {
	t.Helper()
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewGroupAggregate(opts) })}
	dir := func() string {
		if pebble {
			return t.TempDir()
		}
		return ""
	}
	all := keygroup.Range{Start: 0, End: maxPar - 1}
	var clock int64
	c := openSubtaskOn(t, dir(), mk, &clock, nil, all)
	var out []string
	restored := false
	batches := rand.New(rand.NewSource(int64(len(rs))))
	for i := 0; i < len(rs); {
		n := min(1+batches.Intn(16), len(rs)-i)
		batch := rs[i : i+n]
		if !restored && i >= len(rs)/2 {
			parts := c.snapshot(t, 1)
			out = append(out, c.out.take()...)
			c, restored = openSubtaskOn(t, dir(), mk, &clock, parts, all), true
		}
		if rng != nil {
			p := c.head().op.(operator.Prefetcher)
			switch rng.Intn(4) {
			case 0:
				p.Prefetch(batch, 1)
			case 1:
				p.Prefetch(rs[i+n:min(i+2*n, len(rs))], 1)
			case 2:
				rev := slices.Clone(batch)
				slices.Reverse(rev)
				p.Prefetch(rev, 1)
			}
		}
		for _, r := range batch {
			if err := c.process(t, 1, r); err != nil {
				t.Fatal(err)
			}
		}
		i += n
	}
	c.finish(t)
	return append(out, c.out.take()...)
}
