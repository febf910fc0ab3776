package heap

import (
	"reflect"
	"testing"
	"time"

	"github.com/weirstream/weir/state"
)

func ttlOf(ms int, update state.TTLUpdateType) *state.TTLConfig {
	return &state.TTLConfig{TTL: time.Duration(ms) * time.Millisecond, UpdateType: update}
}

func TestValueTTL(t *testing.T) {
	cases := []struct {
		update  state.TTLUpdateType
		readAt  int64 // a read at this time
		visible []int64
		gone    int64
	}{
		// Written at 0 with a 10ms TTL: expires at 10 regardless of reads.
		{state.OnCreateAndWrite, 9, []int64{9}, 10},
		// The read at 9 refreshes it (expiry 19), the read at 18 again: expires at 28.
		{state.OnReadAndWrite, 9, []int64{18}, 28},
	}
	for _, c := range cases {
		clock := &fakeClock{}
		b := newSubtask(t, 1, 0, clock)
		v := state.Value(b, state.ValueDescriptor[string]{Name: "v", TTL: ttlOf(10, c.update)})
		at(b, "k")
		v.Update("x")
		clock.ms = c.readAt
		if _, ok := v.Value(); !ok {
			t.Fatalf("%v: value gone at %d", c.update, c.readAt)
		}
		for _, ms := range c.visible {
			clock.ms = ms
			if got, ok := v.Value(); !ok || got != "x" {
				t.Fatalf("%v: value gone at %d", c.update, ms)
			}
		}
		clock.ms = c.gone
		if _, ok := v.Value(); ok {
			t.Fatalf("%v: expired value returned at %d", c.update, c.gone)
		}
		if b.tables["v"].(*valueTable).data.maps[b.idx].len() != 0 {
			t.Fatalf("%v: expired value not removed on read", c.update)
		}
	}
}

func TestWriteRefreshesTTL(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	v := state.Value(b, state.ValueDescriptor[int]{Name: "v", TTL: ttlOf(10, state.OnCreateAndWrite)})
	at(b, 1)
	v.Update(1)
	clock.ms = 8
	v.Update(2)
	clock.ms = 17
	if got, ok := v.Value(); !ok || got != 2 {
		t.Fatalf("Value at 17 = %d, %v; want 2 (written at 8)", got, ok)
	}
}

func TestListTTLPerElement(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	l := state.List(b, state.ListDescriptor[string]{Name: "l", TTL: ttlOf(10, state.OnCreateAndWrite)})
	at(b, "k")
	l.Add("a")
	clock.ms = 5
	l.Add("b")
	clock.ms = 10
	if got := l.Get(); !reflect.DeepEqual(got, []string{"b"}) {
		t.Fatalf("Get at 10 = %v, want [b]", got)
	}
	clock.ms = 15
	if got, keys := l.Get(), b.Keys("l"); got != nil || keys != nil {
		t.Fatalf("at 15: Get = %v, Keys = %v; want nothing", got, keys)
	}
}

func TestListTTLOnRead(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	l := state.List(b, state.ListDescriptor[int]{Name: "l", TTL: ttlOf(10, state.OnReadAndWrite)})
	at(b, "k")
	l.AddAll([]int{1, 2})
	clock.ms = 9
	l.Get()
	clock.ms = 18
	if got := l.Get(); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Fatalf("Get at 18 = %v; the read at 9 should have refreshed both", got)
	}
}

func TestMapTTLPerEntry(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	m := state.Map(b, state.MapDescriptor[string, int]{Name: "m", TTL: ttlOf(10, state.OnCreateAndWrite)})
	at(b, "k")
	m.Put("x", 1)
	clock.ms = 5
	m.Put("y", 2)
	clock.ms = 12
	if _, ok := m.Get("x"); ok {
		t.Fatal("expired x returned")
	}
	if !m.Contains("y") || m.IsEmpty() {
		t.Fatal("y should be live at 12")
	}
	if got := collect(m); !reflect.DeepEqual(got, map[string]int{"y": 2}) {
		t.Fatalf("Range at 12 = %v", got)
	}
	clock.ms = 15
	if !m.IsEmpty() || b.Keys("m") != nil {
		t.Fatal("map should be empty at 15")
	}
}

func TestMapTTLOnReadRange(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	m := state.Map(b, state.MapDescriptor[int, int]{Name: "m", TTL: ttlOf(10, state.OnReadAndWrite)})
	at(b, "k")
	m.Put(1, 1)
	m.Put(2, 2)
	clock.ms = 9
	collect(m) // refreshes both
	clock.ms = 15
	m.Get(1) // refreshes 1 only
	clock.ms = 19
	if got := collect(m); !reflect.DeepEqual(got, map[int]int{1: 1}) {
		t.Fatalf("Range at 19 = %v, want {1:1}", got)
	}
}

func TestReducingAndAggregatingTTL(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	cfg := ttlOf(10, state.OnCreateAndWrite)
	r := state.Reducing(b, state.ReducingDescriptor[int]{Name: "r", ReduceFunc: func(a, b int) int { return a + b }, TTL: cfg})
	a := state.Aggregating(b, state.AggregatingDescriptor[int64, *avgAcc, float64]{Name: "a", AggregateFunc: avg{}, TTL: cfg})
	at(b, "k")
	r.Add(1)
	a.Add(4)
	clock.ms = 10
	r.Add(2) // the old sum expired: starts afresh
	a.Add(8)
	if got, _ := r.Get(); got != 2 {
		t.Fatalf("reducing = %d, want 2", got)
	}
	if got, _ := a.Get(); got != 8 {
		t.Fatalf("aggregating = %v, want 8", got)
	}
}

