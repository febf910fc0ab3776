package heap

import (
	"iter"
	"math/rand/v2"
)

// ukMap is one key's map of MapState: its user keys and their elems.
//
// A map of one short string user key holds it inline (one, oneEl), not in
// a table: a window operator's key mostly has one slice or window in its
// map, and a table of one entry is an object more whose header and slots a
// read of the key misses in turn. A second user key, or one that is not a
// short string, moves the inline one to the tables (spill); has implies
// that w and km are empty.
//
// String user keys that are word keys (COUNT DISTINCT's values of a
// BIGINT, a window's slice) are in w, a wordMap held in place: a probe
// reads the map's slots from here. Other user keys are in km (whose w is
// not used).
type ukMap struct {
	// rec is the key's record of user keys changed since the last capture
	// (groups.touchUK) when its gen is the groups' current one and it is
	// not whole: a write finds it here instead of in groups.uks. A clone
	// keeps it (the key's map the owner writes next, or a snapshot's copy,
	// which never reads it). A record of an earlier generation stays
	// reachable from here until the key's next write replaces it: its user
	// keys, not its values (release drops those when its snapshot lands),
	// at most one interval's changes per key. It comes first, beside has
	// and w: a write loads w.slots, w.seed, has and rec, near one another
	// (roughly: a ukMap is not aligned to a cache line).
	rec   *ukRecord
	has   bool
	w     wordMap[elem]
	km    keyMap[elem]
	one   shortKey
	oneEl elem
}

func (m *ukMap) len() int { return m.w.len() + m.km.len() + int(oneIf(m.has)) }

func (m *ukMap) get(uk any) (elem, bool) {
	if s, ok := uk.(string); ok {
		return m.getString(s)
	}
	return m.km.get(uk)
}

// getString is get of the string user key s, unboxed.
func (m *ukMap) getString(s string) (elem, bool) {
	if m.has {
		if sk, ok := short(s); ok && sk == m.one {
			return m.oneEl, true
		}
		return elem{}, false
	}
	if wk, ok := word(s); ok {
		return m.w.get(wk)
	}
	return m.km.getString(s)
}

// getKey is get of a record's user key (see userKey).
func (m *ukMap) getKey(k userKey) (elem, bool) {
	if k.o == nil {
		return m.getString(k.s)
	}
	return m.km.getKey(k)
}

// set stores el under uk.
func (m *ukMap) set(uk any, el elem) {
	if s, ok := uk.(string); ok {
		m.setString(s, el)
		return
	}
	m.spill()
	m.km.set(uk, el)
}

// setString stores el under the string user key s: inline when the map
// holds no other user key and s is short.
func (m *ukMap) setString(s string, el elem) {
	if m.has || m.len() == 0 { // a map of many goes to the tables at once, s made short once
		if sk, ok := short(s); ok && (!m.has || sk == m.one) {
			m.one, m.oneEl, m.has = sk, el, true
			return
		}
		m.spill()
	}
	if wk, ok := word(s); ok {
		m.w.set(wk, el)
		return
	}
	m.km.setString(s, el)
}

// spill moves the inline user key, if any, to the tables.
func (m *ukMap) spill() {
	if !m.has {
		return
	}
	switch wk, ok := m.one.word(); {
	case ok:
		m.w.set(wk, m.oneEl)
	default:
		if m.km.f == nil {
			m.km.f = make(map[shortKey]elem)
		}
		m.km.f[m.one] = m.oneEl
	}
	m.one, m.oneEl, m.has = shortKey{}, elem{}, false
}

func (m *ukMap) del(uk any) {
	if m.has {
		if s, ok := uk.(string); ok {
			if sk, ok := short(s); ok && sk == m.one {
				m.one, m.oneEl, m.has = shortKey{}, elem{}, false
			}
		}
		return
	}
	if s, ok := uk.(string); ok {
		if wk, ok := word(s); ok {
			m.w.del(wk)
			return
		}
	}
	m.km.del(uk)
}

// clone returns a copy that shares no table with m.
func (m *ukMap) clone() *ukMap {
	c := *m
	c.w, c.km = m.w.clone(), m.km.clone()
	return &c
}

// sizedUKs returns an empty ukMap with room for n user keys of uk's kind:
// one is held inline.
func sizedUKs(uk any, n int) *ukMap {
	if n <= 1 {
		return &ukMap{}
	}
	if s, ok := uk.(string); ok {
		if _, ok := word(s); ok {
			return &ukMap{w: sizedWordMap[elem](n)}
		}
	}
	return &ukMap{km: sized[elem](uk, n)}
}

// values yields every user key's elem.
func (m *ukMap) values() iter.Seq[elem] {
	return func(yield func(elem) bool) {
		if m.has {
			yield(m.oneEl)
			return
		}
		for _, e := range m.w.all() {
			if !yield(e) {
				return
			}
		}
		for e := range m.km.values() {
			if !yield(e) {
				return
			}
		}
	}
}

// all yields every user key and its elem, string user keys boxed (see
// keyMap.all). The inline user key is read before it is yielded, so the
// caller may set it again.
func (m *ukMap) all() iter.Seq2[any, elem] {
	return func(yield func(any, elem) bool) {
		if m.has {
			yield(m.one.str(), m.oneEl)
			return
		}
		for k, e := range m.w.all() {
			if !yield(k.str(), e) {
				return
			}
		}
		for k, e := range m.km.all() {
			if !yield(k, e) {
				return
			}
		}
	}
}

// encoded yields every user key encoded by w's key codec, with its elem
// (see keyMap.encoded).
func (m *ukMap) encoded(w *writer) iter.Seq2[[]byte, elem] {
	return func(yield func([]byte, elem) bool) {
		if m.has {
			w.key = w.encodeString(w.key[:0], w.shortView(m.one))
			yield(w.key, m.oneEl)
			return
		}
		for k, e := range m.w.all() {
			w.key = w.encodeString(w.key[:0], w.wordView(k))
			if !yield(w.key, e) {
				return
			}
		}
		for k, e := range m.km.encoded(w) {
			if !yield(k, e) {
				return
			}
		}
	}
}

// sample yields up to n user keys and their elems (all when m holds no
// more), from w and km in proportion to their counts, the share of each
// rounded up or down at random (see keyMap.sample). It returns false when
// yield did.
func (m *ukMap) sample(n int, yield func(any, elem) bool) bool {
	if m.has {
		return n <= 0 || yield(m.one.str(), m.oneEl)
	}
	fromW := m.w.len()
	if total := m.len(); n < total {
		fromW = min(fromW, int(float64(n)*float64(fromW)/float64(total)+rand.Float64()))
	}
	return m.w.sample(fromW, func(k wordKey, e elem) bool { return yield(k.str(), e) }) && m.km.sample(n-fromW, yield)
}

// hasShort reports whether m holds the short user key *sk (see
// mapTable.Prefetch).
func (m *ukMap) hasShort(sk *shortKey) bool {
	if m.has {
		return *sk == m.one
	}
	if wk, ok := sk.word(); ok {
		return m.w.has(wk)
	}
	return m.km.hasShort(sk)
}
