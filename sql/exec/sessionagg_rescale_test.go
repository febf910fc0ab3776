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

// TestSessionRescaleKeepsState checkpoints a SessionAggregate (the SESSION
// window TVF's and GROUP BY SESSION's operator) on one subtask with open
// sessions, restores it on three, and feeds the rest: every key's
// sessions close, merge and drop late rows as they do without a restore.
func TestSessionRescaleKeepsState(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	opts := SessionAggOptions{Gap: 10 * time.Millisecond, TimeField: 1, GroupKeys: []int{0},
		Aggs: []AggCall{{Kind: CountStar}, {Kind: Sum, Arg: 2}}}
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
