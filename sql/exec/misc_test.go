package exec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

func TestCalcPassesRowKindThrough(t *testing.T) {
	var clock int64
	calc := &Calc{
		Filter:  func(f []any) (bool, error) { return f[1].(int64) > 1, nil },
		Project: func(f []any) ([]any, error) { return []any{f[1], f[0]}, nil },
	}
	c := openChain(t, []newStage{func() (operator.Operator, bool) { return calc, false }}, &clock, nil)
	for _, r := range mustRows(t, "+I[a, 1]", "+I[b, 2]", "-U[b, 2]", "+U[b, 3]", "-D[b, 3]") {
		if err := c.process(t, 1, event.Record{Value: r, Timestamp: 42}); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(c.out.take(), " ")
	if want := "+I[2, b] @42 -U[2, b] @42 +U[3, b] @42 -D[3, b] @42"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if n := c.head().ctx.Metrics.Filtered; n != 1 {
		t.Fatalf("filtered %d, want 1", n)
	}
	boom := errors.New("boom")
	calc.Project = func([]any) ([]any, error) { return nil, boom }
	if err := c.process(t, 1, event.Record{Value: mustRows(t, "+I[c, 5]")[0]}); !errors.Is(err, boom) {
		t.Fatalf("projection error %v, want boom", err)
	}
	if err := c.process(t, 1, event.Record{Value: "not a row"}); !errors.Is(err, ErrNotRow) {
		t.Fatalf("error %v, want ErrNotRow", err)
	}
}

// A Calc that only filters hands on the record it got, and a *event.Row
// (which it accepts) as an event.Row, the value every operator after it
// takes.
func TestFilterOnlyCalcHandsOnRows(t *testing.T) {
	var clock int64
	calc := &Calc{Filter: func(f []any) (bool, error) { return f[1].(int64) > 1, nil }}
	c := openChain(t, []newStage{func() (operator.Operator, bool) { return calc, false }}, &clock, nil)
	rows := mustRows(t, "+I[a, 1]", "+I[b, 2]", "-U[b, 2]")
	for i, r := range rows {
		rec := event.Record{Value: r, Timestamp: 7}
		if i == 2 {
			rec.Value = &rows[i]
		}
		if err := c.process(t, 1, rec); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := strings.Join(c.out.take(), " "), "+I[b, 2] @7 -U[b, 2] @7"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestMaterialize(t *testing.T) {
	rows := mustRows(t, "+I[a, 1]", "+I[b, 2]", "-U[a, 1]", "+U[a, 3]", "-D[b, 2]", "+I[c, 4]")
	tab, err := Materialize(rows, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab) != 2 || formatFields(tab["[a]"]) != "[a, 3]" || formatFields(tab["[c]"]) != "[c, 4]" {
		t.Fatalf("keyed table %v", tab)
	}
	bag := ApplyChangelog(mustRows(t, "+I[x]", "+I[x]", "+I[y]", "-D[x]"), nil)
	if len(bag) != 2 || bag["[x]#1"] == nil || bag["[y]#1"] == nil {
		t.Fatalf("multiset %v", bag)
	}
	for _, bad := range [][]string{
		{"-D[a, 1]"},
		{"+I[a, 1]", "+I[a, 2]"},
		{"+I[a, 1]", "-U[a, 2]"},
	} {
		if _, err := Materialize(mustRows(t, bad...), []int{0}); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, err := Materialize(mustRows(t, "+I[a]", "-D[b]"), nil); err == nil {
		t.Error("retracting an absent row from a multiset: no error")
	}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		err  error
	}{
		{"negative key", errOf(NewGroupAggregate(GroupAggOptions{GroupKeys: []int{-1}, Aggs: []AggCall{{}}}))},
		{"tiny ttl", errOf(NewGroupAggregate(GroupAggOptions{Aggs: []AggCall{{}}, StateTTL: time.Microsecond}))},
		{"two-phase distinct", errOf(NewLocalAggregate(LocalAggOptions{Agg: GroupAggOptions{
			Aggs: []AggCall{{Kind: Count, Distinct: true}}}}))},
		{"two-phase min on updates", errOf(NewGlobalAggregate(GroupAggOptions{Aggs: []AggCall{{Kind: Min}}}))},
		{"hop slide", errOf(NewWindowAggregate(WindowAggOptions{Window: WindowSpec{Kind: Hop, Size: 10 * time.Millisecond,
			Slide: 3 * time.Millisecond}, Aggs: []AggCall{{}}}))},
		{"cumulate step", errOf(NewWindowAggregate(WindowAggOptions{Window: WindowSpec{Kind: Cumulate,
			Size: 10 * time.Millisecond}, Aggs: []AggCall{{}}}))},
		{"window size", errOf(NewWindowAggregate(WindowAggOptions{Window: WindowSpec{Size: time.Microsecond}, Aggs: []AggCall{{}}}))},
		{"topn n", errOf(NewTopN(TopNOptions{OrderBy: []SortKey{{}}}))},
		{"topn order", errOf(NewTopN(TopNOptions{N: 3}))},
		{"join keys", errOf(NewJoin(JoinOptions{LeftKeys: []int{0}}))},
		{"left join arity", errOf(NewJoin(JoinOptions{Type: LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}}))},
		{"interval bounds", errOf(NewIntervalJoin(IntervalJoinOptions{LeftKeys: []int{0}, RightKeys: []int{0},
			Lower: time.Second, Upper: 0}))},
	}
	for _, c := range cases {
		if !errors.Is(c.err, ErrInvalidOptions) {
			t.Errorf("%s: error %v, want ErrInvalidOptions", c.name, c.err)
		}
	}
	if _, err := NewGroupAggregate(GroupAggOptions{GroupKeys: []int{0}}); err != nil {
		t.Errorf("no calls (SELECT DISTINCT): %v", err)
	}
	if _, err := NewLocalAggregate(LocalAggOptions{Agg: GroupAggOptions{Aggs: []AggCall{{Kind: Max}}, InputInsertOnly: true}}); err != nil {
		t.Errorf("two-phase MAX over insert-only input: %v", err)
	}
}

func errOf[T any](_ T, err error) error { return err }

// A fused Calc projects a stage into a buffer of its own only when the
// next projecting stage copies its input (ProjectInto); the rows it emits
// never share that buffer, and each instance has its own.
func TestFusedCalcReusesBuffersOnlyBetweenCopyingStages(t *testing.T) {
	swap := func() *Calc { // [x, y] → [y, x]
		return &Calc{
			Project:     func(f []any) ([]any, error) { return []any{f[1], f[0]}, nil },
			ProjectInto: func(out, f []any) error { out[0], out[1] = f[1], f[0]; return nil },
			Width:       2,
		}
	}
	odd := &Calc{Filter: func(f []any) (bool, error) { return f[0].(int64)%2 == 1, nil }}
	same := &Calc{Project: func(f []any) ([]any, error) { return f, nil }} // keeps its input: no buffer before it
	stages := []*Calc{swap(), odd, swap(), swap(), same}
	fused, other := FuseCalcs(stages...), FuseCalcs(stages...)
	for i, want := range []bool{true, false, true, false, false} {
		if got := fused.stages[i].scratch != nil; got != want {
			t.Fatalf("stage %d has a buffer: %v, want %v", i, got, want)
		}
	}
	if &fused.stages[0].scratch[0] == &other.stages[0].scratch[0] {
		t.Fatal("two fused Calcs share a buffer")
	}
	var clock int64
	c := openChain(t, []newStage{func() (operator.Operator, bool) { return fused, false }}, &clock, nil)
	for _, r := range mustRows(t, "+I[a, 1]", "+I[b, 2]", "-U[c, 3]", "+I[d, 5]") {
		if err := c.process(t, 1, event.Record{Value: r, Timestamp: 7}); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(c.out.take(), " ")
	if want := "+I[1, a] @7 -U[3, c] @7 +I[5, d] @7"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// A projection that picks a row's columns as they are (Prefix) hands on
// a row of exactly its width without a copy, and projects a wider one; in
// a fused Calc, a stage that reads an earlier stage's buffer copies (the
// compat suite's UNNEST case emitted its last row four times when it did
// not).
func TestPrefixCalcPassesRowsAsTheyAre(t *testing.T) {
	firstTwo := func() *Calc {
		return &Calc{
			Project:     func(f []any) ([]any, error) { return []any{f[0], f[1]}, nil },
			ProjectInto: func(out, f []any) error { out[0], out[1] = f[0], f[1]; return nil },
			Width:       2, Prefix: true,
		}
	}
	var clock int64
	c := openChain(t, []newStage{func() (operator.Operator, bool) { return FuseCalcs(firstTwo()), false }}, &clock, nil)
	in := mustRows(t, "+I[a, 1]", "-U[b, 2, x]")
	for _, r := range in {
		if err := c.process(t, 1, event.Record{Value: r, Timestamp: 7}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := strings.Join(c.out.take(), " "), "+I[a, 1] @7 -U[b, 2] @7"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	out := c.out.rows()
	if &out[0].Fields[0] != &in[0].Fields[0] {
		t.Error("a row of the projection's width was copied")
	}
	if &out[1].Fields[0] == &in[1].Fields[0] {
		t.Error("a wider row was handed on unprojected")
	}

	swap := &Calc{
		Project:     func(f []any) ([]any, error) { return []any{f[1], f[0]}, nil },
		ProjectInto: func(out, f []any) error { out[0], out[1] = f[1], f[0]; return nil },
		Width:       2,
	}
	fused := FuseCalcs(swap, firstTwo())
	if fused.stages[0].scratch == nil || fused.stages[1].Prefix {
		t.Fatalf("the swap projects into a buffer: %v; the prefix after it passes rows on: %v",
			fused.stages[0].scratch != nil, fused.stages[1].Prefix)
	}
	c = openChain(t, []newStage{func() (operator.Operator, bool) { return fused, false }}, &clock, nil)
	for _, r := range mustRows(t, "+I[a, 1]", "+I[b, 2]", "+I[c, 3]") {
		if err := c.process(t, 1, event.Record{Value: r, Timestamp: 7}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range c.out.rows() { // printed after every row went through
		got = append(got, formatRow(r))
	}
	if want := "+I[1, a] +I[2, b] +I[3, c]"; strings.Join(got, " ") != want {
		t.Fatalf("got %s, want %s", strings.Join(got, " "), want)
	}
}
