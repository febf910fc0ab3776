// Package checkpointstorage keeps checkpoints on a filesystem directory, in
// the layout of Flink's FsCheckpointStorage: every checkpoint has its own
// directory holding the state files its tasks wrote and, once the checkpoint
// completed, a _metadata file that names them.
//
//	<dir>/
//	  _checkpoint_id         the persisted next-checkpoint-id counter
//	  chk-7/
//	    _metadata            Metadata: task state blobs and the state files' handles
//	    map-0-keyed          a state file written by WriteState
//
// A checkpoint is completed exactly when its _metadata is present and valid:
// WriteMetadata writes it last and atomically (temp file, fsync, rename,
// fsync of the directory), and every _metadata and counter file carries a
// CRC32C (Castagnoli) checksum, so a torn or bit-flipped file is detected
// (*CorruptError) rather than restored.
//
// Caller's responsibilities:
//   - Write a checkpoint's state files (WriteState) before its metadata
//     (WriteMetadata); the metadata's Handles must list every file the
//     checkpoint needs, or GC deletes it.
//   - Take the id from NextID and call SetNextID(id+1) before triggering
//     checkpoint id, so ids only ever increase across restarts.
//   - Run GC only while no checkpoint is being written (for example at start,
//     before the first trigger): it deletes every checkpoint directory without
//     metadata, which includes one still in progress.
//
// A corrupt checkpoint (its _metadata or a state file fails verification) is
// never deleted: GC and Retain rename chk-N to chk-N.corrupt (MoveAside) and
// report it, and nothing but the id counter looks at it again. Retain
// trusts what the handle has already seen stored (see known): it finds
// corruption only in checkpoints the handle has not checked before.
//
// Concurrency: an *FS may be shared by goroutines. WriteState and
// WriteMetadata may run concurrently for different files; the id counter is
// guarded by a mutex.
package checkpointstorage
