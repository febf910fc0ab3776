package exec

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/weirstream/weir/types"
)

// MULTISET values (types.MultisetValue) in the value encoding, and the bag
// operations COLLECT folds with.

// appendMultiset encodes the entries as element, count pairs: in the
// value's order when exact, so a decoded value is the same list, and in
// the order of the elements' key encodings when norm, so equal bags
// encode alike whatever order their entries are in.
func appendMultiset(buf []byte, m types.MultisetValue, norm bool) []byte {
	type entry struct {
		elem  []byte
		count int64
	}
	es := make([]entry, len(m))
	for i, e := range m {
		es[i] = entry{appendValue(nil, e.Elem, norm), e.Count}
	}
	if norm {
		slices.SortFunc(es, func(a, b entry) int { return bytes.Compare(a.elem, b.elem) })
	}
	buf = binary.AppendUvarint(append(buf, tagMultiset), uint64(len(es)))
	for _, e := range es {
		buf = binary.AppendVarint(append(buf, e.elem...), e.count)
	}
	return buf
}

func (r *reader) multiset(depth int) any {
	n := r.count()
	out := make(types.MultisetValue, n)
	for i := range out {
		out[i].Elem = r.value(depth + 1)
		out[i].Count = r.varint()
	}
	if r.err != nil {
		return nil
	}
	return out
}

// multisetAdd adds delta occurrences of v to the bag m (a retraction is
// a negative delta) and returns the result in a new slice, so a snapshot
// holding m keeps it as it was. An element whose count reaches zero
// leaves the bag; one retracted before it was added stays with a negative
// count until its insertion arrives (Flink's CollectAggFunction keeps its
// counts the same way).
func multisetAdd(m types.MultisetValue, v any, delta int64) types.MultisetValue {
	i := slices.IndexFunc(m, func(e types.MultisetEntry) bool { return sameValue(e.Elem, v) })
	if i < 0 {
		return append(slices.Clip(m), types.MultisetEntry{Elem: v, Count: delta})
	}
	n := m[i].Count + delta
	if n == 0 {
		return slices.Delete(slices.Clone(m), i, i+1)
	}
	out := slices.Clone(m)
	out[i].Count = n
	return out
}

// multisetOf is a running value as a bag (nil: empty).
func multisetOf(v any) types.MultisetValue {
	m, _ := v.(types.MultisetValue)
	return m
}

// mergeMultisets adds the counts of b to a.
func mergeMultisets(a, b types.MultisetValue) types.MultisetValue {
	for _, e := range b {
		a = multisetAdd(a, e.Elem, e.Count)
	}
	return a
}

// collectResult is the bag COLLECT returns: the elements with a positive
// count; empty, not NULL, when there are none (as Flink's).
func collectResult(v any) types.MultisetValue {
	out := types.MultisetValue{}
	for _, e := range multisetOf(v) {
		if e.Count > 0 {
			out = append(out, e)
		}
	}
	return out
}

func copyMultiset(m types.MultisetValue) types.MultisetValue {
	out := make(types.MultisetValue, len(m))
	for i, e := range m {
		out[i] = types.MultisetEntry{Elem: copyValue(e.Elem), Count: e.Count}
	}
	return out
}
