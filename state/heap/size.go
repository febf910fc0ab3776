package heap

import (
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
}

// estimate counts the entries of every key group and encodes about
// sample of them spread over the groups: up to sample/groups from each,
// or one from every groups/sample-th when there are more groups (in Go's
// randomised map order: a fresh sample at every call); of an entry of
// many elements it encodes up to elems (entrySizer). Spreading the sample
// keeps one group's few large entries from deciding it. Only what a
// snapshot writes counts: an expired entry or element adds no bytes,
// though it stays in memory until a read or cleanup meets it.
func (c *core[E]) estimate(keys state.Codec[any], sample, elems int) int64 {
	var count, seen, bytes int64
	var buf []byte
	now := c.now()
	sizer, sampled := c.ops.(entrySizer[E])
	groups := len(c.data.maps)
	quota, stride := max(1, sample/max(1, groups)), max(1, groups/max(1, sample))
	for i, m := range c.data.maps {
		count += int64(m.len())
		if i%stride != 0 {
			continue
		}
		n := 0
		for k, e := range m.all() {
			if n == quota {
				break
			}
			n++
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
		seen += int64(n)
	}
	if seen == 0 {
		return 0
	}
	return count * bytes / seen
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
	for uk, el := range e.m.all() {
		if seen == sample {
			break
		}
		seen++
		if t.ttl.Expired(el.ts, now) {
			continue // sampled, and nothing a snapshot writes
		}
		buf = buf[:0]
		if t.ttl.Enabled() {
			buf = wire.AppendVarint(buf, el.ts)
		}
		buf = appendPrefixed(buf, t.sp.UserKeyCodec, uk)
		buf = appendPrefixed(buf, t.sp.Codec, el.v)
		bytes += int64(len(buf))
	}
	return scaled(bytes, seen, e.m.len())
}

func (t *listTable) estimateEntry(items []elem, now int64, sample int) int64 {
	var buf []byte
	var bytes int64
	n := min(sample, len(items))
	for _, el := range items[:n] {
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
