package exec

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
)

// windowJoinRows is a left and a right input of rows [k, window_start,
// window_end, v] with 10 ms windows: [0, 10) has keys a (two right rows),
// b (left only), c (right only) and NULL on each side; [10, 20) has a.
var windowJoinRows = []step{
	{input: 1, row: wjRow("a", 0, 1)},
	{input: 1, row: wjRow("b", 0, 2)},
	{input: 1, row: wjRow(nil, 0, 3)},
	{input: 2, row: wjRow("a", 0, 10)},
	{input: 2, row: wjRow("a", 0, 11)},
	{input: 2, row: wjRow("c", 0, 12)},
	{input: 2, row: wjRow(nil, 0, 13)},
	{input: 1, row: wjRow("a", 10, 4)},
	{wm: 5},
	{wm: 9},                           // fires [0, 10)
	{input: 1, row: wjRow("a", 0, 5)}, // late
	{input: 2, row: wjRow("a", 10, 14)},
	{wm: event.MaxWatermark}, // fires [10, 20)
}

func wjRow(k any, start int64, v int64) event.Row {
	return event.Row{Kind: event.Insert, Fields: []any{k, millisTime(start), millisTime(start + 10), v}}
}

var wjWindow = WindowRows{Start: 1, End: 2}

func wjOptions() WindowJoinOptions {
	return WindowJoinOptions{LeftWindow: wjWindow, RightWindow: wjWindow, LeftKeys: []int{0}, RightKeys: []int{0},
		LeftArity: 4, RightArity: 4}
}

// TestWindowJoinTypes: each join type's rows, exactly, all at the
// watermark that closes their window and stamped with its end - 1 ms;
// nothing before it; the late row dropped and counted; no state left
// for a window that fired.
func TestWindowJoinTypes(t *testing.T) {
	w0 := []string{}
	pair := func(l, r string) string { return "+I[" + l + ", " + r + "]" }
	a1, b2, n3, a4 := "a, ts:0, ts:10, 1", "b, ts:0, ts:10, 2", "NULL, ts:0, ts:10, 3", "a, ts:10, ts:20, 4"
	a10, a11, c12, n13, a14 := "a, ts:0, ts:10, 10", "a, ts:0, ts:10, 11", "c, ts:0, ts:10, 12", "NULL, ts:0, ts:10, 13", "a, ts:10, ts:20, 14"
	pad := "NULL, NULL, NULL, NULL"
	for _, tc := range []struct {
		name       string
		set        func(*WindowJoinOptions)
		first, end []string // emitted at watermark 9 and at the end
	}{
		{"inner", func(*WindowJoinOptions) {}, []string{pair(a1, a10), pair(a1, a11)}, []string{pair(a4, a14)}},
		{"left", func(o *WindowJoinOptions) { o.Type = LeftJoin },
			[]string{pair(a1, a10), pair(a1, a11), pair(b2, pad), pair(n3, pad)}, []string{pair(a4, a14)}},
		{"right", func(o *WindowJoinOptions) { o.Type = RightJoin },
			[]string{pair(a1, a10), pair(a1, a11), pair(pad, c12), pair(pad, n13)}, []string{pair(a4, a14)}},
		{"full", func(o *WindowJoinOptions) { o.Type = FullJoin },
			[]string{pair(a1, a10), pair(a1, a11), pair(b2, pad), pair(n3, pad), pair(pad, c12), pair(pad, n13)}, []string{pair(a4, a14)}},
		{"full, null-safe", func(o *WindowJoinOptions) { o.Type, o.NullSafe = FullJoin, []bool{true} },
			[]string{pair(a1, a10), pair(a1, a11), pair(b2, pad), pair(n3, n13), pair(pad, c12)}, []string{pair(a4, a14)}},
		{"inner, condition", func(o *WindowJoinOptions) {
			o.Condition = func(l, r []any) (bool, error) { return r[3].(int64)-l[3].(int64) == 10, nil }
		}, []string{pair(a1, a11)}, []string{pair(a4, a14)}},
		{"semi", func(o *WindowJoinOptions) { o.Semi = true }, []string{"+I[" + a1 + "]"}, []string{"+I[" + a4 + "]"}},
		{"anti", func(o *WindowJoinOptions) { o.Anti = true }, []string{"+I[" + b2 + "]", "+I[" + n3 + "]"}, w0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := wjOptions()
			tc.set(&opts)
			var clock int64
			c := openChain(t, []newStage{keyedStage(func() (operator.Operator, error) { return NewWindowJoin(opts) })}, &clock, nil)
			var atNine, atEnd []string
			for _, s := range windowJoinRows {
				if s.input == 0 {
					c.watermark(t, s.wm)
				} else if err := c.process(t, s.input, event.Record{Value: s.row, Timestamp: event.NoTimestamp}); err != nil {
					t.Fatal(err)
				}
				switch s.wm {
				case 5:
					if rows := c.out.rows(); len(rows) != 0 {
						t.Fatalf("rows before the window closed: %v", rows)
					}
				case 9:
					atNine = stampedRows(c.out.records, 9)
					c.out.records = nil
					checkWindowDropped(t, c, "a", windowRange{0, 10})
				case event.MaxWatermark:
					atEnd = stampedRows(c.out.records, 19)
				}
			}
			for _, got := range [][2][]string{{atNine, tc.first}, {atEnd, tc.end}} {
				want := slices.Clone(got[1])
				slices.Sort(want)
				if !slices.Equal(got[0], want) {
					t.Errorf("got\n%s\nwant\n%s", strings.Join(got[0], "\n"), strings.Join(want, "\n"))
				}
			}
			if late := c.head().ctx.Metrics.LateDropped; late != 1 {
				t.Errorf("late rows counted: %d, want 1", late)
			}
		})
	}
}

