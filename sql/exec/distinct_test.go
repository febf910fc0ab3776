package exec

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// The input of the distinct tests: [k, a BIGINT, b STRING, f1, f2, f3
// BOOLEAN], a and b and f3 sometimes NULL.
func randomDistinctRow(rng *rand.Rand) func() []any {
	return func() []any {
		var a, b, f3 any = int64(rng.Intn(6)), fmt.Sprint("x", rng.Intn(4)), rng.Intn(2) == 0
		if rng.Intn(8) == 0 {
			a = nil
		}
		if rng.Intn(8) == 0 {
			b = nil
		}
		if rng.Intn(5) == 0 {
			f3 = nil
		}
		return []any{fmt.Sprint("k", rng.Intn(8)), a, b, rng.Intn(2) == 0, rng.Intn(3) == 0, f3}
	}
}

// distinctCalls are DISTINCT calls over a (field 1) and b (field 2) with
// overlapping filters, and non-DISTINCT calls among them.
var distinctCalls = []AggCall{
	{Kind: Count, Arg: 1, Distinct: true},
	{Kind: Count, Arg: 1, Distinct: true, HasFilter: true, FilterField: 3},
	{Kind: Count, Arg: 1, Distinct: true, HasFilter: true, FilterField: 4},
	{Kind: Count, Arg: 2, Distinct: true, HasFilter: true, FilterField: 3},
	{Kind: Count, Arg: 2, Distinct: true},
	{Kind: Sum, Arg: 1, Distinct: true, HasFilter: true, FilterField: 4},
	{Kind: Max, Arg: 1, Distinct: true, HasFilter: true, FilterField: 3},
	{Kind: Min, Arg: 2, Distinct: true, HasFilter: true, FilterField: 5},
	{Kind: CountStar},
	{Kind: Count, Arg: 2, Distinct: true, HasFilter: true, FilterField: 4},
	{Kind: Count, Arg: 1, HasFilter: true, FilterField: 3},
	{Kind: Max, Arg: 1, HasFilter: true, FilterField: 4},
}

// distinctExpected computes key k's result row from its live rows with
// plain maps, or nil when it has none.
func distinctExpected(k string, live [][]any) []any {
	var rows [][]any
	for _, r := range live {
		if r[0] == k {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	out := []any{k}
	for _, c := range distinctCalls {
		seen := map[any]bool{}
		n := int64(0)
		for _, r := range rows {
			if c.HasFilter && r[c.FilterField] != true {
				continue
			}
			if c.Kind == CountStar {
				n++
				continue
			}
			if v := r[c.Arg]; v != nil {
				seen[v] = true
				n++
			}
		}
		if c.Distinct {
			n = int64(len(seen))
		}
		out = append(out, expectedCall(c, n, seen))
	}
	return out
}

func expectedCall(c AggCall, n int64, seen map[any]bool) any {
	if c.Kind == Count || c.Kind == CountStar {
		return n
	}
	var best any
	for v := range seen {
		switch {
		case best == nil:
			best = v
		case c.Kind == Sum:
			best = best.(int64) + v.(int64)
		case c.Kind == Max && compareValues(v, best) > 0, c.Kind == Min && compareValues(v, best) < 0:
			best = v
		}
	}
	return best
}

// TestSharedDistinctDifferential runs random inserts and retractions
// through a GroupAggregate of DISTINCT calls sharing maps, on the heap and
// on Pebble, over a retracting and an insert-only input: after every row,
// the group's result equals the one computed from its live rows; halfway
// it checkpoints on one subtask and restores on three.
func TestSharedDistinctDifferential(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		for _, insertOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/insertOnly=%v", backend, insertOnly), func(t *testing.T) {
				for seed := int64(1); seed <= 4; seed++ {
					runSharedDistinct(t, seed, backend == "pebble", insertOnly)
				}
			})
		}
	}
}

