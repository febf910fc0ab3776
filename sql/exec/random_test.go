package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Differential and metamorphic tests: random inputs, the operators'
// output materialised and compared with the result computed directly from
// the input; and the same inputs with checkpoints and restores at random
// points, which must not change a single output row.

// step is one input of a run: a row on input 1 or 2, or a watermark.
type step struct {
	input int // 1, 2; 0: watermark
	row   event.Row
	wm    int64
}

// runSteps feeds steps to a fresh chain and returns everything it emitted
// (rows and watermarks, printed). Before each step i in restarts it takes
// a checkpoint and continues on restored operators.
func runSteps(t *testing.T, mk []newStage, steps []step, restarts map[int]bool) ([]string, []event.Row) {
	t.Helper()
	var clock int64
	c := openChain(t, mk, &clock, nil)
	var lines []string
	var rows []event.Row
	for i, s := range steps {
		if restarts[i] {
			parts := c.snapshot(t, event.CheckpointID(i+1))
			lines, rows = append(lines, c.out.take()...), append(rows, c.out.rows()...)
			c = openChain(t, mk, &clock, parts)
		}
		if s.input == 0 {
			c.watermark(t, s.wm)
			continue
		}
		if err := c.process(t, s.input, event.Record{Value: s.row, Timestamp: event.NoTimestamp}); err != nil {
			t.Fatalf("step %d (%s): %v", i, formatRow(s.row), err)
		}
	}
	c.finish(t)
	return append(lines, c.out.take()...), append(rows, c.out.rows()...)
}

// randomRestarts picks about n restart points among steps.
func randomRestarts(rng *rand.Rand, steps, n int) map[int]bool {
	out := map[int]bool{}
	for range n {
		out[rng.Intn(steps)] = true
	}
	return out
}

// checkRestartsChangeNothing is the metamorphic half of every test.
func checkRestartsChangeNothing(t *testing.T, rng *rand.Rand, mk []newStage, steps []step, want []string) {
	t.Helper()
	got, _ := runSteps(t, mk, steps, randomRestarts(rng, len(steps), 5))
	if !slices.Equal(got, want) {
		t.Fatalf("with restores the output differs:\n%s", diffLines(want, got))
	}
}

func diffLines(want, got []string) string {
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("first difference at line %d: want %q, got %q (%d vs %d lines)", i, w, g, len(want), len(got))
		}
	}
	return "equal"
}

// changelog generates a valid changelog of rows made by mk: inserts,
// deletes of present rows and -U/+U updates of them.
func changelog(rng *rand.Rand, n int, mk func() []any) []event.Row {
	var live [][]any
	var out []event.Row
	for len(out) < n {
		switch p := rng.Intn(10); {
		case p < 5 || len(live) == 0:
			r := mk()
			live = append(live, r)
			out = append(out, event.Row{Kind: event.Insert, Fields: r})
		case p < 7:
			i := rng.Intn(len(live))
			out = append(out, event.Row{Kind: event.Delete, Fields: live[i]})
			live = slices.Delete(live, i, i+1)
		default:
			i := rng.Intn(len(live))
			r := mk()
			out = append(out, event.Row{Kind: event.UpdateBefore, Fields: live[i]},
				event.Row{Kind: event.UpdateAfter, Fields: r})
			live[i] = r
		}
	}
	return out
}

// final is the multiset a changelog leaves.
func final(rows []event.Row) [][]any {
	tab, err := Materialize(rows, nil)
	if err != nil {
		panic(err)
	}
	out := make([][]any, 0, len(tab))
	for _, r := range tab {
		out = append(out, r)
	}
	return out
}

func sortedLines(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = formatFields(r)
	}
	sort.Strings(out)
	return out
}

func keyedStage(f func() (operator.Operator, error)) newStage {
	return func() (operator.Operator, bool) {
		op, err := f()
		if err != nil {
			panic(err)
		}
		return op, true
	}
}

func inputs(rows []event.Row, input int) []step {
	out := make([]step, len(rows))
	for i, r := range rows {
		out[i] = step{input: input, row: r}
	}
	return out
}

