package state

import (
	"bytes"
	"io"
)

// The first bytes of the manifest of an incremental checkpoint, which only
// the backend that wrote it restores (savepoints and full checkpoints are
// canonical: every backend restores them).
const (
	HeapIncrementalMagic   = "WHI1"
	PebbleIncrementalMagic = "WPI1"
)

// IncrementalBackend returns the state.backend.type that wrote blob when
// blob is the manifest of an incremental checkpoint ("hashmap" or
// "pebble"), "" for any other blob.
func IncrementalBackend(blob []byte) string {
	switch {
	case bytes.HasPrefix(blob, []byte(HeapIncrementalMagic)):
		return "hashmap"
	case bytes.HasPrefix(blob, []byte(PebbleIncrementalMagic)):
		return "pebble"
	}
	return ""
}

// FileHandle names one file in checkpoint storage: what an incremental
// snapshot lists and a restore fetches. It mirrors
// checkpointstorage.Handle, which this package may not import.
type FileHandle struct {
	// Path is relative to the checkpoint storage, slash-separated, e.g.
	// "shared/map-0-3f2a/000012.sst" or "chk-7/map-0-keyed.MANIFEST-000005".
	Path string `json:"path"`
	// Size is the file's length in bytes.
	Size int64 `json:"size"`
	// CRC32C is the CRC32C (Castagnoli) checksum of its content.
	CRC32C uint32 `json:"crc32c"`
}

// LocalFile is a local file an incremental snapshot puts into checkpoint
// storage.
type LocalFile struct {
	// Name is a plain file name, unique within the snapshot (private
	// files), or "group/file" (Shared), unique in the storage for one
	// content: writing it again must write the same bytes.
	Name string
	// Path is the local file.
	Path string
	// Write, when set instead of Path, produces the content: it writes it
	// all to w. It may be called again to retry a failed upload: it then
	// writes the content again, whole.
	Write func(w io.Writer) error
	// Shared puts the file where checkpoints share it (Flink's shared/):
	// a later checkpoint that still needs it names it again instead of
	// uploading it. A private file belongs to this checkpoint only.
	Shared bool
}

// SnapshotFiles is the checkpoint storage an incremental snapshot writes
// into, bound to one checkpoint and one subtask's part.
type SnapshotFiles interface {
	// Location identifies the storage (its directory or URL): a backend
	// reuses the shared files of a restored checkpoint only when it was
	// restored from the storage it now writes to.
	Location() string
	// Put uploads files (in parallel, as the storage allows) and returns
	// their handles in order; a failure names the file. A backend may
	// call it from several goroutines at once, for different files.
	Put(files []LocalFile) ([]FileHandle, error)
}

// IncrementalSnapshot is a Snapshot that can also write itself as files
// (Flink's incremental checkpoint): a small manifest blob plus the files
// it names, which the checkpoint must keep (its metadata lists them). The
// runtime calls WriteFiles for a checkpoint and Write for a savepoint,
// which stays canonical; either is called once.
type IncrementalSnapshot interface {
	Snapshot
	// WriteFiles puts the files the captured state needs that the storage
	// does not hold yet and returns the manifest, which Restore of the same
	// backend type accepts, and every file it names.
	WriteFiles(files SnapshotFiles) (manifest []byte, needs []FileHandle, err error)
}

// SnapshotPurpose is a KeyedBackend that captures less for a checkpoint
// than for a savepoint. The runtime calls SnapshotFor right before each
// Snapshot it takes: with checkpoint true, the snapshot will be written by
// WriteFiles, never Write (the heap backend then captures only what
// changed since its last incremental checkpoint). A Snapshot not preceded
// by SnapshotFor(true) can be written either way.
type SnapshotPurpose interface {
	SnapshotFor(checkpoint bool)
}

// RestoreFiles is the checkpoint storage a restore fetches the files of
// incremental snapshots from (BackendSpec.Files).
type RestoreFiles interface {
	// Location identifies the storage; see SnapshotFiles.Location.
	Location() string
	// Fetch puts the file h names at dst, a new local file, checking its
	// size and checksum. With link it may hard-link the stored file
	// instead of copying it: dst must then never be written to. A missing
	// file is an error naming it. A restore calls it from several
	// goroutines at once, for different files.
	Fetch(h FileHandle, dst string, link bool) error
}