func runSharedDistinct(t *testing.T, seed int64, pebble, insertOnly bool) {
	rng := rand.New(rand.NewSource(seed))
	mkRow := randomDistinctRow(rng)
	var in []event.Row
	if insertOnly {
		for range 500 {
			in = append(in, event.Row{Kind: event.Insert, Fields: mkRow()})
		}
	} else {
		in = changelog(rng, 800, mkRow)
	}
	opts := GroupAggOptions{GroupKeys: []int{0}, Aggs: distinctCalls, InputInsertOnly: insertOnly}
	if n := len(distinctGroups(opts.Aggs)); n != 2 {
		t.Fatalf("%d distinct groups, want 2 (a and b)", n)
	}
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewGroupAggregate(opts) })}
	dir := func() string {
		if pebble {
			return t.TempDir()
		}
		return ""
	}
	var clock int64
	var live [][]any
	view := map[string][]any{}
	check := func(c *chain, i int) {
		r := in[i]
		if r.Kind.IsAccumulate() {
			live = append(live, r.Fields)
		} else {
			live = removeRow(live, r.Fields)
		}
		if err := c.process(t, 1, event.Record{Value: r, Timestamp: event.NoTimestamp}); err != nil {
			t.Fatalf("seed %d, row %d: %v", seed, i, err)
		}
		for _, o := range c.out.rows() {
			if o.Kind.IsAccumulate() {
				view[o.Fields[0].(string)] = o.Fields
			} else {
				delete(view, o.Fields[0].(string))
			}
		}
		c.out.records = nil
		k := r.Fields[0].(string)
		if g, w := formatFields(view[k]), formatFields(distinctExpected(k, live)); g != w {
			t.Fatalf("seed %d, after row %d %s: group %s is %s, want %s", seed, i, formatRow(r), k, g, w)
		}
	}
	all := keygroup.Range{Start: 0, End: maxPar - 1}
	one := openSubtaskOn(t, dir(), mk, &clock, nil, all)
	half := len(in) / 2
	for i := range half {
		check(one, i)
	}
	parts := one.snapshot(t, 1)
	const p = 3
	subtasks := make([]*chain, p)
	for i := range subtasks {
		subtasks[i] = openSubtaskOn(t, dir(), mk, &clock, parts, keygroup.RangeFor(maxPar, p, i))
	}
	for i := half; i < len(in); i++ {
		k := opts.Key()(in[i].Fields)
		check(subtasks[keygroup.OperatorIndex(keygroup.ForKey(k, maxPar), maxPar, p)], i)
	}
}

// removeRow removes one row equal to r.
func removeRow(rows [][]any, r []any) [][]any {
	for i, x := range rows {
		if sameRow(x, r) {
			return append(rows[:i:i], rows[i+1:]...)
		}
	}
	panic(fmt.Sprintf("retraction of %v, which is not there", r))
}

// oldDistinctState is an operator writing the state a GroupAggregate of
// one COUNT(DISTINCT) kept before shared distinct maps: a map
// "group-values-0" of valueKey(v) → [count, v].
type oldDistinctState struct{ operator.Base }

func (o *oldDistinctState) Open(ctx *operator.Context) error {
	if err := o.Base.Open(ctx); err != nil {
		return err
	}
	setKey(ctx, FieldKey(0)([]any{"k"}))
	m := state.Map(ctx.Keyed, state.MapDescriptor[string, []any]{Name: "group-values-0", ValueCodec: RowCodec{}})
	m.Put(valueKey(int64(7)), []any{int64(1), int64(7)})
	return nil
}

// TestSharedDistinctRefusesOldState: a checkpoint of the per-call distinct
// maps fails the restore, on the heap and on Pebble, rather than restarting
// the DISTINCT counts from nothing.
func TestSharedDistinctRefusesOldState(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			var clock int64
			old := openChain(t, []newStage{func() (operator.Operator, bool) { return &oldDistinctState{}, true }}, &clock, nil)
			parts := old.snapshot(t, 1)
			dir := ""
			if backend == "pebble" {
				dir = t.TempDir()
			}
			opts := GroupAggOptions{GroupKeys: []int{0}, Aggs: []AggCall{{Kind: Count, Arg: 1, Distinct: true}}}
			g, err := NewGroupAggregate(opts)
			if err != nil {
				t.Fatal(err)
			}
			c := &chain{out: &recorder{}, clock: &clock, groups: keygroup.Range{Start: 0, End: maxPar - 1},
				pts: operator.NewProcessingTimeService(), pebbleDir: dir}
			s := &stage{op: g, keyed: true}
			s.ctx = c.newContext(t, s, c.out)
			if err := g.InitializeState(parts[0]); err != nil {
				t.Fatal(err)
			}
			s.ctx.Restored = true
			err = g.Open(s.ctx)
			if !errors.Is(err, state.ErrIncompatible) {
				t.Fatalf("restoring per-call distinct maps: got %v, want state.ErrIncompatible", err)
			}
			t.Log(err)
		})
	}
}

