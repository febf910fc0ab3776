// Package heap is the heap state backend (Flink's HashMapStateBackend): it
// keeps keyed state as Go values in maps partitioned by key group, and
// operator state as Go slices, and encodes them only when a checkpoint's
// asynchronous part runs.
//
// Copy-on-write makes the synchronous part of a snapshot cheap (Flink's
// CopyOnWriteStateMap does the same job): Snapshot copies only the slice of
// per-key-group map references of each state and bumps the backend's
// version. A map, or a per-key inner map of MapState, is cloned the first
// time the owner writes it after a snapshot that holds it (its version is
// older than the backend's map version), so Snapshot.Write on another
// goroutine reads maps nobody writes any more. A delta of an incremental
// checkpoint holds neither: it captures the changed keys' entries, and of
// a MapState entry a copy of what it writes (the changed user keys'
// values, or the whole inner map), so between full captures the owner
// writes the maps in place. List elements are only ever appended in place — beyond
// the length a snapshot captured — every other list change builds a new
// slice.
//
// Copy-on-write of maps does not cover the values, which are stored by
// reference and which the owner may modify in place after reading them
// (`acc := Value(); acc.Count++; Update(acc)`). So a read copies too, as
// Flink's CopyOnWriteStateMap does on access: every value (list element,
// map value) carries the version in which it was stored, and while a
// snapshot taken since is not written (Backend.inFlight), a read replaces
// a mutable value by a deep copy — made by the codec's Copy (state.Copier),
// or by encoding and decoding it — and returns the copy. Values immutable
// by type (numbers, strings, time.Time, decimals, structs of them) are
// never copied, and when no snapshot is in flight nothing is.
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
//
// With Options.Incremental a checkpoint writes only the keys changed since
// the last one, as a delta in a shared file, and names a chain of such
// files after a full base (incremental.go); savepoints stay canonical.
package heap