// groupExpected computes [k, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v),
// AVG(v), COUNT(DISTINCT v)] per k of rows [k, v] directly.
func groupExpected(rows [][]any) []string {
	groups := map[string][]any{}
	for _, r := range rows {
		k := r[0].(string)
		groups[k] = append(groups[k], r[1])
	}
	var out [][]any
	for k, vs := range groups {
		var n, sum int64
		var lo, hi any
		distinct := map[int64]bool{}
		for _, v := range vs {
			if v == nil {
				continue
			}
			x := v.(int64)
			n, sum, distinct[x] = n+1, sum+x, true
			if lo == nil || x < lo.(int64) {
				lo = x
			}
			if hi == nil || x > hi.(int64) {
				hi = x
			}
		}
		var s, avg any
		if n > 0 {
			s, avg = sum, sum/n
		}
		out = append(out, []any{k, int64(len(vs)), n, s, lo, hi, avg, int64(len(distinct))})
	}
	return sortedLines(out)
}

var groupAggs = []AggCall{{Kind: CountStar}, {Kind: Count, Arg: 1}, {Kind: Sum, Arg: 1}, {Kind: Min, Arg: 1},
	{Kind: Max, Arg: 1}, {Kind: Avg, Arg: 1}, {Kind: Count, Arg: 1, Distinct: true}}

func randomGroupRow(rng *rand.Rand) func() []any {
	return func() []any {
		var v any = int64(rng.Intn(20) - 5)
		if rng.Intn(8) == 0 {
			v = nil
		}
		return []any{fmt.Sprint("k", rng.Intn(4)), v}
	}
}

func TestGroupAggregateDifferential(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		in := changelog(rng, 300, randomGroupRow(rng))
		opts := GroupAggOptions{GroupKeys: []int{0}, Aggs: groupAggs}
		mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewGroupAggregate(opts) })}
		steps := inputs(in, 1)
		lines, out := runSteps(t, mk, steps, nil)
		tab, err := Materialize(out, []int{0})
		if err != nil {
			t.Fatalf("seed %d: the output is not a consistent changelog: %v", seed, err)
		}
		var got [][]any
		for _, r := range tab {
			got = append(got, r)
		}
		if g, w := sortedLines(got), groupExpected(final(in)); !slices.Equal(g, w) {
			t.Fatalf("seed %d: final table\n%s\nwant\n%s", seed, strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
		checkRestartsChangeNothing(t, rng, mk, steps, lines)
	}
}

// TestTwoPhaseEqualsOnePhase: LocalAggregate + GlobalAggregate, with any
// batch size and restores, end with the table one phase computes.
func TestTwoPhaseEqualsOnePhase(t *testing.T) {
	aggs := []AggCall{{Kind: CountStar}, {Kind: Count, Arg: 1}, {Kind: Sum, Arg: 1}, {Kind: Avg, Arg: 1}}
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		in := changelog(rng, 200, randomGroupRow(rng))
		opts := GroupAggOptions{GroupKeys: []int{0}, Aggs: aggs}
		one := []newStage{keyedStage(func() (operator.Operator, error) { return NewGroupAggregate(opts) })}
		batch := 1 + rng.Intn(5)
		two := []newStage{
			func() (operator.Operator, bool) {
				op, err := NewLocalAggregate(LocalAggOptions{Agg: opts, BatchSize: batch})
				if err != nil {
					panic(err)
				}
				return op, false
			},
			keyedStage(func() (operator.Operator, error) { return NewGlobalAggregate(opts) }),
		}
		steps := inputs(in, 1)
		_, want := runSteps(t, one, steps, nil)
		_, got := runSteps(t, two, steps, randomRestarts(rng, len(steps), 3))
		wt, err1 := Materialize(want, []int{0})
		gt, err2 := Materialize(got, []int{0})
		if err1 != nil || err2 != nil {
			t.Fatalf("seed %d: inconsistent changelogs: %v, %v", seed, err1, err2)
		}
		if fmt.Sprint(sortedTable(gt)) != fmt.Sprint(sortedTable(wt)) {
			t.Fatalf("seed %d: two phases give\n%v\none phase\n%v", seed, sortedTable(gt), sortedTable(wt))
		}
	}
}

func sortedTable(tab map[string][]any) []string {
	var rows [][]any
	for _, r := range tab {
		rows = append(rows, r)
	}
	return sortedLines(rows)
}

