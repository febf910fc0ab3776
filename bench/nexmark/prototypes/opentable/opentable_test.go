//go:build prototype

// Package opentable measures, apart from the engine, what a state table
// with one cache line per entry would buy over Go's map: random hits in
// 4 M (and 100 K) keys of 24 bytes, dealt to 128 tables as key groups
// hold them (bench/nexmark/README.md, twenty-eighth session). Not used by
// Weir. Run: go test -tags prototype -bench . ./bench/nexmark/prototypes/opentable/
package opentable

import (
	"encoding/binary"
	"math/bits"
	"testing"
)

type key [24]byte

// entry is the size of the heap backend's list entry (placedList).
type entry struct {
	head uint64
	n    int
	ver  uint64
	p    *int
}

// slot is one cache line: a key, whether it is used, its entry.
type slot struct {
	k    key
	used bool
	e    entry
}

// table is open addressing with linear probing, at most 3/4 full.
type table struct {
	s    []slot
	mask uint64
	n    int
}

func hash(k *key) uint64 {
	a := binary.LittleEndian.Uint64(k[0:])
	b := binary.LittleEndian.Uint64(k[8:])
	c := binary.LittleEndian.Uint64(k[16:])
	h := a*0x9E3779B97F4A7C15 ^ bits.RotateLeft64(b*0xC2B2AE3D27D4EB4F, 31) ^ bits.RotateLeft64(c*0x165667B19E3779F9, 17)
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	return h ^ h>>32
}

func newTable(slots int) *table { return &table{s: make([]slot, slots), mask: uint64(slots - 1)} }

func (t *table) get(k *key) (entry, bool) {
	for i := hash(k) & t.mask; ; i = (i + 1) & t.mask {
		s := &t.s[i]
		if !s.used {
			return entry{}, false
		}
		if s.k == *k {
			return s.e, true
		}
	}
}

func (t *table) set(k *key, e entry) *table {
	if (t.n+1)*4 > len(t.s)*3 {
		g := newTable(2 * len(t.s))
		for i := range t.s {
			if t.s[i].used {
				g.set(&t.s[i].k, t.s[i].e)
			}
		}
		t = g
	}
	for i := hash(k) & t.mask; ; i = (i + 1) & t.mask {
		s := &t.s[i]
		if !s.used {
			s.used, s.k, s.e = true, *k, e
			t.n++
			return t
		}
		if s.k == *k {
			s.e = e
			return t
		}
	}
}

// keyOf is a SQL key of one BIGINT as the heap backend holds it short:
// its length, then its bytes.
func keyOf(i int) key {
	var k key
	k[0] = 9
	k[1] = 0x80
	binary.BigEndian.PutUint64(k[2:], uint64(i)*2654435761)
	return k
}

const groups = 128

var sink uint64

// order is a random sequence of hits among n keys.
func order(n int) []int {
	o := make([]int, 1<<20)
	x := uint64(88172645463325252)
	for i := range o {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		o[i] = int(x % uint64(n))
	}
	return o
}

func goMap(b *testing.B, n int) {
	ms := make([]map[key]entry, groups)
	for i := range ms {
		ms[i] = map[key]entry{}
	}
	for i := range n {
		ms[i%groups][keyOf(i)] = entry{head: uint64(i)}
	}
	o := order(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := o[i&(len(o)-1)]
		sink += ms[j%groups][keyOf(j)].head
	}
}

func openTable(b *testing.B, n int) {
	ts := make([]*table, groups)
	for i := range ts {
		ts[i] = newTable(64)
	}
	for i := range n {
		k := keyOf(i)
		ts[i%groups] = ts[i%groups].set(&k, entry{head: uint64(i)})
	}
	o := order(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := o[i&(len(o)-1)]
		k := keyOf(j)
		e, ok := ts[j%groups].get(&k)
		if !ok || e.head != uint64(j) {
			b.Fatalf("key %d: got %v, %v", j, e, ok)
		}
		sink += e.head
	}
}

func BenchmarkGoMap4M(b *testing.B)       { goMap(b, 4_000_000) }
func BenchmarkOpenTable4M(b *testing.B)   { openTable(b, 4_000_000) }
func BenchmarkGoMap100K(b *testing.B)     { goMap(b, 100_000) }
func BenchmarkOpenTable100K(b *testing.B) { openTable(b, 100_000) }

// valueEntry is the size and shape of the heap backend's value entry: a
// value in an any, its timestamp and version.
type valueEntry struct {
	v   any
	ts  int64
	ver uint64
}

type valueSlot struct {
	k    key
	used bool
	e    valueEntry
}

// valueTable is table's layout for valueEntry, growing by doubling from
// eight slots.
type valueTable struct {
	s    []valueSlot
	mask uint64
	n    int
}

func (t *valueTable) set(k *key, e valueEntry) {
	if (t.n+1)*4 > len(t.s)*3 {
		old := t.s
		t.s, t.mask = make([]valueSlot, 2*len(old)), uint64(2*len(old)-1)
		for j := range old {
			if old[j].used {
				t.place(old[j])
			}
		}
	}
	for i := hash(k) & t.mask; ; i = (i + 1) & t.mask {
		if s := &t.s[i]; !s.used || s.k == *k {
			if !s.used {
				t.n++
			}
			*s = valueSlot{k: *k, used: true, e: e}
			return
		}
	}
}

// place puts s, whose key is not in t, in its slot.
func (t *valueTable) place(s valueSlot) {
	for i := hash(&s.k) & t.mask; ; i = (i + 1) & t.mask {
		if !t.s[i].used {
			t.s[i] = s
			return
		}
	}
}

var boxed any = int64(12345678) // a value as a row's field holds it

// Inserting 3 M keys, growth included, into Go's map and into the table.
func BenchmarkInsertGoMap3M(b *testing.B) {
	for range b.N {
		m := map[key]valueEntry{}
		for i := range 3_000_000 {
			m[keyOf(i)] = valueEntry{v: boxed, ts: int64(i)}
		}
		if len(m) != 3_000_000 {
			b.Fatalf("%d keys", len(m))
		}
	}
}

func BenchmarkInsertOpenTable3M(b *testing.B) {
	for range b.N {
		t := &valueTable{s: make([]valueSlot, 8), mask: 7}
		for i := range 3_000_000 {
			k := keyOf(i)
			t.set(&k, valueEntry{v: boxed, ts: int64(i)})
		}
		if t.n != 3_000_000 {
			b.Fatalf("%d keys", t.n)
		}
	}
}
