package window

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

func TestAssignWindows(t *testing.T) {
	w := func(s, e int64) Window { return Window{s, e} }
	hour := int64(time.Hour / ms)
	for _, tc := range []struct {
		a    Assigner
		ts   int64
		want []Window
	}{
		{Tumbling{Size: 10 * ms}, 0, []Window{w(0, 10)}},
		{Tumbling{Size: 10 * ms}, 9, []Window{w(0, 10)}},
		{Tumbling{Size: 10 * ms}, 10, []Window{w(10, 20)}},
		{Tumbling{Size: 10 * ms}, -1, []Window{w(-10, 0)}},
		{Tumbling{Size: 10 * ms}, -10, []Window{w(-10, 0)}},
		{Tumbling{Size: 10 * ms}, -11, []Window{w(-20, -10)}},
		{Tumbling{Size: 10 * ms, Offset: 3 * ms}, 2, []Window{w(-7, 3)}},
		{Tumbling{Size: 10 * ms, Offset: 3 * ms}, 3, []Window{w(3, 13)}},
		{Tumbling{Size: 10 * ms, Offset: 3 * ms}, -8, []Window{w(-17, -7)}},
		{Tumbling{Size: 10 * ms, Offset: -3 * ms}, 0, []Window{w(-3, 7)}},
		{Tumbling{Size: 10 * ms, Offset: -3 * ms}, 7, []Window{w(7, 17)}},
		// Days in UTC+8 start at 16:00 UTC.
		{Tumbling{Size: 24 * time.Hour, Offset: -8 * time.Hour}, 0, []Window{w(-8*hour, 16*hour)}},
		{Sliding{Size: 10 * ms, Slide: 5 * ms}, 3, []Window{w(-5, 5), w(0, 10)}},
		{Sliding{Size: 10 * ms, Slide: 5 * ms}, 5, []Window{w(0, 10), w(5, 15)}},
		{Sliding{Size: 10 * ms, Slide: 5 * ms}, -1, []Window{w(-10, 0), w(-5, 5)}},
		{Sliding{Size: 10 * ms, Slide: 3 * ms}, 0, []Window{w(-9, 1), w(-6, 4), w(-3, 7), w(0, 10)}},
		{Sliding{Size: 10 * ms, Slide: 5 * ms, Offset: 2 * ms}, 0, []Window{w(-8, 2), w(-3, 7)}},
		{Sliding{Size: 5 * ms, Slide: 10 * ms}, 7, nil}, // in the gap between windows
		{Sliding{Size: 5 * ms, Slide: 10 * ms}, -6, []Window{w(-10, -5)}},
		{Session{Gap: 10 * ms}, -5, []Window{w(-5, 5)}},
	} {
		if got := tc.a.AssignWindows(tc.ts); !slices.Equal(got, tc.want) {
			t.Errorf("%v.AssignWindows(%d) = %v, want %v", tc.a, tc.ts, got, tc.want)
		}
	}
}

// TestWindowStartProperty checks WindowStart against its definition on
// random inputs: the window holds ts and starts on the offset grid.
func TestWindowStartProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		size := 1 + rng.Int64N(1000)
		offset := rng.Int64N(2*size-1) - (size - 1)
		ts := rng.Int64N(1<<40) - 1<<39
		start := WindowStart(ts, offset, size)
		if start > ts || ts >= start+size || (start-offset)%size != 0 {
			t.Fatalf("WindowStart(%d, %d, %d) = %d", ts, offset, size, start)
		}
	}
}

func TestSessionMergeWindows(t *testing.T) {
	w := func(s, e int64) Window { return Window{s, e} }
	got := Session{Gap: 10 * ms}.MergeWindows([]Window{w(30, 40), w(0, 10), w(5, 15), w(15, 25), w(50, 60)})
	want := []Merge{
		{Result: w(0, 25), Members: []Window{w(0, 10), w(5, 15), w(15, 25)}},
		{Result: w(30, 40), Members: []Window{w(30, 40)}},
		{Result: w(50, 60), Members: []Window{w(50, 60)}},
	}
	if len(got) != len(want) {
		t.Fatalf("MergeWindows = %v, want %v", got, want)
	}
	for i := range got {
		if got[i].Result != want[i].Result || !slices.Equal(got[i].Members, want[i].Members) {
			t.Errorf("merge %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestAssignerValidate(t *testing.T) {
	for _, a := range []Assigner{
		Tumbling{},
		Tumbling{Size: -ms},
		Tumbling{Size: 1500 * time.Microsecond},
		Tumbling{Size: 10 * ms, Offset: 10 * ms},
		Tumbling{Size: 10 * ms, Offset: -10 * ms},
		Sliding{Size: 10 * ms},
		Sliding{Slide: 10 * ms},
		Sliding{Size: 10 * ms, Slide: 5 * ms, Offset: 5 * ms},
		Session{},
	} {
		if err := a.Validate(); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%#v.Validate() = %v, want ErrInvalidOptions", a, err)
		}
	}
	for _, a := range []Assigner{
		Tumbling{Size: 10 * ms, Offset: -9 * ms},
		Sliding{Size: 10 * ms, Slide: 20 * ms, Offset: 15 * ms},
		Session{Gap: ms},
	} {
		if err := a.Validate(); err != nil {
			t.Errorf("%#v.Validate() = %v", a, err)
		}
	}
}

func TestNamespaceRoundTrip(t *testing.T) {
	for _, w := range []Window{{0, 10}, {-20, -10}, {-9223372036854775808, 9223372036854775807}} {
		got, err := ParseNamespace(w.Namespace())
		if err != nil || got != w {
			t.Errorf("ParseNamespace(%q) = %v, %v", w.Namespace(), got, err)
		}
	}
	for _, ns := range []string{"", "1", "a:b", "1:2:3"} {
		if _, err := ParseNamespace(ns); !errors.Is(err, ErrCorruptNamespace) {
			t.Errorf("ParseNamespace(%q) = %v, want ErrCorruptNamespace", ns, err)
		}
	}
}
