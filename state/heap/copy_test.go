package heap

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/weirstream/weir/state"
)

// tally is a mutable state value, updated in place as user code does.
type tally struct {
	Count int
	Seen  []string
}

func (x *tally) bump(s string) {
	x.Count++
	x.Seen = append(x.Seen, s)
}

// tallies are the states of the copy tests, one of each kind, with values
// of pointer type (GobCodec).
type tallies struct {
	v state.ValueState[*tally]
	l state.ListState[*tally]
	m state.MapState[string, *tally]
}

func registerTallies(b *Backend) tallies {
	return tallies{
		v: state.Value(b, state.ValueDescriptor[*tally]{Name: "v"}),
		l: state.List(b, state.ListDescriptor[*tally]{Name: "l"}),
		m: state.Map(b, state.MapDescriptor[string, *tally]{Name: "m"}),
	}
}

// initial returns what put writes, in new objects.
func initial() tallyContents {
	return tallyContents{
		V: &tally{Count: 1},
		L: []*tally{{Count: 1}, {Count: 2}},
		M: map[string]*tally{"x": {Count: 1}, "y": {Count: 2}},
	}
}

func (h tallies) put(b *Backend, key int) {
	at(b, key)
	c := initial()
	h.v.Update(c.V)
	h.l.Update(c.L)
	for k, x := range c.M {
		h.m.Put(k, x)
	}
}

// bumpInPlace modifies every value of key in place, through every kind of
// read, and writes it back.
func (h tallies) bumpInPlace(b *Backend, key int) {
	at(b, key)
	v, _ := h.v.Value()
	v.bump("after")
	h.v.Update(v)
	l := h.l.Get()
	for _, x := range l {
		x.bump("after")
	}
	h.l.Update(l)
	x, _ := h.m.Get("x")
	x.bump("after")
	h.m.Put("x", x)
	h.m.Range(func(k string, y *tally) bool {
		if k == "y" {
			y.bump("after")
			h.m.Put(k, y)
		}
		return true
	})
}

type tallyContents struct {
	V *tally
	L []*tally
	M map[string]*tally
}

// show prints c's objects, not their addresses.
func show(c tallyContents) string {
	s := fmt.Sprintf("v=%+v l=[", c.V)
	for _, x := range c.L {
		s += fmt.Sprintf("%+v ", x)
	}
	return s + fmt.Sprintf("] m=[x:%+v y:%+v]", c.M["x"], c.M["y"])
}

func (h tallies) read(b *Backend, key int) tallyContents {
	at(b, key)
	v, _ := h.v.Value()
	return tallyContents{v, h.l.Get(), collect(h.m)}
}

// TestReadDuringSnapshotCopies takes the synchronous part of a snapshot,
// modifies values read from state in place and writes them back, then
// writes the snapshot: it must hold the values as of Snapshot, for every
// kind of state and read. With values stored by reference and no copy,
// the snapshot would encode the modified objects.
func TestReadDuringSnapshotCopies(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	h := registerTallies(b)
	h.put(b, 1)
	before := h.read(b, 1)
	s := snapshotOf(t, b)
	h.bumpInPlace(b, 1)
	h.bumpInPlace(b, 1) // a second read of a copy does not copy again
	r := restored(t, nil, write(t, s))
	if got := registerTallies(r).read(r, 1); !reflect.DeepEqual(got, initial()) {
		t.Fatalf("restored %s, want the values as of Snapshot", show(got))
	}
	if !reflect.DeepEqual(before, initial()) {
		t.Fatalf("objects read before Snapshot were modified: %s", show(before))
	}
	live := h.read(b, 1)
	if live.V.Count != 3 || live.L[1].Count != 4 || live.M["x"].Count != 3 || live.M["y"].Count != 4 {
		t.Fatalf("live state lost in-place updates: %s", show(live))
	}
}

// TestReadCopiesOnlyWhileSnapshotInFlight checks that a read hands out the
// stored object itself unless a snapshot in flight may encode it, and then
// copies it once.
func TestReadCopiesOnlyWhileSnapshotInFlight(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	h := registerTallies(b)
	h.put(b, 1)
	stored := h.read(b, 1)
	same := func(when string, want bool) {
		t.Helper()
		got := h.read(b, 1)
		if (got.V == stored.V) != want || (got.L[0] == stored.L[0]) != want || (got.M["x"] == stored.M["x"]) != want {
			t.Fatalf("%s: read the stored objects = %v, want %v", when, !want, want)
		}
	}
	same("no snapshot", true)
	write(t, snapshotOf(t, b))
	same("after a snapshot was written", true)

	s := snapshotOf(t, b)
	same("snapshot in flight", false)
	stored = h.read(b, 1)
	same("second read in flight", true)
	write(t, s)
	same("after the write", true)
}

func snapshotOf(t *testing.T, b *Backend) state.Snapshot {
	t.Helper()
	s, err := b.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestInPlaceUpdatesWhileWriting modifies values in place while Write
// runs on another goroutine: run with -race, which reports the race a
// shared object would be.
func TestInPlaceUpdatesWhileWriting(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	h := registerTallies(b)
	for k := range 200 {
		h.put(b, k)
	}
	s := snapshotOf(t, b)
	done := make(chan []byte)
	go func() { done <- write(t, s) }()
	for k := range 200 {
		h.bumpInPlace(b, k)
	}
	r := restored(t, nil, <-done)
	rh := registerTallies(r)
	for k := range 200 {
		if got := rh.read(r, k); !reflect.DeepEqual(got, initial()) {
			t.Fatalf("key %d: restored %s, want the values as of Snapshot", k, show(got))
		}
	}
}
