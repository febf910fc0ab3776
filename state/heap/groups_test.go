package heap

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/state"
)

// TestGroupsTrackPartialChanges: the changed-key records behind the next
// incremental delta. A key only appended to keeps the length it had at its
// first append (the delta holds the elements from there); a map written
// in some user keys keeps each of them with its last change; a key
// changed wholly stays whole. Deltas without these records would still be
// right, only larger, so no restore test sees them go.
func TestGroupsTrackPartialChanges(t *testing.T) {
	var ver uint64 = 1
	g := newGroups[int](1, &ver, true, true)
	ms := map[string]*ukMap{} // each key's map, which keeps its record
	put := func(k string, e int, uk any, v any, ok bool) {
		if ms[k] == nil {
			ms[k] = &ukMap{}
		}
		g.putUK(0, k, e, ms[k], uk, v, ok, false, 0)
	}
	g.putAppend(0, "list", 1, 5)
	g.putAppend(0, "list", 2, 6) // a later append keeps the first length
	put("map", 1, "u1", "a", true)
	put("map", 2, "u2", "b", true)
	put("map", 3, "u1", "c", true) // a user key's last change is kept
	put("map", 4, "u2", nil, false)
	g.putAppend(0, "whole", 1, 3)
	g.put(0, "whole", 2)             // changed otherwise: whole
	g.putAppend(0, "whole", 3, 9)    // and stays whole
	put("mixed", 1, "u1", "x", true) // user keys of two kinds
	put("mixed", 2, 7, "y", true)
	put("mixed", 3, 8, "z", true)
	dirty, uks := g.takeDirty()
	got := fmt.Sprint(dirty[0].len(), atStr(dirty[0], "list"), atStr(dirty[0], "map"), atStr(dirty[0], "whole"), uks[0].len(), atStr(uks[0], "map").len())
	if want := "4 5 -1 -1 2 2"; got != want {
		t.Fatalf("changed keys, list's record, map's, whole's, partial maps, user keys of map: %s, want %s", got, want)
	}
	if got, want := recordString(atStr(uks[0], "map")), "u1=c u2 removed"; got != want {
		t.Errorf("record of map: %s, want %s", got, want)
	}
	if got, want := recordString(atStr(uks[0], "mixed")), "7=y 8=z u1=x"; got != want {
		t.Errorf("record of mixed: %s, want %s", got, want)
	}
}

// TestGroupsRecordKeptByMap: a key's map keeps its record (ukMap.rec), so
// a write after the key's first finds it without a probe. A capture starts
// new records: a write after it goes to the new record, never to the one
// captured (which a snapshot reads). A whole change (touch) drops the
// record: the writes after it are not recorded, and the dropped record
// lets go of its values. A map of the key without the record finds it by
// the probe and keeps it. forget starts new records too.
func TestGroupsRecordKeptByMap(t *testing.T) {
	var ver uint64 = 1
	g := newGroups[int](1, &ver, true, true)
	m := &ukMap{}
	put := func(uk, v string) { g.putUK(0, "k", 1, m, uk, v, true, false, 0) }
	put("u1", "a")
	put("u2", "b")
	_, uks := g.takeDirty()
	captured := atStr(uks[0], "k")
	put("u1", "c") // after the capture
	if got, want := recordString(captured), "u1=a u2=b"; got != want {
		t.Fatalf("captured record: %s, want %s", got, want)
	}
	_, uks = g.takeDirty()
	if got, want := recordString(atStr(uks[0], "k")), "u1=c"; got != want {
		t.Fatalf("record after the capture: %s, want %s", got, want)
	}
	put("u3", "d")
	dropped := m.rec
	g.touch(0, "k") // whole
	put("u4", "e")
	dirty, uks := g.takeDirty()
	if got := atStr(dirty[0], "k"); got != changedWhole || uks[0].len() != 0 {
		t.Fatalf("key after a whole change: record %d, %d partial maps; want %d, 0", got, uks[0].len(), changedWhole)
	}
	if dropped == nil || !dropped.whole || len(dropped.changes) != 0 {
		t.Fatalf("dropped record %+v: want whole, without changes", dropped)
	}
	put("u5", "f")
	_, _ = g.takeDirty()
	put("u7", "h")
	other := &ukMap{} // a map of the key that does not point to its record: the probe finds it
	g.putUK(0, "k", 1, other, "u8", "i", true, false, 0)
	if other.rec == nil || other.rec != m.rec {
		t.Fatalf("a map of the key without the record: %p, want the key's record %p", other.rec, m.rec)
	}
	g.forget()
	put("u6", "g")
	_, uks = g.takeDirty()
	if got, want := recordString(atStr(uks[0], "k")), "u6=g"; got != want {
		t.Fatalf("record after forget: %s, want %s", got, want)
	}
}

