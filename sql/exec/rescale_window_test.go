package exec

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
)

// TestRescaleKeepsWindowState checkpoints the keyed event-time operators
// (window aggregation, window Top-N, window deduplication, interval join)
// on one subtask halfway through, restores them on three, and feeds the
// rest: rows to the subtask of their key, watermarks to all. Per key the
// output, and in all the late rows counted, are what one subtask gives
// without a restore: each subtask took its key groups' windows, timers
// and buffered rows.
func TestRescaleKeepsWindowState(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	hop := WindowSpec{Kind: Hop, Size: 6 * time.Millisecond, Slide: 3 * time.Millisecond}
	tumble := WindowSpec{Kind: Tumble, Size: 10 * time.Millisecond}
	agg := WindowAggOptions{Window: hop, TimeField: 1, GroupKeys: []int{0}, Aggs: []AggCall{{Kind: CountStar}}}
	rank := WindowRankOptions{Window: WindowRows{Assign: &tumble, TimeField: 1}, PartitionKeys: []int{0},
		OrderBy: []SortKey{{Field: 2, Desc: true}}, RankStart: 1, RankEnd: 2, RankNumber: true}
	dedup := WindowDedupOptions{Window: WindowRows{Assign: &tumble, TimeField: 1}, PartitionKeys: []int{0}, TimeField: 1, KeepLast: true}
	ij := IntervalJoinOptions{Type: FullJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftTime: 1, RightTime: 1,
		Lower: -3 * time.Millisecond, Upper: 4 * time.Millisecond, LeftArity: 3, RightArity: 3}
	byField0 := FieldKey(0)
	for name, o := range map[string]struct {
		mk    func() (operator.Operator, error)
		sides int
	}{
		"window-aggregate": {func() (operator.Operator, error) { return NewWindowAggregate(agg) }, 1},
		"window-rank":      {func() (operator.Operator, error) { return NewWindowRank(rank) }, 1},
		"window-dedup":     {func() (operator.Operator, error) { return NewWindowDeduplicate(dedup) }, 1},
		"interval-join":    {func() (operator.Operator, error) { return NewIntervalJoin(ij) }, 2},
	} {
		t.Run(name, func(t *testing.T) {
			want, got, wantLate, late := rescaleHalfway(t, []newStage{keyedStage(o.mk)}, eventTimeSteps(rng, o.sides), byField0)
			if g, w := perRowKey(got), perRowKey(want); g != w {
				t.Fatalf("after rescaling, output per key differs:\n%s\nwant\n%s", g, w)
			}
			if late != wantLate || wantLate == 0 && o.sides == 1 {
				t.Fatalf("late rows counted: %d after rescaling, %d without (the input has late rows)", late, wantLate)
			}
		})
	}
}

// rescaleHalfway feeds steps to mk on one subtask, and again on one
// subtask that is checkpointed halfway through and restored on three,
// which take the rest: rows to the subtask of their key, watermarks to
// all. It returns the rows and the late rows counted of the first run
// (want) and of the second (got).
func rescaleHalfway(t *testing.T, mk []newStage, steps []step, key KeyFunc) (want, got []event.Row, wantLate, late int64) {
	t.Helper()
	var clock int64
	whole := openChain(t, mk, &clock, nil)
	feedTimed(t, whole, steps)
	want, wantLate = whole.out.rows(), whole.head().ctx.Metrics.LateDropped

	half := len(steps) / 2
	one := openChain(t, mk, &clock, nil)
	feedTimed(t, one, steps[:half])
	parts := one.snapshot(t, 1)
	got, late = one.out.rows(), one.head().ctx.Metrics.LateDropped
	const p = 3
	subtasks := make([]*chain, p)
	for i := range subtasks {
		subtasks[i] = openSubtask(t, mk, &clock, parts, keygroup.RangeFor(maxPar, p, i))
	}
	for _, s := range steps[half:] {
		to := subtasks
		if s.input != 0 {
			k := key(s.row.Fields)
			to = subtasks[keygroup.OperatorIndex(keygroup.ForKey(k, maxPar), maxPar, p):][:1]
		}
		for _, c := range to {
			feedTimed(t, c, []step{s})
			got = append(got, c.out.rows()...)
			c.out.records = nil
		}
	}
	for _, c := range subtasks {
		late += c.head().ctx.Metrics.LateDropped
	}
	return want, got, wantLate, late
}

// perRowKey is perKey by the key of the row's side: a right row padded
// with NULLs by an outer join goes with its own key.
func perRowKey(rows []event.Row) string {
	keyed := make([]event.Row, len(rows))
	for i, r := range rows {
		k := r.Fields[0]
		if k == nil && len(r.Fields) > 3 {
			k = r.Fields[3]
		}
		keyed[i] = event.Row{Kind: r.Kind, Fields: append([]any{k}, r.Fields...)}
	}
	return perKey(keyed)
}

// eventTimeSteps is a keyed input with rowtimes (field 1, ms) mostly in
// order, some behind the watermark, and watermarks, ending with the last.
func eventTimeSteps(rng *rand.Rand, sides int) []step {
	var steps []step
	wm, maxTS := int64(-100), int64(0)
	for i := range 240 {
		if rng.Intn(8) == 0 {
			wm = max(wm, maxTS-int64(rng.Intn(10)))
			steps = append(steps, step{wm: wm})
			continue
		}
		ts := maxTS + int64(rng.Intn(10)-6)
		maxTS = max(maxTS, ts)
		row := []any{fmt.Sprint("k", rng.Intn(7)), time.UnixMilli(ts).UTC(), int64(i)}
		steps = append(steps, step{input: 1 + rng.Intn(sides), row: event.Row{Kind: event.Insert, Fields: row}})
	}
	return append(steps, step{wm: event.MaxWatermark})
}

// feedTimed feeds rows and watermarks to c.
func feedTimed(t *testing.T, c *chain, steps []step) {
	t.Helper()
	for _, s := range steps {
		if s.input == 0 {
			c.watermark(t, event.Timestamp(s.wm))
			continue
		}
		if err := c.process(t, s.input, event.Record{Value: s.row, Timestamp: event.NoTimestamp}); err != nil {
			t.Fatal(err)
		}
	}
}
