package heap

import "slices"

// ukRecord is the record of one map's user keys written or removed since
// the last capture (groups.uks), each with its change as it stands: the
// value written last, or the removal. A delta capture that covers this
// capture alone takes the changes as they are (mapTable.detach) and its
// delta encodes them (encodeUKs). No user key is looked up in the live
// map at the capture, which runs on the task's goroutine between two
// records: Nexmark q16's COUNT DISTINCT sets hold millions of values,
// whose probes miss the cache, and its captures at 10 M events took a
// median 101 ms with those lookups, 12 ms without.
//
// The values are held for the capture's own snapshot only. A capture
// waits in the chain's pending list after its snapshot is written (a later
// delta may cover it too, and needs its user keys); release drops the
// values when the snapshot lands, so the list keeps no value reachable
// that the state removed or overwrote (TestIncrementalKeepsNoRemovedValues;
// 958513a kept them and was reverted).
//
// A write finds the change it replaces without a search: the live map's
// element of a user key written since the capture holds the position of
// its change (elem.ts, which a map without a TTL has no other use for;
// see mapTable.writeUK). The index is made only when a search is needed
// (a removal recorded, a position gone stale): COUNT DISTINCT's records
// are written, not searched. Keeping an index of every change cost q16 at
// 10 M events 3 of its 47 CPU-s (touchUK 6.6 -> 4.0 s in the profiles; 4
// interleaved pairs, 50.9 -> 47.0 CPU-s).
//
// After its capture a record is read only: its user keys (eachKey, len)
// on any goroutine, its changes by its own snapshot, until release. The
// owner reads its gen alone after that (ukMap.rec), which nobody writes
// after the record is made.
type ukRecord struct {
	changes []ukChange
	// removals: some change recorded is a removal (see set).
	removals bool
	// whole: touch made the key changed wholly since, and dropped the
	// record; the writes after it are not recorded.
	whole bool
	// hint is how many user keys the key's record held at the last
	// capture: a record that outgrows smallRecord grows its changes (and
	// makes its index, if it needs one) for as many, so that they do not
	// grow their way there again, and one that stays small makes neither
	// large.
	hint int
	// index finds a user key's change in a record of more than
	// smallRecord changes (a map's window or two per key want no map of
	// their own). It is made at the first search there (find) and holds
	// every user key after.
	index keyMap[int32]
	// gen is the generation of groups.uks the record was made in (see
	// ukMap.rec); noGen for the records a snapshot makes.
	gen uint64
}

// noGen is the gen of a record no groups holds.
const noGen = ^uint64(0)

// ukChange is one user key's change: the value written (ok), or its
// removal (!ok).
type ukChange struct {
	uk userKey
	v  any
	ok bool
}

// userKey is a user key as a record holds it: a string key's header
// inline in s (o nil), any other key boxed in o. A delta's encoding reads
// each change a second after its write, from memory long out of the
// cache: a string held as an interface cost a miss on its boxed header
// before the one on its bytes (q16 at 10 M events: the type assertion
// alone took 1.65 of encodeUKs' 3.1 s).
type userKey struct {
	o any
	s string
}

// nilUserKey stands in o for a nil user key, which o nil would read as a
// string.
type nilUserKey struct{}

// userKeyOf returns the userKey of the user key uk.
func userKeyOf(uk any) userKey {
	switch k := uk.(type) {
	case string:
		return userKey{s: k}
	case nil:
		return userKey{o: nilUserKey{}}
	}
	return userKey{o: uk}
}

// boxed returns the user key as callers pass it.
func (k userKey) boxed() any {
	switch k.o.(type) {
	case nil:
		return k.s
	case nilUserKey:
		return nil
	}
	return k.o
}

// smallRecord is the most changes a record finds by a scan.
const smallRecord = 8

// newUKRecord returns an empty record of generation gen for about n
// changes (see hint).
func newUKRecord(n int, gen uint64) *ukRecord {
	return &ukRecord{changes: make([]ukChange, 0, min(max(n, 1), smallRecord+1)), hint: n, gen: gen}
}

// wholly marks the record of a key that changed wholly since (touch, which
// drops it) and lets go of its changes: its map may keep it (ukMap.rec)
// after the change, and must not keep the values alive.
func (r *ukRecord) wholly() {
	r.whole, r.changes, r.index = true, nil, keyMap[int32]{}
}

// len is the number of user keys recorded.
func (r *ukRecord) len() int {
	if n := r.index.len(); n > 0 {
		return n
	}
	return len(r.changes)
}

