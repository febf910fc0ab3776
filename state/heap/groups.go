package heap

import "slices"

// groups holds one state's entries: a map per key group of the backend's
// range, indexed by key group minus the range's start. A nil map is an
// empty group.
//
// Copy-on-write: vers[i] is the backend's map version (*mapVer) in which
// maps[i] was created or cloned. A snapshot that captures the map
// references bumps the map version; the next write to a captured map finds
// vers[i] older and clones it first, so the snapshot's map is never written
// again. A snapshot for an incremental delta captures only the changed
// keys' entries (Backend.Snapshot) and leaves the map version alone: the
// maps are then written in place, and the clones — a fifth of Nexmark q4's
// CPU at 1 s checkpoints — are not made.
//
// With incremental checkpoints (track), dirty[i] holds the keys of group i
// written or deleted since the last capture: what the next delta must hold
// (incremental.go). Tracking starts at the first capture, or at creation
// when the backend has captured before: until then the next checkpoint is
// a base anyway, and a job without checkpoints never pays for it.
type groups[E any] struct {
	maps   []keyMap[E]
	vers   []uint64
	mapVer *uint64
	track  bool
	dirty  []changes
	// uks[i], for keys of dirty[i] whose map had only some user keys
	// written or removed, holds those user keys and their changes: the
	// next delta then holds only those (see touchUK, ukRecord).
	uks []userKeys
	// lastUKs is uks as the last capture took it: a key's record starts
	// sized as it was then (touchUK), as the changed keys do (sizedLike).
	// Only its lengths are read.
	lastUKs []userKeys
	// logging: changes are logged (log) rather than recorded in dirty at
	// once; see logChanges.
	logging bool
	log     [][]logged
	// gen is the generation of uks: bumped whenever the records are taken
	// or dropped (takeDirty, forget). A ukRecord of generation gen that is
	// not whole is the one uks holds for its key (ukMap.rec).
	gen uint64
}

// logged is one change in groups.log: key k changed how (see changes).
// A short string key is held as its short key (isShort, sk; k nil): the
// log is recorded long after the key was boxed, and reading the key
// through its box missed the caches twice per change (Nexmark q7 at 10 M
// events).
type logged struct {
	k       any
	sk      shortKey
	how     int
	isShort bool
}

// loggedOf is the log's entry for key k changed how.
func loggedOf(k any, how int) logged {
	if s, ok := k.(string); ok {
		if sk, ok := short(s); ok {
			return logged{sk: sk, how: how, isShort: true}
		}
	}
	return logged{k: k, how: how}
}

// logChanges makes g log each change, in order, in a slice per group, and
// record the log in dirty only when a capture takes it (takeDirty). It is
// for the tables whose entries tell a key's first change since the last
// capture (a placed table's version), so that a key is logged about once
// per checkpoint interval (logChange bounds the rest), and that have no
// user keys (uks): recording a change at once probes a map per group that
// holds an interval's keys, which at Nexmark q18's 10 M events missed the
// caches on most changes (6 % of its CPU); a log is appended to, and
// recorded group by group.
func (g *groups[E]) logChanges() {
	g.logging = true
	if g.dirty != nil {
		g.log = make([][]logged, len(g.maps))
	}
}

// changes is one key group's record of the keys changed since a capture,
// each with how: wholly (changedWhole), or, for a list only appended to
// (without TTL), the length it had before (touchAppend), so that the next
// delta holds only the elements appended. It is a keyMap, so SQL's string
// keys are held unboxed: the record is written at every first change of a
// key and read at every capture, a tenth of Nexmark q7's CPU at 10 M
// events while its keys were boxed in a map[any] (and the appends' lengths
// in a second map).
type changes = keyMap[int]

// changedWhole is a key's record in changes when it changed otherwise
// than by appends: the next delta holds its whole entry.
const changedWhole = -1

// userKeys is one key group's record of maps changed in some user keys
// only, with those user keys and their changes (groups.uks, ukRecord).
type userKeys = keyMap[*ukRecord]

// newGroups returns n empty groups, tracking changed keys from now on when
// tracking (see groups) or from the first capture when track.
func newGroups[E any](n int, mapVer *uint64, track, tracking bool) groups[E] {
	g := groups[E]{maps: make([]keyMap[E], n), vers: make([]uint64, n), mapVer: mapVer, track: track}
	if tracking {
		g.dirty, g.uks = make([]changes, n), make([]userKeys, n)
	}
	return g
}

