package heap

import (
	"strings"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// mapEntry is one key's map. ver is the backend version in which m was
// created or cloned; an older one may be shared with a snapshot, so it is
// cloned before the first write (own). The values in m carry their own
// versions, because a clone shares them (see private).
//
// m points to a ukMap, as a map[any] would be a reference: the owner
// writes it in place, and a map it makes for a user key of the other kind
// (or the spill of its inline one) is seen by every holder of the entry.
// String user keys (COUNT DISTINCT's values) are then held without a boxed
// header each (see keyMap), one short one inline (see ukMap).
type mapEntry struct {
	m   *ukMap
	ver uint64
}

// cloneElems returns a copy of m that shares no map with it.
func cloneElems(m *ukMap) *ukMap { return m.clone() }

// mapTable stores MapState. An entry's inner map is the owner's to write
// once created or cloned after the last full capture (ver is the map
// version then): a full capture holds the inner maps themselves, and the
// first write after it clones one (own, writeUK); a delta capture holds
// copies (detach), so between full captures the maps are written in place
// — q16's COUNT DISTINCT maps of millions of entries were cloned whole
// after every checkpoint.
type mapTable struct {
	core[mapEntry]
	// Prefetch's scratch; of its last call, how many short user keys
	// (not words) it found, how many word user keys' home slots it read
	// (in maps with a table of words), and the sum of the keys it read
	// there (kept so that its loads are made)
	ahead struct {
		maps  []*ukMap
		keys  []shortKey
		wmaps []*wordMap[elem]
		words []wordKey
		found uint64
		read  int
		sum   wordKey
	}
}

var _ state.MapTable = (*mapTable)(nil)

func newMapTable(b *Backend, sp state.StateSpec) *mapTable {
	t := &mapTable{core: newCore[mapEntry](b, sp)}
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

// writeUK writes user key uk of key k's map, entry e: el (ok), or uk
// removed (!ok), into the map itself, cloned first if a snapshot may
// share it (see own). Unless k changed otherwise since the last capture,
// the next delta holds only the user keys so written, with the changes
// recorded (groups.touchUK, ukRecord). A map with a TTL is recorded as
// changed whole: its delta writes it whole anyway (its elements'
// timestamps are not in op 3).
func (t *mapTable) writeUK(i int, k any, e mapEntry, uk any, el elem, ok bool) {
	cloned := e.ver != t.b.mapVersion
	if cloned {
		e = mapEntry{cloneElems(e.m), t.b.mapVersion}
	}
	if t.ttl.Enabled() {
		t.setUK(e, uk, el, ok)
		if cloned {
			t.data.put(i, k, e)
		} else {
			t.data.touch(i, k)
		}
		return
	}
	old, had := e.m.get(uk)
	fresh := !had || old.ver != t.b.version
	var at int
	if cloned {
		at = t.data.putUK(i, k, e, e.m, uk, el.v, ok, fresh, int(old.ts))
	} else {
		at = t.data.touchUK(i, k, e.m, uk, el.v, ok, fresh, int(old.ts))
	}
	el.ts = int64(at) // where its change is (see elem)
	t.setUK(e, uk, el, ok)
}

// setUK writes el under uk in e's map (ok), or removes uk.
func (t *mapTable) setUK(e mapEntry, uk any, el elem, ok bool) {
	if ok {
		e.m.set(uk, el)
	} else {
		e.m.del(uk)
	}
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
	return getUK(t, uk, handOut, func(m *ukMap, uk any) (elem, bool) { return m.get(uk) })
}

// GetString is Get for a string user key (state.StringKeyGetter): uk is
// boxed, and copied, only when the read writes the entry.
func (t *mapTable) GetString(uk string) (any, bool) {
	return getUK(t, ukString(uk), true, func(m *ukMap, uk ukString) (elem, bool) { return m.getString(string(uk)) })
}

// ukString is a string user key that GetString read: the caller may write
// its bytes again, so a write keeps a copy.
type ukString string

// getUK is get of user key uk, which find looks up in a map: it removes
// an expired value, refreshes the TTL if reads do, and makes the value
// private when handing it out.
func getUK[U comparable](t *mapTable, uk U, handOut bool, find func(m *ukMap, uk U) (elem, bool)) (any, bool) {
	k, i, e, ok := t.entry()
	if !ok {
		return nil, false
	}
	el, has := find(e.m, uk)
	if !has {
		return nil, false
	}
	box := func() any {
		if s, ok := any(uk).(ukString); ok {
			return strings.Clone(string(s))
		}
		return uk
	}
	changed := false
	if t.ttl.Enabled() {
		now := t.b.opts.Clock()
		if t.ttl.Expired(el.ts, now) {
			t.remove(i, k, e, box())
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
		t.writeUK(i, k, e, box(), el, true)
	}
	return el.v, true
}

// remove deletes uk, which e holds, and the whole entry if it was the last.
func (t *mapTable) remove(i int, k any, e mapEntry, uk any) {
	if e.m.len() == 1 {
		t.data.del(i, k)
		return
	}
	t.writeUK(i, k, e, uk, elem{}, false)
}

func (t *mapTable) Put(uk, v any) {
	k, i, e, ok := t.entry()
	el := elem{v, t.now(), t.b.version}
	if ok {
		t.writeUK(i, k, e, uk, el, true)
		return
	}
	e = mapEntry{&ukMap{}, t.b.mapVersion}
	e.m.set(uk, el)
	t.data.put(i, k, e)
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
	for el := range e.m.values() {
		if !t.ttl.Expired(el.ts, now) {
			live++
		}
	}
	if live == 0 {
		return buf, false
	}
	buf = wire.AppendUvarint(buf, uint64(live))
	// The user keys encoded as a snapshot's keys are, string keys unboxed.
	w := &writer{keyCodec: t.sp.UserKeyCodec}
	for uk, el := range e.m.encoded(w) {
		if t.ttl.Expired(el.ts, now) {
			continue
		}
		if t.ttl.Enabled() {
			buf = wire.AppendVarint(buf, el.ts)
		}
		buf = wire.AppendBytes(buf, uk)
		buf = appendPrefixed(buf, t.sp.Codec, el.v)
	}
	return buf, true
}

// encodeUKs appends the user key changes of record r, for a delta (op 3
// in incremental.go): their number, then each user key and a byte 1 and
// its value, or a byte 0 when removed.
func (t *mapTable) encodeUKs(buf []byte, r *ukRecord) []byte {
	buf = wire.AppendUvarint(buf, uint64(len(r.changes)))
	for j := range r.changes {
		c := &r.changes[j]
		if c.uk.o == nil {
			start := len(buf)
			buf = prefixLength(state.EncodeString(t.sp.UserKeyCodec, buf, c.uk.s), start)
		} else {
			buf = appendPrefixed(buf, t.sp.UserKeyCodec, c.uk.boxed())
		}
		if !c.ok {
			buf = append(buf, 0)
			continue
		}
		buf = appendPrefixed(append(buf, 1), t.sp.Codec, c.v)
	}
	return buf
}

// detach makes each entry of a delta capture hold what its delta reads,
// apart from the live map, which the owner goes on writing in place: for
// a map changed in some user keys only (uks), nothing (an entry without
// a map, so that encoding it whole fails loudly) — its delta writes the
// changes it returns, per group, instead; for any other, a copy of its
// map. The changes are this capture's records as they are when the
// delta covers this capture alone (alone); otherwise, for each user key
// of the union, this capture's change or the live map's value now.
func (t *mapTable) detach(captured []keyMap[mapEntry], d tableDelta) []userKeys {
	if t.ttl.Enabled() { // written whole (see writeUK)
		for _, m := range captured {
			for k, e := range m.all() {
				m.set(k, mapEntry{cloneElems(e.m), e.ver})
			}
		}
		return nil
	}
	partial := make([]userKeys, len(captured))
	for i, m := range captured {
		var uks, own userKeys
		if i < len(d.uks) {
			uks = d.uks[i]
		}
		if i < len(d.own) {
			own = d.own[i]
		}
		if d.alone {
			partial[i] = uks
		} else {
			partial[i] = sizedAs[*ukRecord](uks)
		}
		p := partial[i]
		detachKind(t, m.w, uks.w, own.w, p.w, d.alone)
		detachKind(t, m.f, uks.f, own.f, p.f, d.alone)
		detachKind(t, m.s, uks.s, own.s, p.s, d.alone)
		detachKind(t, m.a, uks.a, own.a, p.a, d.alone)
	}
	return partial
}

// detachKind is detach of one kind of key of a group: m's entries, the
// union's records uks and this capture's own, into partial unless alone.
func detachKind[K comparable, M kindMap[K, mapEntry], U kindMap[K, *ukRecord]](t *mapTable, m M, uks, own, partial U, alone bool) {
	for k, e := range m.all() { // setting keys the range has met is safe
		u, ok := uks.get(k)
		m.set(k, t.detached(e, ok))
		if ok && !alone {
			o, _ := own.get(k)
			partial.set(k, changesOf(e, u, o))
		}
	}
}

// detached is what a delta capture holds of entry e: nothing of its map
// when only some user keys changed (partial), a copy of it otherwise.
func (t *mapTable) detached(e mapEntry, partial bool) mapEntry {
	if partial {
		return mapEntry{ver: e.ver}
	}
	return mapEntry{cloneElems(e.m), e.ver}
}

// changesOf returns a record of the changes of the user keys of union u,
// a delta's record covering several captures: own's change (this
// capture's record, nil if it has none of the key) or, for a user key
// changed only before, entry e's value now.
func changesOf(e mapEntry, u, own *ukRecord) *ukRecord {
	r := newUKRecord(u.len(), noGen)
	var ownChange func(userKey) (ukChange, bool)
	if own != nil {
		ownChange = own.lookupFunc()
	}
	u.eachKey(func(uk userKey) {
		if own != nil {
			if o, ok := ownChange(uk); ok {
				r.put(uk, o.v, o.ok, true, 0)
				return
			}
		}
		el, ok := e.m.getKey(uk)
		r.put(uk, el.v, ok, true, 0)
	})
	return r
}

func (t *mapTable) decode(p []byte, hasTS bool, now int64) (mapEntry, bool, error) {
	r := wire.NewReader(p)
	n := r.Count(2)
	m := &ukMap{}
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
			m = sizedUKs(uk, n)
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
	m := &ukMap{}
	for uk, el := range e.m.all() {
		if !t.ttl.Expired(el.ts, now) {
			m.set(uk, el)
		}
	}
	return mapEntry{m, t.b.mapVersion}, n, m.len() > 0
}
