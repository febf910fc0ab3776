package heap

import (
	"unsafe"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// valueTable stores ValueState, ReducingState and AggregatingState: each
// key's value is an elem. Changes are logged (groups.logChanges): an
// elem's version tells a key written since the last capture, whose
// change is recorded already.
type valueTable struct {
	core[elem]
	// last is the entry Get found or Put stored last, for Put to skip
	// storing an identical one (see Put); ok false when none.
	last struct {
		k  any
		i  int
		e  elem
		ok bool
	}
}

var _ state.ValueTable = (*valueTable)(nil)

func newValueTable(b *Backend, sp state.StateSpec) *valueTable {
	t := &valueTable{core: newCore[elem](b, sp)}
	t.data.logChanges()
	t.ops = t
	return t
}

// lookup finds the current key's live entry, removing it if expired and
// refreshing it if reads refresh the TTL.
func (t *valueTable) lookup() (k any, i int, e elem, ok bool) {
	k, i = t.b.current()
	e, ok = t.data.get(i, k)
	if !ok || !t.ttl.Enabled() {
		return k, i, e, ok
	}
	now := t.b.opts.Clock()
	switch {
	case t.ttl.Expired(e.ts, now):
		t.data.del(i, k)
		return k, i, elem{}, false
	case t.ttl.OnRead:
		e.ts = now
		t.data.put(i, k, e)
	}
	return k, i, e, true
}

// Get returns the current key's value, copied if a snapshot in flight may
// be encoding it (see private).
func (t *valueTable) Get() (any, bool) {
	k, i, e, ok := t.lookup()
	if !ok {
		t.forget()
		return nil, false
	}
	if v, copied := t.private(e.v, e.ver); copied {
		// Stored with a put, which records the key: the copy carries the
		// current version, which tells Put the key's change is recorded.
		e.v, e.ver = v, t.b.version
		t.data.put(i, k, e)
	}
	t.remember(k, i, e)
	return e.v, true
}

// remember records that group i holds e for key k, unless entries carry
// a TTL (then a sweep may remove them between calls).
func (t *valueTable) remember(k any, i int, e elem) {
	t.last.k, t.last.i, t.last.e, t.last.ok = k, i, e, !t.ttl.Enabled()
}

// forget drops the record, and with it the key and value it kept alive.
func (t *valueTable) forget() { t.last.k, t.last.e, t.last.ok = nil, elem{}, false }

// Put stores v, recording the key's change unless it was written since
// the last capture (its elem's version is the current one): Nexmark q11's
// sessions and q19's ranks are written many times an interval, and each
// write probed the record of changed keys, a map per group that misses
// the caches once state outgrows them.
//
// A value read, changed in place and put back — a session, an
// aggregate's row: a pointer the owner may change, see private — is the
// entry Get just found, written since the last capture. Put then stores
// nothing: the two lookups it made (to find the entry's version, then to
// store it) were 6 % of Nexmark q11's CPU.
func (t *valueTable) Put(v any) {
	k, i := t.b.current()
	e := elem{v, t.now(), t.b.version}
	if l := &t.last; l.ok && l.i == i && l.e.ver == e.ver && l.e.ts == e.ts && sameWords(l.e.v, v) && l.k == k {
		return // the entry holds e already
	}
	if old, ok := t.data.get(i, k); ok && old.ver == e.ver {
		t.data.writable(i).set(k, e)
	} else {
		t.data.put(i, k, e)
	}
	t.remember(k, i, e)
}

// sameWords reports whether a and b are the same interface value word for
// word: one dynamic type and one data pointer, so one value (for a pointer,
// the same object; other values are boxed apart and compare unequal here
// even when equal).
func sameWords(a, b any) bool {
	return *(*[2]unsafe.Pointer)(unsafe.Pointer(&a)) == *(*[2]unsafe.Pointer)(unsafe.Pointer(&b))
}

func (t *valueTable) Delete() {
	k, i := t.b.current()
	t.forget()
	t.data.del(i, k)
}

func (t *valueTable) encode(buf []byte, e elem, now int64) ([]byte, bool) {
	if t.ttl.Expired(e.ts, now) {
		return buf, false
	}
	if t.ttl.Enabled() {
		buf = wire.AppendVarint(buf, e.ts)
	}
	return t.sp.Codec.Encode(buf, e.v), true
}

func (t *valueTable) decode(p []byte, hasTS bool, now int64) (elem, bool, error) {
	r := wire.NewReader(p)
	ts := readTS(r, hasTS, t.ttl, now)
	if r.Err() != nil {
		return elem{}, false, corrupt("value timestamp: %v", r.Err())
	}
	v, err := decodeAll(t.sp.Codec, r.Rest())
	if err != nil {
		return elem{}, false, err
	}
	return elem{v, ts, t.b.loadedVersion()}, !t.ttl.Expired(ts, now), nil
}

func (t *valueTable) sweep(e elem, now int64) (elem, int, bool) {
	if t.ttl.Expired(e.ts, now) {
		return e, 1, false
	}
	return e, 0, true
}