// record records change c of group i, as touch or markDirty would have
// when it was logged: a whole change replaces an append's record, an
// append is recorded only for a key without a record.
func (g *groups[E]) record(i int, c *logged) {
	d := &g.dirty[i]
	if c.isShort {
		if wk, ok := c.sk.word(); ok {
			if d.w == nil {
				d.w = newWordMap[int](0)
			}
			if c.how == changedWhole || !d.w.has(wk) { // recordIn's rule
				d.w.set(wk, c.how)
			}
			return
		}
		if d.f == nil {
			d.f = make(map[shortKey]int)
		}
		recordIn(d.f, &c.sk, c.how)
		return
	}
	if c.how == changedWhole {
		d.set(c.k, changedWhole)
		return
	}
	if _, ok := d.get(c.k); !ok {
		d.set(c.k, c.how)
	}
}

// recordIn is record's change of short key *sk in m (a word key's is
// written out in record, over a wordMap), a short key
// looked up in place in the log, not copied (see captureOf).
func recordIn[K comparable](m map[K]int, sk *K, how int) {
	if how == changedWhole {
		m[*sk] = changedWhole
		return
	}
	if _, ok := m[*sk]; !ok {
		m[*sk] = how
	}
}

// recordLog records every change logged (see logChanges) and empties the
// log.
func (g *groups[E]) recordLog() {
	for i := range g.log {
		g.recordGroup(i)
	}
}

// recordGroup records the changes logged for group i and empties its log.
func (g *groups[E]) recordGroup(i int) {
	l := g.log[i]
	if len(l) == 0 {
		return
	}
	if g.dirty[i].len() == 0 {
		g.dirty[i] = sizedLog(l)
	}
	for j := range l {
		g.record(i, &l[j])
	}
	clear(l)
	g.log[i] = l[:0]
}

// sizedLog returns an empty record with room for the keys of log l, of
// its first key's kind.
func sizedLog(l []logged) changes {
	if l[0].isShort {
		if _, ok := l[0].sk.word(); ok {
			return changes{w: newWordMap[int](len(l))}
		}
		return changes{f: make(map[shortKey]int, len(l))}
	}
	return sized[int](l[0].k, len(l))
}

// logChange logs change c of group i, recording the group's log once it
// holds maxLogged changes: only a key's first write since a capture is
// logged when it finds the key's entry, but a deletion, the write after
// it and a list's replacement are logged every time, and a key written
// so again and again must not grow the log with its writes (a
// reviewer's find).
func (g *groups[E]) logChange(i int, c logged) {
	g.log[i] = append(g.log[i], c)
	if len(g.log[i]) >= maxLogged {
		g.recordGroup(i)
	}
}

// maxLogged is the most changes a group's log holds (a variable for
// tests).
var maxLogged = 4096

func (g *groups[E]) get(i int, k any) (E, bool) { return g.maps[i].get(k) }

// writable returns group i's maps for writing: clones of those a snapshot
// captured (see groups).
func (g *groups[E]) writable(i int) *keyMap[E] {
	if ver := *g.mapVer; g.vers[i] != ver {
		g.maps[i], g.vers[i] = g.maps[i].clone(), ver
	}
	return &g.maps[i]
}

func (g *groups[E]) put(i int, k any, e E) {
	g.writable(i).set(k, e)
	g.touch(i, k)
}

func (g *groups[E]) del(i int, k any) {
	if _, ok := g.maps[i].get(k); ok {
		g.writable(i).del(k)
		g.touch(i, k)
	}
}

// putAppend stores e, the entry of k after elements were appended to the
// n it had, and records the append (touchAppend).
func (g *groups[E]) putAppend(i int, k any, e E, n int) {
	g.writable(i).set(k, e)
	g.touchAppend(i, k, n)
}

// touch records that key k of group i changed, when tracking: the next
// delta holds its whole entry.
func (g *groups[E]) touch(i int, k any) {
	if g.dirty == nil {
		return
	}
	if g.logging {
		g.logChange(i, loggedOf(k, changedWhole))
		return
	}
	g.dirty[i].set(k, changedWhole)
	if g.uks[i].len() > 0 {
		if r, ok := g.uks[i].get(k); ok {
			r.wholly()
			g.uks[i].del(k)
		}
	}
}

