package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// mapLookup is a per-key lookup over a map that the test changes between
// rows, recording every key it is asked for.
type mapLookup struct {
	rows   map[int64][][]any
	asked  []string
	closed bool
	fail   error
}

func (m *mapLookup) Lookup(_ context.Context, key []any) ([][]any, error) {
	m.asked = append(m.asked, fmt.Sprint(key))
	if m.fail != nil {
		return nil, m.fail
	}
	return m.rows[key[0].(int64)], nil
}

func (m *mapLookup) Close() error { m.closed = true; return nil }

// lookupStage joins [id, key] rows with the table [key, name] on key.
func lookupStage(typ JoinType, m *mapLookup, cond func(l, r []any) (bool, error)) []newStage {
	key := func(f []any) (any, error) { return f[1], nil }
	opts := LookupJoinOptions{Type: typ, LeftKeys: []func([]any) (any, error){key}, RightKeys: []int{0}, RightArity: 2,
		Lookup: func() (LookupFunc, error) { return m, nil }, Table: "dim", Condition: cond}
	return []newStage{func() (operator.Operator, bool) {
		op, err := NewLookupJoin(opts)
		if err != nil {
			panic(err)
		}
		return op, false
	}}
}

// TestLookupJoinPerKey: each row sees the table as the lookup answers at
// its arrival (a change between two rows shows in the second), NULL keys
// are never looked up, RowKind is kept, LEFT pads, and the condition
// filters matches.
func TestLookupJoinPerKey(t *testing.T) {
	notB := func(_, r []any) (bool, error) { return r[1] != "b", nil }
	for _, c := range []struct {
		typ  JoinType
		cond func(l, r []any) (bool, error)
		want []string
	}{
		{InnerJoin, nil, []string{"+I[1, 1, 1, a]", "+I[2, 1, 1, a2]", "+I[2, 1, 1, b]", "-D[4, 1, 1, a2]", "-D[4, 1, 1, b]"}},
		{LeftJoin, nil, []string{"+I[1, 1, 1, a]", "+I[2, 1, 1, a2]", "+I[2, 1, 1, b]", "+I[3, NULL, NULL, NULL]",
			"-D[4, 1, 1, a2]", "-D[4, 1, 1, b]", "+I[5, 9, NULL, NULL]"}},
		{LeftJoin, notB, []string{"+I[1, 1, 1, a]", "+I[2, 1, 1, a2]", "+I[3, NULL, NULL, NULL]",
			"-D[4, 1, 1, a2]", "+I[5, 9, NULL, NULL]"}},
	} {
		m := &mapLookup{rows: map[int64][][]any{1: {{int64(1), "a"}}}}
		var clock int64
		ch := openChain(t, lookupStage(c.typ, m, c.cond), &clock, nil)
		feed := func(kind event.RowKind, fields ...any) {
			t.Helper()
			if err := ch.process(t, 1, event.Record{Value: event.Row{Kind: kind, Fields: fields}, Timestamp: event.NoTimestamp}); err != nil {
				t.Fatal(err)
			}
		}
		feed(event.Insert, int64(1), int64(1))
		m.rows[1] = [][]any{{int64(1), "a2"}, {int64(1), "b"}} // the table changes between two rows
		feed(event.Insert, int64(2), int64(1))
		feed(event.Insert, int64(3), nil)
		feed(event.Delete, int64(4), int64(1))
		feed(event.Insert, int64(5), int64(9))
		ch.finish(t)
		got := ch.out.take()
		for i := range got {
			got[i], _, _ = strings.Cut(got[i], " @")
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got\n%s\nwant\n%s", c.typ, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
		if want := []string{"[1]", "[1]", "[1]", "[9]"}; !slices.Equal(m.asked, want) {
			t.Errorf("%s: looked up %v, want %v (a NULL key is never looked up)", c.typ, m.asked, want)
		}
		if err := ch.head().op.Close(); err != nil || !m.closed {
			t.Errorf("%s: the lookup was not closed with the operator", c.typ)
		}
	}
}

// A failing lookup fails the row, naming the table and the key.
func TestLookupJoinError(t *testing.T) {
	m := &mapLookup{fail: errors.New("connection refused")}
	var clock int64
	ch := openChain(t, lookupStage(InnerJoin, m, nil), &clock, nil)
	err := ch.process(t, 1, event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{int64(1), int64(7)}}})
	want := `sql/exec: LookupJoin: table "dim": looking up key [7]: connection refused`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// Load and Lookup are exclusive.
