package exec

import (
	"slices"
	"testing"
	"time"
)

// TestWindowEntryOneObject: a window's state entry for a key and COUNT(*)
// (four fields) is one object, its keys and accumulator inside it; a
// wider one is two, its fields in one slice. Either holds the row's keys
// and an accumulator of no rows, and newWindowAcc (Copy) makes
// the same entry of its parts without sharing their memory.
func TestWindowEntryOneObject(t *testing.T) {
	for _, c := range []struct {
		aggs   []AggCall
		allocs float64
	}{
		{[]AggCall{{Kind: CountStar}}, 1},
		{[]AggCall{{Kind: CountStar}, {Kind: Max, Arg: 2}}, 2},
	} {
		w, err := NewWindowAggregate(WindowAggOptions{Window: WindowSpec{Kind: Tumble, Size: time.Second}, TimeField: 1,
			GroupKeys: []int{0}, Aggs: c.aggs})
		if err != nil {
			t.Fatal(err)
		}
		row := []any{int64(7), int64(1), int64(3)}
		if n := testing.AllocsPerRun(100, func() { w.newEntry(row) }); n != c.allocs {
			t.Errorf("%d calls: a new entry is %v allocations, want %v", len(c.aggs), n, c.allocs)
		}
		e := w.newEntry(row)
		if want := w.agg.newAcc(); !slices.Equal(e.keys, []any{int64(7)}) || !slices.Equal(e.acc, want) {
			t.Errorf("%d calls: entry keys %v acc %v, want [7] %v", len(c.aggs), e.keys, e.acc, want)
		}
		if err := w.agg.accumulate(e.acc, row, false, nil); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(e.keys, []any{int64(7)}) || rows(e.acc) != 1 {
			t.Errorf("%d calls: after a row, keys %v acc %v", len(c.aggs), e.keys, e.acc)
		}
		cp := windowAccCodec{}.Copy(e)
		cp.acc[0] = int64(5)
		if rows(e.acc) != 1 || !slices.Equal(cp.keys, e.keys) {
			t.Errorf("%d calls: a copy's accumulator shares the entry's: %v, %v", len(c.aggs), e.acc, cp.acc)
		}
	}
}

// TestSessionStateOneObject: a new key's session state for COUNT(*) is
// one object holding its keys, its session and the accumulator; with a
// DISTINCT call (sets of its own) or more fields than fit, the state
// holds only the keys, and the general path makes the session.
func TestSessionStateOneObject(t *testing.T) {
	for _, c := range []struct {
		aggs   []AggCall
		inline bool
	}{
		{[]AggCall{{Kind: CountStar}}, true},
		{[]AggCall{{Kind: CountStar}, {Kind: Count, Arg: 2, Distinct: true}}, false},
		{[]AggCall{{Kind: CountStar}, {Kind: Max, Arg: 2}}, false},
	} {
		s, err := NewSessionAggregate(SessionAggOptions{Gap: 10 * time.Millisecond, TimeField: 1, GroupKeys: []int{0}, Aggs: c.aggs})
		if err != nil {
			t.Fatal(err)
		}
		row := []any{int64(7), int64(1), int64(3)}
		want := 1.0 // the state
		if !c.inline {
			want = 2 // and its keys
		}
		if n := testing.AllocsPerRun(100, func() { s.newSessionState(row, 100) }); n != want {
			t.Errorf("%d calls: a new key's state is %v allocations, want %v", len(c.aggs), n, want)
		}
		st := s.newSessionState(row, 100)
		if !slices.Equal(st.keys, []any{int64(7)}) || (st.sessions != nil) != c.inline {
			t.Fatalf("%d calls: state keys %v sessions %v", len(c.aggs), st.keys, st.sessions)
		}
		if !c.inline {
			continue
		}
		x := st.sessions[0]
		if x.start != 100 || x.end != 110 || !slices.Equal(x.acc, s.agg.newAcc()) || x.sets != nil {
			t.Errorf("session %+v, want [100, 110) with an accumulator of no rows", x)
		}
		// A copy (the owner's, while a snapshot writes st) shares nothing
		// with st: not the accumulator, nor the keys, which would keep
		// all of st alive.
		cp := sessionCodec{}.Copy(st)
		cp.sessions[0].acc[0] = int64(5)
		if rows(x.acc) != 0 || &cp.keys[0] == &st.keys[0] || !slices.Equal(cp.keys, st.keys) {
			t.Errorf("a copy shares the state's memory: keys %p, %p; rows %v", &cp.keys[0], &st.keys[0], x.acc)
		}
	}
}
