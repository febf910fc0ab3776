package heap

import (
	"iter"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"unsafe"
)

// wordMap is a hash table of word keys (see wordKey): open addressing with
// linear probing over one array of slots, each a key and its value. The
// zero wordMap is empty and ready for use; it is used in place (a copy
// shares the slots: clone copies them). A ukMap holds one for its word
// user keys, a keyMap one by pointer for its word keys (keyMap.w).
//
// Why not a Go map: a probe of a Go map of more than 8 keys loads the
// map's header, its directory, a table, and a group's control word and
// slot, each load's address read by the one before. When the maps are many
// and out of the caches (Nexmark q16's DISTINCT sets, 11 M values in
// 20,000 maps at 10 M events) each of those loads can miss. A probe here
// reads the slots from the owner's slice: its home slot and the ones
// after it, in a row. Most of a miss's cost on this machine is the
// address's translation (bench/nexmark/README, twenty-eighth session), so
// the gain is smaller than the count of loads says: q16 at 10 M events,
// 1 s checkpoints, 8 runs each way alternated, 52.6 → 48.9 CPU-s, at 1 M
// 4.31 → 4.16 (thirty-eighth session; BenchmarkWordMapProbe).
//
// Two keys mark slots: wordEmpty (a slot never filled: 0, so a new array
// is empty) and wordGone (a removed key's, so that a probe goes on past
// it). A map holding either of those keys holds it in spare. A removal
// marks its slot rather than moving keys back, so a range over the map
// that removes keys, or sets keys the map holds, meets every other key
// once, as a range over a Go map does. A range that adds keys may grow the
// array; it then goes on over the old one, where keys removed or set after
// the growth are as they were (MapTable.Range leaves the entries its
// callback puts or removes unspecified; every other is met once).
//
// Each map hashes with a seed of its own, drawn with its first array and
// kept by its rehashes (see rehash): keys put into one map in another's
// order would otherwise fill runs of neighbouring slots (linear probing's
// weak spot), and keys cannot be chosen to collide without knowing it.
type wordMap[E any] struct {
	slots []wordSlot[E] // a power of two of them, at most 7/8 used
	n     int           // keys held, spare's included
	used  int           // slots not empty: keys and removed keys' marks
	seed  uint64
	spare *[2]spareWord[E] // the entries of keys wordEmpty and wordGone
}

type wordSlot[E any] struct {
	k wordKey
	e E
}

type spareWord[E any] struct {
	ok bool
	e  E
}

// The keys that mark slots (see wordMap): the empty string's word, and
// the word 1 (on a little-endian machine the 8-byte key 01 00 … 00, on a
// big-endian one the 1-byte key 00).
const (
	wordEmpty wordKey = 0
	wordGone  wordKey = 1
)

// minWordSlots is the size of a new array.
const minWordSlots = 8

// sizedWordMap returns an empty wordMap with room for n keys.
func sizedWordMap[E any](n int) wordMap[E] {
	var m wordMap[E]
	if n > 0 {
		m.alloc(slotsFor(n))
	}
	return m
}

// newWordMap returns a new empty wordMap with room for n keys, for a
// keyMap (which holds its wordMap by reference, as its Go maps).
func newWordMap[E any](n int) *wordMap[E] {
	m := sizedWordMap[E](n)
	return &m
}

// slotsFor is the size of an array that holds n keys at most half full.
func slotsFor(n int) int {
	return max(minWordSlots, 1<<bits.Len(uint(2*n-1)))
}

// alloc makes m's first array.
func (m *wordMap[E]) alloc(size int) {
	m.slots, m.used, m.seed = newSlots[E](size), 0, rand.Uint64()
}