// joinExpected joins the final multisets directly.
func joinExpected(typ JoinType, left, right [][]any, cond func(l, r []any) bool) []string {
	var out [][]any
	rightMatched := make([]bool, len(right))
	for _, l := range left {
		matched := false
		for j, r := range right {
			if sameValue(l[0], r[0]) && cond(l, r) {
				out = append(out, concat(l, r))
				matched, rightMatched[j] = true, true
			}
		}
		if !matched && typ.outer(0) {
			out = append(out, concat(l, nulls(2)))
		}
	}
	for j, r := range right {
		if !rightMatched[j] && typ.outer(1) {
			out = append(out, concat(nulls(2), r))
		}
	}
	return sortedLines(out)
}

func TestJoinDifferential(t *testing.T) {
	cond := func(l, r []any) bool { return l[1].(int64) <= r[1].(int64)+2 }
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		mkRow := func() []any { return []any{int64(rng.Intn(3)), int64(rng.Intn(5))} }
		left, right := changelog(rng, 80, mkRow), changelog(rng, 80, mkRow)
		// interleave the two changelogs, each in order
		var steps []step
		for i, j := 0, 0; i < len(left) || j < len(right); {
			if j == len(right) || (i < len(left) && rng.Intn(2) == 0) {
				steps, i = append(steps, step{input: 1, row: left[i]}), i+1
			} else {
				steps, j = append(steps, step{input: 2, row: right[j]}), j+1
			}
		}
		typ := JoinType(seed % 4)
		withCond := seed%3 == 0
		opts := JoinOptions{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, LeftArity: 2, RightArity: 2}
		want := joinExpected(typ, final(left), final(right), func(l, r []any) bool { return !withCond || cond(l, r) })
		if withCond {
			opts.Condition = func(l, r []any) (bool, error) { return cond(l, r), nil }
		}
		mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewJoin(opts) })}
		lines, out := runSteps(t, mk, steps, nil)
		tab, err := Materialize(out, nil)
		if err != nil {
			t.Fatalf("seed %d (%s join): the output retracts a row it never emitted: %v", seed, typ, err)
		}
		if got := sortedTable(tab); !slices.Equal(got, want) {
			t.Fatalf("seed %d (%s join, condition %v): final table\n%s\nwant\n%s", seed, typ, withCond,
				strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		checkRestartsChangeNothing(t, rng, mk, steps, lines)
	}
}

// TestTopNDifferential: on an updating input, the output materialises to
// the top N of the final input of each partition. Rows are [p, score, id]
// with unique ids, ordered by score DESC, id ASC, so the top N is unique.
func TestTopNDifferential(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		id := 0
		mkRow := func() []any {
			id++
			return []any{fmt.Sprint("p", rng.Intn(3)), int64(rng.Intn(10)), int64(id)}
		}
		in := changelog(rng, 200, mkRow)
		n := 1 + rng.Intn(4)
		rank := seed%2 == 0
		order := []SortKey{{Field: 1, Desc: true}, {Field: 2}}
		opts := TopNOptions{PartitionKeys: []int{0}, OrderBy: order, N: n, RankNumber: rank}
		mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewTopN(opts) })}
		steps := inputs(in, 1)
		lines, out := runSteps(t, mk, steps, nil)
		var key []int
		if rank {
			key = []int{0, 3} // upsert key: partition and rn
		}
		tab, err := Materialize(out, key)
		if err != nil {
			t.Fatalf("seed %d: inconsistent output: %v", seed, err)
		}
		// expected: sort each partition's final rows, take n
		parts := map[string][][]any{}
		for _, r := range final(in) {
			parts[r[0].(string)] = append(parts[r[0].(string)], r)
		}
		var want [][]any
		for _, rows := range parts {
			sort.Slice(rows, func(i, j int) bool { return compareRows(order, rows[i], rows[j]) < 0 })
			for i, r := range rows[:min(n, len(rows))] {
				if rank {
					r = append(slices.Clone(r), int64(i+1))
				}
				want = append(want, r)
			}
		}
		if got, w := sortedTable(tab), sortedLines(want); !slices.Equal(got, w) {
			t.Fatalf("seed %d (n=%d, rank %v): final table\n%s\nwant\n%s", seed, n, rank, strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
		checkRestartsChangeNothing(t, rng, mk, steps, lines)
	}
}

