package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// binaryJoinTypes are the fields of both sides' rows in these tests: a
// key, a STRING, a nullable DECIMAL(6, 2) and a TIMESTAMP.
var binaryJoinTypes = []types.Type{{Kind: types.BigInt}, {Kind: types.String, Nullable: true},
	{Kind: types.Decimal, Precision: 6, Scale: 2, Nullable: true}, {Kind: types.Timestamp, Precision: 3}}

// binaryJoinSteps are n insert-only rows on random sides.
func binaryJoinSteps(rng *rand.Rand, n int) []step {
	out := make([]step, n)
	for i := range out {
		var s, d any
		if rng.Intn(6) > 0 {
			s = fmt.Sprint("s", rng.Intn(50))
		}
		if rng.Intn(5) > 0 {
			d = decimal.New(int64(rng.Intn(4000)-1000), -2)
		}
		row := []any{int64(rng.Intn(4)), s, d, time.UnixMilli(int64(rng.Intn(1e6))).UTC()}
		out[i] = step{input: 1 + rng.Intn(2), row: event.Row{Kind: event.Insert, Fields: row}}
	}
	return out
}

// TestJoinBinaryRowsSameOutput: an inner Join of insert-only inputs that
// keeps its rows as binary rows emits exactly what one keeping RowCodec
// values does, on the heap and on Pebble, with and without restores, and
// a checkpoint of RowCodec rows (an older Weir) restores into it.
func TestJoinBinaryRowsSameOutput(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewSource(seed))
		steps := binaryJoinSteps(rng, 160)
		opts := JoinOptions{LeftKeys: []int{0}, RightKeys: []int{0}, LeftArity: 4, RightArity: 4,
			LeftInsertOnly: true, RightInsertOnly: seed%2 == 0}
		if seed%3 == 0 {
			opts.Condition = func(l, r []any) (bool, error) { return compareValues(l[3], r[3]) <= 0, nil }
		}
		mk := func(o JoinOptions) []newStage {
			return []newStage{keyedStage(func() (operator.Operator, error) { return NewJoin(o) })}
		}
		restarts := randomRestarts(rng, len(steps), 4)
		want := runStepsOn(t, "", mk(opts), steps, nil)
		old := opts
		opts.LeftTypes, opts.RightTypes = binaryJoinTypes, binaryJoinTypes
		if !opts.KeepsBinaryRows() {
			t.Fatal("no binary rows")
		}
		sameOnEveryBackend(t, seed, want, mk(old), mk(opts), steps, restarts)
	}
}

// TestDedupBinaryRowsSameOutput: keep-last Deduplicate (by arrival and by
// rowtime) keeping its rows as binary rows emits exactly what one keeping
// RowCodec values does, on the heap and on Pebble, with and without
// restores, and a checkpoint of RowCodec rows restores into it.
func TestDedupBinaryRowsSameOutput(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewSource(seed))
		steps := binaryJoinSteps(rng, 160)
		for i := range steps {
			steps[i].input = 1
		}
		opts := DedupOptions{PartitionKeys: []int{0}, KeepLast: true, RowTime: seed%2 == 0, TimeField: 3}
		mk := func(o DedupOptions) []newStage {
			return []newStage{keyedStage(func() (operator.Operator, error) { return NewDeduplicate(o) })}
		}
		restarts := randomRestarts(rng, len(steps), 4)
		want := runStepsOn(t, "", mk(opts), steps, nil)
		old := opts
		opts.Types = binaryJoinTypes
		if rowLayout(opts.Types) == nil {
			t.Fatal("no binary rows")
		}
		sameOnEveryBackend(t, seed, want, mk(old), mk(opts), steps, restarts)
	}
}

// sameOnEveryBackend fails unless the stages of next (keeping binary rows)
// emit want — the output of old's, which keep RowCodec values — on the
// heap and on Pebble, with and without restores, and restored from old's
// checkpoint halfway.
func sameOnEveryBackend(t *testing.T, seed int64, want []string, old, next []newStage, steps []step, restarts map[int]bool) {
	t.Helper()
	half := len(steps) / 2
	for name, got := range map[string][]string{
		"heap":                       runStepsOn(t, "", next, steps, nil),
		"heap, restored":             runStepsOn(t, "", next, steps, restarts),
		"pebble":                     runStepsOn(t, t.TempDir(), next, steps, nil),
		"pebble, restored":           runStepsOn(t, t.TempDir(), next, steps, restarts),
		"heap, from RowCodec rows":   runUpgraded(t, "", old, next, steps, half),
		"pebble, from RowCodec rows": runUpgraded(t, t.TempDir(), old, next, steps, half),
	} {
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d, binary rows on %s: %s", seed, name, diffLines(want, got))
		}
	}
}
