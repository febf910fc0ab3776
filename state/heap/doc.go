// Package heap is the heap state backend (Flink's HashMapStateBackend): it
// keeps keyed state as Go values in maps partitioned by key group, and
// operator state as Go slices, and encodes them only when a checkpoint's
// asynchronous part runs.
//
// Copy-on-write makes the synchronous part of a snapshot cheap (Flink's
// CopyOnWriteStateMap does the same job): Snapshot copies only the slice of
// per-key-group map references of each state and bumps the backend's
// version. A map, or a per-key inner map of MapState, is cloned the first
// time the owner writes it after a snapshot (its version is older than the
// backend's), so Snapshot.Write on another goroutine reads maps nobody
// writes any more. List elements are only ever appended in place — beyond
// the length a snapshot captured — every other list change builds a new
// slice. Accumulators handed to Reducing/Aggregating functions are deep
// copies when a snapshot may still read them (ValueTable.GetForUpdate).
//
// Snapshot blob format (all integers uvarint unless noted):
//
//	"WHK1" maxParallelism nStates
//	state:  name(len+bytes) kind(byte) flags(byte: 1 = entries carry TTL timestamps) nGroups group*
//	group:  keyGroup nEntries (key(len+bytes) payload(len+bytes))*
//	value payload:  [ts varint] value
//	list payload:   n ([ts varint] element(len+bytes))*
//	map payload:    n ([ts varint] userKey(len+bytes) value(len+bytes))*
//
// A state restored but not (yet) registered keeps its payloads as bytes
// and is written back verbatim by later snapshots, so no state is lost when
// an operator registers its states lazily.
package heap