func TestDistinctEntryCodec(t *testing.T) {
	c := distinctEntryCodec{}
	e := &distinctEntry{counts: []int64{3, 0, -1, 1}, v: "x"}
	b := c.Encode(nil, e)
	got, rest, err := c.Decode(append(b, 9))
	if err != nil || len(rest) != 1 || fmt.Sprint(got.counts, got.v) != fmt.Sprint(e.counts, e.v) {
		t.Fatalf("decoded %+v rest %v err %v, want %+v", got, rest, err, e)
	}
	cp := c.Copy(e)
	cp.counts[0] = 9
	if e.counts[0] != 3 {
		t.Fatal("Copy shares the counts")
	}
	for name, bad := range map[string][]byte{
		"per-call entry": RowCodec{}.Encode(nil, []any{int64(1), "x"}),
		"cut":            b[:len(b)-1],
		"empty":          nil,
	} {
		if _, _, err := c.Decode(bad); !errors.Is(err, state.ErrCorrupt) {
			t.Errorf("%s: got %v, want state.ErrCorrupt", name, err)
		}
	}
}

func TestDistinctBitsCodec(t *testing.T) {
	c := distinctBitsCodec{}
	for _, bits := range []uint64{0, 1, 0b1011, 1 << 63} {
		got, rest, err := c.Decode(append(c.Encode(nil, bits), 9))
		if err != nil || got != bits || len(rest) != 1 {
			t.Fatalf("bits %b: decoded %b rest %v err %v", bits, got, rest, err)
		}
	}
	// An entry of counts (a checkpoint from before this format, or from a
	// retracting input) reads as the calls whose count is above 0.
	counts := distinctEntryCodec{}.Encode(nil, &distinctEntry{counts: []int64{1, 0, -1, 2}, v: int64(7)})
	if got, rest, err := c.Decode(counts); err != nil || got != 0b1001 || len(rest) != 0 {
		t.Fatalf("counts [1 0 -1 2]: decoded %b rest %v err %v, want 1001", got, rest, err)
	}
	for name, bad := range map[string][]byte{
		"per-call entry": RowCodec{}.Encode(nil, []any{int64(1), "x"}),
		"cut":            {distinctBitsTag},
		"cut counts":     counts[:len(counts)-1],
		"empty":          nil,
	} {
		if _, _, err := c.Decode(bad); !errors.Is(err, state.ErrCorrupt) {
			t.Errorf("%s: got %v, want state.ErrCorrupt", name, err)
		}
	}
	// The other way the values are missing: refused, not read as NULLs.
	if _, _, err := (distinctEntryCodec{}).Decode(c.Encode(nil, 1)); !errors.Is(err, state.ErrIncompatible) {
		t.Fatalf("bits read as counts: got %v, want state.ErrIncompatible", err)
	}
}

// countDistinctCalls are the calls of the format-change tests: COUNT(*)
// and COUNT(DISTINCT) calls, whose accumulators are alike over a
// retracting and an insert-only input.
var countDistinctCalls = []AggCall{
	{Kind: Count, Arg: 1, Distinct: true},
	{Kind: Count, Arg: 1, Distinct: true, HasFilter: true, FilterField: 3},
	{Kind: CountStar},
	{Kind: Count, Arg: 2, Distinct: true, HasFilter: true, FilterField: 4},
}

