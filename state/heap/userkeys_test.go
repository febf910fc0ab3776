package heap

import (
	"encoding/gob"
	"fmt"
	"maps"
	"testing"

	"github.com/weirstream/weir/state"
)

// namedKey is a user key of a named string type: not a string to a type
// switch, so a record boxes it, and "x" and namedKey("x") are two keys.
type namedKey string

func init() { gob.Register(namedKey("")) }

// TestIncrementalMapUserKeysOfAnyKind: a map whose user keys are of any
// type — nil, "", strings, a named string type, int64s — keeps them apart through deltas of
// user-key changes: a delta of one capture's record, and one uniting two
// captures' records (the first capture dropped unwritten), indexed (past
// smallRecord changes, a removal among them). A record holds a string key
// unboxed (userKey), so a nil key must not read as "" and an int64 key
// must not read as a string.
func TestIncrementalMapUserKeysOfAnyKind(t *testing.T) {
	clock, store := &fakeClock{}, newMemStore("mem://a")
	desc := state.MapDescriptor[any, int64]{Name: "m", ValueCodec: state.Int64Codec{}}
	b := incBackend(t, nil, clock, nil)
	m := state.Map(b, desc)
	at(b, "k")
	want := map[any]int64{}
	put := func(uk any, v int64) { m.Put(uk, v); want[uk] = v }
	capture := func() state.Snapshot {
		t.Helper()
		b.SnapshotFor(true)
		s, err := b.Snapshot(clock.ms)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	delta := func() state.Snapshot {
		t.Helper()
		s := capture()
		if !s.(*incrementalSnapshot).delta {
			t.Fatal("a checkpoint after the base captured in full")
		}
		return s
	}
	check := func(man []byte, what string) {
		t.Helper()
		b2 := incBackend(t, store, clock, man)
		m2 := state.Map(b2, desc)
		at(b2, "k")
		got := map[any]int64{}
		m2.Range(func(uk any, v int64) bool { got[uk] = v; return true })
		if !maps.Equal(got, want) {
			t.Fatalf("%s: restored %v, want %v", what, got, want)
		}
	}

	put("base", 0)
	put(int64(5), 0)
	writeTo(t, capture(), store) // the base
	put(nil, 1)
	put("", 2)
	put(int64(0), 3)
	put("0", 4)
	put(namedKey("0"), 40)
	put(namedKey(""), 41)
	man, _ := writeTo(t, delta(), store)
	check(man, "a delta of one record")

	put(nil, 5)
	for j := range 2 * smallRecord {
		put(fmt.Sprint("u", j), int64(j))
	}
	m.Remove("base") // a removal: the next write of a key searches, through the index
	delete(want, "base")
	put(int64(0), 6)
	put("", 7)
	capture() // dropped: its checkpoint failed before the write
	put(nil, 8)
	put(int64(1), 9)
	for j := range 2 * smallRecord {
		put(fmt.Sprint("v", j), int64(j))
		put(namedKey(fmt.Sprint("v", j)), int64(100+j))
	}
	m.Remove(namedKey("v5"))
	delete(want, namedKey("v5"))
	m.Remove(int64(5))
	delete(want, int64(5))
	for j, uk := range []any{nil, int64(1), "v3", namedKey("v3"), namedKey("")} { // each found again through the index
		m.Remove(uk)
		put(uk, int64(10+j))
	}
	recordedOnce(t, b, "m", "k")
	man, _ = writeTo(t, delta(), store)
	check(man, "a delta uniting two records")
}

// recordedOnce fails unless the record of map state name's key k holds
// each user key once.
func recordedOnce(t *testing.T, b *Backend, name string, k any) {
	t.Helper()
	tab := b.tables[name].(*mapTable)
	r, ok := tab.data.uks[keyGroupOf(k)-tab.b.opts.KeyGroupRange.Start].get(k)
	if !ok {
		t.Fatalf("no record of %s's user keys", name)
	}
	seen := map[userKey]bool{}
	for _, c := range r.changes {
		if seen[c.uk] {
			t.Fatalf("user key %#v recorded twice", c.uk.boxed())
		}
		seen[c.uk] = true
	}
	if r.index.len() == 0 {
		t.Fatal("the record made no index")
	}
}