// putUK stores e, the entry of k after its user key uk was written (v,
// ok) or removed (!ok), and records that (touchUK, whose result it
// returns).
func (g *groups[E]) putUK(i int, k any, e E, m *ukMap, uk, v any, ok, fresh bool, at int) int {
	g.writable(i).set(k, e)
	return g.touchUK(i, k, m, uk, v, ok, fresh, at)
}

// touchUK records, when tracking, that user key uk of key k's map in
// group i was written (v, ok) or removed (!ok): unless k changed
// otherwise since the last capture (touch), the next delta holds only the
// user keys so recorded, with their changes. A key changed wholly earlier
// stays so. m is k's map, which keeps k's current record (ukMap.rec).
// fresh and at are ukRecord.set's; it returns set's result, 0 when
// nothing was recorded.
func (g *groups[E]) touchUK(i int, k any, m *ukMap, uk, v any, ok, fresh bool, at int) int {
	if g.dirty == nil {
		return 0
	}
	// The record k's map keeps, if made since the last capture, is k's
	// current one: no probe of uks for the writes after a key's first
	// (Nexmark q16 at 10 M events spent 4.8 % of its CPU in that probe,
	// its maps of one COUNT DISTINCT per channel written at every bid).
	if r := m.rec; r != nil && r.gen == g.gen {
		if r.whole {
			return 0 // changed wholly since the capture
		}
		return r.set(uk, v, ok, fresh, at)
	}
	// A map that does not point to its key's record finds it here. A key
	// with a record is dirty in some user keys only (touch removes the
	// record of a key it makes whole): one probe, instead of the dirty
	// set's and then this one.
	if r, partial := g.uks[i].get(k); partial {
		if r.gen == g.gen {
			m.rec = r
		}
		return r.set(uk, v, ok, fresh, at)
	}
	if !g.markDirty(i, k, changedWhole) {
		return 0 // changed wholly since the capture
	}
	n := 1
	if i < len(g.lastUKs) {
		if last, _ := g.lastUKs[i].get(k); last != nil {
			n = max(n, last.len())
		}
	}
	r := newUKRecord(n, g.gen)
	g.uks[i].set(k, r)
	m.rec = r
	return r.set(uk, v, ok, true, 0)
}

// touchAppend records, when tracking, that elements were appended to the
// n of key k in group i: unless k changed otherwise since the last
// capture (touch), the next delta holds only the elements from index n.
// A key changed earlier keeps its record: whole, or appended from an
// earlier length.
func (g *groups[E]) touchAppend(i int, k any, n int) {
	switch {
	case g.dirty == nil:
	case g.logging:
		g.logChange(i, loggedOf(k, n))
	default:
		g.markDirty(i, k, n)
	}
}

// markDirty records key k of group i as changed how (see changes) unless
// it has a record already, and reports whether it was new there: the
// second probe finds the slot the first one brought into the cache.
func (g *groups[E]) markDirty(i int, k any, how int) bool {
	d := &g.dirty[i]
	if _, ok := d.get(k); ok {
		return false
	}
	d.set(k, how)
	return true
}

// takeDirty returns the keys changed since the last capture (nil when not
// tracking yet) and the maps changed in some user keys only (see uks), and
// starts a new record.
func (g *groups[E]) takeDirty() ([]changes, []userKeys) {
	if g.logging && g.dirty != nil {
		g.recordLog()
	}
	d, u := g.dirty, g.uks
	if g.track {
		g.gen++
		n := len(g.maps)
		switch {
		case d == nil:
			g.dirty, g.uks = make([]changes, n), make([]userKeys, n)
			if g.logging {
				g.log = make([][]logged, n)
			}
		case g.logging: // recordLog sizes each record by its log
			g.dirty, g.uks = make([]changes, n), make([]userKeys, n)
		default:
			g.dirty, g.uks = sizedLike(d), sizedLike(u)
		}
		g.lastUKs = u
	}
	return d, u
}

// sizedLike returns new empty records, each made for as many keys as
// prev's record of the same group holds: the keys changed between two
// checkpoints are about as many as between the two before, so the record
// does not grow (and rehash) its way there again at every checkpoint,
// nearly a tenth of Nexmark q7's CPU at 10 M events.
func sizedLike[V any](prev []keyMap[V]) []keyMap[V] {
	out := make([]keyMap[V], len(prev))
	for i, m := range prev {
		out[i] = m.sizedLike()
	}
	return out
}

