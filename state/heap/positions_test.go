package heap

import (
	"fmt"
	"maps"
	"testing"

	"github.com/weirstream/weir/state"
)

// rvCheckPositions: in a partial record of a map without TTL, each user key
// written has a live element of the current version whose ts is its
// position+1, and every element of the current version names its own change.
func rvCheckPositions(t *testing.T, b *Backend) {
	t.Helper()
	for name, tb := range b.tables {
		mt := tb.(*mapTable)
		if mt.ttl.Enabled() {
			continue
		}
		for i, uks := range mt.data.uks {
			for k, r := range uks.all() {
				e, _ := mt.data.get(i, k)
				for j, c := range r.changes {
					if !c.ok {
						continue
					}
					el, has := e.m.getKey(c.uk)
					if !has || el.ver != b.version || el.ts != int64(j+1) {
						t.Fatalf("%s: key %v: user key %v recorded at %d; live %v, ver %d (backend %d), ts %d",
							name, k, c.uk.boxed(), j+1, has, el.ver, b.version, el.ts)
					}
				}
				for uk, el := range e.m.all() {
					if el.ver == b.version && (el.ts < 1 || el.ts > int64(len(r.changes)) || r.changes[el.ts-1].uk.boxed() != uk) {
						t.Fatalf("%s: key %v: user key %v written since the capture holds position %d of %d",
							name, k, uk, el.ts, len(r.changes))
					}
				}
			}
		}
	}
}

func takeSnap(t *testing.T, b *Backend) state.Snapshot {
	t.Helper()
	b.SnapshotFor(true)
	s, err := b.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMapStalePositionsAfterPrivateAll: Range with a snapshot in flight
// leaves elements of the current version holding positions from before
// the capture; none is taken, and late, multi-capture deltas restore right.
func TestMapStalePositionsAfterPrivateAll(t *testing.T) {
	clock, store := &fakeClock{ms: 1}, newMemStore("mem://s")
	b := incBackend(t, nil, clock, nil)
	desc := state.MapDescriptor[string, []byte]{Name: "m", KeyCodec: state.StringCodec{}, ValueCodec: state.BytesCodec{}}
	m := state.Map(b, desc)
	live := map[string]string{}
	put := func(uk, v string) { m.Put(uk, []byte(v)); live[uk] = v; rvCheckPositions(t, b) }
	remove := func(uk string) { m.Remove(uk); delete(live, uk); rvCheckPositions(t, b) }
	at(b, "k")
	put("first", "0")
	checkpointTo(t, b, store)
	for j := range 12 {
		put(fmt.Sprint("u", j), fmt.Sprint("a", j))
	}
	s1, m1 := takeSnap(t, b), maps.Clone(live)
	m.Range(func(string, []byte) bool { return true }) // privateAll copies all
	tab := b.tables["m"].(*mapTable)
	gi := keyGroupOf("k") - tab.b.opts.KeyGroupRange.Start
	e, _ := tab.data.get(gi, "k")
	stale := 0
	for _, el := range e.m.all() {
		if el.ver == b.version && el.ts != 0 {
			stale++
		}
	}
	if stale != 12 {
		t.Fatalf("%d stale positions at the current version, want 12", stale)
	}
	put("u3", "b3")
	put("u13", "b13")
	s2, m2 := takeSnap(t, b), maps.Clone(live)
	put("u5", "c5")
	put("u0", "c0") // held 1 from before; u5 is at 1 now
	put("u7", "c7")
	put("u0", "d0")
	remove("u7")
	put("u7", "d7")
	for j := 8; j < 20; j++ {
		put(fmt.Sprint("u", j), fmt.Sprint("e", j))
	}
	remove("u9")
	put("u5", "f5")
	put("u9", "f9")
	remove("first")
	if r, _ := tab.data.uks[gi].get("k"); r == nil || r.index.len() == 0 {
		t.Fatal("want a record with an index")
	}
	rvCheckRecords(t, b)
	s3, m3 := takeSnap(t, b), maps.Clone(live)
	var mans [][]byte
	var want []map[string]string
	for _, w := range []struct {
		s state.Snapshot
		m map[string]string
	}{{s2, m2}, {s3, m3}, {s1, m1}} {
		if man, _, err := w.s.(state.IncrementalSnapshot).WriteFiles(store); err == nil {
			mans, want = append(mans, man), append(want, w.m)
		}
	}
	man, _ := checkpointTo(t, b, store)
	mans, want = append(mans, man), append(want, maps.Clone(live))
	if len(mans) < 3 {
		t.Fatalf("%d checkpoints written", len(mans))
	}
	for j, man := range mans {
		rb := incBackend(t, store, clock, man)
		at(rb, "k")
		got := map[string]string{}
		state.Map(rb, desc).Range(func(uk string, v []byte) bool { got[uk] = string(v); return true })
		if !maps.Equal(got, want[j]) {
			t.Fatalf("checkpoint %d restores %v, want %v", j, got, want[j])
		}
	}
}