// newSlots returns an array of size empty slots, each page of it written
// once. A probe reads a slot before it writes it, and a read of a page
// fresh from the kernel maps the shared page of zeros: the first write
// then faults again, to copy it, and flushes the page from the other
// cores' TLBs by an interrupt to each (a virtual machine's exit here).
// Nexmark q16's rehashes spent 2.4 % of its CPU at 10 M events so
// (bench/nexmark/README, thirty-eighth session); a page written first
// faults once.
func newSlots[E any](size int) []wordSlot[E] {
	s := make([]wordSlot[E], size)
	step := max(1, pageSize/int(unsafe.Sizeof(s[0])))
	for i := 0; i < size; i += step {
		s[i].k = wordEmpty
	}
	return s
}

var pageSize = os.Getpagesize()

// The methods that only read (len, get, has, all, sample, cloned) and
// del take a nil *wordMap as empty, as Go's maps do a nil map.

func (m *wordMap[E]) len() int {
	if m == nil {
		return 0
	}
	return m.n
}

// home is the slot where k's probe starts: the top bits of a
// multiply-xorshift hash of k and the seed.
func (m *wordMap[E]) home(k wordKey) int {
	h := (uint64(k) ^ m.seed) * 0x9e3779b97f4a7c15
	h ^= h >> 32
	h *= 0xd6e8feb86659fd93
	return int(h >> bits.LeadingZeros64(uint64(len(m.slots)-1)))
}

// find returns the index of k's slot, or -1.
func (m *wordMap[E]) find(k wordKey) int {
	if len(m.slots) == 0 {
		return -1
	}
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		switch m.slots[i].k {
		case k:
			return i
		case wordEmpty:
			return -1
		}
	}
}

// first returns the key in the slot where k's probe starts, 0 when m
// has no slots: mapTable.Prefetch's read, which brings that slot into
// the CPU's caches without a branch on what it holds.
func (m *wordMap[E]) first(k wordKey) wordKey {
	if m == nil || len(m.slots) == 0 {
		return 0
	}
	return m.slots[m.home(k)].k
}

func (m *wordMap[E]) get(k wordKey) (E, bool) {
	if m == nil {
		var zero E
		return zero, false
	}
	if k <= wordGone {
		return m.getSpare(k)
	}
	if i := m.find(k); i >= 0 {
		return m.slots[i].e, true
	}
	var zero E
	return zero, false
}

// has reports whether m holds k.
func (m *wordMap[E]) has(k wordKey) bool {
	if m == nil {
		return false
	}
	if k <= wordGone {
		_, ok := m.getSpare(k)
		return ok
	}
	return m.find(k) >= 0
}

func (m *wordMap[E]) set(k wordKey, e E) {
	if k <= wordGone {
		m.setSpare(k, e)
		return
	}
	if len(m.slots) == 0 {
		m.alloc(minWordSlots)
	}
	mask := len(m.slots) - 1
	gone := -1
	for i := m.home(k); ; i = (i + 1) & mask {
		switch m.slots[i].k {
		case k:
			m.slots[i].e = e
			return
		case wordGone:
			if gone < 0 {
				gone = i
			}
		case wordEmpty:
			m.insert(k, e, i, gone)
			return
		}
	}
}

// insert puts new key k in the first removed key's slot on its probe
// (gone), else in the empty slot i that ended the probe, growing the
// array first when that would fill more than 7/8 of it (as a Go map's
// tables fill: at 3/4, Nexmark q16's process peaked half a GiB higher
// at 10 M events).
func (m *wordMap[E]) insert(k wordKey, e E, i, gone int) {
	m.n++
	if gone >= 0 {
		m.slots[gone] = wordSlot[E]{k, e}
		return
	}
	if (m.used+1)*8 > len(m.slots)*7 {
		m.rehash()
		mask := len(m.slots) - 1
		for i = m.home(k); m.slots[i].k != wordEmpty; i = (i + 1) & mask {
		}
	}
	m.used++
	m.slots[i] = wordSlot[E]{k, e}
}

