package exec

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
)

// binaryTopNTypes are the fields of binaryTopNRow: a partition, a
// nullable DECIMAL score (sorted DESC, NULLs last by default), a
// TIMESTAMP (ASC) and a unique id.
var binaryTopNTypes = []types.Type{{Kind: types.String}, {Kind: types.Decimal, Precision: 5, Scale: 1, Nullable: true},
	{Kind: types.Timestamp, Precision: 3}, {Kind: types.BigInt}}

func binaryTopNRows(rng *rand.Rand, n int) []event.Row {
	id := 0
	return changelog(rng, n, func() []any {
		id++
		var score any
		if rng.Intn(5) > 0 {
			score = decimal.New(int64(rng.Intn(20)-5), -1)
		}
		at := time.UnixMilli(int64(rng.Intn(4)) * 1000).UTC()
		return []any{fmt.Sprint("p", rng.Intn(3)), score, at, int64(id)}
	})
}

// runTopNOn runs rows through a TopN of opts on a heap backend (dir "")
// or a Pebble one, restoring from a snapshot before the steps in
// restarts, and returns the output lines.
func runTopNOn(t *testing.T, dir string, opts TopNOptions, rows []event.Row, restarts map[int]bool) []string {
	t.Helper()
	return runStagesOn(t, dir, []newStage{keyedStage(func() (operator.Operator, error) { return NewTopN(opts) })}, rows, restarts)
}

// runStagesOn runs rows through the stages mk on a heap backend (dir "")
// or a Pebble one, restoring from a snapshot before the steps in
// restarts, and returns the output lines.
func runStagesOn(t *testing.T, dir string, mk []newStage, rows []event.Row, restarts map[int]bool) []string {
	t.Helper()
	return runStepsOn(t, dir, mk, inputs(rows, 1), restarts)
}

// runStepsOn is runStagesOn with each row's input (1 or 2) given.
func runStepsOn(t *testing.T, dir string, mk []newStage, steps []step, restarts map[int]bool) []string {
	t.Helper()
	all := keygroup.Range{Start: 0, End: maxPar - 1}
	var clock int64
	c := openSubtaskOn(t, dir, mk, &clock, nil, all)
	var lines []string
	for i, s := range steps {
		if restarts[i] {
			parts := c.snapshot(t, event.CheckpointID(i+1))
			lines = append(lines, c.out.take()...)
			c = openSubtaskOn(t, dir, mk, &clock, parts, all)
		}
		if err := c.process(t, s.input, event.Record{Value: s.row, Timestamp: event.NoTimestamp}); err != nil {
			t.Fatalf("row %d (%s): %v", i, formatRow(s.row), err)
		}
	}
	c.finish(t)
	return append(lines, c.out.take()...)
}

// TestTopNBinaryRowsSameOutput: a TopN keeping binary rows emits exactly
// what one keeping RowCodec values does, on the heap and on Pebble, with
// and without restores, for updating and insert-only input, with and
// without rank numbers, with NULLs in each place.
func TestTopNBinaryRowsSameOutput(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewSource(seed))
		rows := binaryTopNRows(rng, 150)
		insertOnly := seed%3 == 0
		if insertOnly {
			rows = slices.DeleteFunc(rows, func(r event.Row) bool { return !r.Kind.IsAccumulate() })
		}
		opts := TopNOptions{PartitionKeys: []int{0}, OrderBy: []SortKey{{Field: 1, Desc: true, Nulls: NullOrder(seed % 3)}, {Field: 2}},
			N: 1 + rng.Intn(4), RankNumber: seed%2 == 0, InputInsertOnly: insertOnly}
		want := runTopNOn(t, "", opts, rows, nil)
		opts.Types = binaryTopNTypes
		restarts := randomRestarts(rng, len(rows), 4)
		for name, got := range map[string][]string{
			"heap":             runTopNOn(t, "", opts, rows, nil),
			"heap, restored":   runTopNOn(t, "", opts, rows, restarts),
			"pebble":           runTopNOn(t, t.TempDir(), opts, rows, nil),
			"pebble, restored": runTopNOn(t, t.TempDir(), opts, rows, restarts),
		} {
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, binary rows on %s: %s", seed, name, diffLines(want, got))
			}
		}
	}
}

