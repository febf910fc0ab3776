package heap

import "github.com/weirstream/weir/state"

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
func (b *Backend) EstimatedSize() int64 {
	var n int64
	for _, t := range b.tables {
		n += t.estimate(b.opts.KeyCodec, sizeSample)
	}
	return n
}

// estimate counts the entries of every key group and encodes the first
// sample it meets (in Go's randomised map order: a fresh sample at every
// call).
func (c *core[E]) estimate(keys state.Codec[any], sample int) int64 {
	var count, seen, bytes int64
	var buf []byte
	now := c.now()
	for _, m := range c.data.maps {
		count += int64(len(m))
		for k, e := range m {
			if seen == int64(sample) {
				break
			}
			buf = appendPrefixed(buf[:0], keys, k)
			buf, _ = c.ops.encode(buf, e, now)
			bytes += int64(len(buf))
			seen++
		}
	}
	if seen == 0 {
		return 0
	}
	return count * bytes / seen
}
