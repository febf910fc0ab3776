package heap

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/weirstream/weir/state"
)

// TestKeyMapHoldsEveryKind: word keys (one word: of up to 7 bytes, or of
// 8 unless they read as a shorter key's word), short string keys (in the
// slot), longer ones, and other keys are each found, replaced, deleted,
// cloned, iterated and encoded as themselves; keys that differ only by a
// trailing NUL or their length stay apart, and so do 8-byte keys whose
// bytes are a shorter key's word ("ab" and "ab", five NULs, 2; "" and
// eight NULs; a 7-byte key and itself with 7 after it): those are held in
// the slot, not as words.
func TestKeyMapHoldsEveryKind(t *testing.T) {
	seven := strings.Repeat("w", wordKeyMax)
	keys := []any{"", "\x00", "a", "a\x00", "ab", strings.Repeat("\x00", wordKeyMax), seven,
		seven + "\x08", seven + "\x00", strings.Repeat("w", wordKeyMax+1), "a\x00\x00\x00\x00\x00\x00\x00", // 8-byte words
		// wordGone's word on a little-endian machine ("" is wordEmpty's):
		"\x01\x00\x00\x00\x00\x00\x00\x00",
		seven + "\x07", "ab\x00\x00\x00\x00\x00\x02", strings.Repeat("\x00", 8), strings.Repeat("w", wordKeyMax+2), // in slots
		strings.Repeat("x", shortKeyMax), strings.Repeat("x", shortKeyMax+1), strings.Repeat("y", 100), 7, int64(7), nil}
	var m keyMap[int]
	for i, k := range keys {
		m.set(k, i)
	}
	if m.w.len() != 12 || len(m.f) != 5 || len(m.s) != 2 || len(m.a) != 3 {
		t.Fatalf("held %d in words, %d in slots, %d as strings, %d boxed; want 12, 5, 2, 3", m.w.len(), len(m.f), len(m.s), len(m.a))
	}
	want := map[any]int{}
	for i, k := range keys {
		want[k] = i
		if e, ok := m.get(k); !ok || e != i {
			t.Fatalf("key %q: %d, %v; want %d", k, e, ok, i)
		}
	}
	if got := maps.Collect(m.all()); !maps.Equal(got, want) {
		t.Fatalf("all yields %v, want %v", got, want)
	}
	c := m.clone()
	m.set("a", 100)
	m.del(strings.Repeat("x", shortKeyMax))
	m.del(strings.Repeat("y", 100))
	if e, _ := c.get("a"); e != 2 || c.len() != len(keys) {
		t.Fatalf("the clone changed with the map: %d, %d keys", e, c.len())
	}
	if _, ok := m.get(strings.Repeat("x", shortKeyMax)); ok || m.len() != len(keys)-2 {
		t.Fatalf("deleted keys still held: %d keys", m.len())
	}
	seen := countEncoded(t, c.encoded(&writer{keyCodec: state.AnyCodec{}}), want)
	n := 0
	c.sample(4, func(k any, e int) bool {
		if want[k] != e {
			t.Fatalf("sampled key %q with %d, want %d", k, e, want[k])
		}
		n++
		return true
	})
	if seen != len(keys) || n != 4 {
		t.Fatalf("encoded %d keys, sampled %d of 4", seen, n)
	}
	if s := sizedAs[int](c); s.w == nil || s.f == nil || s.s == nil || s.a == nil {
		t.Fatal("sizedAs left out a kind")
	}
}

// TestKeyMapSamplesEveryStringKind: a sample of n from a map of word,
// short and long string keys yields n entries every time, each kind about
// in proportion to its count.
func TestKeyMapSamplesEveryStringKind(t *testing.T) {
	var m keyMap[int]
	kinds := []int{300, 600, 100} // word, short, long keys
	for i := range kinds[0] {
		m.set(fmt.Sprint("w", i), 0)
	}
	for i := range kinds[1] {
		m.set(fmt.Sprint("short-key-", i), 1)
	}
	for i := range kinds[2] {
		m.set(fmt.Sprint(strings.Repeat("l", 30), i), 2)
	}
	if m.w.len() != kinds[0] || len(m.f) != kinds[1] || len(m.s) != kinds[2] {
		t.Fatalf("held %d, %d, %d keys; want %v", m.w.len(), len(m.f), len(m.s), kinds)
	}
	const rounds, n = 2000, 10
	var got [3]int
	for range rounds {
		yielded := 0
		m.sample(n, func(_ any, kind int) bool {
			got[kind]++
			yielded++
			return true
		})
		if yielded != n {
			t.Fatalf("sample(%d) yielded %d", n, yielded)
		}
	}
	for kind, c := range kinds {
		want := float64(rounds*n) * float64(c) / 1000
		if d := float64(got[kind]) - want; d > want/10 || d < -want/10 {
			t.Fatalf("kind %d sampled %d times, want about %.0f (%v)", kind, got[kind], want, got)
		}
	}
	var one keyMap[int]
	one.set("w", 0)
	one.set("short-key", 1)
	for range 200 {
		yielded := 0
		one.sample(1, func(any, int) bool { yielded++; return true })
		if yielded != 1 {
			t.Fatalf("sample(1) of a word and a short key yielded %d", yielded)
		}
	}
}

// TestKeyMapEncodesShortKeysWithoutAllocating: a snapshot encodes keys
// held in the slot through the writer's scratch, not a heap copy of each
// (a reviewer's find: one allocation per key).
func TestKeyMapEncodesShortKeysWithoutAllocating(t *testing.T) {
	for _, long := range []bool{false, true} {
		var m keyMap[int]
		for i := range 1000 {
			k := fmt.Sprint("k", i)
			if long {
				k += strings.Repeat("x", shortKeyMax)
			}
			m.set(k, i)
		}
		w := &writer{keyCodec: state.AnyCodec{}}
		n := 0
		allocs := testing.AllocsPerRun(10, func() {
			for k := range m.encoded(w) {
				n += len(k)
			}
		})
		if allocs > 10 {
			t.Errorf("long keys %v: %.0f allocations per 1,000 keys encoded", long, allocs)
		}
	}
}

// TestKeyMapCopiesShareWordKeys: a copy of a keyMap (a capture's, a
// detach's) shares its word keys' table with the map until one is cloned,
// as it shares its Go maps: a write through either is seen by both.
//
// The copy's writes grow the table past its first array and put the two
// keys held beside it (wordEmpty's and wordGone's words).
func TestKeyMapCopiesShareWordKeys(t *testing.T) {
	var m keyMap[int]
	m.set("a", 1)
	c := m
	want := map[any]int{}
	for i := range 100 {
		k := fmt.Sprint(i)
		c.set(k, i)
		want[k] = i
	}
	gone := wordGone.str() // a key of 8 bytes on a little-endian machine, of 1 on a big-endian one
	for i, k := range []string{"", gone} {
		c.set(k, -i)
		want[k] = -i
	}
	c.del("a")
	if got := maps.Collect(m.all()); !maps.Equal(got, want) || m.len() != len(want) {
		t.Fatalf("the map does not see its copy's writes: %d keys, %v", m.len(), got)
	}
	d := m.clone()
	m.set("c", 3)
	m.del("")
	if _, ok := d.get("c"); ok || d.len() != len(want) || c.len() != len(want) {
		t.Fatalf("a clone shares the map's table: %d keys, the copy %d; want %d", d.len(), c.len(), len(want))
	}
	if got := maps.Collect(d.all()); !maps.Equal(got, want) {
		t.Fatalf("the clone holds %v, want %v", got, want)
	}
}
