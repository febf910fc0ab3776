package exec

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/weirstream/weir/state"
)

// Shared distinct maps (Flink's DistinctInfo, its "distinct view"): the
// DISTINCT calls of a GROUP BY over the same argument field — COUNT(DISTINCT
// bidder), COUNT(DISTINCT bidder) FILTER (WHERE price < 10000), … — keep one
// value → entry map per group instead of one map per call. An entry counts,
// per call of the group, the rows holding the value that passed that
// call's FILTER, so a row costs one map read and at most one write per
// distinct argument, not per call, and retractions stay exact (a value
// leaves a call when its count there drops to 0).
//
// Over an insert-only input no retraction will come, so presence is all
// that matters: an entry is then only which calls hold the value, a bit
// each (distinctBitsCodec), and one whose bits do not change is not
// written again (unless a state TTL asks every access to refresh it).
// Nothing reads the value back there — only a retraction looks for a new
// MIN or MAX in the map — so the entry is a uint64 in the state, not a
// pointer to counts and the value: Nexmark q16's maps hold millions of
// values at 10 M events, and each cost the collector three objects more
// and a probe two cache misses more.

// maxGroupCalls is the most calls one distinct group holds (a bit of a
// uint64 each); more DISTINCT calls over one field make more groups.
const maxGroupCalls = 64

// distinctGroup is the DISTINCT calls over one argument field that share
// one map.
type distinctGroup struct {
	arg   int
	calls []int // indexes into aggregator.calls, ascending
}

// distinctGroups groups the DISTINCT calls of calls by argument, in order
// of their first call.
func distinctGroups(calls []AggCall) []distinctGroup {
	var gs []distinctGroup
	open := map[int]int{} // arg → index in gs of its group with room
	for i, c := range calls {
		if !c.Distinct || c.Kind == CountStar {
			continue
		}
		g, ok := open[c.Arg]
		if !ok || len(gs[g].calls) == maxGroupCalls {
			gs = append(gs, distinctGroup{arg: c.Arg})
			g = len(gs) - 1
			open[c.Arg] = g
		}
		gs[g].calls = append(gs[g].calls, i)
	}
	return gs
}

// shareDistinct makes the aggregator keep the DISTINCT calls' values in
// shared maps (see distinctGroups): accumulate then asks for them with its
// group argument.
func (a *aggregator) shareDistinct() {
	a.groups = distinctGroups(a.calls)
	a.inGroup = make([]bool, len(a.calls))
	for _, g := range a.groups {
		for _, i := range g.calls {
			a.inGroup[i] = true
		}
	}
}

// foldGroups folds one row into the calls of every distinct group: one
// lookup of the row's value per group, then the calls the value entered
// (or left, on a retraction) fold it.
func (a *aggregator) foldGroups(acc, fields []any, sign int64, group func(g int) *distinctSet) error {
	for gi, g := range a.groups {
		if g.arg >= len(fields) {
			return fmt.Errorf("%w: %s reads field %d of a row of %d fields", ErrType, a.calls[g.calls[0]], g.arg, len(fields))
		}
		v := widen(fields[g.arg])
		if v == nil {
			continue // aggregates skip NULLs
		}
		var pass uint64
		for j, i := range g.calls {
			ok, err := passes(a.calls[i], fields)
			if err != nil {
				return err
			}
			if ok {
				pass |= 1 << j
			}
		}
		if pass == 0 {
			continue
		}
		ds := group(gi)
		flipped := ds.add(v, sign, pass, len(g.calls))
		for j, i := range g.calls {
			if flipped&(1<<j) == 0 {
				continue
			}
			var after int64 // the value's count after: 0 when it left, 1 when it came
			if sign > 0 {
				after = 1
			}
			var ms multiset // MIN and MAX look for a new extreme in it
			if k := a.calls[i].Kind; k == Min || k == Max {
				ms = distinctView{ds, j}
			}
			if err := a.foldValue(acc, i, v, sign, ms, after); err != nil {
				return err
			}
		}
	}
	return nil
}

