package heap

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// wordKeys returns n keys: the two that mark slots (wordEmpty, wordGone)
// among them, and keys of SQL values as valueKey writes them.
func wordKeys(n int) []wordKey {
	ks := []wordKey{wordEmpty, wordGone}
	for i := 0; len(ks) < n; i++ {
		k, ok := word(fmt.Sprintf("\x01%d", i))
		if !ok {
			panic(i)
		}
		ks = append(ks, k)
	}
	return ks
}

// checkWordMap checks m against model: each key's entry, len, and that
// all yields every key once.
func checkWordMap(t *testing.T, m *wordMap[int], model map[wordKey]int, universe []wordKey) {
	t.Helper()
	if m.len() != len(model) {
		t.Fatalf("len %d, want %d", m.len(), len(model))
	}
	for _, k := range universe {
		want, in := model[k]
		got, ok := m.get(k)
		if ok != in || got != want || m.has(k) != in {
			t.Fatalf("key %#x: get %d, %v; has %v; want %d, %v", uint64(k), got, ok, m.has(k), want, in)
		}
	}
	seen := map[wordKey]int{}
	for k, e := range m.all() {
		seen[k]++
		if seen[k] > 1 || model[k] != e {
			t.Fatalf("all yields key %#x (%d) %d times, want once with %d", uint64(k), e, seen[k], model[k])
		}
	}
	if len(seen) != len(model) {
		t.Fatalf("all yields %d keys, want %d", len(seen), len(model))
	}
	used, inSlots := 0, 0
	for _, s := range m.slots {
		used += int(oneIf(s.k != wordEmpty))
		inSlots += int(oneIf(s.k > wordGone))
	}
	if used != m.used || inSlots+m.spares() != m.n || m.used*8 > len(m.slots)*7 {
		t.Fatalf("%d of %d slots used (counted %d), %d keys in them and %d spare, n %d", m.used, len(m.slots), used, inSlots, m.spares(), m.n)
	}
}

// A wordMap holds what a Go map does, through random sets and removals
// of keys that collide often (few keys for the slots), the keys that
// mark slots among them; a clone is apart from the original.
func TestWordMapMatchesAGoMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{3, 10, 100, 5000} {
		universe := wordKeys(size)
		var m wordMap[int]
		model := map[wordKey]int{}
		for op := range 20 * size {
			k := universe[rng.IntN(len(universe))]
			switch rng.IntN(3) {
			case 0, 1:
				m.set(k, op)
				model[k] = op
			default:
				m.del(k)
				delete(model, k)
			}
			if op%(size+1) == 0 {
				checkWordMap(t, &m, model, universe)
				c := m.clone()
				c.set(universe[2], -1)
				c.del(wordGone)
				c.del(universe[3%size])
				checkWordMap(t, &m, model, universe)
			}
		}
		checkWordMap(t, &m, model, universe)
	}
}

// A range over a wordMap that removes keys, the one it is at or others,
// and sets keys the map holds, meets every key not removed before the
// range reached it once, and no key removed before.
func TestWordMapRangeWhileRemovingAndSetting(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		universe := wordKeys(2 + rng.IntN(300))
		var m wordMap[int]
		for i, k := range universe {
			m.set(k, i)
		}
		for _, k := range universe { // marks of removed keys among the slots
			if rng.IntN(4) == 0 {
				m.del(k)
			}
		}
		removed, met := map[wordKey]bool{}, map[wordKey]bool{}
		before := map[wordKey]bool{}
		for k := range m.all() {
			before[k] = true
		}
		for k := range m.all() {
			if removed[k] || met[k] {
				t.Fatalf("trial %d: key %#x met again or after its removal (removed %v)", trial, uint64(k), removed[k])
			}
			met[k] = true
			switch rng.IntN(4) {
			case 0:
				m.del(k)
			case 1:
				o := universe[rng.IntN(len(universe))]
				if m.has(o) {
					m.del(o)
					removed[o] = !met[o]
				}
			case 2:
				m.set(k, -1)
			}
		}
		for k := range before {
			if !met[k] && !removed[k] {
				t.Fatalf("trial %d: key %#x never met", trial, uint64(k))
			}
		}
	}
}

// A range that adds keys — the marking keys among them, and enough to
// grow the array — meets every key the map held before it once.
func TestWordMapRangeWhileAdding(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	universe := wordKeys(3000)
	for trial := range 200 {
		held := 1 + rng.IntN(200)
		var m wordMap[int]
		if rng.IntN(2) == 0 {
			m = sizedWordMap[int](held + rng.IntN(300))
		}
		perm := rng.Perm(len(universe))
		for _, j := range perm[:held] {
			m.set(universe[j], j)
		}
		before := map[wordKey]bool{}
		for k := range m.all() {
			before[k] = true
		}
		met, next := map[wordKey]int{}, held
		for k := range m.all() {
			met[k]++
			for range rng.IntN(4) * rng.IntN(2) {
				if next < len(perm) {
					m.set(universe[perm[next]], perm[next])
					next++
				}
			}
		}
		for k := range before {
			if met[k] != 1 {
				t.Fatalf("trial %d (%d keys, %d added): key %#x met %d times", trial, held, next-held, uint64(k), met[k])
			}
		}
	}
}

