package pebble

import (
	"github.com/weirstream/weir/state"
)

// valueTable stores ValueState, ReducingState and AggregatingState: one
// Pebble entry per key, [ts varint] value.
type valueTable struct{ tbase }

var _ state.ValueTable = (*valueTable)(nil)

// lookup returns the current key's live payload.
func (t *valueTable) lookup() ([]byte, bool) { return t.lookupAt(t.prefix()) }

// Get returns a fresh decoding of the current key's value: values are
// never shared with a snapshot, which reads Pebble's bytes.
func (t *valueTable) Get() (any, bool) {
	p, ok := t.lookup()
	if !ok {
		return nil, false
	}
	return t.decode(t.sp.Codec, p), true
}

// KeepsEncodings reports that a value is encoded when put, not kept
// (state.EncodingKeeper).
func (t *valueTable) KeepsEncodings() bool { return true }

func (t *valueTable) Put(v any) {
	k := t.prefix()
	t.b.set(k, t.stamped(t.now(), func(buf []byte) []byte { return t.sp.Codec.Encode(buf, v) }))
}

func (t *valueTable) Delete() { t.b.del(t.prefix()) }

func (t *valueTable) cleanup(prefix []byte, now int64) int {
	raw, ok := t.b.get(prefix)
	if !ok {
		return 0
	}
	if ts, _, _ := splitTS(raw, t.si.hasTS); !t.si.ttl.Expired(ts, now) {
		return 0
	}
	t.b.del(prefix)
	return 1
}
