package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
)

// overStep is a row or, when wm is set, a watermark.
type overStep struct {
	row event.Row
	wm  event.Timestamp
	isW bool
}

// overSteps makes rows [key, ts, v] on event time, a little out of order,
// with a watermark (the largest time so far minus 1 ms) after every 7th:
// some rows are late.
func overSteps(rng *rand.Rand, n int) []overStep {
	var out []overStep
	var maxTS int64
	for i := range n {
		ts := int64(i) + int64(rng.Intn(9)) - 4
		maxTS = max(maxTS, ts)
		f := []any{fmt.Sprint("k", rng.Intn(5)), millisTime(ts), int64(rng.Intn(50))}
		out = append(out, overStep{row: event.Row{Kind: event.Insert, Fields: f}})
		if i%7 == 6 {
			out = append(out, overStep{wm: maxTS - 1, isW: true})
		}
	}
	return append(out, overStep{wm: event.MaxWatermark, isW: true})
}

// TestOverAggregateRescale checkpoints an event-time OverAggregate on one
// subtask midway (rows waiting for the watermark, bounded frames, MIN and
// MAX value counts, the watermark) and restores it on three, on the heap
// and the Pebble backend: every partition goes on as if uninterrupted,
// and the subtasks together drop the same late rows.
func TestOverAggregateRescale(t *testing.T) {
	aggs := []AggCall{{Kind: Sum, Arg: 2}, {Kind: Min, Arg: 2}, {Kind: Max, Arg: 2}, {Kind: CountStar}}
	frames := map[string]OverAggOptions{
		"rows 3 preceding":  {Rows: true, Preceding: 3},
		"range 6 preceding": {Preceding: 6},
		"range unbounded":   {Preceding: -1},
		"rows unbounded":    {Rows: true, Preceding: -1},
	}
	for name, frame := range frames {
		for _, backend := range []string{"heap", "pebble"} {
			t.Run(name+"/"+backend, func(t *testing.T) {
				opts := frame
				opts.PartitionKeys, opts.RowTime, opts.TimeField, opts.Aggs = []int{0}, true, 1, aggs
				mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewOverAggregate(opts) })}
				dir := ""
				if backend == "pebble" {
					dir = t.TempDir()
				}
				checkOverRescale(t, dir, mk, opts.Key(), overSteps(rand.New(rand.NewSource(5)), 300))
			})
		}
	}
}

func checkOverRescale(t *testing.T, dir string, mk []newStage, key KeyFunc, steps []overStep) {
	var clock int64
	whole := openSubtaskOn(t, dir, mk, &clock, nil, keygroup.RangeFor(maxPar, 1, 0))
	feedOver(t, []*chain{whole}, key, steps)
	want, wantLate := whole.out.rows(), whole.head().ctx.Metrics.LateDropped
	if len(want) == 0 {
		t.Fatal("the steps give no output row")
	}

	// Split right after a watermark, so that rows it makes late come
	// before the next one: only the restored watermark drops them.
	half := len(steps) / 2
	for !steps[half-1].isW {
		half++
	}
	one := openSubtaskOn(t, dir, mk, &clock, nil, keygroup.RangeFor(maxPar, 1, 0))
	feedOver(t, []*chain{one}, key, steps[:half])
	parts := one.snapshot(t, 1)
	got, late := one.out.rows(), one.head().ctx.Metrics.LateDropped
	const p = 3
	subtasks := make([]*chain, p)
	for i := range subtasks {
		subtasks[i] = openSubtaskOn(t, dir, mk, &clock, parts, keygroup.RangeFor(maxPar, p, i))
	}
	feedOver(t, subtasks, key, steps[half:])
	for _, c := range subtasks {
		got = append(got, c.out.rows()...)
		late += c.head().ctx.Metrics.LateDropped
	}
	if g, w := perKey(got), perKey(want); g != w {
		t.Fatalf("after rescaling, output per key differs:\n%s\nwant\n%s", g, w)
	}
	if late != wantLate || wantLate == 0 {
		t.Fatalf("late rows dropped: %d after rescaling, %d uninterrupted (want equal, and some)", late, wantLate)
	}
}

// feedOver sends each row to the subtask owning its key and each
// watermark to every subtask.
func feedOver(t *testing.T, subtasks []*chain, key KeyFunc, steps []overStep) {
	t.Helper()
	for _, s := range steps {
		if s.isW {
			for _, c := range subtasks {
				c.watermark(t, s.wm)
			}
			continue
		}
		i := keygroup.OperatorIndex(keygroup.ForKey(key(s.row.Fields), maxPar), maxPar, len(subtasks))
		if err := subtasks[i].process(t, 1, event.Record{Value: s.row, Timestamp: event.NoTimestamp}); err != nil {
			t.Fatal(err)
		}
	}
}
