package heap

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weirstream/weir/state"
)

// TestUKMapActsAsAMap: random sets, deletes and reads of short and long
// string user keys and other ones leave a ukMap holding what a Go map
// does, whether its one user key is inline or not; a clone taken on the
// way changes with neither; each iterator, the encoding and a sample
// and yield what it holds.
func TestUKMapActsAsAMap(t *testing.T) {
	keys := []any{"", "a", "b", strings.Repeat("x", shortKeyMax), strings.Repeat("x", shortKeyMax+1), 7, int64(7)}
	rng := rand.New(rand.NewPCG(1, 2))
	inline := 0
	for round := range 2000 {
		m, want := &ukMap{}, map[any]elem{}
		var c *ukMap
		var cwant map[any]elem
		for op := range rng.IntN(8) {
			k := keys[rng.IntN(len(keys))]
			if round%2 == 0 {
				k = keys[rng.IntN(3)] // short strings alone: inline or spilled
			}
			switch rng.IntN(3) {
			case 0, 1:
				el := elem{v: op, ts: int64(round), ver: uint64(op)}
				m.set(k, el)
				want[k] = el
			default:
				m.del(k)
				delete(want, k)
			}
			if op == 2 {
				c, cwant = m.clone(), maps.Clone(want)
			}
		}
		if m.has {
			inline++
		}
		checkUKMap(t, m, want)
		if c != nil {
			checkUKMap(t, c, cwant)
		}
	}
	if inline == 0 {
		t.Fatal("no map held its user key inline")
	}
}

func checkUKMap(t *testing.T, m *ukMap, want map[any]elem) {
	t.Helper()
	if m.has && m.w.len()+m.km.len() > 0 {
		t.Fatalf("inline user key beside %d in the tables", m.w.len()+m.km.len())
	}
	if m.len() != len(want) {
		t.Fatalf("len %d, want %d", m.len(), len(want))
	}
	for k, el := range want {
		if got, ok := m.get(k); !ok || got != el {
			t.Fatalf("get %q: %v, %v; want %v", k, got, ok, el)
		}
		if s, ok := k.(string); ok {
			if got, ok := m.getKey(userKey{s: s}); !ok || got != el {
				t.Fatalf("getKey %q: %v, %v; want %v", k, got, ok, el)
			}
		}
	}
	for _, k := range []any{"a", "b", "", "zz"} {
		_, held := want[k]
		if _, ok := m.getString(k.(string)); ok != held {
			t.Fatalf("getString %q: %v, want %v", k, ok, held)
		}
	}
	if got := maps.Collect(m.all()); !maps.Equal(got, want) {
		t.Fatalf("all yields %v, want %v", got, want)
	}
	n := 0
	for el := range m.values() {
		n++
		if el.ts < 0 {
			t.Fatal("unreachable")
		}
	}
	enc := countEncoded(t, m.encoded(&writer{keyCodec: state.AnyCodec{}}), want)
	sampled := 0
	m.sample(len(want), func(k any, el elem) bool {
		if want[k] != el {
			t.Fatalf("sampled %q with %v, want %v", k, el, want[k])
		}
		sampled++
		return true
	})
	if n != len(want) || enc != len(want) || sampled != len(want) {
		t.Fatalf("values %d, encoded %d, sampled %d; want %d", n, enc, sampled, len(want))
	}
}

// TestUKMapHoldsOneShortKeyInline: one short string user key is held
// without a table, replaced in place; a second one, or a long one, moves
// it to the tables.
func TestUKMapHoldsOneShortKeyInline(t *testing.T) {
	m := &ukMap{}
	m.set("w1", elem{v: 1})
	m.set("w1", elem{v: 2})
	if !m.has || m.w.slots != nil || m.km.w != nil || m.km.f != nil || m.len() != 1 {
		t.Fatalf("one short key: inline %v, table %v, len %d", m.has, m.w.slots != nil || m.km.w != nil || m.km.f != nil, m.len())
	}
	m.set("w2", elem{v: 3})
	if m.has || m.w.len() != 2 || m.km.w != nil {
		t.Fatalf("two keys: inline %v, %d in the table of word keys", m.has, m.w.len())
	}
	s := &ukMap{}
	s.set(strings.Repeat("s", wordKeyMax+2), elem{v: 1})
	s.set("s2", elem{v: 2})
	if s.has || len(s.km.f) != 1 || s.w.len() != 1 {
		t.Fatalf("a short key spilled: inline %v, %d short, %d word keys", s.has, len(s.km.f), s.w.len())
	}
	if e, ok := s.get(strings.Repeat("s", wordKeyMax+2)); !ok || e.v != 1 {
		t.Fatalf("the spilled short key reads %v, %v", e.v, ok)
	}
	// words of 8 bytes (one ending in 2); 8 bytes held in a slot (they read as a 7-byte key's word)
	for _, k8 := range []string{"12345678", "abcdefg\x02", "1234567\x07"} {
		m8 := &ukMap{}
		m8.set(k8, elem{v: 1})
		m8.set("x", elem{v: 2})
		words, slots := 2, 0
		if k8[7] == wordKeyMax {
			words, slots = 1, 1
		}
		if m8.has || m8.w.len() != words || len(m8.km.f) != slots {
			t.Fatalf("%q spilled: inline %v, %d word keys, %d short; want %d, %d", k8, m8.has, m8.w.len(), len(m8.km.f), words, slots)
		}
		if e, ok := m8.get(k8); !ok || e.v != 1 {
			t.Fatalf("the spilled key %q reads %v, %v", k8, e.v, ok)
		}
	}
	l := &ukMap{}
	l.set(strings.Repeat("x", shortKeyMax+1), elem{v: 1})
	if l.has {
		t.Fatal("a long key held inline")
	}
	allocs := testing.AllocsPerRun(100, func() {
		n := &ukMap{}
		n.setString("w1", elem{v: 1})
		if n.len() != 1 {
			t.Fatal("lost")
		}
	})
	if allocs > 1 {
		t.Fatalf("%.0f allocations for a map of one short key, want 1", allocs)
	}
}

// MapState.Range meets every user key once though its callback puts new
// ones (state.MapTable.Range leaves only those unspecified), word keys
// held in the map's wordMap among them.
func TestMapRangeThatPutsMeetsEveryOtherKey(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	ms := state.Map(b, state.MapDescriptor[string, int64]{Name: "m", KeyCodec: state.StringCodec{}, ValueCodec: state.Int64Codec{}})
	for trial := range 50 {
		at(b, fmt.Sprint("k", trial))
		held := 1 + trial*3
		for i := range held {
			ms.Put(fmt.Sprint("a", i), int64(i))
		}
		met, added := map[string]int{}, 0
		ms.Range(func(uk string, _ int64) bool {
			met[uk]++
			if added < trial {
				ms.Put(fmt.Sprint("b", added), 0)
				added++
			}
			return true
		})
		for i := range held {
			if uk := fmt.Sprint("a", i); met[uk] != 1 {
				t.Fatalf("trial %d: %s met %d times", trial, uk, met[uk])
			}
		}
	}
}