func TestSnapshotDropsExpiredAndKeepsTimestamps(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	v := state.Value(b, state.ValueDescriptor[string]{Name: "v", TTL: ttlOf(10, state.OnCreateAndWrite)})
	at(b, "old")
	v.Update("o")
	clock.ms = 5
	at(b, "new")
	v.Update("n")
	blob := snapshotBlob(t, b, 12)

	clock2 := &fakeClock{ms: 12}
	r := restored(t, clock2, blob)
	if keys := r.Keys("v"); !reflect.DeepEqual(keys, []any{"new"}) {
		t.Fatalf("restored pending keys = %v, want [new]", keys)
	}
	rv := state.Value(r, state.ValueDescriptor[string]{Name: "v", TTL: ttlOf(10, state.OnCreateAndWrite)})
	at(r, "new")
	if got, ok := rv.Value(); !ok || got != "n" {
		t.Fatalf("restored value = %q, %v", got, ok)
	}
	clock2.ms = 15 // written at 5: the restored timestamp makes it expire here
	if _, ok := rv.Value(); ok {
		t.Fatal("restored value outlived its TTL")
	}
}

func TestTTLAddedOnRestoreStartsNow(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	v := state.Value(b, state.ValueDescriptor[int]{Name: "v"})
	at(b, 1)
	v.Update(1)
	clock := &fakeClock{ms: 1000}
	r := restored(t, clock, snapshotBlob(t, b, 0))
	rv := state.Value(r, state.ValueDescriptor[int]{Name: "v", TTL: ttlOf(10, state.OnCreateAndWrite)})
	at(r, 1)
	clock.ms = 1009
	if _, ok := rv.Value(); !ok {
		t.Fatal("value restored into a TTL state expired before now+TTL")
	}
	clock.ms = 1010
	if _, ok := rv.Value(); ok {
		t.Fatal("value restored into a TTL state never expires")
	}
}

func TestCleanupExpired(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	cfg := ttlOf(10, state.OnCreateAndWrite)
	v := state.Value(b, state.ValueDescriptor[int]{Name: "v", TTL: cfg})
	l := state.List(b, state.ListDescriptor[int]{Name: "l", TTL: cfg})
	m := state.Map(b, state.MapDescriptor[int, int]{Name: "m", TTL: cfg})
	state.Value(b, state.ValueDescriptor[int]{Name: "no-ttl"})
	for k := range 100 {
		at(b, k)
		v.Update(k)
		l.Add(k)
		m.Put(k, k)
	}
	clock.ms = 5
	for k := range 50 { // refresh half the list and map entries
		at(b, k)
		l.Add(k)
		m.Put(-k-1, k)
	}
	clock.ms = 10
	if n := b.CleanupExpired(30); n != 30 {
		t.Fatalf("first CleanupExpired(30) removed %d, want 30 (one per key)", n)
	}
	total := 30
	for range 100 {
		total += b.CleanupExpired(7)
	}
	// 100 values + 100 list elements + 100 map entries expired at 10.
	if total != 300 {
		t.Fatalf("removed %d entries in total, want 300", total)
	}
	if got := stored(b, "v") + stored(b, "l") + stored(b, "m"); got != 100 {
		t.Fatalf("%d keys left stored, want 100 (50 lists, 50 maps)", got)
	}
	if n := b.CleanupExpired(1000); n != 0 {
		t.Fatalf("nothing left to clean, removed %d", n)
	}
}

// stored counts the keys physically present in a state, expired or not.
func stored(b *Backend, name string) int {
	n := 0
	for i := range b.groupCount() {
		n += len(b.tables[name].groupKeys(i))
	}
	return n
}

func TestCleanupExpiredWithoutTTLStates(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	if n := b.CleanupExpired(10); n != 0 {
		t.Fatalf("removed %d", n)
	}
	state.Value(b, state.ValueDescriptor[int]{Name: "v", TTL: ttlOf(10, state.OnCreateAndWrite)})
	if n := b.CleanupExpired(10); n != 0 { // a TTL state with no keys: one round, then stop
		t.Fatalf("removed %d", n)
	}
}

// TestSnapshotOfGroupsPartlyExpired: Write leaves room for a key group's
// entry count as if all its entries were live, and closes it when some
// expired. Key group g holds 150 keys written at 0 and 5 at 50 (room for
// 155 takes 2 bytes, 5 live take 1); key group h holds 3 keys written at 0
// only. At 120 with a TTL of 100 the blob holds exactly the 5 keys.
func TestSnapshotOfGroupsPartlyExpired(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	desc := state.ValueDescriptor[int]{Name: "v", TTL: ttlOf(100, state.OnCreateAndWrite)}
	v := state.Value(b, desc)
	g, h := keyGroupOf(0), -1
	var old, fresh []int
	for k := 1; len(old) < 150 || len(fresh) < 5 || h < 0; k++ {
		switch kg := keyGroupOf(k); {
		case kg == g && len(old) < 150:
			old = append(old, k)
		case kg == g && len(fresh) < 5:
			fresh = append(fresh, k)
		case kg != g && h < 0:
			h = kg
		}
	}
	put := func(keys []int) {
		for _, k := range keys {
			at(b, k)
			v.Update(-k)
		}
	}
	put(old)
	for k, n := 0, 0; n < 3; k++ {
		if keyGroupOf(k) == h {
			put([]int{k})
			n++
		}
	}
	clock.ms = 50
	put(fresh)
	r := restored(t, &fakeClock{ms: 120}, snapshotBlob(t, b, 120))
	rv := state.Value(r, desc)
	got := map[int]int{}
	for _, k := range r.Keys("v") {
		at(r, k)
		got[k.(int)], _ = rv.Value()
	}
	want := map[int]int{}
	for _, k := range fresh {
		want[k] = -k
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %v, want %v", got, want)
	}
}
