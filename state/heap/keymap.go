package heap

import (
	"iter"
	"maps"
	"math/rand/v2"
	"unsafe"

	"github.com/weirstream/weir/state"
)

// keyMap holds one key group's entries of a state. String keys (every
// key of a SQL operator) are held in w or f (short ones, below) or s,
// other keys in a.
//
// Why apart: a map[any] holds a string key as an interface that points
// to a boxed string header, which points to the bytes. A probe of a map of
// millions of keys then chases one pointer more to compare keys (a cache
// miss at that size), and every key is one object more for the collector
// to mark. A map[string] holds the header in its slot. Nexmark q7 at 10 M
// events spends a fifth of its CPU in these maps.
//
// The zero keyMap is empty; its maps are made at the first write. A
// keyMap is copied by value (a snapshot's capture): a copy shares the maps
// until one side clones them (groups.writable), and a map made later in
// one copy is not seen by the other.
//
// A string key of wordKeyMax+1 to shortKeyMax bytes (a SQL key of two
// BIGINTs, or of one large one) is held in f, in the slot itself
// (shortKey), unless it is a word key of 8 bytes (most are; see wordKey): the map then
// holds no pointer to it for the collector to mark at every cycle, and a
// probe compares it without a miss on its bytes elsewhere. Longer ones
// are in s.
//
// A key of up to wordKeyMax bytes (a SQL key of one BIGINT of magnitude
// below 2^41: a tag and a varint), or of 8 that no shorter key's word
// reads as, is held in w, as one word (wordKey): its hash is taken of the
// word in a register, where f's reads the key's bytes from the stores
// that built it and waits for them, and a slot of w is 16 bytes smaller
// than f's (BenchmarkMapProbeWordKeys). As Go maps of 64-bit keys, Nexmark
// q9, whose keys are auction ids of 4 bytes, took 3 % less CPU at 10 M
// events and 6 % less at 1 M, q7 (prices) 2 and 3 % (three pairs of runs
// each, 1 s checkpoints, every pair faster).
//
// w is a wordMap, held by reference (nil until the first word key) so
// that a copy shares it as it shares the Go maps. A probe of it reads a
// run of slots of one array, where a Go map's loads its header,
// directory, table and group in turn, each of which can miss in a state
// of gigabytes. Nexmark q9 at 10 M
// events, 1 s checkpoints, 4 runs each way alternated: 49.4 → 42.3 CPU-s
// (medians), at 1 M no change (3.89, 3.91; 8 runs each) (bench/nexmark/README,
// thirty-ninth session).
type keyMap[E any] struct {
	w *wordMap[E]
	f goMap[shortKey, E]
	s goMap[string, E]
	a goMap[any, E]
}

// kindMap is what each of a keyMap's maps of one kind of key offers: the
// helpers that handle the four alike (captureOf, mergeChanges …) are
// written once over it. A nil one reads as empty; set needs it made.
type kindMap[K comparable, E any] interface {
	len() int
	get(k K) (E, bool)
	set(k K, e E)
	del(k K)
	all() iter.Seq2[K, E]
}

// goMap is a Go map as a kindMap.
type goMap[K comparable, E any] map[K]E

func (m goMap[K, E]) len() int { return len(m) }

func (m goMap[K, E]) get(k K) (E, bool) {
	e, ok := m[k]
	return e, ok
}

func (m goMap[K, E]) set(k K, e E) { m[k] = e }

func (m goMap[K, E]) del(k K) { delete(m, k) }

func (m goMap[K, E]) all() iter.Seq2[K, E] { return maps.All(m) }

// shortKey is a string key of up to shortKeyMax bytes: its length, then
// its bytes, zero-padded.
type shortKey [24]byte

const shortKeyMax = len(shortKey{}) - 1

// short returns s as a shortKey, false when it is longer than
// shortKeyMax.
func short(s string) (shortKey, bool) {
	var k shortKey
	if len(s) > shortKeyMax {
		return k, false
	}
	k[0] = byte(len(s))
	copy(k[1:], s)
	return k, true
}

