// Package state owns Weir's keyed and operator state vocabulary: the typed
// state handles an operator uses (ValueState, ListState, MapState,
// ReducingState, AggregatingState — Flink's names), their descriptors and
// TTL, the codecs that turn values into bytes, and the type-erased
// interfaces a state backend implements (state/heap keeps state in Go maps).
//
// Keyed state is scoped to the current key, which the runtime sets before
// each record or timer (KeyedBackend.SetCurrentKey), and is partitioned by
// key group (keygroup.ForHash) so that it can be redistributed when the
// parallelism changes. Operator state is not keyed: it is a set of named
// lists that are split evenly, or unioned, among the new subtasks.
//
// Threading model: a backend belongs to one subtask and is used by that
// subtask's goroutine only. A checkpoint has two parts (Flink's
// SnapshotStrategy): Snapshot, on the owner goroutine, captures references
// and must be fast; Snapshot.Write, on any goroutine, encodes what was
// captured while the owner keeps mutating the live state.
//
// Values are stored by reference in the heap backend: treat a value as
// immutable once it was passed to Update, Add or Put, or returned by a read —
// update state with a fresh value instead of mutating one in place. (The
// accumulator of AggregatingState and the stored value of ReducingState are
// exempt: the backend hands the functions a private copy when a snapshot may
// still be reading the stored one.)
package state
