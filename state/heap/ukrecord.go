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
// median 101 ms with those lookups, 12 ms without. The CPU moves to the
// writes (the record's index) more than it goes away.
//
// The values are held for the capture's own snapshot only. A capture
// waits in the chain's pending list after its snapshot is written (a later
// delta may cover it too, and needs its user keys); release drops the
// values when the snapshot lands, so the list keeps no value reachable
// that the state removed or overwrote (TestIncrementalKeepsNoRemovedValues;
// 958513a kept them and was reverted).
//
// After its capture a record is read only: its user keys (eachKey, len)
// on any goroutine, its changes by its own snapshot, until release.
type ukRecord struct {
	changes []ukChange
	// removals: some change recorded is a removal (see set).
	removals bool
	// hint is how many user keys the key's record held at the last
	// capture: a record that outgrows smallRecord makes its index and
	// changes for as many, so that they do not grow their way there again,
	// and one that stays small makes neither large.
	hint int
	// index finds a user key's change once there are more than
	// smallRecord (a map's window or two per key want no map of their
	// own); it is made then and holds every user key after.
	index keyMap[int32]
}

// ukChange is one user key's change: the value written (ok), or its
// removal (!ok). The key is held as the caller passed it (boxed already).
type ukChange struct {
	uk any
	v  any
	ok bool
}

// smallRecord is the most changes a record finds by a scan.
const smallRecord = 8

// newUKRecord returns an empty record for about n changes (see hint).
func newUKRecord(n int) *ukRecord {
	return &ukRecord{changes: make([]ukChange, 0, min(max(n, 1), smallRecord+1)), hint: n}
}

// len is the number of user keys recorded.
func (r *ukRecord) len() int {
	if n := r.index.len(); n > 0 {
		return n
	}
	return len(r.changes)
}

// set records user key uk's change: v written (ok), or uk removed.
// fresh says the live map held no element of uk written since the last
// capture: unless a removal is recorded (which leaves none), uk has no
// change recorded yet, and set spares the search (COUNT DISTINCT's new
// values, whose index probes missed the cache). Were fresh wrong, uk
// would be recorded twice, the later change last, as a restore applies
// them: a larger delta, never a wrong one.
func (r *ukRecord) set(uk, v any, ok, fresh bool) {
	if !fresh || r.removals {
		if j := r.find(uk); j >= 0 {
			r.changes[j].v, r.changes[j].ok = v, ok
			r.removals = r.removals || !ok
			return
		}
	}
	r.removals = r.removals || !ok
	r.changes = append(r.changes, ukChange{uk, v, ok})
	switch n := len(r.changes); {
	case n == smallRecord+1 && r.index.len() == 0:
		r.index = sized[int32](uk, max(r.hint, 2*n))
		r.changes = slices.Grow(r.changes, max(r.hint-n, n))
		for j := range r.changes {
			r.indexChange(j)
		}
	case n > smallRecord+1:
		r.indexChange(n - 1)
	}
}

// find returns the index of uk's change, or -1.
func (r *ukRecord) find(uk any) int {
	if r.index.len() > 0 {
		if j, ok := r.index.get(uk); ok {
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

func (r *ukRecord) indexChange(j int) { r.index.set(r.changes[j].uk, int32(j)) }

// lookup returns the change recorded of user key uk, if any.
func (r *ukRecord) lookup(uk any) (ukChange, bool) {
	if j := r.find(uk); j >= 0 {
		return r.changes[j], true
	}
	return ukChange{}, false
}

// eachKey calls f with every user key recorded. It reads the keys alone,
// so it may run while release drops the values: a released record reads
// its keys from its index.
func (r *ukRecord) eachKey(f func(uk any)) {
	if r.index.len() == 0 {
		for j := range r.changes {
			f(r.changes[j].uk) // not copied whole: release may be writing its value
		}
		return
	}
	for s := range r.index.s {
		f(s)
	}
	for a := range r.index.a {
		f(a)
	}
}

// addKey records user key uk without a value: a union's record
// (userKeyChanges), read for its keys only.
func (r *ukRecord) addKey(uk any) {
	if r.find(uk) < 0 {
		r.set(uk, nil, false, true)
	}
}

// release drops the values recorded, once the capture's snapshot is
// written or dropped (see ukRecord): an indexed record drops its changes
// (its index holds its keys), a small one the values of its changes.
func (r *ukRecord) release() {
	if r.index.len() > 0 {
		r.changes = nil
		return
	}
	for j := range r.changes {
		r.changes[j].v = nil
	}
}
