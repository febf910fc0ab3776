package heap

import (
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// mapEntry is one key's map. ver is the backend version in which m was
// created or cloned; an older one may be shared with a snapshot, so it is
// cloned before the first write (own). The values in m carry their own
// versions, because a clone shares them (see private).
//
// m points to a keyMap, as a map[any] would be a reference: the owner
// writes it in place, and a map it makes for a user key of the other kind
// is seen by every holder of the entry. String user keys (COUNT DISTINCT's
// values) are then held without a boxed header each (see keyMap).
type mapEntry struct {
	m   *keyMap[elem]
	ver uint64
}

// cloneElems returns a copy of m that shares no map with it.
func cloneElems(m *keyMap[elem]) *keyMap[elem] {
	c := m.clone()
	return &c
}

// mapTable stores MapState. An entry's inner map is the owner's to write
// once created or cloned after the last full capture (ver is the map
// version then): a full capture holds the inner maps themselves, and the
// first write after it clones one (own, ownUK); a delta capture holds
// copies (detach), so between full captures the maps are written in place
// — q16's COUNT DISTINCT maps of millions of entries were cloned whole
// after every checkpoint.
type mapTable struct{ core[mapEntry] }

var _ state.MapTable = (*mapTable)(nil)

func newMapTable(b *Backend, sp state.StateSpec) *mapTable {
	t := &mapTable{newCore[mapEntry](b, sp)}
	t.ops = t
	return t
}

func (t *mapTable) entry() (k any, i int, e mapEntry, ok bool) {
	k, i = t.b.current()
	e, ok = t.data.get(i, k)
	return k, i, e, ok
}

// own returns e with an inner map the owner may write, cloning (and
// storing) it if a snapshot may share it. Either way it records the key as
// changed (groups.touch): the caller writes the inner map in place, which
// an entry stored at this version — a new one, or one a restore loaded —
// lets it do without a put.
func (t *mapTable) own(i int, k any, e mapEntry) mapEntry {
	if e.ver != t.b.mapVersion {
		e = mapEntry{cloneElems(e.m), t.b.mapVersion}
		t.data.put(i, k, e)
		return e
	}
	t.data.touch(i, k)
	return e
}

// ownUK is own for a write of user key uk alone: unless key k changed
// otherwise since the last capture, the next delta holds only the change
// of the user keys so written (groups.touchUK, encodeUKs).
func (t *mapTable) ownUK(i int, k any, e mapEntry, uk any) mapEntry {
	if e.ver != t.b.mapVersion {
		e = mapEntry{cloneElems(e.m), t.b.mapVersion}
		t.data.putUK(i, k, e, uk)
		return e
	}
	t.data.touchUK(i, k, uk)
	return e
}

// Get returns the value under uk, copied if a snapshot in flight may be
// encoding it (see private).
func (t *mapTable) Get(uk any) (any, bool) { return t.get(uk, true) }

func (t *mapTable) Contains(uk any) bool {
	_, ok := t.get(uk, false)
	return ok
}

// get finds the live value under uk, removing it if it expired and
// refreshing it if reads refresh the TTL. When handOut is set (Get, not
// Contains), it makes the value private first.
func (t *mapTable) get(uk any, handOut bool) (any, bool) {
	k, i, e, ok := t.entry()
	if !ok {
		return nil, false
	}
	el, has := e.m.get(uk)
	if !has {
		return nil, false
	}
	changed := false
	if t.ttl.Enabled() {
		now := t.b.opts.Clock()
		if t.ttl.Expired(el.ts, now) {
			t.remove(i, k, e, uk)
			return nil, false
		}
		if t.ttl.OnRead {
			el.ts, changed = now, true
		}
	}
	if handOut {
		if v, copied := t.private(el.v, el.ver); copied {
			el.v, el.ver, changed = v, t.b.version, true
		}
	}
	if changed {
		t.ownUK(i, k, e, uk).m.set(uk, el)
	}
	return el.v, true
}

// remove deletes uk, which e holds, and the whole entry if it was the last.
func (t *mapTable) remove(i int, k any, e mapEntry, uk any) {
	if e.m.len() == 1 {
		t.data.del(i, k)
		return
	}
	t.ownUK(i, k, e, uk).m.del(uk)
}

func (t *mapTable) Put(uk, v any) {
	k, i, e, ok := t.entry()
	if ok {
		e = t.ownUK(i, k, e, uk)
	} else {
		e = mapEntry{&keyMap[elem]{}, t.b.mapVersion}
		t.data.put(i, k, e)
	}
	e.m.set(uk, elem{v, t.now(), t.b.version})
}

func (t *mapTable) Remove(uk any) {
	k, i, e, ok := t.entry()
	if !ok {
		return
	}
	if _, has := e.m.get(uk); has {
		t.remove(i, k, e, uk)
	}
}

func (t *mapTable) Range(f func(uk, v any) bool) {
	k, i, e, ok := t.entry()
	if ok && t.ttl.Enabled() {
		e, ok = t.purge(i, k, e, true)
	}
	if !ok {
		return
	}
	for uk, el := range t.privateAll(i, k, e).m.all() {
		if !f(uk, el.v) {
			return
		}
	}
}

// privateAll returns key k's entry e after replacing every value that a
// snapshot in flight may be encoding by a copy (see private), so that Range
// hands out none of them.
func (t *mapTable) privateAll(i int, k any, e mapEntry) mapEntry {
	if t.b.inFlight.Load() == 0 {
		return e // no snapshot to share a value with (see shared): spare the walk
	}
	for uk, el := range e.m.all() { // setting keys the range has met is safe
		if v, copied := t.private(el.v, el.ver); copied {
			e = t.own(i, k, e)
			e.m.set(uk, elem{v, el.ts, t.b.version})
		}
	}
	return e
}

func (t *mapTable) IsEmpty() bool {
	k, i, e, ok := t.entry()
	if ok && t.ttl.Enabled() {
		_, ok = t.purge(i, k, e, false)
	}
	return !ok
}

// purge drops expired entries of key k's map and, when read is set and
// reads refresh the TTL, restamps the rest. It reports whether any remain.
func (t *mapTable) purge(i int, k any, e mapEntry, read bool) (mapEntry, bool) {
	now := t.b.opts.Clock()
	e, n, live := t.sweep(e, now)
	switch {
	case !live:
		t.data.del(i, k)
		return e, false
	case n > 0:
		t.data.put(i, k, e)
	}
	if read && t.ttl.OnRead {
		e = t.own(i, k, e)
		for uk, el := range e.m.all() {
			el.ts = now
			e.m.set(uk, el)
		}
	}
	return e, true
}

func (t *mapTable) Delete() {
	k, i := t.b.current()
	t.data.del(i, k)
}

func (t *mapTable) encode(buf []byte, e mapEntry, now int64) ([]byte, bool) {
	live := 0
	for _, el := range e.m.all() {
		if !t.ttl.Expired(el.ts, now) {
			live++
		}
	}
	if live == 0 {
		return buf, false
	}
	buf = wire.AppendUvarint(buf, uint64(live))
	for uk, el := range e.m.all() {
		if t.ttl.Expired(el.ts, now) {
			continue
		}
		if t.ttl.Enabled() {
			buf = wire.AppendVarint(buf, el.ts)
		}
		buf = appendPrefixed(buf, t.sp.UserKeyCodec, uk)
		buf = appendPrefixed(buf, t.sp.Codec, el.v)
	}
	return buf, true
}

// encodeUKs appends the changes of user keys uks of e, for a delta (op 3
// in incremental.go): their number, then each user key and a byte 1 and
// its value, or a byte 0 when e holds none. A map with a TTL is written
// whole (false): its entries' timestamps would need writing too.
func (t *mapTable) encodeUKs(buf []byte, e mapEntry, uks ukSet) ([]byte, bool) {
	if t.ttl.Enabled() {
		return buf, false
	}
	buf = wire.AppendUvarint(buf, uint64(uks.len()))
	for uk := range uks.s {
		start := len(buf)
		buf = prefixLength(state.EncodeString(t.sp.UserKeyCodec, buf, uk), start)
		el, ok := e.m.s[uk]
		buf = t.appendUKValue(buf, el, ok)
	}
	for uk := range uks.a {
		buf = appendPrefixed(buf, t.sp.UserKeyCodec, uk)
		el, ok := e.m.a[uk]
		buf = t.appendUKValue(buf, el, ok)
	}
	return buf, true
}

// appendUKValue appends a byte 1 and el's value, or a byte 0 when the map
// holds none (!ok): a user key's change in a delta (encodeUKs).
func (t *mapTable) appendUKValue(buf []byte, el elem, ok bool) []byte {
	if !ok {
		return append(buf, 0)
	}
	return appendPrefixed(append(buf, 1), t.sp.Codec, el.v)
}

// detach replaces each captured entry by a copy of what its delta reads:
// the values of its changed user keys when only those changed (uks), its
// whole map otherwise.
func (t *mapTable) detach(captured []keyMap[mapEntry], uks []userKeys) {
	for i, m := range captured {
		var changed userKeys
		if i < len(uks) {
			changed = uks[i]
		}
		for k, e := range m.s { // setting keys the range has met is safe
			set, partial := changed.s[k]
			m.s[k] = t.detached(e, set, partial)
		}
		for k, e := range m.a {
			set, partial := changed.a[k]
			m.a[k] = t.detached(e, set, partial)
		}
	}
}

// detached is a copy of what entry e's delta reads: the values of user
// keys set when only those changed (partial), the whole map otherwise.
func (t *mapTable) detached(e mapEntry, set ukSet, partial bool) mapEntry {
	if !partial || t.ttl.Enabled() {
		return mapEntry{cloneElems(e.m), e.ver}
	}
	sub := sizedAs[elem](set)
	for uk := range set.s {
		if el, ok := e.m.s[uk]; ok {
			sub.s[uk] = el
		}
	}
	for uk := range set.a {
		if el, ok := e.m.a[uk]; ok {
			sub.a[uk] = el
		}
	}
	return mapEntry{&sub, e.ver}
}

func (t *mapTable) decode(p []byte, hasTS bool, now int64) (mapEntry, bool, error) {
	r := wire.NewReader(p)
	n := r.Count(2)
	m := &keyMap[elem]{}
	for j := 0; j < n && r.Err() == nil; j++ {
		ts := readTS(r, hasTS, t.ttl, now)
		kb, vb := r.Bytes(), r.Bytes()
		if r.Err() != nil {
			break
		}
		uk, err := decodeKey(t.sp.UserKeyCodec, kb)
		if err != nil {
			return mapEntry{}, false, err
		}
		v, err := decodeAll(t.sp.Codec, vb)
		if err != nil {
			return mapEntry{}, false, err
		}
		if j == 0 {
			*m = sized[elem](uk, n)
		}
		if !t.ttl.Expired(ts, now) {
			m.set(uk, elem{v, ts, t.b.loadedVersion()})
		}
	}
	if r.Err() != nil || r.Len() != 0 {
		return mapEntry{}, false, corrupt("map payload: %v, %d bytes left", r.Err(), r.Len())
	}
	return mapEntry{m, t.b.mapVersion}, m.len() > 0, nil
}

func (t *mapTable) sweep(e mapEntry, now int64) (mapEntry, int, bool) {
	n := 0
	for _, el := range e.m.all() {
		if t.ttl.Expired(el.ts, now) {
			n++
		}
	}
	if n == 0 {
		return e, 0, e.m.len() > 0
	}
	m := &keyMap[elem]{}
	for uk, el := range e.m.all() {
		if !t.ttl.Expired(el.ts, now) {
			m.set(uk, el)
		}
	}
	return mapEntry{m, t.b.mapVersion}, n, m.len() > 0
}
