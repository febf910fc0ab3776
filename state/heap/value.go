package heap

import (
	"fmt"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// valueEntry is one key's value. ver is the backend version in which the
// value object was stored: when it is older than the backend's, a snapshot
// may be reading the object, so GetForUpdate hands out a deep copy.
type valueEntry struct {
	elem
	ver uint64
}

// valueTable stores ValueState, ReducingState and AggregatingState.
type valueTable struct{ core[valueEntry] }

var _ state.ValueTable = (*valueTable)(nil)

func newValueTable(b *Backend, sp state.StateSpec) *valueTable {
	t := &valueTable{newCore[valueEntry](b, sp)}
	t.ops = t
	return t
}

// lookup finds the current key's live entry, removing it if expired and
// refreshing it if reads refresh the TTL.
func (t *valueTable) lookup() (k any, i int, e valueEntry, ok bool) {
	k, i = t.b.current()
	e, ok = t.data.get(i, k)
	if !ok || !t.ttl.enabled() {
		return k, i, e, ok
	}
	now := t.b.opts.Clock()
	switch {
	case t.ttl.expired(e.ts, now):
		t.data.del(i, k, t.b.version)
		return k, i, valueEntry{}, false
	case t.ttl.onRead:
		e.ts = now
		t.data.put(i, k, e, t.b.version)
	}
	return k, i, e, true
}

func (t *valueTable) Get() (any, bool) {
	_, _, e, ok := t.lookup()
	return e.v, ok
}

func (t *valueTable) GetForUpdate() (any, bool) {
	k, i, e, ok := t.lookup()
	if !ok || e.ver == t.b.version {
		return e.v, ok
	}
	e.v, e.ver = t.deepCopy(e.v), t.b.version
	t.data.put(i, k, e, t.b.version)
	return e.v, true
}

func (t *valueTable) deepCopy(v any) any {
	c, err := decodeAll(t.sp.Codec, t.sp.Codec.Encode(nil, v))
	if err != nil {
		panic(fmt.Sprintf("heap: state %q: codec cannot decode its own encoding: %v", t.sp.Name, err))
	}
	return c
}

func (t *valueTable) Put(v any) {
	k, i := t.b.current()
	t.data.put(i, k, valueEntry{elem{v, t.now()}, t.b.version}, t.b.version)
}

func (t *valueTable) Delete() {
	k, i := t.b.current()
	t.data.del(i, k, t.b.version)
}

func (t *valueTable) encode(buf []byte, e valueEntry, now int64) ([]byte, bool) {
	if t.ttl.expired(e.ts, now) {
		return buf, false
	}
	if t.ttl.enabled() {
		buf = wire.AppendVarint(buf, e.ts)
	}
	return t.sp.Codec.Encode(buf, e.v), true
}

func (t *valueTable) decode(p []byte, hasTS bool, now int64) (valueEntry, bool, error) {
	r := wire.NewReader(p)
	ts := readTS(r, hasTS, t.ttl, now)
	if r.Err() != nil {
		return valueEntry{}, false, corrupt("value timestamp: %v", r.Err())
	}
	v, err := decodeAll(t.sp.Codec, r.Rest())
	if err != nil {
		return valueEntry{}, false, err
	}
	return valueEntry{elem{v, ts}, t.b.version}, !t.ttl.expired(ts, now), nil
}

func (t *valueTable) sweep(e valueEntry, now int64) (valueEntry, int, bool) {
	if t.ttl.expired(e.ts, now) {
		return e, 1, false
	}
	return e, 0, true
}
