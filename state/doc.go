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
// Values are stored by reference in the heap backend. A keyed state value
// a read returns may be modified in place and written back while handling
// the record or timer that read it — acc, _ := s.Value(); acc.Count++;
// s.Update(acc) — because while a checkpoint's Write may still be encoding
// the stored value, the read returns a deep copy instead (Flink's
// copy-on-access; a codec may implement Copier to make copies fast). Do not
// keep a value read from state, or passed to Update, Add or Put, across
// records or timers to modify it later: a checkpoint taken in between holds
// that very object. Operator list state has no such copies: update it with
// fresh elements.
package state
