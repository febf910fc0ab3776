package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
)

// TestSessionRescaleKeepsState checkpoints a SessionAggregate (the SESSION
// window TVF's and GROUP BY SESSION's operator) on one subtask with open
// sessions, restores it on three, and feeds the rest: every key's
// sessions close, merge and drop late rows as they do without a restore.
// The second run adds DISTINCT calls, whose sets live in the session's
// state and merge when sessions merge.
func TestSessionRescaleKeepsState(t *testing.T) {
	plain := []AggCall{{Kind: CountStar}, {Kind: Sum, Arg: 2}}
	distinct := append(plain, AggCall{Kind: Count, Arg: 2, Distinct: true}, AggCall{Kind: Sum, Arg: 2, Distinct: true})
	for _, aggs := range [][]AggCall{plain, distinct} {
		checkSessionRescale(t, aggs)
	}
}

func checkSessionRescale(t *testing.T, aggs []AggCall) {
	t.Helper()
	rng := rand.New(rand.NewSource(5))
	opts := SessionAggOptions{Gap: 10 * time.Millisecond, TimeField: 1, GroupKeys: []int{0}, Aggs: aggs}
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewSessionAggregate(opts) })}
	steps := sessionSteps(rng)
	_, want := runSteps(t, mk, steps, nil)
	got := rescaledRows(t, mk, steps, opts.Key())
	if len(want) == 0 {
		t.Fatal("the test emits no session")
	}
	if g, w := perKey(got), perKey(want); g != w {
		t.Fatalf("after rescaling, sessions per key differ:\n%s\nwant\n%s", g, w)
	}
	lines, _ := runSteps(t, mk, steps, nil)
	checkRestartsChangeNothing(t, rng, mk, steps, lines)
}

// TestSessionDistinctMerges: two sessions of key k that both saw "a" merge
// when a row between them arrives; COUNT(DISTINCT v) of the merged session
// counts "a" once (Flink's testDistinctAggWithMergeOnEventTimeSessionWindow),
// SUM(DISTINCT) adds it once, and COUNT(*) counts every row.
func TestSessionDistinctMerges(t *testing.T) {
	opts := SessionAggOptions{Gap: 10 * time.Millisecond, TimeField: 1, GroupKeys: []int{0},
		Aggs: []AggCall{{Kind: CountStar}, {Kind: Count, Arg: 2, Distinct: true}, {Kind: Sum, Arg: 3, Distinct: true},
			{Kind: ListAgg, Arg: 2, Distinct: true}}}
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewSessionAggregate(opts) })}
	row := func(ms int64, v string, n int64) step {
		return step{input: 1, row: event.Row{Kind: event.Insert, Fields: []any{"k", time.UnixMilli(ms).UTC(), v, n}}}
	}
	steps := []step{row(1, "a", 5), row(2, "b", 5), row(20, "a", 5), row(21, "c", 7), row(12, "a", 5), {wm: 100}}
	_, got := runSteps(t, mk, steps, map[int]bool{4: true})
	want := "+I[k, ts:1, ts:31, ts:30, 5, 3, 12, 'a,b,c']"
	if len(got) != 1 {
		t.Fatalf("got %d rows, want one row %s", len(got), want)
	}
	if g := formatRow(got[0]); g != want {
		t.Fatalf("got %s\nwant %s", g, want)
	}
}

// rescaledRows runs the first half of steps on one subtask, checkpoints
// it and runs the rest on three subtasks restored from that checkpoint,
// each row on the subtask of its key (key), each watermark on all; it
// returns every row emitted, finished.
func rescaledRows(t *testing.T, mk []newStage, steps []step, key KeyFunc) []event.Row {
	t.Helper()
	var clock int64
	half := len(steps) / 2
	one := openChain(t, mk, &clock, nil)
	for _, s := range steps[:half] {
		step1(t, one, s)
	}
	parts := one.snapshot(t, 1)
	got := one.out.rows()
	const p = 3
	subtasks := make([]*chain, p)
	for i := range subtasks {
		subtasks[i] = openSubtask(t, mk, &clock, parts, keygroup.RangeFor(maxPar, p, i))
	}
	for _, s := range steps[half:] {
		targets := subtasks // a watermark reaches every subtask
		if s.input != 0 {
			k := key(s.row.Fields)
			targets = []*chain{subtasks[keygroup.OperatorIndex(keygroup.ForKey(k, maxPar), maxPar, p)]}
		}
		for _, c := range targets {
			step1(t, c, s)
			got = append(got, c.out.rows()...)
			c.out.records = nil
		}
	}
	for _, c := range subtasks {
		c.finish(t)
		got = append(got, c.out.rows()...)
	}
	return got
}

func step1(t *testing.T, c *chain, s step) {
	t.Helper()
	if s.input == 0 {
		c.watermark(t, s.wm)
		return
	}
	if err := c.process(t, s.input, event.Record{Value: s.row, Timestamp: event.NoTimestamp}); err != nil {
		t.Fatal(err)
	}
}

