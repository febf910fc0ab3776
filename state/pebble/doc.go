// Package pebble is the Pebble state backend (Weir's analogue of Flink's
// EmbeddedRocksDBStateBackend; state.backend.type 'pebble', or 'rocksdb'):
// it keeps a subtask's keyed state in its own Pebble LSM database on local
// disk, so state size is a disk question and memory is bounded by the
// block cache and memtables (Options.MemoryBudget).
//
// One database per subtask, in a new directory under Options.LocalDir
// (state.backend.local-dir), with a WAL that is never fsynced —
// checkpoints make state durable, a failed subtask restores into a fresh
// directory; incremental checkpoints ship the WAL (changelog.go) — and removed
// when the backend is closed and the last snapshot taken from it is
// written. One per subtask rather than one per process with prefixes:
// dropping a subtask's state is deleting a directory, a rescale never
// touches another subtask's files, and incremental checkpoints (to come)
// can upload one database's SSTs as they are.
//
// Key layout, so that one key group is one contiguous key range (what a
// rescale or an incremental restore cuts along), and one state of one key
// one prefix:
//
//	keyGroup(2 bytes BE) stateID(2 bytes BE) len(key)(uvarint) key [userKey]
//
// The key is the key codec's encoding (equal keys must encode equally);
// the length makes it self-delimiting. State ids are given in order of
// restore and registration; they live only as long as the database.
// Values, by kind:
//
//	value, reducing, aggregating:  [ts varint] value
//	list:                          ([ts varint] element(len+bytes))*   (Add is a Pebble merge: concatenation)
//	map, one Pebble key per entry: [ts varint] value                   (Range and IsEmpty iterate the prefix)
//
// The timestamp is there when the state has a TTL. Expired entries are
// never returned: a read removes them, CleanupExpired sweeps keys in
// order from a cursor, and snapshots leave them out. Pebble v2 has no
// compaction filter, so compactions do not drop them by themselves;
// instead CleanupExpired also sweeps each state in proportion to the
// entries written to it (state.TTLConfig.QueryTimeAfterNumEntries, the
// analogue of Flink's cleanupInRocksdbCompactFilter; cleanup.go).
//
// Snapshots are full and canonical: Snapshot takes a Pebble snapshot (a
// sequence number, no copy) on the owner goroutine; Write iterates it on
// any goroutine and encodes the heap backend's blob format (see state/heap;
// state/internal/keyed reads it), so a checkpoint or savepoint restores
// into either backend, at any parallelism. Restore writes the payloads of
// the owned key groups into Pebble as they are; when a restored state is
// registered, its entries are checked against the codecs (and given or
// stripped of timestamps if its TTL changed), as the heap backend does.
//
// Values are decoded afresh on every read, so — unlike the heap backend —
// nothing read is ever shared with a snapshot, and no copy-on-read is
// needed.
//
// Keyed timers live here too (state.TimerQueues, timers.go; Flink's
// state.backend.rocksdb.timer-service.factory: ROCKSDB): the timer service
// of operator stores each timer as an element that sorts in firing order,
// under a queue id from the top of the id space, after the key group.
//
// Disaggregated state, EXPERIMENTAL (Options.ExperimentalRemote; Flink
// 2.0's ForSt): SSTs created in checkpoint storage and read in place,
// named by checkpoints instead of uploaded, opened in place by restores
// (remote.go, remotecheckpoint.go).
package pebble
