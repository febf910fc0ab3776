package heap

import (
	"iter"
	"math/rand/v2"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// sizeSample is how many entries of each state EstimatedSize encodes.
const sizeSample = 32

var _ state.SizeEstimator = (*Backend)(nil)

// EstimatedSize estimates the bytes the live keyed state takes as a
// snapshot encodes it: each state's entry count times the mean size of up
// to sizeSample of its entries encoded (key and value). Go's in-memory
// representation is larger and not measurable cheaply; the encoded size
// is what a checkpoint of the state would write, so the two compare.
// It costs one pass over the key groups and sizeSample encodings per
// state, whatever the number of keys.
func (b *Backend) EstimatedSize() int64 { return b.estimatedSize(sizeSample, sizeSample) }

// estimatedSize is EstimatedSize with about sample entries of each state
// encoded, and up to elems elements of each (see estimate).
func (b *Backend) estimatedSize(sample, elems int) int64 {
	var n int64
	for _, t := range b.tables {
		n += t.estimate(b.opts.KeyCodec, sample, elems)
	}
	return n
}

// entrySizer is implemented by the entry kinds whose one entry may hold
// any number of elements (a key's whole map or list): it estimates an
// entry's encoded size from up to sample of its elements, so that an
// estimate never encodes a large entry whole.
type entrySizer[E any] interface {
	estimateEntry(e E, now int64, sample int) int64
	// entryLen is the number of elements of e, expired ones too.
	entryLen(e E) int
	// countable reports whether the state's elements are all live until
	// removed (no TTL), so that counting them counts what a snapshot
	// writes (estimateByElements).
	countable() bool
}

// exactLengths is the most entries of an entrySizer state whose elements
// estimate counts entry by entry (estimateByElements) rather than
// extrapolating from the entries it samples.
const exactLengths = 1 << 14

// estimate counts the entries of every key group and encodes about
// sample of them (sampleEntries); of an entry of many elements it encodes
// up to elems (entrySizer). Only what a snapshot writes counts: an
// expired entry or element adds no bytes, though it stays in memory until
// a read or cleanup meets it.
func (c *core[E]) estimate(keys state.Codec[any], sample, elems int) int64 {
	var seen, bytes int64
	var buf []byte
	now := c.now()
	sizer, sampled := c.ops.(entrySizer[E])
	n, filled := c.entries()
	count := int64(n)
	if sampled && count <= exactLengths && sizer.countable() {
		return c.estimateByElements(keys, sizer, sample, elems, filled)
	}
	for k, e := range c.sampleEntries(sample, filled) {
		seen++
		var size int64
		if sampled {
			size = sizer.estimateEntry(e, now, elems)
		} else if b, live := c.ops.encode(buf[:0], e, now); live {
			buf, size = b, int64(len(b))
		}
		if size > 0 {
			buf = appendPrefixed(buf[:0], keys, k)
			bytes += int64(len(buf)) + size
		}
	}
	if seen == 0 {
		return 0
	}
	return count * bytes / seen
}

// sampleEntries yields about sample entries spread over the filled key
// groups (those that hold any; entries counts them): up to sample/filled
// from each, or those of every filled/sample-th one (from a random first)
// when there are more, each group's taken as keyMap.sample takes them (a
// fresh sample at every call). Spreading the sample keeps one group's few
// large entries from deciding it; skipping the empty groups keeps a state
// of few keys under a large max parallelism (32768 groups, of which every
// 128th would be visited) from reading as empty.
func (c *core[E]) sampleEntries(sample, filled int) iter.Seq2[any, E] {
	return func(yield func(any, E) bool) {
		if filled == 0 {
			return
		}
		quota, stride := max(1, sample/filled), max(1, filled/max(1, sample))
		j := rand.IntN(stride) // index among the filled groups
		for _, m := range c.data.maps {
			if m.len() == 0 {
				continue
			}
			if j%stride == 0 && !m.sample(quota, yield) {
				return
			}
			j++
		}
	}
}

// entries is the number of entries in every key group, and the number of
// groups that hold any.
func (c *core[E]) entries() (n, filled int) {
	for _, m := range c.data.maps {
		if l := m.len(); l > 0 {
			n, filled = n+l, filled+1
		}
	}
	return n, filled
}

// estimateByElements estimates a state without a TTL of at most
// exactLengths entries, each of which may hold any number of elements: it
// counts every entry's elements and prices them at the mean size of the
// elements it samples (up to elems of each of about sample entries, spread
// over the groups as estimate spreads them), and every entry's key at the
// mean of the keys sampled. Extrapolating from the entries sampled misjudges a state whose
// few large entries hold most of it: q16's COUNT DISTINCT state holds four
// maps of millions of values among thousands of maps of a few, which the
// sample met or missed at random, so that its estimate swung threefold
// from one checkpoint to the next, and a low one brought a base early
// (wantsBase).
func (c *core[E]) estimateByElements(keys state.Codec[any], sizer entrySizer[E], sample, elems, filled int) int64 {
	var entries, elements, headers, keysSeen, liveSeen, keyBytes, elemsSeen, elemBytes int64
	each := func(e E) {
		n := sizer.entryLen(e)
		entries, elements, headers = entries+1, elements+int64(n), headers+uvarintLen(n)
	}
	for _, m := range c.data.maps {
		for e := range m.values() {
			each(e)
		}
	}
	var buf []byte
	now := c.now()
	for k, e := range c.sampleEntries(sample, filled) {
		n := sizer.entryLen(e)
		keysSeen, elemsSeen = keysSeen+1, elemsSeen+int64(n)
		// An entry that writes nothing (no element) counts as sampled, at
		// no bytes.
		if size := sizer.estimateEntry(e, now, elems); size > 0 {
			buf = appendPrefixed(buf[:0], keys, k)
			liveSeen, keyBytes, elemBytes = liveSeen+1, keyBytes+int64(len(buf)), elemBytes+size-uvarintLen(n)
		}
	}
	if liveSeen == 0 {
		return 0 // nothing sampled, or nothing sampled live
	}
	return (entries*keyBytes+headers*liveSeen)/keysSeen + elements*elemBytes/elemsSeen
}

// scaled extrapolates the encoded size of n elements from the bytes of
// the seen ones sampled, with the entry's count header.
func scaled(bytes int64, seen, n int) int64 {
	if seen == 0 || bytes == 0 {
		return 0 // nothing sampled, or nothing sampled live
	}
	return uvarintLen(n) + bytes*int64(n)/int64(seen)
}

func (t *mapTable) estimateEntry(e mapEntry, now int64, sample int) int64 {
	var buf []byte
	var bytes int64
	seen := 0
	e.m.sample(sample, func(uk any, el elem) bool {
		seen++
		if t.ttl.Expired(el.ts, now) {
			return true // sampled, and nothing a snapshot writes
		}
		buf = buf[:0]
		if t.ttl.Enabled() {
			buf = wire.AppendVarint(buf, el.ts)
		}
		buf = appendPrefixed(buf, t.sp.UserKeyCodec, uk)
		buf = appendPrefixed(buf, t.sp.Codec, el.v)
		bytes += int64(len(buf))
		return true
	})
	return scaled(bytes, seen, e.m.len())
}

func (t *mapTable) entryLen(e mapEntry) int { return e.m.len() }

func (t *mapTable) countable() bool { return !t.ttl.Enabled() }

func (t *listTable) entryLen(items []elem) int { return len(items) }

func (t *listTable) countable() bool { return !t.ttl.Enabled() }

// estimateEntry samples up to sample elements over the whole list, one at
// random from each of sample equal shares: a list with a TTL expires from
// its oldest elements, so its first few say nothing of the rest, and a
// fixed position in each share would meet only the odd elements of a list
// whose elements alternate.
func (t *listTable) estimateEntry(items []elem, now int64, sample int) int64 {
	var buf []byte
	var bytes int64
	n := min(sample, len(items))
	for j := range n {
		from, to := j*len(items)/n, (j+1)*len(items)/n
		el := items[from+rand.IntN(to-from)]
		if t.ttl.Expired(el.ts, now) {
			continue // sampled, and nothing a snapshot writes
		}
		buf = buf[:0]
		if t.ttl.Enabled() {
			buf = wire.AppendVarint(buf, el.ts)
		}
		buf = appendPrefixed(buf, t.sp.Codec, el.v)
		bytes += int64(len(buf))
	}
	return scaled(bytes, n, len(items))
}

// uvarintLen is the length of n's uvarint encoding.
func uvarintLen(n int) int64 {
	l := int64(1)
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}
