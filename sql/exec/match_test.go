package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/cep"
)

// matchOpts is MATCH_RECOGNIZE over rows [key, ts, v]:
//
//	PARTITION BY key ORDER BY ts
//	MEASURES FIRST(A.v), COUNT(*), LAST(v)
//	PATTERN (A B* C) [WITHIN …]
//	DEFINE A AS A.v < 25, B AS SUM(B.v) < 60
func matchOpts(rowtime bool, within int64) MatchOptions {
	v := func(row []any) (any, error) { return row[2], nil }
	less := func(n int64) func([]any) (any, error) {
		return func(s []any) (any, error) { return s[0] != nil && s[0].(int64) < n, nil }
	}
	first := func(s []any) (any, error) { return s[0], nil }
	return MatchOptions{
		PartitionKeys: []int{0}, RowTime: rowtime, TimeField: 1,
		Pattern: cep.Pattern{Within: within, Elements: []cep.Element{
			{Var: 0, Min: 1, Max: 1}, {Var: 1, Min: 0, Max: cep.Unbounded, Greedy: true}, {Var: 2, Min: 1, Max: 1}}},
		Defines: []*MatchExpr{
			{Eval: less(25), Slots: []MatchSlot{{Kind: SlotLast, Var: 0, Arg: v}}},
			{Eval: less(60), Slots: []MatchSlot{{Kind: SlotAgg, Var: 1, Arg: v, Agg: AggCall{Kind: Sum}}}},
			nil,
		},
		Measures: []*MatchExpr{
			{Eval: first, Slots: []MatchSlot{{Kind: SlotFirst, Var: 0, Arg: v}}},
			{Eval: first, Slots: []MatchSlot{{Kind: SlotAgg, Var: AllVars, Agg: AggCall{Kind: CountStar}}}},
			{Eval: first, Slots: []MatchSlot{{Kind: SlotLast, Var: AllVars, Arg: v}}},
		},
	}
}

// TestMatchRescale checkpoints an event-time Match on one subtask midway
// (rows waiting for the watermark, partial matches, completed matches
// waiting for earlier ones, the watermark) and restores it on three, on
// the heap and the Pebble backend: every partition matches as if
// uninterrupted, and the subtasks together drop the same late rows.
func TestMatchRescale(t *testing.T) {
	for _, within := range []int64{0, 20} {
		for _, backend := range []string{"heap", "pebble"} {
			t.Run(fmt.Sprintf("within=%d/%s", within, backend), func(t *testing.T) {
				opts := matchOpts(true, within)
				mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewMatch(opts) })}
				dir := ""
				if backend == "pebble" {
					dir = t.TempDir()
				}
				checkOverRescale(t, dir, mk, opts.Key(), overSteps(rand.New(rand.NewSource(7)), 300))
			})
		}
	}
}

// TestMatchRestoreMidMatch checkpoints a processing-time Match with a
// match half done, restores it, and completes the match there.
func TestMatchRestoreMidMatch(t *testing.T) {
	opts := matchOpts(false, 0)
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewMatch(opts) })}
	row := func(k string, v int64) event.Record {
		return event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{k, millisTime(0), v}}, Timestamp: event.NoTimestamp}
	}
	var clock int64
	c := openChain(t, mk, &clock, nil)
	for _, r := range []event.Record{row("k", 30), row("k", 10), row("k", 20), row("j", 5)} {
		if err := c.process(t, 1, r); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.out.rows(); len(got) != 0 {
		t.Fatalf("before the checkpoint: %v, want no match yet", got)
	}
	parts := c.snapshot(t, 1)
	r := openChain(t, mk, &clock, parts)
	// k: A=10, B takes 20 and 30 (sum 50), 40 ends B (sum 90) and is C.
	for _, rec := range []event.Record{row("k", 30), row("k", 40), row("j", 70)} {
		if err := r.process(t, 1, rec); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, row := range r.out.rows() {
		got = append(got, formatRow(row))
	}
	slices.Sort(got)
	want := "+I[j, 5, 2, 70] +I[k, 10, 4, 40]"
	if strings.Join(got, " ") != want {
		t.Fatalf("after the restore: %s, want %s", strings.Join(got, " "), want)
	}
}

// TestMatchCountsLateRows drops and counts rows at or behind the
// watermark, and matches the others in timestamp order.
func TestMatchCountsLateRows(t *testing.T) {
	opts := matchOpts(true, 0)
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewMatch(opts) })}
	var clock int64
	c := openSubtask(t, mk, &clock, nil, keygroup.RangeFor(maxPar, 1, 0))
	row := func(ts, v int64) event.Record {
		return event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{"k", millisTime(ts), v}}, Timestamp: event.NoTimestamp}
	}
	// Out of order: 12 (v 40) arrives before 11 (v 20); 10 is A.
	for _, r := range []event.Record{row(10, 1), row(12, 40), row(11, 20)} {
		if err := c.process(t, 1, r); err != nil {
			t.Fatal(err)
		}
	}
	c.watermark(t, 12)
	for _, r := range []event.Record{row(12, 1), row(5, 1), row(13, 99)} { // 12 and 5 are late
		if err := c.process(t, 1, r); err != nil {
			t.Fatal(err)
		}
	}
	c.watermark(t, event.MaxWatermark)
	if n := c.head().ctx.Metrics.LateDropped; n != 2 {
		t.Fatalf("late rows dropped: %d, want 2", n)
	}
	var got []string
	for _, row := range c.out.rows() {
		got = append(got, formatRow(row))
	}
	// A=1 (10), B=20 (11), 40 (12): sum 60 ends B, so 12 is C.
	if want := "+I[k, 1, 3, 40]"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

