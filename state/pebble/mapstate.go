package pebble

import (
	"bytes"

	"github.com/weirstream/weir/state"
)

// mapTable stores MapState: one Pebble entry per map entry, under the
// key's prefix followed by the user key's encoding; its value is
// [ts varint] value. Range and IsEmpty iterate the key's prefix.
type mapTable struct{ tbase }

var _ state.MapTable = (*mapTable)(nil)

// entryKey returns the Pebble key of user key uk of the current key.
func (t *mapTable) entryKey(uk any) []byte {
	t.kbuf = t.sp.UserKeyCodec.Encode(t.prefix(), uk)
	return t.kbuf
}

// Get returns a fresh decoding of the value under uk.
func (t *mapTable) Get(uk any) (any, bool) {
	p, ok := t.lookup(uk)
	if !ok {
		return nil, false
	}
	return t.decode(t.sp.Codec, p), true
}

func (t *mapTable) Contains(uk any) bool {
	_, ok := t.lookup(uk)
	return ok
}

// lookup finds the live payload under uk.
func (t *mapTable) lookup(uk any) ([]byte, bool) { return t.lookupAt(t.entryKey(uk)) }

func (t *mapTable) Put(uk, v any) {
	k := t.entryKey(uk)
	t.b.set(k, t.stamped(t.now(), func(buf []byte) []byte { return t.sp.Codec.Encode(buf, v) }))
}

func (t *mapTable) Remove(uk any) { t.b.del(t.entryKey(uk)) }

// rawEntry is one stored map entry, copied out of an iterator.
type rawEntry struct {
	key, uk []byte // the Pebble key, and its user key part
	ts      int64
	p       []byte
}

// entries returns the current key's stored entries, copied.
func (t *mapTable) entries(prefix []byte) []rawEntry {
	var out []rawEntry
	scan(t.b.db, prefix, succ(prefix), func(k, v []byte) bool {
		ts, p, ok := splitTS(v, t.si.hasTS)
		if !ok {
			panic(corrupt("pebble: state %q: stored map entry timestamp", t.si.name))
		}
		key := bytes.Clone(k)
		out = append(out, rawEntry{key: key, uk: key[len(prefix):], ts: ts, p: bytes.Clone(p)})
		return true
	})
	return out
}

// purge removes the expired entries of the current key and, when read is
// set and reads refresh the TTL, restamps the rest. It returns the live
// entries.
func (t *mapTable) purge(es []rawEntry, read bool) []rawEntry {
	if !t.si.ttl.Enabled() {
		return es
	}
	now := t.b.opts.Clock()
	live := es[:0]
	for _, e := range es {
		if t.si.ttl.Expired(e.ts, now) {
			t.b.del(e.key)
			continue
		}
		if read && t.si.ttl.OnRead {
			e.ts = now
			t.b.set(e.key, t.stamped(now, func(buf []byte) []byte { return append(buf, e.p...) }))
		}
		live = append(live, e)
	}
	return live
}

// Range collects the entries first, so that f may put and remove freely.
func (t *mapTable) Range(f func(uk, v any) bool) {
	for _, e := range t.purge(t.entries(t.prefix()), true) {
		uk, err := decodeKey(t.sp.UserKeyCodec, e.uk)
		if err != nil {
			panic(corrupt("pebble: state %q: stored map key: %v", t.si.name, err))
		}
		if !f(uk, t.decode(t.sp.Codec, e.p)) {
			return
		}
	}
}

func (t *mapTable) IsEmpty() bool {
	prefix := t.prefix()
	if !t.si.ttl.Enabled() {
		empty := true
		scan(t.b.db, prefix, succ(prefix), func(_, _ []byte) bool { empty = false; return false })
		return empty
	}
	return len(t.purge(t.entries(prefix), false)) == 0
}

func (t *mapTable) Delete() {
	prefix := t.prefix()
	for _, e := range t.entries(prefix) {
		t.b.del(e.key)
	}
}

func (t *mapTable) cleanup(prefix []byte, now int64) int {
	n := 0
	for _, e := range t.entries(prefix) {
		if t.si.ttl.Expired(e.ts, now) {
			t.b.del(e.key)
			n++
		}
	}
	return n
}