// TestWindowAggregateDifferential: insert-only rows [k, ts] with ts out of
// order and watermarks; each window's count is that of its rows that
// arrived before the watermark passed the window's end. Attached: rows [k,
// window_start, window_end, v] carry one of the windows of their ts (as a
// window aggregation's output does), and each window's SUM(v) is that of
// its rows that arrived before the watermark passed its end.
func TestWindowAggregateDifferential(t *testing.T) {
	specs := []WindowSpec{
		{Kind: Tumble, Size: 10e6},
		{Kind: Hop, Size: 20e6, Slide: 5e6},
		{Kind: Cumulate, Size: 30e6, Step: 10e6, Offset: 3e6},
	}
	for seed := int64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewSource(seed))
		spec, attached := specs[seed%3], seed > 30
		want := map[string]int64{} // "k start end" → count or sum
		var steps []step
		wm, maxTS := int64(-1000), int64(0)
		for i := range 300 {
			if rng.Intn(10) == 0 {
				wm = max(wm, maxTS-int64(rng.Intn(15)))
				steps = append(steps, step{wm: wm})
				continue
			}
			ts := maxTS + int64(rng.Intn(12)-6)
			maxTS = max(maxTS, ts)
			k, wins := fmt.Sprint("k", rng.Intn(3)), bruteWindows(spec, ts)
			row, add := []any{k, ts}, int64(1)
			if attached {
				w := wins[rng.Intn(len(wins))]
				wins, row, add = []windowRange{w}, []any{k, millisTime(w.Start), millisTime(w.End), int64(i)}, int64(i)
			}
			steps = append(steps, step{input: 1, row: event.Row{Fields: row}})
			for _, w := range wins {
				if w.End-1 > wm {
					want[fmt.Sprint(k, " ", w.Start, " ", w.End)] += add
				}
			}
		}
		steps = append(steps, step{wm: event.MaxWatermark})
		opts := WindowAggOptions{Window: spec, TimeField: 1, GroupKeys: []int{0}, Aggs: []AggCall{{Kind: CountStar}}}
		if attached {
			opts.Attached, opts.Aggs = &WindowColumns{Start: 1, End: 2}, []AggCall{{Kind: Sum, Arg: 3}}
		}
		mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewWindowAggregate(opts) })}
		lines, out := runSteps(t, mk, steps, nil)
		checkWindowSums(t, fmt.Sprintf("seed %d (%s, attached %v)", seed, spec.Kind, attached), out, want)
		checkRestartsChangeNothing(t, rng, mk, steps, lines)
		// and in two phases, with restores
		_, out = runSteps(t, twoPhaseWindowAgg(opts, 1+rng.Intn(5)), steps, randomRestarts(rng, len(steps), 3))
		checkWindowSums(t, fmt.Sprintf("seed %d (%s, attached %v, two phases)", seed, spec.Kind, attached), out, want)
	}
}

// twoPhaseWindowAgg is opts as LocalAggregate, flushing every batch
// groups, and a partial WindowAggregate: of windows the rows carry
// (attached), or of slices.
func twoPhaseWindowAgg(opts WindowAggOptions, batch int) []newStage {
	n := len(opts.GroupKeys)
	var local LocalAggOptions
	if opts.Attached == nil {
		local = LocalAggOptions{Agg: GroupAggOptions{GroupKeys: opts.GroupKeys, Aggs: opts.Aggs, InputInsertOnly: true}, BatchSize: batch,
			Slice: &SliceOptions{Window: opts.Window, TimeField: opts.TimeField, Zone: opts.Zone}}
		opts.GroupKeys, opts.Slices, opts.TimeField = firstN(n), true, n
	} else {
		keys := append(slices.Clone(opts.GroupKeys), opts.Attached.Start, opts.Attached.End)
		local = LocalAggOptions{Agg: GroupAggOptions{GroupKeys: keys, Aggs: opts.Aggs, InputInsertOnly: true}, BatchSize: batch}
		opts.GroupKeys, opts.Attached, opts.Partial = firstN(n), &WindowColumns{Start: n, End: n + 1}, true
	}
	return []newStage{
		func() (operator.Operator, bool) {
			op, err := NewLocalAggregate(local)
			if err != nil {
				panic(err)
			}
			return op, false
		},
		keyedStage(func() (operator.Operator, error) { return NewWindowAggregate(opts) }),
	}
}

