package heap

import (
	"testing"

	"github.com/weirstream/weir/state"
)

// TestValuePutBackStoresWhatChanged: a value read, changed in place and
// put back stays (Put may skip storing the entry it already holds), and
// every way the entry can differ from the one read makes Put store it:
// the key's value cleared between, another key current, a capture
// between (whose snapshot keeps the value as it was, while the live
// state gets the change).
func TestValuePutBackStoresWhatChanged(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	v := state.Value(b, state.ValueDescriptor[*tally]{Name: "v"})
	count := func(key int) int {
		t.Helper()
		at(b, key)
		x, ok := v.Value()
		if !ok {
			return -1
		}
		return x.Count
	}
	at(b, 1)
	v.Update(&tally{Count: 1})
	for range 3 {
		x, _ := v.Value()
		x.bump("in place")
		v.Update(x)
	}
	if c := count(1); c != 4 {
		t.Fatalf("after three bumps put back, count %d, want 4", c)
	}

	x, _ := v.Value()
	v.Clear()
	v.Update(x) // cleared between the read and the put
	if c := count(1); c != 4 {
		t.Fatalf("put back after a clear: count %d, want 4", c)
	}

	other := 2 // a key of key 1's group: only the key tells them apart
	for keyGroupOf(other) != keyGroupOf(1) {
		other++
	}
	x, _ = v.Value()
	at(b, other)
	v.Update(x) // the same object, under another key
	if c1, c2 := count(1), count(other); c1 != 4 || c2 != 4 {
		t.Fatalf("put under key %d: counts %d and %d, want 4 and 4", other, c1, c2)
	}

	at(b, 3)
	v.Update(&tally{Count: 10})
	x, _ = v.Value()
	v.Update(x)
	s, err := b.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	x, _ = v.Value() // a copy: the snapshot holds the stored one
	x.bump("after the capture")
	v.Update(x)
	blob := write(t, s)
	if c := count(3); c != 11 {
		t.Fatalf("after the capture, count %d, want 11", c)
	}
	r := newSubtask(t, 1, 0, nil)
	if err := r.Restore([][]byte{blob}); err != nil {
		t.Fatal(err)
	}
	rv := state.Value(r, state.ValueDescriptor[*tally]{Name: "v"})
	at(r, 3)
	if y, ok := rv.Value(); !ok || y.Count != 10 {
		t.Fatalf("the snapshot holds %+v, want count 10", y)
	}
}

// TestIncrementalValuePutBackAfterCapture: a value read after a
// checkpoint was written (no snapshot in flight: the read is not a copy),
// changed in place and put back is the entry as read, but changed since
// the capture: Put must record it, or the next delta leaves it out.
func TestIncrementalValuePutBackAfterCapture(t *testing.T) {
	clock, store := &fakeClock{}, newMemStore("mem://a")
	b := incBackend(t, nil, clock, nil)
	vd := state.ValueDescriptor[*tally]{Name: "v"}
	v := state.Value(b, vd)
	at(b, 1)
	v.Update(&tally{Count: 1})
	checkpointTo(t, b, store) // a base
	x, _ := v.Value()
	x.bump("after the base")
	v.Update(x)
	man, _ := checkpointTo(t, b, store) // a delta
	r := incBackend(t, store, clock, man)
	at(r, 1)
	if y, ok := state.Value(r, vd).Value(); !ok || y.Count != 2 {
		t.Fatalf("restored %+v, want count 2", y)
	}
}

// TestValuePutBackWithTTL: with a TTL a sweep may remove the entry
// between a read and the put back, so Put stores it even when the clock
// (which may step back) gives it the timestamp it had.
func TestValuePutBackWithTTL(t *testing.T) {
	clock := &fakeClock{ms: 100}
	b := newSubtask(t, 1, 0, clock)
	v := state.Value(b, state.ValueDescriptor[*tally]{Name: "v", TTL: ttlOf(10, state.OnCreateAndWrite)})
	at(b, 1)
	v.Update(&tally{Count: 1})
	x, _ := v.Value()
	clock.ms = 200
	if n := b.CleanupExpired(10); n != 1 {
		t.Fatalf("CleanupExpired removed %d, want the one value", n)
	}
	clock.ms = 100 // a wall clock stepped back
	at(b, 1)
	v.Update(x)
	if y, ok := v.Value(); !ok || y.Count != 1 {
		t.Fatalf("after the put back, %+v (%v), want count 1", y, ok)
	}
}

// TestValuePutBackOtherGroup: the same key under two key groups (a
// routing error, but Put must not hide it) is two entries.
func TestValuePutBackOtherGroup(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	v := state.Value(b, state.ValueDescriptor[*tally]{Name: "v"})
	b.SetCurrentKey(1, 3)
	v.Update(&tally{Count: 1})
	x, _ := v.Value()
	b.SetCurrentKey(1, 4)
	v.Update(x)
	if y, ok := v.Value(); !ok || y.Count != 1 {
		t.Fatalf("under key group 4: %+v (%v), want count 1", y, ok)
	}
}