// set records user key uk's change, v written (ok) or uk removed, and
// returns its position plus one (the live element's at for the next
// write). fresh says the live map held no element of uk written since the
// last capture: unless a removal is recorded (which leaves none), uk has
// no change recorded yet, and set spares the search (COUNT DISTINCT's new
// values). Otherwise at, when not 0, is where the element written last
// says uk's change is; it is taken after a check, as an element can
// carry a position from before the capture (privateAll copies it). Were
// fresh wrong, uk would be recorded twice, the later change last, as a
// restore applies them: a larger delta, never a wrong one.
func (r *ukRecord) set(uk, v any, ok, fresh bool, at int) int {
	return r.put(userKeyOf(uk), v, ok, fresh, at)
}

// put is set of a userKey.
func (r *ukRecord) put(uk userKey, v any, ok, fresh bool, at int) int {
	search := !fresh || r.removals
	r.removals = r.removals || !ok
	if j := at - 1; !fresh && j >= 0 && j < len(r.changes) && r.changes[j].uk == uk {
		r.changes[j].v, r.changes[j].ok = v, ok
		return at
	}
	if search {
		if j := r.find(uk); j >= 0 {
			r.changes[j].v, r.changes[j].ok = v, ok
			return j + 1
		}
	}
	r.changes = append(r.changes, ukChange{uk, v, ok})
	n := len(r.changes)
	switch {
	case r.index.len() > 0:
		r.indexChange(n - 1)
	case n == smallRecord+1:
		r.changes = slices.Grow(r.changes, max(r.hint-n, n))
	}
	return n
}

// find returns the index of uk's change, or -1. In a record of more than
// smallRecord changes it searches the index, made here the first time.
func (r *ukRecord) find(uk userKey) int {
	if r.index.len() == 0 && len(r.changes) > smallRecord {
		r.index = indexOf(r.changes, max(r.hint, 2*len(r.changes)))
	}
	if r.index.len() > 0 {
		if j, ok := r.index.getKey(uk); ok {
			return int(j)
		}
		return -1
	}
	for j := range r.changes {
		if r.changes[j].uk == uk {
			return j
		}
	}
	return -1
}

func (r *ukRecord) indexChange(j int) { r.index.setKey(r.changes[j].uk, int32(j)) }

// indexOf returns an index of changes' user keys, made for n.
func indexOf(changes []ukChange, n int) keyMap[int32] {
	index := sized[int32](changes[0].uk.boxed(), n)
	for j := range changes {
		index.setKey(changes[j].uk, int32(j))
	}
	return index
}

// lookupFunc returns a function that finds the change recorded of a user
// key, if any. It does not write the record (a captured one may be read
// on other goroutines): a record of more than smallRecord changes without
// an index gets an index of its own here.
func (r *ukRecord) lookupFunc() func(uk userKey) (ukChange, bool) {
	index := r.index
	if index.len() == 0 && len(r.changes) > smallRecord {
		index = indexOf(r.changes, len(r.changes))
	}
	return func(uk userKey) (ukChange, bool) {
		if index.len() > 0 {
			j, ok := index.getKey(uk)
			if !ok {
				return ukChange{}, false
			}
			return r.changes[j], true
		}
		for _, c := range r.changes {
			if c.uk == uk {
				return c, true
			}
		}
		return ukChange{}, false
	}
}

// eachKey calls f with every user key recorded. It reads the keys alone,
// so it may run while release drops the values: a released record reads
// its keys from its index.
func (r *ukRecord) eachKey(f func(uk userKey)) {
	if r.index.len() == 0 {
		for j := range r.changes {
			f(r.changes[j].uk) // not copied whole: release may be writing its value
		}
		return
	}
	for k := range r.index.w.all() {
		f(userKey{s: k.str()})
	}
	for k := range r.index.f {
		f(userKey{s: k.str()})
	}
	for s := range r.index.s {
		f(userKey{s: s})
	}
	for a := range r.index.a {
		f(userKeyOf(a))
	}
}

// addKey records user key uk without a value: a union's record
// (userKeyChanges), read for its keys only.
func (r *ukRecord) addKey(uk userKey) {
	if r.find(uk) < 0 {
		r.put(uk, nil, false, true, 0)
	}
}

// release drops the values recorded, once the capture's snapshot is
// written or dropped (see ukRecord): an indexed record drops its changes
// (its index holds its keys), any other the values of its changes.
func (r *ukRecord) release() {
	if r.index.len() > 0 {
		r.changes = nil
		return
	}
	for j := range r.changes {
		r.changes[j].v = nil
	}
}
