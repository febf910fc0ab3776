package heap

import (
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// placedValueTable stores a value state (ValueState, ReducingState,
// AggregatingState) without TTL whose codec keeps values in place
// (state.InPlace) and declares them immutable, as placedTable stores a
// list: each key's value is the encoding of it, a record in chunks the
// table owns, read in place; an entry is the record's place and a
// version, with no pointer, so that the collector does not scan the
// table's maps at all (Nexmark q18 keeps a row for each of 9 M keys at
// 10 M events, each row an allocation the collector marked at every
// cycle). Unlike a list, a value is placed whether or not KeepsInPlace
// accepts it: a value state is read about as often as it is written, so
// one the codec would keep as it is is read by decoding its encoding.
//
// A value replaced or deleted leaves its record dropped; a compaction
// (as placedTable's) copies the live records into new chunks once dropped
// bytes pass the live ones. A record is never written over: a value read
// from it (Get's view) stays as it was after its key's value is replaced.
type placedValueTable struct {
	core[placedValue]
	placing
}

var (
	_ state.ValueTable     = (*placedValueTable)(nil)
	_ state.EncodingKeeper = (*placedValueTable)(nil)
)

// placedValue is one key's value in a placedValueTable: its record's
// place plus 1, and the backend's version when it was written (a write
// that finds the current version skips recording the key, which the
// first write since the last capture recorded).
type placedValue struct{ at, ver uint64 }

func newPlacedValueTable(b *Backend, sp state.StateSpec, ip state.InPlace[any]) *placedValueTable {
	t := &placedValueTable{core: newCore[placedValue](b, sp), placing: newPlacing(b, sp, ip)}
	t.data.logChanges()
	t.ops = t
	return t
}

// KeepsEncodings reports that no value is kept, only its encoding
// (state.EncodingKeeper): a caller may put a value over memory it reuses.
func (t *placedValueTable) KeepsEncodings() bool { return true }

// Get returns the current key's value, read in place.
func (t *placedValueTable) Get() (any, bool) {
	k, i := t.b.current()
	e, ok := t.data.get(i, k)
	if !ok {
		return nil, false
	}
	_, enc := t.chunks.record(e.at)
	return t.view(enc), true
}

// Put places v's encoding and drops the record of the value it replaces.
func (t *placedValueTable) Put(v any) {
	k, i := t.b.current()
	old, had := t.data.get(i, k)
	e := placedValue{at: t.place(i, 0, v), ver: t.b.version}
	if !had {
		t.data.put(i, k, e)
		return
	}
	t.dropRecord(old)
	if old.ver == t.b.version {
		// Written since the last capture: the key's change is recorded.
		t.data.writable(i).set(k, e)
	} else {
		t.data.put(i, k, e)
	}
	t.compactIfWasteful(i)
}

func (t *placedValueTable) Delete() { deletePlaced(&t.core, t.dropRecord, t.compactIfWasteful) }

func (t *placedValueTable) dropRecord(e placedValue) {
	_, enc := t.chunks.record(e.at)
	t.chunks.dropRecord(groupOf(e.at), enc)
}

// compactIfWasteful copies the records of group index i's values into
// new chunks when the group's chunks are wasteful (see
// placedTable.compactIfWasteful).
func (t *placedValueTable) compactIfWasteful(i int) {
	if !t.chunks.wasteful(i) {
		return
	}
	old := t.chunks.reset(i)
	compactGroup(&t.data, i, func(e placedValue) placedValue {
		_, enc := readRecord(old, e.at)
		e.at = t.chunks.put(i, 0, enc)
		return e
	})
	t.compactions++
}

// encode appends e's payload, as valueTable's for a state without TTL:
// the value's encoding.
func (t *placedValueTable) encode(buf []byte, e placedValue, _ int64) ([]byte, bool) {
	_, enc := t.chunks.record(e.at)
	return append(buf, enc...), true
}

// capture is core's, its entries encoded from the chunks as they are now.
func (t *placedValueTable) capture(delta bool, d tableDelta) captured {
	out := t.core.capture(delta, d).(*capturedGroups[placedValue])
	view := t.chunks.view()
	out.encode = func(buf []byte, e placedValue, _ int64) ([]byte, bool) {
		_, enc := view.record(e.at)
		return append(buf, enc...), true
	}
	return out
}

// decode places a restored value's encoding, once the codec has read it,
// in the chunks of the group loadingGroup named.
func (t *placedValueTable) decode(p []byte, hasTS bool, now int64) (placedValue, bool, error) {
	r := wire.NewReader(p)
	readTS(r, hasTS, t.ttl, now)
	if r.Err() != nil {
		return placedValue{}, false, corrupt("value timestamp: %v", r.Err())
	}
	enc := r.Rest()
	if _, err := decodeAll(t.sp.Codec, enc); err != nil {
		return placedValue{}, false, err
	}
	return placedValue{at: t.chunks.put(t.loading, 0, enc), ver: t.b.loadedVersion()}, true, nil
}

// sweep: a placedValueTable has no TTL, so nothing expires.
func (t *placedValueTable) sweep(e placedValue, _ int64) (placedValue, int, bool) {
	return e, 0, true
}
