package exec

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// TestStateRowsOfEverySize: a keep-last Deduplicate and a MAX over
// strings keep rows from a few bytes to past the largest record the heap
// shares a chunk with (a reviewer's find: a row of 4 to 16 KB panicked
// the heap's placed value state), and emit on the heap, with and without
// a restore, exactly what they emit on Pebble; the changes are counted
// from the input.
func TestStateRowsOfEverySize(t *testing.T) {
	str := types.Type{Kind: types.String}
	sizes := []int{10, 600, 5000, 12000, 20000, 300, 9000, 70000, 2}
	var steps []step
	for j, n := range sizes {
		steps = append(steps, step{input: 1, row: event.Row{Kind: event.Insert,
			Fields: []any{int64(j % 2), fmt.Sprint(j, strings.Repeat("s", n))}}})
	}
	restarts := map[int]bool{3: true, 7: true}
	dedup := DedupOptions{PartitionKeys: []int{0}, KeepLast: true, Types: []types.Type{{Kind: types.BigInt}, str}}
	agg := GroupAggOptions{GroupKeys: []int{0}, Aggs: []AggCall{{Kind: Max, Arg: 1, ArgType: &str}},
		InputInsertOnly: true, Types: []types.Type{{Kind: types.BigInt}, str}}
	if _, ok := agg.AccTypes(); !ok {
		t.Fatal("MAX over strings has no binary accumulator: the test would not reach the placed state")
	}
	for name, mk := range map[string][]newStage{"Deduplicate": {keyedStage(func() (operator.Operator, error) { return NewDeduplicate(dedup) })},
		"GroupAggregate": aggStages(agg)} {
		pebble := runStepsOn(t, t.TempDir(), mk, steps, nil)
		// Two keys: each row after a key's first replaces its kept row
		// (-U, +U); MAX changes only when the row is larger.
		want := 2 + 2*(len(sizes)-2)
		if name == "GroupAggregate" {
			want = len(changesOfMax(steps))
		}
		if len(pebble) != want {
			t.Fatalf("%s on Pebble: %d changes, want %d", name, len(pebble), want)
		}
		for _, restart := range []map[int]bool{nil, restarts} {
			if heap := runStepsOn(t, "", mk, steps, restart); !slices.Equal(heap, pebble) {
				t.Errorf("%s on the heap (restarts %v) emitted %d changes, Pebble %d, or other ones", name, restart, len(heap), len(pebble))
			}
		}
	}
}

// changesOfMax is the changes a MAX per key emits for steps: +I for a
// key's first row, -U and +U for each larger one.
func changesOfMax(steps []step) []string {
	maxOf := map[any]string{}
	var out []string
	for _, s := range steps {
		k, v := s.row.Fields[0], s.row.Fields[1].(string)
		prev, ok := maxOf[k]
		switch {
		case !ok:
			out = append(out, "+I")
		case v > prev:
			out = append(out, "-U", "+U")
		default:
			continue
		}
		maxOf[k] = v
	}
	return out
}