// checkWindowSums checks rows [k, window_start, window_end, n] against
// want ("k start end" → n).
func checkWindowSums(t *testing.T, what string, out []event.Row, want map[string]int64) {
	t.Helper()
	got := map[string]int64{}
	for _, r := range out {
		f := r.Fields
		got[fmt.Sprint(f[0], " ", timeMs(f[1]), " ", timeMs(f[2]))] += f[3].(int64)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: windows\n%v\nwant\n%v", what, got, want)
	}
}

func timeMs(v any) int64 {
	ms, err := timeMillis(v)
	if err != nil {
		panic(err)
	}
	return ms
}

// bruteWindows finds the windows containing ts by trying every start near
// it, independently of WindowSpec.assign.
func bruteWindows(w WindowSpec, ts int64) []windowRange {
	size, off := w.Size.Milliseconds(), w.Offset.Milliseconds()
	var out []windowRange
	for start := ts - size; start <= ts; start++ {
		switch w.Kind {
		case Tumble:
			if floorMod(start-off, size) == 0 && ts < start+size {
				out = append(out, windowRange{start, start + size})
			}
		case Hop:
			if floorMod(start-off, w.Slide.Milliseconds()) == 0 && ts < start+size {
				out = append(out, windowRange{start, start + size})
			}
		case Cumulate:
			if floorMod(start-off, size) != 0 {
				continue
			}
			for end := start + w.Step.Milliseconds(); end <= start+size; end += w.Step.Milliseconds() {
				if ts < end {
					out = append(out, windowRange{start, end})
				}
			}
		}
	}
	return out
}

// TestIntervalJoinDifferential: with rows never late, the output is every
// pair of equal keys whose times lie in the interval, plus, for a left
// join, each unmatched left row padded.
func TestIntervalJoinDifferential(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		lower, upper := int64(rng.Intn(10)-7), int64(rng.Intn(10))
		lower = min(lower, upper)
		typ := []JoinType{InnerJoin, LeftJoin, RightJoin, FullJoin}[seed%4]
		var steps []step
		var sides [2][][]any
		wm, maxTS := int64(-100), int64(0)
		for i := range 200 {
			if rng.Intn(6) == 0 {
				wm = max(wm, maxTS-20)
				steps = append(steps, step{wm: wm})
				continue
			}
			ts := max(wm+1, maxTS+int64(rng.Intn(10)-5)) // never late
			maxTS = max(maxTS, ts)
			s := rng.Intn(2)
			row := []any{int64(rng.Intn(3)), ts, int64(i)}
			sides[s] = append(sides[s], row)
			steps = append(steps, step{input: s + 1, row: event.Row{Fields: row}})
		}
		steps = append(steps, step{wm: event.MaxWatermark})
		var want [][]any
		matched := [2]map[int]bool{{}, {}}
		for i, l := range sides[0] {
			for j, r := range sides[1] {
				d := r[1].(int64) - l[1].(int64)
				if l[0] == r[0] && d >= lower && d <= upper {
					want = append(want, concat(l, r))
					matched[0][i], matched[1][j] = true, true
				}
			}
		}
		for s := range 2 {
			for i, r := range sides[s] {
				if !matched[s][i] && typ.outer(s) {
					if s == 0 {
						want = append(want, concat(r, nulls(3)))
					} else {
						want = append(want, concat(nulls(3), r))
					}
				}
			}
		}
		opts := IntervalJoinOptions{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, LeftTime: 1, RightTime: 1,
			Lower: msDur(lower), Upper: msDur(upper), LeftArity: 3, RightArity: 3}
		mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewIntervalJoin(opts) })}
		lines, out := runSteps(t, mk, steps, nil)
		var got [][]any
		for _, r := range out {
			got = append(got, r.Fields)
		}
		if g, w := sortedLines(got), sortedLines(want); !slices.Equal(g, w) {
			t.Fatalf("seed %d (%s, [%d, %d]): got %d rows\n%s\nwant %d\n%s", seed, typ, lower, upper,
				len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
		}
		checkRestartsChangeNothing(t, rng, mk, steps, lines)
	}
}

func msDur(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
