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
type groups[E any] struct {
	maps []map[any]E
	vers []uint64
}

func newGroups[E any](n int) groups[E] {
	return groups[E]{maps: make([]map[any]E, n), vers: make([]uint64, n)}
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

func (g *groups[E]) put(i int, k any, e E, ver uint64) { g.writable(i, ver)[k] = e }

func (g *groups[E]) del(i int, k any, ver uint64) {
	if _, ok := g.maps[i][k]; ok {
		delete(g.writable(i, ver), k)
	}
}

// capture returns the current map references, for a snapshot.
func (g *groups[E]) capture() []map[any]E { return slices.Clone(g.maps) }

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