// TestMatchWithinReleasesWaitingMatch: a completed match waiting for an
// earlier partial match is emitted when WITHIN times that one out, even
// with no later row. PATTERN (A B+ C) WITHIN 10 ms, B greedy; A takes x
// or b, B a b while its match started at x or has no b yet, C b or c. On
// x b b b the match from the first b completes at the last one while the
// match from x still takes b's; it waits, and the final watermark (past
// x's time + 10) times the x match out.
func TestMatchWithinReleasesWaitingMatch(t *testing.T) {
	name := func(row []any) (any, error) { return row[2], nil }
	is := func(v any, names ...string) bool { return slices.Contains(names, v.(string)) }
	opts := MatchOptions{
		PartitionKeys: []int{0}, RowTime: true, TimeField: 1,
		Pattern: cep.Pattern{Within: 10, Elements: []cep.Element{
			{Var: 0, Min: 1, Max: 1}, {Var: 1, Min: 1, Max: cep.Unbounded, Greedy: true}, {Var: 2, Min: 1, Max: 1}}},
		Defines: []*MatchExpr{
			{Eval: func(s []any) (any, error) { return is(s[0], "x", "b"), nil }, Slots: []MatchSlot{{Kind: SlotLast, Var: 0, Arg: name}}},
			{Eval: func(s []any) (any, error) { return is(s[2], "b") && (s[0] == "x" || s[1] == int64(1)), nil },
				Slots: []MatchSlot{{Kind: SlotFirst, Var: 0, Arg: name}, {Kind: SlotAgg, Var: 1, Agg: AggCall{Kind: CountStar}}, {Kind: SlotLast, Var: 1, Arg: name}}},
			{Eval: func(s []any) (any, error) { return is(s[0], "b", "c"), nil }, Slots: []MatchSlot{{Kind: SlotLast, Var: 2, Arg: name}}},
		},
		Measures: []*MatchExpr{{Eval: func(s []any) (any, error) { return s[0], nil },
			Slots: []MatchSlot{{Kind: SlotFirst, Var: AllVars, Arg: func(row []any) (any, error) { return row[1], nil }}}}},
	}
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewMatch(opts) })}
	var clock int64
	c := openChain(t, mk, &clock, nil)
	for i, n := range []string{"x", "b", "b", "b"} {
		rec := event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{"k", millisTime(int64(i + 1)), n}}, Timestamp: event.NoTimestamp}
		if err := c.process(t, 1, rec); err != nil {
			t.Fatal(err)
		}
	}
	c.watermark(t, 4)
	if got := c.out.rows(); len(got) != 0 {
		t.Fatalf("before the timeout: %v, want the match still waiting", got)
	}
	c.watermark(t, event.MaxWatermark)
	var got []string
	for _, row := range c.out.rows() {
		got = append(got, formatRow(row))
	}
	if want := "+I[k, ts:2]"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}
