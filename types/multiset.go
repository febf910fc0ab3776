package types

// MultisetValue is the value of a MULTISET<T>: each distinct element once,
// with how many times the bag holds it. Its elements may be ROWs or
// ARRAYs ([]any), which cannot be Go map keys, so it is a list, not a
// map. The SQL layer keeps it deduplicated by SQL equality; the order of
// the entries carries no meaning (Flink's is a HashMap's), so equality,
// key encodings and printing order the entries themselves.
type MultisetValue []MultisetEntry

// MultisetEntry is one distinct element of a MultisetValue and its count.
// Count is positive in a value a query sees; an aggregate's running
// value may hold an element at zero or below while a retraction waits
// for its insertion.
type MultisetEntry struct {
	Elem  any
	Count int64
}

// Size is the number of elements, duplicates counted (CARDINALITY): the
// sum of the positive counts.
func (m MultisetValue) Size() int64 {
	var n int64
	for _, e := range m {
		if e.Count > 0 {
			n += e.Count
		}
	}
	return n
}