// capture returns the current map references, for a snapshot of every
// entry; the caller bumps the map version.
func (g *groups[E]) capture() []keyMap[E] { return slices.Clone(g.maps) }

// captureKeys returns, per group, the current entries of keys (those that
// have one): what a delta writes.
func (g *groups[E]) captureKeys(keys []changes) []keyMap[E] {
	out := make([]keyMap[E], len(g.maps))
	for i, ks := range keys {
		m, src := sizedAs[E](ks), g.maps[i]
		copyKeys(m.w, src.w, ks.w)
		copyKeys(m.f, src.f, ks.f)
		copyKeys(m.s, src.s, ks.s)
		copyKeys(m.a, src.a, ks.a)
		out[i] = m
	}
	return out
}

// copyKeys sets in out the entry of src under each key of keys that src
// holds.
func copyKeys[K comparable, E any, M kindMap[K, E], C kindMap[K, int]](out, src M, keys C) {
	for k := range keys.all() {
		if e, ok := src.get(k); ok {
			out.set(k, e)
		}
	}
}

// capturedKey is one changed key of a group as a delta capture took it:
// how it changed (see changes) and its entry, when it had one (ok).
type capturedKey[K comparable, E any] struct {
	k   K
	how int
	e   E
	ok  bool
}

// capturedList is what a delta capture takes of one group: its changed
// keys with their entries, in slices. A map of those entries, made per
// group at every capture, was filled there and probed again by the
// writer for each key (2 % of Nexmark q18's CPU at 10 M events); a slice
// is appended to and read in order. keys is the record the list was
// taken from: the writer checks whether it writes that record
// (capturedGroups.appendList).
type capturedList[E any] struct {
	keys changes
	w    []capturedKey[wordKey, E]
	f    []capturedKey[shortKey, E]
	s    []capturedKey[string, E]
	a    []capturedKey[any, E]
}

func (l *capturedList[E]) len() int { return len(l.w) + len(l.f) + len(l.s) + len(l.a) }

// captureList returns, per group, the keys of keys with their current
// entries (captureKeys' as lists).
func (g *groups[E]) captureList(keys []changes) []capturedList[E] {
	out := make([]capturedList[E], len(g.maps))
	for i, ks := range keys {
		src, l := g.maps[i], &out[i]
		l.keys, l.w, l.f = ks, captureOf(src.w, ks.w), captureOf(src.f, ks.f)
		l.s, l.a = captureOf(src.s, ks.s), captureOf(src.a, ks.a)
	}
	return out
}

// captureOf returns each key of keys, how it changed, and its entry in
// src. The keys are copied out first and looked up in a second loop, each
// from its place in out: a lookup of the copy a range over keys makes
// reads it from stores that cannot forward to the hash's loads, and so
// waits for the previous lookup's miss (see BenchmarkMapProbeOrder).
// These lookups, into a map of every key, then overlap: with the log's
// short keys (logged), Nexmark q7's captures at 10 M events took 106 ns
// per event instead of 230.
func captureOf[K comparable, E any, M kindMap[K, E], C kindMap[K, int]](src M, keys C) []capturedKey[K, E] {
	if keys.len() == 0 {
		return nil
	}
	out := make([]capturedKey[K, E], 0, keys.len())
	for k, how := range keys.all() {
		out = append(out, capturedKey[K, E]{k: k, how: how})
	}
	for j := range out {
		out[j].e, out[j].ok = src.get(out[j].k)
	}
	return out
}

// forget drops the record of changed keys (after a restore loaded the
// entries a snapshot already holds).
func (g *groups[E]) forget() {
	if g.dirty != nil {
		g.gen++
		clear(g.dirty)
		clear(g.uks)
		g.lastUKs = nil
		for i := range g.log {
			clear(g.log[i])
			g.log[i] = g.log[i][:0]
		}
	}
}

// keys returns the keys of group i for which keep returns true.
func (g *groups[E]) keys(i int, keep func(E) bool) []any {
	var ks []any
	for k, e := range g.maps[i].all() {
		if keep(e) {
			ks = append(ks, k)
		}
	}
	return ks
}