// sessionSteps are rows of 5 keys at times moving forward with jitter
// (some late), and a watermark 5 ms behind the largest time every few rows.
func sessionSteps(rng *rand.Rand) []step {
	var out []step
	var maxTS int64
	for i := range 300 {
		ts := int64(i*3) + int64(rng.Intn(12)) - 4
		maxTS = max(maxTS, ts)
		row := []any{fmt.Sprint("k", rng.Intn(5)), time.UnixMilli(ts).UTC(), int64(rng.Intn(10))}
		out = append(out, step{input: 1, row: event.Row{Kind: event.Insert, Fields: row}})
		if i%7 == 6 {
			out = append(out, step{wm: maxTS - 5})
		}
	}
	return out
}

// TestSessionInPlaceSameOutput: a key's rows that extend its one session
// update the state in place (extendOnly); with that off every row takes
// the general path. Both emit the same, with and without restores (a
// value read while a snapshot holds it is a copy), with gaps that make
// rows fall in, extend, start and merge sessions, and rows late.
func TestSessionInPlaceSameOutput(t *testing.T) {
	defer func() { sessionsInPlace = true }()
	for seed := int64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewSource(seed))
		aggs := []AggCall{{Kind: CountStar}, {Kind: Sum, Arg: 2}, {Kind: Max, Arg: 2}}
		if seed%2 == 0 {
			aggs = aggs[:1] // a new key's state inline (inlineSessions)
		}
		opts := SessionAggOptions{Gap: time.Duration(2+rng.Intn(12)) * time.Millisecond, TimeField: 1, GroupKeys: []int{0},
			Aggs: aggs}
		mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewSessionAggregate(opts) })}
		steps := sessionSteps(rng)
		restarts := randomRestarts(rng, len(steps), 5)
		sessionsInPlace = false
		want, _ := runSteps(t, mk, steps, nil)
		sessionsInPlace = true
		for _, rs := range []map[int]bool{nil, restarts} {
			if got, _ := runSteps(t, mk, steps, rs); !slices.Equal(got, want) {
				t.Fatalf("seed %d, restarts %v: %s", seed, rs != nil, diffLines(want, got))
			}
		}
	}
}

// TestSessionStateNotWrittenInPlace: a checkpoint of a SessionAggregate
// taken at a barrier and written after more rows of the key extended its
// session in place restores the session as it was at the barrier: the
// heap backend gives the owner a copy (sessionCodec.Copy) while a
// snapshot holds the value.
func TestSessionStateNotWrittenInPlace(t *testing.T) {
	for name, aggs := range map[string][]AggCall{
		"two calls": {{Kind: CountStar}, {Kind: Max, Arg: 2}},
		"inline":    {{Kind: CountStar}}, // inlineSessions
	} {
		t.Run(name, func(t *testing.T) {
			opts := SessionAggOptions{Gap: 10 * time.Millisecond, TimeField: 1, GroupKeys: []int{0}, Aggs: aggs}
			checkNotWrittenInPlace(t, []newStage{keyedStage(func() (operator.Operator, error) { return NewSessionAggregate(opts) })})
		})
	}
}

// TestSessionCodecKeepsTheCheckpointLayout: sessionCodec writes the
// bytes RowCodec wrote for the state's old form, [keys, timer, [start,
// end, acc, sets]…], so checkpoints and savepoints taken before it
// restore, and it reads back what it wrote.
func TestSessionCodecKeepsTheCheckpointLayout(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for range 200 {
		st := &sessionState{keys: []any{"k", int64(rng.Intn(9))}, timer: noTimer}
		if rng.Intn(2) == 0 {
			st.timer = int64(rng.Intn(1000))
		}
		old := []any{st.keys, st.timer}
		for range rng.Intn(4) {
			x := session{start: int64(rng.Intn(100)), end: int64(100 + rng.Intn(100)), acc: []any{int64(rng.Intn(50)), "max"}}
			if rng.Intn(2) == 0 {
				x.sets = distinctSets{nil, memSet{}}
				x.sets[1].add("a", int64(1+rng.Intn(3)))
			}
			st.sessions = append(st.sessions, x)
			old = append(old, []any{x.start, x.end, x.acc, x.sets.encode()})
		}
		checkOldLayout(t, sessionCodec{accLen: 2}, st, old)
	}
	checkRefused(t, sessionCodec{accLen: 2}, [][]any{
		{[]any{}, int64(5), []any{int64(1), int64(2), []any{}, []any{[]any{"x", "y"}}}}, // a count that is not one
		{[]any{}, int64(5), []any{int64(1), int64(2), []any{int64(1)}}},                 // a narrow accumulator
		{[]any{}, int64(5), []any{int64(1), int64(2), nil}},                             // none
		{[]any{}},
	})
}
