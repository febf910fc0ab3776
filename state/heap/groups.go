package heap

import (
	"maps"
	"slices"
)

// groups holds one state's entries: a map per key group of the backend's
// range, indexed by key group minus the range's start. A nil map is an
// empty group.
//
// Copy-on-write: vers[i] is the backend version in which maps[i] was
// created or cloned. A snapshot captures the map references and bumps the
// backend version; the next write to a captured map finds vers[i] older and
// clones it first, so the snapshot's map is never written again.
//
// With incremental checkpoints (track), dirty[i] holds the keys of group i
// written or deleted since the last capture: what the next delta must hold
// (incremental.go). Tracking starts at the first capture, or at creation
// when the backend has captured before: until then the next checkpoint is
// a base anyway, and a job without checkpoints never pays for it.
type groups[E any] struct {
	maps  []map[any]E
	vers  []uint64
	track bool
	dirty []map[any]struct{}
}

// newGroups returns n empty groups, tracking changed keys from now on when
// tracking (see groups) or from the first capture when track.
func newGroups[E any](n int, track, tracking bool) groups[E] {
	g := groups[E]{maps: make([]map[any]E, n), vers: make([]uint64, n), track: track}
	if tracking {
		g.dirty = make([]map[any]struct{}, n)
	}
	return g
}

func (g *groups[E]) get(i int, k any) (E, bool) {
	e, ok := g.maps[i][k]
	return e, ok
}

// writable returns group i's map for writing at version ver.
func (g *groups[E]) writable(i int, ver uint64) map[any]E {
	m := g.maps[i]
	switch {
	case m == nil:
		m = make(map[any]E)
	case g.vers[i] != ver:
		m = maps.Clone(m)
	default:
		return m
	}
	g.maps[i], g.vers[i] = m, ver
	return m
}

func (g *groups[E]) put(i int, k any, e E, ver uint64) {
	g.writable(i, ver)[k] = e
	g.touch(i, k)
}

func (g *groups[E]) del(i int, k any, ver uint64) {
	if _, ok := g.maps[i][k]; ok {
		delete(g.writable(i, ver), k)
		g.touch(i, k)
	}
}

// touch records that key k of group i changed, when tracking.
func (g *groups[E]) touch(i int, k any) {
	if g.dirty == nil {
		return
	}
	d := g.dirty[i]
	if d == nil {
		d = make(map[any]struct{})
		g.dirty[i] = d
	}
	d[k] = struct{}{}
}

// capture returns the current map references, for a snapshot, and the
// keys changed since the last capture (nil when not tracking yet), which
// it starts afresh.
func (g *groups[E]) capture() ([]map[any]E, []map[any]struct{}) {
	d := g.dirty
	if g.track {
		g.dirty = make([]map[any]struct{}, len(g.maps))
	}
	return slices.Clone(g.maps), d
}

// forget drops the record of changed keys (after a restore loaded the
// entries a snapshot already holds).
func (g *groups[E]) forget() {
	if g.dirty != nil {
		clear(g.dirty)
	}
}

// keys returns the keys of group i for which keep returns true.
func (g *groups[E]) keys(i int, keep func(E) bool) []any {
	var ks []any
	for k, e := range g.maps[i] {
		if keep(e) {
			ks = append(ks, k)
		}
	}
	return ks
}