// stampedRows prints records sorted, failing on one not stamped ts.
func stampedRows(recs []event.Record, ts event.Timestamp) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = formatRow(r.Value.(event.Row))
		if r.Timestamp != ts {
			out[i] += fmt.Sprintf(" @%d, want @%d", r.Timestamp, ts)
		}
	}
	slices.Sort(out)
	return out
}

// checkWindowDropped fails when either side still holds rows of key k in
// window w.
func checkWindowDropped(t *testing.T, c *chain, k string, w windowRange) {
	t.Helper()
	j := c.head().op.(*WindowJoin)
	setKey(j.Ctx, FieldKey(0)([]any{k}))
	for s := range j.buf {
		if rows, ok := j.buf[s].Get(w.id()); ok {
			t.Errorf("side %d still holds %d rows of window %s after it fired", s, len(rows), w.id())
		}
	}
}

// randomWindowJoin is a window join over rows [k, ts, i] placed in HOP
// windows by the operator, and a random input for it.
func randomWindowJoin(rng *rand.Rand, typ JoinType, semi, anti bool) (WindowJoinOptions, []step) {
	hop := WindowSpec{Kind: Hop, Size: 6 * time.Millisecond, Slide: 3 * time.Millisecond}
	win := WindowRows{Assign: &hop, TimeField: 1}
	opts := WindowJoinOptions{Type: typ, Semi: semi, Anti: anti, LeftWindow: win, RightWindow: win,
		LeftKeys: []int{0}, RightKeys: []int{0}, LeftArity: 6, RightArity: 6,
		Condition: func(l, r []any) (bool, error) { return (l[2].(int64)+r[2].(int64))%3 != 0, nil }}
	return opts, eventTimeSteps(rng, 2)
}

// windowJoinExpected computes what the join of randomWindowJoin gives,
// directly: each row goes to its windows that end after the watermark at
// its arrival; per window and key, the pairs the condition accepts, and
// an outer side's rows without one. Sorted.
func windowJoinExpected(opts WindowJoinOptions, steps []step) []string {
	type cell struct{ rows [2][][]any }
	cells := map[string]*cell{}
	wm := event.MinWatermark
	for _, s := range steps {
		if s.input == 0 {
			wm = max(wm, s.wm)
			continue
		}
		ts, _ := timeMillis(s.row.Fields[1])
		for _, w := range opts.LeftWindow.Assign.assign(ts) {
			if w.End-1 <= wm {
				continue
			}
			id := s.row.Fields[0].(string) + "/" + w.id()
			if cells[id] == nil {
				cells[id] = &cell{}
			}
			row := append(slices.Clone(s.row.Fields), millisTime(w.Start), millisTime(w.End), millisTime(w.End-1))
			cells[id].rows[s.input-1] = append(cells[id].rows[s.input-1], row)
		}
	}
	var out []string
	for _, c := range cells {
		rightMatched := make([]bool, len(c.rows[1]))
		for _, l := range c.rows[0] {
			matched := false
			for i, r := range c.rows[1] {
				if ok, _ := opts.Condition(l, r); ok {
					matched, rightMatched[i] = true, true
					if !opts.Semi && !opts.Anti {
						out = append(out, formatRow(event.Row{Kind: event.Insert, Fields: concat(l, r)}))
					}
				}
			}
			switch {
			case opts.Semi && matched, opts.Anti && !matched:
				out = append(out, formatRow(event.Row{Kind: event.Insert, Fields: l}))
			case !opts.Semi && !opts.Anti && !matched && opts.Type.outer(0):
				out = append(out, formatRow(event.Row{Kind: event.Insert, Fields: concat(l, nulls(6))}))
			}
		}
		for i, r := range c.rows[1] {
			if !rightMatched[i] && !opts.Semi && !opts.Anti && opts.Type.outer(1) {
				out = append(out, formatRow(event.Row{Kind: event.Insert, Fields: concat(nulls(6), r)}))
			}
		}
	}
	slices.Sort(out)
	return out
}

var windowJoinKinds = []struct {
	name       string
	typ        JoinType
	semi, anti bool
}{
	{"inner", InnerJoin, false, false}, {"left", LeftJoin, false, false}, {"right", RightJoin, false, false},
	{"full", FullJoin, false, false}, {"semi", InnerJoin, true, false}, {"anti", InnerJoin, false, true},
}