// rehash moves the keys to a new array at most half full (the same size
// when removed keys' marks took the room). The seed stays: a key's home in
// an array twice the size is twice its home here, or one more, so the
// keys are written in the order of their slots, not at random (a new seed
// made Nexmark q16's rehashes miss the caches at every key).
func (m *wordMap[E]) rehash() {
	old := m.slots
	m.slots, m.used = newSlots[E](slotsFor(m.n-m.spares())), 0 // n counts the key being inserted
	mask := len(m.slots) - 1
	for j := range old {
		s := &old[j]
		if s.k <= wordGone {
			continue
		}
		i := m.home(s.k)
		for m.slots[i].k != wordEmpty {
			i = (i + 1) & mask
		}
		m.slots[i] = *s
		m.used++
	}
}

func (m *wordMap[E]) del(k wordKey) {
	if m == nil {
		return
	}
	if k <= wordGone {
		m.delSpare(k)
		return
	}
	i := m.find(k)
	if i < 0 {
		return
	}
	m.n--
	mask := len(m.slots) - 1
	if m.slots[(i+1)&mask].k != wordEmpty {
		m.slots[i] = wordSlot[E]{k: wordGone}
		return
	}
	// No probe goes on past an empty slot: this one, and the marks right
	// before it, can be empty again.
	for {
		m.slots[i] = wordSlot[E]{}
		m.used--
		i = (i - 1) & mask
		if m.slots[i].k != wordGone {
			return
		}
	}
}

func (m *wordMap[E]) getSpare(k wordKey) (E, bool) {
	if m.spare == nil {
		var zero E
		return zero, false
	}
	s := &m.spare[k]
	return s.e, s.ok
}

func (m *wordMap[E]) setSpare(k wordKey, e E) {
	if m.spare == nil {
		m.spare = new([2]spareWord[E])
	}
	s := &m.spare[k]
	if !s.ok {
		m.n++
	}
	*s = spareWord[E]{true, e}
}

func (m *wordMap[E]) delSpare(k wordKey) {
	if m.spare == nil || !m.spare[k].ok {
		return
	}
	m.spare[k] = spareWord[E]{}
	m.n--
}

// spares is how many keys spare holds.
func (m *wordMap[E]) spares() int {
	if m.spare == nil {
		return 0
	}
	return int(oneIf(m.spare[0].ok) + oneIf(m.spare[1].ok))
}

// clone returns a copy that shares nothing with m.
func (m *wordMap[E]) clone() wordMap[E] {
	c := *m
	c.slots = slices.Clone(m.slots)
	if m.spare != nil {
		sp := *m.spare
		c.spare = &sp
	}
	return c
}

// cloned is clone by reference: nil for nil.
func (m *wordMap[E]) cloned() *wordMap[E] {
	if m == nil {
		return nil
	}
	c := m.clone()
	return &c
}

// all yields every key and its entry (see wordMap on changes meanwhile).
func (m *wordMap[E]) all() iter.Seq2[wordKey, E] {
	return func(yield func(wordKey, E) bool) {
		if m != nil {
			m.from(0, math.MaxInt, yield) // not m.n: keys added meanwhile count
		}
	}
}

// sample yields up to n keys and their entries (all when m holds no
// more), from a slot drawn at random on. It returns false when yield did.
func (m *wordMap[E]) sample(n int, yield func(wordKey, E) bool) bool {
	if m == nil {
		return true
	}
	start := 0
	if len(m.slots) > 0 {
		start = rand.IntN(len(m.slots))
	}
	return m.from(start, n, yield)
}

// from yields up to n keys and their entries, spare's first, then the
// slots' from slot start on, round the array. It returns false when
// yield did.
func (m *wordMap[E]) from(start, n int, yield func(wordKey, E) bool) bool {
	if n <= 0 {
		return true
	}
	if sp := m.spare; sp != nil {
		for j := range sp {
			if sp[j].ok {
				if !yield(wordKey(j), sp[j].e) {
					return false
				}
				if n--; n == 0 {
					return true
				}
			}
		}
	}
	slots := m.slots
	for j := range slots {
		s := slots[(start+j)&(len(slots)-1)]
		if s.k <= wordGone {
			continue
		}
		if !yield(s.k, s.e) {
			return false
		}
		if n--; n == 0 {
			return true
		}
	}
	return true
}