// The first growth doubles the array: 8 keys in 16 slots, not more.
func TestWordMapGrowsByDoubling(t *testing.T) {
	var m wordMap[int]
	for i, k := range wordKeys(10)[2:] {
		m.set(k, i)
		if want := map[bool]int{true: 8, false: 16}[i < 7]; len(m.slots) != want {
			t.Fatalf("%d keys in %d slots, want %d", m.len(), len(m.slots), want)
		}
	}
}

// Removals leave the array no fuller than its keys need: marks of
// removed keys are taken back (the slot after is empty) or reused, and a
// rehash at the same size drops the rest.
func TestWordMapRemovalsDoNotFillTheArray(t *testing.T) {
	var m wordMap[int]
	keys := wordKeys(100_000)[2:]
	for i, k := range keys {
		m.set(k, i)
		if i >= 100 {
			m.del(keys[i-100])
		}
	}
	if m.len() != 100 || len(m.slots) > 256 {
		t.Fatalf("%d keys in %d slots, want 100 in at most 256", m.len(), len(m.slots))
	}
}

// sample yields up to n keys held, each once, starting at random.
func TestWordMapSample(t *testing.T) {
	var m wordMap[int]
	keys := wordKeys(1000)
	for i, k := range keys {
		m.set(k, i)
	}
	firsts := map[wordKey]bool{}
	for range 20 {
		got, first := map[wordKey]bool{}, true
		m.sample(10, func(k wordKey, e int) bool {
			if first && k > wordGone {
				firsts[k], first = true, false
			}
			if got[k] || keys[e] != k {
				t.Fatalf("sample yields %#x twice or with %d", uint64(k), e)
			}
			got[k] = true
			return true
		})
		if len(got) != 10 {
			t.Fatalf("sample(10) yields %d", len(got))
		}
	}
	if len(firsts) < 2 { // the marking keys come first; the others at random
		t.Fatalf("sample starts at %d places in 20 calls", len(firsts))
	}
	n := 0
	m.sample(5000, func(wordKey, int) bool { n++; return true })
	if n != len(keys) {
		t.Fatalf("sample(5000) of %d keys yields %d", len(keys), n)
	}
}

// sizedWordMap makes room once: n keys go in without a rehash.
func TestSizedWordMapHoldsItsKeys(t *testing.T) {
	m := sizedWordMap[int](1000)
	first := &m.slots[0]
	for i, k := range wordKeys(1002)[2:] {
		m.set(k, i)
	}
	if &m.slots[0] != first {
		t.Fatal("a map sized for 1000 keys grew for 1000")
	}
}

// TestNilWordMapReadsAsEmpty: a keyMap holds its wordMap by reference, nil
// until its first word key, and reads a nil one as empty, as a Go map.
func TestNilWordMapReadsAsEmpty(t *testing.T) {
	var m *wordMap[int]
	if m.len() != 0 || m.has(5) || m.has(wordEmpty) || m.cloned() != nil || m.first(5) != 0 {
		t.Fatalf("a nil wordMap holds keys: len %d", m.len())
	}
	if e, ok := m.get(5); ok || e != 0 {
		t.Fatalf("a nil wordMap gets %d, %v", e, ok)
	}
	m.del(5)
	m.del(wordGone)
	for k := range m.all() {
		t.Fatalf("a nil wordMap yields %d", k)
	}
	if !m.sample(3, func(wordKey, int) bool { t.Fatal("a nil wordMap samples a key"); return true }) {
		t.Fatal("a nil wordMap's sample stopped")
	}
}

// TestWordMapFirstReadsTheProbesStart: first(k) is the key in the slot
// where k's probe starts: k itself for a key held at its home slot (in a
// map an eighth full, most keys), another key the map holds or a removed
// key's mark for a key held past it (never an empty slot), and for an
// absent key one of those or wordEmpty; an empty map's is 0.
func TestWordMapFirstReadsTheProbesStart(t *testing.T) {
	var m wordMap[int]
	if m.first(7) != 0 {
		t.Fatal("an empty map's first is not 0")
	}
	ks := wordKeys(130)[2:]
	m = sizedWordMap[int](4 * len(ks))
	for i, k := range ks {
		m.set(k, i)
	}
	m.del(ks[0])
	held := map[wordKey]bool{wordEmpty: true, wordGone: true}
	for _, k := range ks[1:] {
		held[k] = true
	}
	atHome := 0
	for _, k := range ks[1:] {
		f := m.first(k)
		switch {
		case f == k:
			atHome++
		case !held[f] || f == wordEmpty || m.find(k) == m.home(k):
			t.Fatalf("first(%#x) = %#x: a key the map does not hold, an empty slot, or not the key at its home slot", k, f)
		}
	}
	if atHome < len(ks)/2 {
		t.Fatalf("%d of %d keys at their home slot in a map an eighth full", atHome, len(ks)-1)
	}
	for _, k := range wordKeys(300)[200:] {
		if f := m.first(k); !held[f] {
			t.Fatalf("first of the absent %#x = %#x, a key the map does not hold", k, f)
		}
	}
}