// wordKey is a string key of up to wordKeyMax bytes: its bytes from the
// word's first byte in memory, zero-padded, and its length in the last
// (whatever the machine's byte order: the word is only hashed and
// compared, and view reads the bytes in place).
//
// A key of 8 bytes is a wordKey too, its 8 bytes as they are, unless it
// reads as a shorter key's word: its last byte L at most wordKeyMax and
// its bytes L to 6 zero (long8). A shorter key's word has zeros after its
// L bytes, so a key of 8 with a non-zero byte there, or with a last byte
// above wordKeyMax, is told from every one; len tells them apart the same
// way. That takes every SQL key of two BIGINTs each of 3 varint bytes
// whose last byte is not 7 (a varint's bytes before its last are at least
// 0x80; Nexmark q18's bidder and auction: the last byte is the auction
// id's bits 13 and up).
type wordKey uint64

const wordKeyMax = 7

// word returns s as a wordKey, false when it is not one (see wordKey).
func word(s string) (wordKey, bool) {
	var k wordKey
	b := k.bytes()
	if len(s) > len(b) {
		return 0, false
	}
	copy(b[:], s)
	if len(s) <= wordKeyMax {
		b[7] = byte(len(s))
		return k, true
	}
	return k, long8(b)
}

// long8 reports whether b, a word's bytes, are those of a key of 8 bytes:
// its last byte L is above wordKeyMax, or one of b[L:7] (counting from 0:
// where a shorter key's word is zero) is not zero.
func long8(b *[8]byte) bool {
	n := b[7]
	if n > wordKeyMax {
		return true
	}
	for _, c := range b[n:7] {
		if c != 0 {
			return true
		}
	}
	return false
}

// len is the key's length.
func (k *wordKey) len() int {
	b := k.bytes()
	if long8(b) {
		return wordKeyMax + 1
	}
	return int(b[7])
}

// bytes is k's memory.
func (k *wordKey) bytes() *[8]byte { return (*[8]byte)(unsafe.Pointer(k)) }

// view is the key as a string over k's bytes, as shortKey.view.
func (k *wordKey) view() string {
	b := k.bytes()
	return unsafe.String(&b[0], k.len())
}

// str is a copy of the key as a string.
func (k wordKey) str() string {
	b := k.bytes()
	return string(b[:k.len()])
}

// wordView is the view of k copied into w's scratch: valid until the next
// call (see shortView).
func (w *writer) wordView(k wordKey) string {
	w.wk = k
	return w.wk.view()
}

// view is the key as a string over k's bytes: valid while k is unchanged,
// not to be kept (str is a copy to keep). Taking it of a range variable
// moves the variable to the heap when the string escapes; the snapshot's
// loops take it of the writer's scratch (writer.shortView) instead.
func (k *shortKey) view() string { return unsafe.String(&k[1], int(k[0])) }

// word is k as a wordKey, false when it is not one (see wordKey).
func (k *shortKey) word() (wordKey, bool) {
	if k[0] > wordKeyMax+1 {
		return 0, false
	}
	return word(k.view())
}

// str is a copy of the key as a string.
func (k shortKey) str() string { return string(k[1 : 1+k[0]]) }

// shortView is the view of k copied into w's scratch: valid until the
// next call.
func (w *writer) shortView(k shortKey) string {
	w.sk = k
	return w.sk.view()
}

func (m keyMap[E]) len() int { return m.w.len() + len(m.f) + len(m.s) + len(m.a) }

func (m keyMap[E]) get(k any) (E, bool) {
	if s, ok := k.(string); ok {
		return m.getString(s)
	}
	e, ok := m.a[k]
	return e, ok
}

// getString is get of the string key s, unboxed.
func (m keyMap[E]) getString(s string) (E, bool) {
	if wk, ok := word(s); ok {
		return m.w.get(wk)
	}
	if sk, ok := short(s); ok {
		e, ok := m.f[sk]
		return e, ok
	}
	e, ok := m.s[s]
	return e, ok
}

