package exec

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
)

// binaryAggTypes are the fields of binaryAggRow: a group, a nullable
// BIGINT, a nullable DECIMAL(5, 1), a STRING, a TIMESTAMP, a DOUBLE and a
// BOOLEAN filter.
var binaryAggTypes = []types.Type{{Kind: types.String}, {Kind: types.BigInt, Nullable: true},
	{Kind: types.Decimal, Precision: 5, Scale: 1, Nullable: true}, {Kind: types.String}, {Kind: types.Timestamp, Precision: 3},
	{Kind: types.Double}, {Kind: types.Boolean}}

func binaryAggRow(rng *rand.Rand) func() []any {
	return func() []any {
		var n, d any
		if rng.Intn(6) > 0 {
			n = int64(rng.Intn(2000) - 500) // beyond 255: boxed, not interned
		}
		if rng.Intn(5) > 0 {
			d = decimal.New(int64(rng.Intn(200)-50), -1)
		}
		at := time.UnixMilli(int64(rng.Intn(50)) * 1000).UTC()
		return []any{fmt.Sprint("g", rng.Intn(3)), n, d, fmt.Sprint("s", rng.Intn(9)), at, float64(rng.Intn(100)) / 4, rng.Intn(3) > 0}
	}
}

// binaryAggCalls are calls whose accumulators binary rows hold; the
// FIRST_VALUE and LAST_VALUE only over insert-only input.
func binaryAggCalls(insertOnly bool) []AggCall {
	calls := []AggCall{{Kind: CountStar}, {Kind: Count, Arg: 1}, {Kind: Sum, Arg: 1}, {Kind: Avg, Arg: 2},
		{Kind: Sum, Arg: 2, HasFilter: true, FilterField: 6}, {Kind: Min, Arg: 3}, {Kind: Max, Arg: 4},
		{Kind: Max, Arg: 5}, {Kind: Avg, Arg: 5}, {Kind: Count, Arg: 3, Distinct: true}, {Kind: Min, Arg: 2}}
	if insertOnly {
		calls = append(calls, AggCall{Kind: FirstValue, Arg: 3}, AggCall{Kind: LastValue, Arg: 2})
	}
	for i := range calls {
		if calls[i].Kind != CountStar {
			calls[i].ArgType = &binaryAggTypes[calls[i].Arg]
		}
	}
	return calls
}

func aggStages(opts GroupAggOptions) []newStage {
	return []newStage{keyedStage(func() (operator.Operator, error) { return NewGroupAggregate(opts) })}
}

// TestGroupAggregateBinaryRowsSameOutput: a GroupAggregate keeping its
// accumulators as binary rows emits exactly what one keeping RowCodec
// values does, on the heap and on Pebble, with and without restores and
// mini-batches, for updating and insert-only input.
func TestGroupAggregateBinaryRowsSameOutput(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewSource(seed))
		insertOnly := seed%3 == 0
		rows := changelog(rng, 200, binaryAggRow(rng))
		if insertOnly {
			rows = slices.DeleteFunc(rows, func(r event.Row) bool { return !r.Kind.IsAccumulate() })
		}
		opts := GroupAggOptions{GroupKeys: []int{0}, Aggs: binaryAggCalls(insertOnly), InputInsertOnly: insertOnly}
		if seed%2 == 0 {
			opts.MiniBatchSize = 1 + rng.Intn(7)
		}
		// A snapshot ends a mini-batch: runs with restores are compared
		// with one of RowCodec values restored alike.
		restarts := randomRestarts(rng, len(rows), 4)
		want := runStagesOn(t, "", aggStages(opts), rows, nil)
		wantRestored := runStagesOn(t, "", aggStages(opts), rows, restarts)
		opts.Types = binaryAggTypes
		if _, ok := opts.AccTypes(); !ok {
			t.Fatalf("seed %d: no binary accumulator for %v", seed, opts.Aggs)
		}
		for name, got := range map[string][]string{
			"heap":             runStagesOn(t, "", aggStages(opts), rows, nil),
			"heap, restored":   runStagesOn(t, "", aggStages(opts), rows, restarts),
			"pebble":           runStagesOn(t, t.TempDir(), aggStages(opts), rows, nil),
			"pebble, restored": runStagesOn(t, t.TempDir(), aggStages(opts), rows, restarts),
		} {
			w := want
			if strings.HasSuffix(name, "restored") {
				w = wantRestored
			}
			if !slices.Equal(got, w) {
				t.Fatalf("seed %d, binary rows on %s: %s", seed, name, diffLines(w, got))
			}
		}
	}
}

// TestGroupAggregateRestoresStateBeforeBinaryRows: a checkpoint of a
// GroupAggregate that kept RowCodec accumulators (an older Weir) restores
// into one keeping binary rows, on the heap and on Pebble, and the run
// goes on as if nothing changed; then that one's checkpoint restores
// again, now of binary rows.
func TestGroupAggregateRestoresStateBeforeBinaryRows(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	rows := changelog(rng, 240, binaryAggRow(rng))
	old := GroupAggOptions{GroupKeys: []int{0}, Aggs: binaryAggCalls(false)}
	want := runStagesOn(t, "", aggStages(old), rows, nil)
	binary := old
	binary.Types = binaryAggTypes
	for _, dir := range []string{"", t.TempDir()} {
		if got := runUpgraded(t, dir, aggStages(old), aggStages(binary), inputs(rows, 1), 80); !slices.Equal(got, want) {
			t.Fatalf("restored into binary rows on %q: %s", dir, diffLines(want, got))
		}
	}
}