// TestSharedDistinctBitsRestoreCounts: a checkpoint whose distinct maps
// hold counts (as every checkpoint did before the bits format) restores
// into a GroupAggregate over an insert-only input, on the heap and on
// Pebble, and its results go on exactly: a value counted before the
// checkpoint is not counted again.
func TestSharedDistinctBitsRestoreCounts(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			dir := func() string {
				if backend == "pebble" {
					return t.TempDir()
				}
				return ""
			}
			rng := rand.New(rand.NewSource(5))
			mkRow := randomDistinctRow(rng)
			var in [][]any
			for range 400 {
				in = append(in, mkRow())
			}
			stage := func(insertOnly bool) []newStage {
				opts := GroupAggOptions{GroupKeys: []int{0}, Aggs: countDistinctCalls, InputInsertOnly: insertOnly}
				return []newStage{keyedStage(func() (operator.Operator, error) { return NewGroupAggregate(opts) })}
			}
			var clock int64
			all := keygroup.Range{Start: 0, End: maxPar - 1}
			c := openSubtaskOn(t, dir(), stage(false), &clock, nil, all)
			view := map[string][]any{}
			for i, r := range in {
				if i == len(in)/2 {
					parts := c.snapshot(t, 1)
					c = openSubtaskOn(t, dir(), stage(true), &clock, parts, all)
				}
				if err := c.process(t, 1, event.Record{Value: event.Row{Kind: event.Insert, Fields: r}, Timestamp: event.NoTimestamp}); err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
				for _, o := range c.out.rows() {
					if o.Kind.IsAccumulate() {
						view[o.Fields[0].(string)] = o.Fields
					}
				}
				c.out.records = nil
			}
			for k, got := range view {
				if g, w := formatFields(got), formatFields(countDistinctExpected(k, in)); g != w {
					t.Errorf("group %s is %s, want %s", k, g, w)
				}
			}
		})
	}
}

// countDistinctExpected computes key k's result of countDistinctCalls
// over rows with plain maps.
func countDistinctExpected(k string, rows [][]any) []any {
	out := []any{k}
	for _, c := range countDistinctCalls {
		seen := map[any]bool{}
		n := int64(0)
		for _, r := range rows {
			if r[0] != k || c.HasFilter && r[c.FilterField] != true {
				continue
			}
			if c.Kind == CountStar {
				n++
			} else if v := r[c.Arg]; v != nil {
				seen[v] = true
			}
		}
		if c.Distinct {
			n = int64(len(seen))
		}
		out = append(out, n)
	}
	return out
}

// TestSharedDistinctCountsRefuseBits: a checkpoint of an insert-only
// input's distinct maps (presence bits, no values) fails the restore of a
// GroupAggregate over a retracting input on the heap, rather than
// retracting values it cannot see.
func TestSharedDistinctCountsRefuseBits(t *testing.T) {
	opts := GroupAggOptions{GroupKeys: []int{0}, Aggs: countDistinctCalls, InputInsertOnly: true}
	var clock int64
	c := openChain(t, []newStage{keyedStage(func() (operator.Operator, error) { return NewGroupAggregate(opts) })}, &clock, nil)
	if err := c.process(t, 1, event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{"k", int64(1), "x", true, true, true}},
		Timestamp: event.NoTimestamp}); err != nil {
		t.Fatal(err)
	}
	parts := c.snapshot(t, 1)
	opts.InputInsertOnly = false
	g, err := NewGroupAggregate(opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &chain{out: &recorder{}, clock: &clock, groups: keygroup.Range{Start: 0, End: maxPar - 1}, pts: operator.NewProcessingTimeService()}
	s := &stage{op: g, keyed: true}
	s.ctx = r.newContext(t, s, r.out)
	if err := g.InitializeState(parts[0]); err != nil {
		t.Fatal(err)
	}
	s.ctx.Restored = true
	err = openRecovered(g, s.ctx)
	if !errors.Is(err, state.ErrIncompatible) {
		t.Fatalf("restoring presence bits as counts: got %v, want state.ErrIncompatible", err)
	}
	t.Log(err)
}

// openRecovered opens op, returning as an error a panic of an error (a
// state handle's registration panics so).
func openRecovered(op operator.Operator, ctx *operator.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	return op.Open(ctx)
}