// hasShort reports whether m holds the short key *sk (looked up in
// place, not copied: see mapTable.Prefetch), in w when it is a word key.
func (m keyMap[E]) hasShort(sk *shortKey) bool {
	if wk, ok := sk.word(); ok {
		return m.w.has(wk)
	}
	_, ok := m.f[*sk]
	return ok
}

// set stores e under k, making the map it goes in if need be.
func (m *keyMap[E]) set(k any, e E) {
	if s, ok := k.(string); ok {
		m.setString(s, e)
		return
	}
	if m.a == nil {
		m.a = make(map[any]E)
	}
	m.a[k] = e
}

// setString stores e under the string key s, unboxed.
func (m *keyMap[E]) setString(s string, e E) {
	if wk, ok := word(s); ok {
		if m.w == nil {
			m.w = newWordMap[E](0)
		}
		m.w.set(wk, e)
		return
	}
	if sk, ok := short(s); ok {
		if m.f == nil {
			m.f = make(map[shortKey]E)
		}
		m.f[sk] = e
		return
	}
	if m.s == nil {
		m.s = make(map[string]E)
	}
	m.s[s] = e
}

// getKey is get of a record's user key (see userKey): a string key
// unboxed.
func (m keyMap[E]) getKey(k userKey) (E, bool) {
	if k.o == nil {
		return m.getString(k.s)
	}
	e, ok := m.a[k.boxed()]
	return e, ok
}

// setKey is set of a record's user key.
func (m *keyMap[E]) setKey(k userKey, e E) {
	if k.o == nil {
		m.setString(k.s, e)
		return
	}
	m.set(k.boxed(), e)
}

func (m keyMap[E]) del(k any) {
	if s, ok := k.(string); ok {
		if wk, ok := word(s); ok {
			m.w.del(wk)
			return
		}
		if sk, ok := short(s); ok {
			delete(m.f, sk)
			return
		}
		delete(m.s, s)
		return
	}
	delete(m.a, k)
}

// clone returns a copy that shares no map with m.
func (m keyMap[E]) clone() keyMap[E] {
	return keyMap[E]{m.w.cloned(), maps.Clone(m.f), maps.Clone(m.s), maps.Clone(m.a)}
}

// sized returns an empty keyMap with room for n keys of k's kind.
func sized[E any](k any, n int) keyMap[E] {
	if s, ok := k.(string); ok {
		if _, ok := word(s); ok {
			return keyMap[E]{w: newWordMap[E](n)}
		}
		if len(s) <= shortKeyMax {
			return keyMap[E]{f: make(map[shortKey]E, n)}
		}
		return keyMap[E]{s: make(map[string]E, n)}
	}
	return keyMap[E]{a: make(map[any]E, n)}
}

// sizedLike returns an empty keyMap with room for as many keys of each
// kind as m holds.
func (m keyMap[E]) sizedLike() keyMap[E] { return sizedAs[E](m) }

// sizedAs returns an empty keyMap[E] with room for m's keys, each kind in
// its own map.
func sizedAs[E, V any](m keyMap[V]) keyMap[E] {
	var out keyMap[E]
	if n := m.w.len(); n > 0 {
		out.w = newWordMap[E](n)
	}
	if len(m.f) > 0 {
		out.f = make(map[shortKey]E, len(m.f))
	}
	if len(m.s) > 0 {
		out.s = make(map[string]E, len(m.s))
	}
	if len(m.a) > 0 {
		out.a = make(map[any]E, len(m.a))
	}
	return out
}

// values yields every entry's value.
func (m keyMap[E]) values() iter.Seq[E] {
	return func(yield func(E) bool) {
		for _, e := range m.w.all() {
			if !yield(e) {
				return
			}
		}
		for _, e := range m.f {
			if !yield(e) {
				return
			}
		}
		for _, e := range m.s {
			if !yield(e) {
				return
			}
		}
		for _, e := range m.a {
			if !yield(e) {
				return
			}
		}
	}
}