func TestLookupJoinNeedsOneSource(t *testing.T) {
	key := func(f []any) (any, error) { return f[0], nil }
	base := LookupJoinOptions{LeftKeys: []func([]any) (any, error){key}, RightKeys: []int{0}, RightArity: 1}
	both := base
	both.Load = func() ([][]any, error) { return nil, nil }
	both.Lookup = func() (LookupFunc, error) { return &mapLookup{}, nil }
	for _, o := range []LookupJoinOptions{base, both} {
		if _, err := NewLookupJoin(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("got %v, want ErrInvalidOptions", err)
		}
	}
}

// With Output the join emits only those columns of each joined row, in
// that order, for a matched row and a LEFT-padded one alike, and a table
// read whole (Load) finds rows by the key as RowKey encodes it: the rows
// are the full join's rows, picked.
func TestLookupJoinOutputColumns(t *testing.T) {
	table := [][]any{{int64(1), "a"}, {int64(1), "b"}, {int64(2), "c"}, {int64(7), nil}}
	in := [][]any{{int64(10), int64(1)}, {int64(11), int64(2)}, {int64(12), int64(3)}, {int64(13), nil}, {int64(14), int32(7)}}
	run := func(typ JoinType, output []int) []string {
		key := func(f []any) (any, error) { return f[1], nil }
		opts := LookupJoinOptions{Type: typ, LeftKeys: []func([]any) (any, error){key}, RightKeys: []int{0}, RightArity: 2,
			Load: func() ([][]any, error) { return table, nil }, Table: "dim", Output: output}
		stage := []newStage{func() (operator.Operator, bool) {
			op, err := NewLookupJoin(opts)
			if err != nil {
				panic(err)
			}
			return op, false
		}}
		var clock int64
		ch := openChain(t, stage, &clock, nil)
		for _, f := range in {
			if err := ch.process(t, 1, event.Record{Value: event.Row{Kind: event.Insert, Fields: f}, Timestamp: event.NoTimestamp}); err != nil {
				t.Fatal(err)
			}
		}
		ch.finish(t)
		got := ch.out.take()
		for i := range got {
			got[i], _, _ = strings.Cut(got[i], " @")
		}
		return got
	}
	pick := func(rows []string, idx []int) []string {
		var out []string
		for _, r := range rows {
			fields := strings.Split(strings.TrimSuffix(strings.TrimPrefix(r, "+I["), "]"), ", ")
			var p []string
			for _, i := range idx {
				p = append(p, fields[i])
			}
			out = append(out, "+I["+strings.Join(p, ", ")+"]")
		}
		return out
	}
	for _, typ := range []JoinType{InnerJoin, LeftJoin} {
		all := run(typ, nil)
		if len(all) < 4 {
			t.Fatalf("%s: only %d rows: %v", typ, len(all), all)
		}
		for _, idx := range [][]int{{3, 0}, {0, 1, 2, 3}, {2}, {1, 1}} {
			if got, want := run(typ, idx), pick(all, idx); !slices.Equal(got, want) {
				t.Errorf("%s, Output %v: got\n%s\nwant\n%s", typ, idx, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	if _, err := NewLookupJoin(LookupJoinOptions{LeftKeys: []func([]any) (any, error){nil}, RightKeys: []int{0}, RightArity: 1,
		Load: func() ([][]any, error) { return nil, nil }, Output: []int{-1}}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("a negative Output column: %v, want ErrInvalidOptions", err)
	}
}