// passes reports whether the row passes c's FILTER (true without one).
func passes(c AggCall, fields []any) (bool, error) {
	if !c.HasFilter {
		return true, nil
	}
	if c.FilterField >= len(fields) {
		return false, fmt.Errorf("%w: %s reads field %d of a row of %d fields", ErrType, c, c.FilterField, len(fields))
	}
	b, _ := fields[c.FilterField].(bool)
	return b, nil
}

// distinctEntry is one value of a distinct group: counts[j] is the number
// of rows holding it that passed the filter of the group's call j (can be
// negative after a retraction of a row the group never saw, as a
// per-call multiset would be).
type distinctEntry struct {
	counts []int64
	v      any
}

// distinctSet is one distinct group's map in a MapState of the current key:
// valueKey(v), after prefix (a window's id, or "" for a whole group), →
// its entry.
type distinctSet struct {
	m state.MapState[string, *distinctEntry]
	// bits replaces m over an insert-only input: the calls holding each
	// value (see distinctBitsCodec).
	bits   state.MapState[string, uint64]
	prefix string
	// refresh: write every entry a row touches (a state TTL counts from
	// the last write).
	refresh bool
	key     []byte // reused to build keys
}

// add adds sign to v's count of each call j in pass; it returns the calls
// for which v appeared (sign 1: count from ≤ 0 to > 0) or vanished (sign
// -1: from > 0 to ≤ 0).
func (s *distinctSet) add(v any, sign int64, pass uint64, n int) (flipped uint64) {
	s.key = appendValue(append(s.key[:0], s.prefix...), v, true)
	if s.bits != nil {
		return s.addBits(pass)
	}
	k := string(s.key)
	e, ok := s.m.Get(k)
	if !ok {
		e = &distinctEntry{counts: make([]int64, n), v: rebox(v)}
	}
	changed := !ok || s.refresh
	nonzero := false
	for j := range e.counts {
		before := e.counts[j]
		if pass&(1<<j) != 0 {
			after := before + sign
			e.counts[j], changed = after, true
			if (sign > 0 && before <= 0 && after > 0) || (sign < 0 && before > 0 && after <= 0) {
				flipped |= 1 << j
			}
		}
		nonzero = nonzero || e.counts[j] != 0
	}
	switch {
	case !nonzero:
		s.m.Remove(k)
	case changed:
		s.m.Put(k, e)
	}
	return flipped
}

// addBits is add over an insert-only input: the calls in pass that did
// not hold the value's key (s.key) yet now do, and flip. A value the
// calls hold already, most rows' once the set is large, is read in place
// and allocates nothing.
func (s *distinctSet) addBits(pass uint64) (flipped uint64) {
	had, _ := state.GetView(s.bits, s.key)
	flipped = pass &^ had
	if flipped != 0 || s.refresh {
		s.bits.Put(string(s.key), had|pass)
	}
	return flipped
}

// clear removes the set's entries.
func (s *distinctSet) clear() {
	if s.bits != nil {
		clearPrefix(s.bits, s.prefix)
		return
	}
	clearPrefix(s.m, s.prefix)
}

// distinctView is the values of a distinctSet that call j of its group
// counts.
type distinctView struct {
	s *distinctSet
	j int
}

func (d distinctView) add(any, int64) (int64, int64) {
	panic("sql/exec: a distinct view is read-only; distinctSet.add counts values")
}

func (d distinctView) each(f func(v any)) {
	if d.s.bits != nil {
		panic("sql/exec: an insert-only input's DISTINCT values are not kept (only a retraction looks for them)")
	}
	d.s.m.Range(func(k string, e *distinctEntry) bool {
		if strings.HasPrefix(k, d.s.prefix) && e.counts[d.j] > 0 {
			f(e.v)
		}
		return true
	})
}