// all yields every entry, string keys boxed: for the paths that want the
// keys as any (timers, restore errors), not for snapshots
// (see encoded).
func (m keyMap[E]) all() iter.Seq2[any, E] {
	return func(yield func(any, E) bool) {
		for k, e := range m.w.all() {
			if !yield(k.str(), e) {
				return
			}
		}
		for k, e := range m.f {
			if !yield(k.str(), e) {
				return
			}
		}
		for k, e := range m.s {
			if !yield(k, e) {
				return
			}
		}
		for k, e := range m.a {
			if !yield(k, e) {
				return
			}
		}
	}
}

// sample yields up to n entries (all of them when m holds no more), from
// the string keys and the other keys in proportion to their counts, the
// share of each rounded up or down at random so that a kind of few keys
// is met as often as its count says; the word keys from a slot drawn at
// random on (wordMap.sample), the others in Go's randomised map order.
// It returns false when yield did.
func (m keyMap[E]) sample(n int, yield func(any, E) bool) bool {
	total := m.len()
	if total == 0 || n <= 0 {
		return true
	}
	words := m.w.len()
	strings := words + len(m.f) + len(m.s)
	fromS := strings
	if n < total {
		fromS = min(strings, int(float64(n)*float64(strings)/float64(total)+rand.Float64()))
	}
	// Each kind's share of what the kinds after it leave, so that the
	// shares add up to fromS (a review found f's and w's rounded apart
	// came out short of it, and f sampled at half w's rate).
	fromW := min(words, int(float64(fromS)*float64(words)/float64(max(1, strings))+rand.Float64()))
	rest := len(m.f) + len(m.s)
	fromF := min(len(m.f), int(float64(fromS-fromW)*float64(len(m.f))/float64(max(1, rest))+rand.Float64()))
	fromF = max(fromF, fromS-fromW-len(m.s))
	fromA := min(len(m.a), n-fromS)
	return m.w.sample(fromW, func(k wordKey, e E) bool { return yield(k.str(), e) }) && yieldFirstShort(m.f, fromF, yield) &&
		yieldFirst(m.s, fromS-fromW-fromF, yield) && yieldFirst(m.a, fromA, yield)
}

// yieldFirstShort is yieldFirst of the short string keys, each yielded
// as a string.
func yieldFirstShort[E any](m map[shortKey]E, n int, yield func(any, E) bool) bool {
	for k, e := range m {
		if n <= 0 {
			break
		}
		n--
		if !yield(k.str(), e) {
			return false
		}
	}
	return true
}

// yieldFirst yields n of m's entries (all when it holds no more), the first
// in Go's randomised map order. It returns false when yield did.
func yieldFirst[K comparable, E any](m map[K]E, n int, yield func(any, E) bool) bool {
	for k, e := range m {
		if n == 0 {
			break
		}
		n--
		if !yield(k, e) {
			return false
		}
	}
	return true
}

// encoded yields every entry with its key encoded by w's key codec (the
// slice is w's scratch buffer, valid until the next entry). String keys
// are encoded without boxing when the codec can (encodeString).
func (m keyMap[E]) encoded(w *writer) iter.Seq2[[]byte, E] {
	return func(yield func([]byte, E) bool) {
		for k, e := range m.w.all() {
			w.key = w.encodeString(w.key[:0], w.wordView(k))
			if !yield(w.key, e) {
				return
			}
		}
		for k, e := range m.f {
			w.key = w.encodeString(w.key[:0], w.shortView(k))
			if !yield(w.key, e) {
				return
			}
		}
		for k, e := range m.s {
			w.key = w.encodeString(w.key[:0], k)
			if !yield(w.key, e) {
				return
			}
		}
		for k, e := range m.a {
			w.key = w.keyCodec.Encode(w.key[:0], k)
			if !yield(w.key, e) {
				return
			}
		}
	}
}

// encodeString appends the key codec's encoding of the string key s;
// state.AnyCodec (the runtime's key codec) encodes it without boxing.
func (w *writer) encodeString(buf []byte, s string) []byte {
	return state.EncodeString(w.keyCodec, buf, s)
}