// TestWindowJoinDifferential: over random HOP-windowed input with late
// rows, the output is what windowJoinExpected computes directly, on the
// heap and on Pebble, with and without restores from checkpoints.
func TestWindowJoinDifferential(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		for _, k := range windowJoinKinds {
			rng := rand.New(rand.NewSource(seed))
			opts, steps := randomWindowJoin(rng, k.typ, k.semi, k.anti)
			want := windowJoinExpected(opts, steps)
			mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewWindowJoin(opts) })}
			restarts := randomRestarts(rng, len(steps), 4)
			for name, dir := range map[string]string{"heap": "", "pebble": t.TempDir()} {
				for _, rs := range []map[int]bool{nil, restarts} {
					got := runTimedStepsOn(t, dir, mk, steps, rs)
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d, %s join on %s (restarts %v): %s", seed, k.name, name, rs != nil, diffLines(want, got))
					}
				}
			}
		}
	}
}

// runTimedStepsOn feeds rows and watermarks to the stages mk on a heap
// backend (dir "") or a Pebble one, restoring from a checkpoint before
// the steps in restarts, and returns the rows emitted, sorted.
func runTimedStepsOn(t *testing.T, dir string, mk []newStage, steps []step, restarts map[int]bool) []string {
	t.Helper()
	all := keygroup.Range{Start: 0, End: maxPar - 1}
	var clock int64
	c := openSubtaskOn(t, dir, mk, &clock, nil, all)
	var rows []event.Row
	for i, s := range steps {
		if restarts[i] {
			parts := c.snapshot(t, event.CheckpointID(i+1))
			rows = append(rows, c.out.rows()...)
			c = openSubtaskOn(t, dir, mk, &clock, parts, all)
		}
		feedTimed(t, c, []step{s})
	}
	rows = append(rows, c.out.rows()...)
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = formatRow(r)
	}
	slices.Sort(out)
	return out
}

// TestRescaleKeepsWindowJoinState checkpoints a window join of each kind
// on one subtask halfway through, restores it on three, and feeds the
// rest: rows to the subtask of their key, watermarks to all. The rows
// emitted and the late rows counted are what one subtask gives without
// a restore.
func TestRescaleKeepsWindowJoinState(t *testing.T) {
	for _, k := range windowJoinKinds {
		t.Run(k.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(7))
			opts, steps := randomWindowJoin(rng, k.typ, k.semi, k.anti)
			mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewWindowJoin(opts) })}
			wantRows, got, wantLate, late := rescaleHalfway(t, mk, steps, FieldKey(0))
			want := sortedRows(wantRows)
			if g := sortedRows(got); !slices.Equal(g, want) {
				t.Fatalf("after rescaling the output differs: %s", diffLines(want, g))
			}
			if late != wantLate || wantLate == 0 {
				t.Fatalf("late rows counted: %d after rescaling, %d without (the input has late rows)", late, wantLate)
			}
		})
	}
}

func sortedRows(rows []event.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = formatRow(r)
	}
	slices.Sort(out)
	return out
}

// TestWindowJoinManyRowsPerWindow: with one key and dense rows, a window
// holds more rows than a chunk of the row buffer (windowRowBuffer), on
// both sides; the output is still what windowJoinExpected computes, on
// the heap and on Pebble, with and without restores.
func TestWindowJoinManyRowsPerWindow(t *testing.T) {
	for seed := int64(1); seed <= 2; seed++ {
		rng := rand.New(rand.NewSource(seed))
		opts, sparse := randomWindowJoin(rng, FullJoin, false, false)
		var steps []step
		perWindow := map[string]int{}
		for _, s := range sparse {
			if s.input == 0 {
				if s.wm != event.MaxWatermark {
					s.wm /= 64
				}
				steps = append(steps, s)
				continue
			}
			ts, _ := timeMillis(s.row.Fields[1])
			for c := range 3 { // each row thrice, told apart by its third field
				fields := []any{"k", time.UnixMilli(ts / 64).UTC(), s.row.Fields[2].(int64)*3 + int64(c)}
				steps = append(steps, step{input: s.input, row: event.Row{Kind: event.Insert, Fields: fields}})
				for _, w := range opts.LeftWindow.Assign.assign(ts / 64) {
					perWindow[fmt.Sprint(s.input, w.id())]++
				}
			}
		}
		if most := slices.Max(slices.Collect(maps.Values(perWindow))); most < 2*windowChunkRows {
			t.Fatalf("seed %d: at most %d rows in a window and side; the test needs over %d", seed, most, 2*windowChunkRows)
		}
		want := windowJoinExpected(opts, steps)
		mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewWindowJoin(opts) })}
		restarts := randomRestarts(rng, len(steps), 4)
		for name, dir := range map[string]string{"heap": "", "pebble": t.TempDir()} {
			for _, rs := range []map[int]bool{nil, restarts} {
				if got := runTimedStepsOn(t, dir, mk, steps, rs); !slices.Equal(got, want) {
					t.Fatalf("seed %d on %s (restarts %v): %s", seed, name, rs != nil, diffLines(want, got))
				}
			}
		}
	}
}