// runUpgraded runs steps[:at] through the stages old on the heap, restores
// their snapshot into the stages next on a heap (dir "") or Pebble
// backend, and runs the rest, restoring next's own snapshot halfway; it
// returns the output lines.
func runUpgraded(t *testing.T, dir string, old, next []newStage, steps []step, at int) []string {
	t.Helper()
	all := keygroup.Range{Start: 0, End: maxPar - 1}
	feed := func(c *chain, steps []step) {
		for _, s := range steps {
			if err := c.process(t, s.input, event.Record{Value: s.row, Timestamp: event.NoTimestamp}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var clock int64
	c := openSubtaskOn(t, "", old, &clock, nil, all)
	feed(c, steps[:at])
	parts := c.snapshot(t, 1)
	got := c.out.take()
	mid := at + (len(steps)-at)/2
	c = openSubtaskOn(t, dir, next, &clock, parts, all)
	feed(c, steps[at:mid])
	parts = c.snapshot(t, 2)
	got = append(got, c.out.take()...)
	c = openSubtaskOn(t, dir, next, &clock, parts, all)
	feed(c, steps[mid:])
	c.finish(t)
	return append(got, c.out.take()...)
}

func TestStateRowCodec(t *testing.T) {
	opts := GroupAggOptions{Aggs: binaryAggCalls(false), Types: binaryAggTypes}
	g, err := NewGroupAggregate(opts)
	if err != nil || g.codec.layout == nil {
		t.Fatalf("binary accumulators: %v, layout %v", err, g.codec.layout)
	}
	c := g.codec
	acc := g.agg.newAcc()
	g.agg.groups, g.agg.inGroup = nil, nil // unopened: no shared distinct maps, every set a nopSet
	if err := g.agg.accumulate(acc, []any{"g", int64(700), decimal.New(15, -1), "s", time.UnixMilli(9).UTC(), 2.5, true}, false,
		func(int) multiset { return nopSet{} }); err != nil {
		t.Fatal(err)
	}
	enc := c.Encode([]byte("x"), fieldsRow(acc))
	r, rest, err := c.Decode(append(enc[1:], 'y'))
	if err != nil || string(rest) != "y" || !r.binary() || r.fields() != nil {
		t.Fatalf("decode: %v, rest %q, %+v", err, rest, r)
	}
	// A stateRow is one pointer: kept as `any` (the heap backend) without
	// an allocation of its own.
	if n := testing.AllocsPerRun(10, func() { boxedRow = r }); n != 0 {
		t.Errorf("boxing a stateRow allocates %v times", n)
	}
	if got := c.fieldsCopy(r); !sameRow(got, acc) {
		t.Fatalf("round trip: %s, want %s", formatFields(got), formatFields(acc))
	}
	if again := c.Encode(nil, r); string(again) != string(enc[1:]) {
		t.Errorf("a decoded row encodes to other bytes")
	}
	legacy := RowCodec{}.Encode(nil, acc)
	if r, _, err := c.Decode(legacy); err != nil || !sameRow(c.fieldsCopy(r), acc) {
		t.Errorf("RowCodec accumulator: %v %+v", err, r)
	}
	for name, bad := range map[string][]byte{
		"truncated":  enc[1 : len(enc)-1],
		"no length":  {binaryRowTag, 1, 0},
		"short row":  {binaryRowTag, 2, 0, 0, 0, 0, 0},
		"not a row":  {200},
		"wrong tail": append([]byte{binaryRowTag, byte(len(enc) - 7), 0, 0, 0}, enc[7:]...),
	} {
		if _, _, err := c.Decode(bad); !errors.Is(err, state.ErrCorrupt) {
			t.Errorf("%s: got %v, want state.ErrCorrupt", name, err)
		}
	}
	for _, calls := range [][]AggCall{{{Kind: ListAgg, Arg: 3}}, {{Kind: VarPop, Arg: 5}}, {{Kind: FirstValue, Arg: 3}}} {
		o := GroupAggOptions{Aggs: calls, Types: binaryAggTypes}
		if _, ok := o.AccTypes(); ok {
			t.Errorf("%v over updating input: binary accumulator, want RowCodec values", calls)
		}
	}
}

var boxedRow any

// nopSet is a multiset that counts nothing: a DISTINCT call sees each
// value as new.
type nopSet struct{}

func (nopSet) add(any, int64) (int64, int64) { return 0, 1 }
func (nopSet) each(func(any))                {}

// A row whose values do not fit the layout (a value's Go type against
// the planner's types) is written as RowCodec's encoding and read back.
func TestStateRowCodecFallsBackToRowCodec(t *testing.T) {
	l, err := NewJoin(JoinOptions{LeftKeys: []int{0}, RightKeys: []int{0}, LeftInsertOnly: true, LeftTypes: binaryJoinTypes})
	if err != nil {
		t.Fatal(err)
	}
	c := l.codec[0]
	odd := []any{"not a BIGINT", nil, nil, time.UnixMilli(1).UTC()}
	enc := c.Encode([]byte("x"), fieldsRow(odd))
	if enc[1] == binaryRowTag {
		t.Fatal("encoded as a binary row")
	}
	r, rest, err := c.Decode(enc[1:])
	if err != nil || len(rest) != 0 || !sameRow(c.fieldsOf(r), odd) {
		t.Fatalf("decode: %v, rest %q, %v", err, rest, r)
	}
}