// TestTopNRestoresStateBeforeBinaryRows: a checkpoint of a TopN that kept
// RowCodec values (an older Weir) restores into one keeping binary rows,
// on the heap and on Pebble, and the run goes on as if nothing changed.
func TestTopNRestoresStateBeforeBinaryRows(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	rows := binaryTopNRows(rng, 200)
	old := TopNOptions{PartitionKeys: []int{0}, OrderBy: []SortKey{{Field: 1, Desc: true, Nulls: NullsFirst}, {Field: 3}},
		N: 3, RankNumber: true}
	want := runTopNOn(t, "", old, rows, nil)
	binary := old
	binary.Types = binaryTopNTypes
	for _, dir := range []string{"", t.TempDir()} {
		mk := func(o TopNOptions) []newStage {
			return []newStage{keyedStage(func() (operator.Operator, error) { return NewTopN(o) })}
		}
		var clock int64
		all := keygroup.Range{Start: 0, End: maxPar - 1}
		c := openSubtaskOn(t, "", mk(old), &clock, nil, all)
		half := len(rows) / 2
		for _, r := range rows[:half] {
			if err := c.process(t, 1, event.Record{Value: r, Timestamp: event.NoTimestamp}); err != nil {
				t.Fatal(err)
			}
		}
		parts := c.snapshot(t, 1)
		got := c.out.take()
		c = openSubtaskOn(t, dir, mk(binary), &clock, parts, all)
		for _, r := range rows[half:] {
			if err := c.process(t, 1, event.Record{Value: r, Timestamp: event.NoTimestamp}); err != nil {
				t.Fatal(err)
			}
		}
		c.finish(t)
		if got = append(got, c.out.take()...); !slices.Equal(got, want) {
			t.Fatalf("restored into binary rows on %q: %s", dir, diffLines(want, got))
		}
	}
}

func TestRankedRowsCodec(t *testing.T) {
	opts := TopNOptions{N: 2, OrderBy: []SortKey{{Field: 3}}, Types: binaryTopNTypes}
	tn, err := NewTopN(opts)
	if err != nil {
		t.Fatal(err)
	}
	c := rankedRowsCodec{layout: tn.layout}
	a, _ := tn.layout.Append(nil, []any{"p", nil, time.UnixMilli(5).UTC(), int64(1)})
	b, _ := tn.layout.Append(nil, []any{"p", decimal.New(15, -1), time.UnixMilli(6).UTC(), int64(2)})
	enc := c.Encode([]byte("x"), []rankedRow{{bin: a}, {bin: b}})
	rows, rest, err := c.Decode(append(enc[1:], 'y'))
	if err != nil || len(rows) != 2 || string(rows[0].bin) != string(a) || string(rows[1].bin) != string(b) || string(rest) != "y" {
		t.Fatalf("decode: %v %v rest %q", err, rows, rest)
	}
	// A row that arrived without its binary form is encoded as the list is.
	fieldsOnly := c.Encode(nil, []rankedRow{{bin: a}, {fields: []any{"p", decimal.New(15, -1), time.UnixMilli(6).UTC(), int64(2)}}})
	if rows, _, err := c.Decode(fieldsOnly); err != nil || len(rows) != 2 || string(rows[1].bin) != string(b) {
		t.Fatalf("a row encoded from its fields: %v %v", err, rows)
	}
	for name, bad := range map[string][]byte{
		"truncated":    enc[1 : len(enc)-1],
		"short row":    {binaryRowsTag, 1, 2, 0, 0},
		"no count":     {binaryRowsTag},
		"not rowcodec": {200},
	} {
		if _, _, err := c.Decode(bad); !errors.Is(err, state.ErrCorrupt) {
			t.Errorf("%s: got %v, want state.ErrCorrupt", name, err)
		}
	}
	if _, err := NewTopN(TopNOptions{N: 1, OrderBy: []SortKey{{Field: 0}}, Types: []types.Type{{Kind: types.Map}}}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("MAP field: got %v, want ErrInvalidOptions", err)
	}
}