// distinctEntryTag starts a distinctEntry's encoding: the format of
// shared distinct maps, version 1. A state of another format is refused
// as corrupt rather than misread.
const distinctEntryTag = 0xd1

// distinctEntryCodec encodes a distinctEntry: distinctEntryTag, the number
// of counts (uvarint), each count (varint), and the value (RowCodec's exact
// value encoding).
type distinctEntryCodec struct{}

var (
	_ state.Codec[*distinctEntry]  = distinctEntryCodec{}
	_ state.Copier[*distinctEntry] = distinctEntryCodec{}
)

func (distinctEntryCodec) Encode(buf []byte, e *distinctEntry) []byte {
	buf = binary.AppendUvarint(append(buf, distinctEntryTag), uint64(len(e.counts)))
	for _, c := range e.counts {
		buf = binary.AppendVarint(buf, c)
	}
	return appendValue(buf, e.v, false)
}

func (distinctEntryCodec) Decode(b []byte) (*distinctEntry, []byte, error) {
	if len(b) > 0 && b[0] == distinctBitsTag {
		return nil, b, fmt.Errorf("%w: sql/exec: the DISTINCT values in state were kept for an insert-only input, as the calls holding each "+
			"and not the value itself, and this query's input now has updates or deletes; start the query without state",
			state.ErrIncompatible)
	}
	if len(b) == 0 || b[0] != distinctEntryTag {
		return nil, b, notDistinctFormat(b)
	}
	r := reader{b: b[1:]}
	n := r.count()
	if r.err == nil && n > maxGroupCalls {
		r.fail("%d counts in a distinct entry, at most %d", n, maxGroupCalls)
	}
	e := &distinctEntry{counts: make([]int64, n)}
	for j := range e.counts {
		e.counts[j] = r.varint()
	}
	e.v = r.value(0)
	if r.err != nil {
		return nil, b, r.err
	}
	return e, r.b, nil
}

// Copy copies the counts; the value is never modified.
func (distinctEntryCodec) Copy(e *distinctEntry) *distinctEntry {
	return &distinctEntry{counts: append([]int64(nil), e.counts...), v: e.v}
}

// notDistinctFormat is the error for an entry b of a shared distinct map
// that starts with neither format's tag.
func notDistinctFormat(b []byte) error {
	return fmt.Errorf("%w: sql/exec: a DISTINCT value in state is not of the shared distinct map format (tag %#x)", state.ErrCorrupt, firstByte(b))
}

func firstByte(b []byte) any {
	if len(b) == 0 {
		return "none"
	}
	return b[0]
}

// distinctBitsTag starts a distinctBits encoding: the format of shared
// distinct maps over insert-only inputs, version 1.
const distinctBitsTag = 0xd2

// distinctBitsCodec encodes the entry of a distinct map over an
// insert-only input: distinctBitsTag, then the calls holding the value as
// a uvarint, bit j for call j of the group. It reads a distinctEntry too
// (a state written before this format, or by a query whose input
// retracted): a call holds the value when its count is above 0.
type distinctBitsCodec struct{}

var _ state.Codec[uint64] = distinctBitsCodec{}

func (distinctBitsCodec) Encode(buf []byte, bits uint64) []byte {
	return binary.AppendUvarint(append(buf, distinctBitsTag), bits)
}

func (distinctBitsCodec) Decode(b []byte) (uint64, []byte, error) {
	if len(b) > 0 && b[0] == distinctEntryTag {
		e, rest, err := distinctEntryCodec{}.Decode(b)
		if err != nil {
			return 0, b, err
		}
		var bits uint64
		for j, c := range e.counts {
			if c > 0 {
				bits |= 1 << j
			}
		}
		return bits, rest, nil
	}
	if len(b) == 0 || b[0] != distinctBitsTag {
		return 0, b, notDistinctFormat(b)
	}
	r := reader{b: b[1:]}
	bits := r.uvarint()
	if r.err != nil {
		return 0, b, r.err
	}
	return bits, r.b, nil
}