// TestGroupsLogRecordsEveryKeyKind: a logging table's changes, recorded
// from its log, are as recorded at once, for short string keys (held in
// the log as short keys), long ones and keys of other kinds in one group,
// whichever kind comes first in the log and whether the log is recorded
// whole at the capture or in parts as it fills.
func TestGroupsLogRecordsEveryKeyKind(t *testing.T) {
	long := strings.Repeat("k", shortKeyMax+1)
	keys := []any{"short", long, int64(7), "", nil}
	for _, first := range keys {
		for _, logMax := range []int{2, 4096} {
			setVar(t, &maxLogged, logMax)
			var ver uint64 = 1
			logging, direct := newGroups[int](1, &ver, true, true), newGroups[int](1, &ver, true, true)
			logging.logChanges()
			for _, g := range []*groups[int]{&logging, &direct} {
				g.putAppend(0, first, 1, 2)
				for j, k := range keys {
					g.putAppend(0, k, j, 10+j) // the first append's length is kept
					g.putAppend(0, k, j, 20+j)
				}
				for _, k := range []any{"short", long, int64(7)} {
					g.put(0, k, 9) // whole, after appends
				}
				g.put(0, int64(8), 9)
				g.putAppend(0, int64(8), 9, 30) // and stays whole
			}
			got, _ := logging.takeDirty()
			want, _ := direct.takeDirty()
			if g, w := dirtyString(got[0]), dirtyString(want[0]); g != w {
				t.Fatalf("first key %q, log of %d: logged %s, recorded at once %s", first, logMax, g, w)
			}
			if got[0].len() != len(keys)+1 {
				t.Fatalf("first key %q: %d changed keys, want %d", first, got[0].len(), len(keys)+1)
			}
		}
	}
}

// dirtyString is d's keys and how each changed, with the map each is in
// (a short key held as a long one would be captured as removed).
func dirtyString(d changes) string {
	var out []string
	for k, how := range d.w.all() {
		out = append(out, fmt.Sprintf("w %q=%d", k.str(), how))
	}
	for k, how := range d.f {
		out = append(out, fmt.Sprintf("f %q=%d", k.str(), how))
	}
	for k, how := range d.s {
		out = append(out, fmt.Sprintf("s %q=%d", k, how))
	}
	for k, how := range d.a {
		out = append(out, fmt.Sprintf("a %T %v=%d", k, k, how))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// TestUKRecordIndexed: a record past smallRecord changes finds its user
// keys through its index, keeps each key's last change, and keeps its
// keys (not its elements) once released.
func TestUKRecordIndexed(t *testing.T) {
	r := newUKRecord(1, noGen)
	const n = 3 * smallRecord
	for round := range 2 {
		for j := range n {
			r.set(fmt.Sprint("u", j), round*100+j, j%5 != 0, round == 0, 0)
		}
	}
	r.set(int64(7), "int", true, true, 0)
	if r.len() != n+1 || len(r.changes) != n+1 {
		t.Fatalf("len %d, %d changes, want %d", r.len(), len(r.changes), n+1)
	}
	lookup := r.lookupFunc()
	for j := range n {
		c, ok := lookup(userKeyOf(fmt.Sprint("u", j)))
		if !ok || c.ok != (j%5 != 0) || c.ok && c.v != 100+j {
			t.Fatalf("u%d: %+v %v, want value %d (removed: %v)", j, c, ok, 100+j, j%5 == 0)
		}
	}
	if c, ok := lookup(userKeyOf(int64(7))); !ok || c.v != "int" {
		t.Fatalf("int64 key: %+v %v", c, ok)
	}
	r.release()
	keys := 0
	r.eachKey(func(userKey) { keys++ })
	if keys != n+1 || r.len() != n+1 || r.changes != nil {
		t.Fatalf("released: %d keys, len %d, changes %v", keys, r.len(), r.changes)
	}
}

// recordString prints a record's changes sorted: key=value, or key
// removed.
func recordString(r *ukRecord) string {
	var out []string
	for _, c := range r.changes {
		if c.ok {
			out = append(out, fmt.Sprintf("%v=%v", c.uk.boxed(), c.v))
		} else {
			out = append(out, fmt.Sprintf("%v removed", c.uk.boxed()))
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// TestMapRecordsEachUserKeyOnce: a map's record of user-key changes holds
// one change per user key, the last, however often the key is written,
// removed and written again between two captures, and for user keys past
// smallRecord (found by the index) and below it (by a scan) alike.
func TestMapRecordsEachUserKeyOnce(t *testing.T) {
	clock, store := &fakeClock{}, newMemStore("mem://a")
	b := incBackend(t, nil, clock, nil)
	m := state.Map(b, state.MapDescriptor[string, int64]{Name: "m", ValueCodec: state.Int64Codec{}})
	for _, n := range []int{3, 3 * smallRecord} {
		key := fmt.Sprint("key", n)
		at(b, key)
		m.Put("first", 0) // the map exists: later writes change user keys only
		checkpointTo(t, b, store)
		want := map[string]string{}
		for round := range 4 {
			for j := range n {
				uk := fmt.Sprint("u", j)
				switch {
				case round == 2 && j%3 == 0:
					m.Remove(uk)
					want[uk] = "removed"
				default:
					m.Put(uk, int64(10*round+j))
					want[uk] = fmt.Sprint(10*round + j)
				}
			}
		}
		tab := b.tables["m"].(*mapTable)
		r, ok := tab.data.uks[keyGroupOf(key)-tab.b.opts.KeyGroupRange.Start].get(key)
		if !ok {
			t.Fatalf("%d user keys: no record of %s", n, key)
		}
		if len(r.changes) != n {
			t.Errorf("%d user keys: %d changes recorded", n, len(r.changes))
		}
		for _, c := range r.changes {
			got := "removed"
			if c.ok {
				got = fmt.Sprint(c.v)
			}
			if got != want[c.uk.boxed().(string)] {
				t.Errorf("%d user keys: %s recorded as %s, want %s", n, c.uk.boxed(), got, want[c.uk.boxed().(string)])
			}
		}
	}
}

// TestUKRecordFollowsPositions: a record written through positions (the
// live element's at) updates each user key's change in place and makes no
// index; a stale position, or one past the end, falls back to a search
// and still finds the right change; a key re-put after its removal is
// found, not recorded twice.
func TestUKRecordFollowsPositions(t *testing.T) {
	r := newUKRecord(1, noGen)
	const n = 3 * smallRecord
	at := map[string]int{}
	for j := range n {
		uk := fmt.Sprint("u", j)
		at[uk] = r.set(uk, j, true, true, 0)
	}
	for j := range n {
		uk := fmt.Sprint("u", j)
		if got := r.set(uk, 100+j, true, false, at[uk]); got != at[uk] {
			t.Fatalf("%s moved from %d to %d", uk, at[uk], got)
		}
	}
	if r.index.len() != 0 || len(r.changes) != n {
		t.Fatalf("after rewrites through positions: index of %d, %d changes, want none and %d", r.index.len(), len(r.changes), n)
	}
	// A stale position (another key's) and one past the end.
	r.set("u3", 203, true, false, at["u5"])
	r.set("u4", 204, true, false, 10*n)
	at["u1"] = r.set("u1", nil, false, false, at["u1"]) // removed
	r.set("u1", 301, true, true, 0)                     // re-put: no element, so fresh
	want := map[string]string{"u1": "301", "u3": "203", "u4": "204"}
	for j := range n {
		uk := fmt.Sprint("u", j)
		if want[uk] == "" {
			want[uk] = fmt.Sprint(100 + j)
		}
	}
	if len(r.changes) != n {
		t.Fatalf("%d changes, want %d (a key recorded twice)", len(r.changes), n)
	}
	for _, c := range r.changes {
		if got := fmt.Sprint(c.v); !c.ok || got != want[c.uk.boxed().(string)] {
			t.Errorf("%s recorded as %s (ok %v), want %s", c.uk.boxed(), got, c.ok, want[c.uk.boxed().(string)])
		}
	}
}

// TestMapElementsHoldTheirPositions: a map without a TTL written twice in
// a user key between captures finds the key's change through the position
// its element holds, so its record makes no index (the search and the
// index were 6 % of Nexmark q16's CPU at 10 M events).
func TestMapElementsHoldTheirPositions(t *testing.T) {
	clock, store := &fakeClock{}, newMemStore("mem://a")
	b := incBackend(t, nil, clock, nil)
	m := state.Map(b, state.MapDescriptor[string, int64]{Name: "m", ValueCodec: state.Int64Codec{}})
	const key, n = "k", 4 * smallRecord
	at(b, key)
	m.Put("first", 0)
	checkpointTo(t, b, store)
	for round := range 3 {
		for j := range n {
			m.Put(fmt.Sprint("u", j), int64(10*round+j))
		}
	}
	tab := b.tables["m"].(*mapTable)
	r, ok := tab.data.uks[keyGroupOf(key)-tab.b.opts.KeyGroupRange.Start].get(key)
	if !ok {
		t.Fatal("no record of the map's user keys")
	}
	if r.index.len() != 0 || len(r.changes) != n {
		t.Fatalf("index of %d, %d changes; want no index and %d changes", r.index.len(), len(r.changes), n)
	}
	for j, c := range r.changes {
		if c.uk.boxed() != fmt.Sprint("u", j) || c.v != int64(20+j) {
			t.Fatalf("change %d: %v=%v, want u%d=%d", j, c.uk.boxed(), c.v, j, 20+j)
		}
	}
}
