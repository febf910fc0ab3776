package checkpointstorage

import (
	"errors"
	"fmt"

	"github.com/weirstream/weir/event"
)

var (
	// ErrNoCheckpoint is returned by Latest and Resolve when the directory
	// holds no completed, valid checkpoint.
	ErrNoCheckpoint = errors.New("checkpointstorage: no completed checkpoint")
	// ErrCorrupt classifies every *CorruptError: match it with errors.Is.
	ErrCorrupt = errors.New("checkpointstorage: corrupt")
	// ErrCheckpointExists is returned by WriteMetadata for a checkpoint
	// that is already completed: its metadata is never overwritten.
	ErrCheckpointExists = errors.New("checkpointstorage: checkpoint already completed; its metadata is never overwritten")
	// ErrInvalidName is returned by WriteState for a state file name that is
	// empty, contains a path separator, is "_metadata" or starts with "." or "_".
	ErrInvalidName = errors.New("checkpointstorage: invalid state file name")
)

// CorruptError reports a checkpoint file whose content cannot be trusted: a
// wrong size, checksum, magic or version, a truncated header, or a payload
// that does not decode. It matches ErrCorrupt (and Err, when set) with
// errors.Is.
type CorruptError struct {
	// Path is the file's path: the storage directory joined with the
	// file's relative path.
	Path string
	// Reason says what is wrong, e.g. "checksum 0x1a2b3c4d, want 0x…".
	Reason string
	// Err is the underlying error, if any (e.g. fs.ErrNotExist for a
	// state file a handle names but that is gone).
	Err error
}

// Error names the file and the reason.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("checkpointstorage: corrupt file %s: %s", e.Path, e.Reason)
}

// Unwrap returns ErrCorrupt and, when set, Err.
func (e *CorruptError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrCorrupt}
	}
	return []error{ErrCorrupt, e.Err}
}

func corrupt(path, format string, args ...any) *CorruptError {
	return &CorruptError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// SkippedError reports a checkpoint that Latest passed over because it is
// corrupt or incomplete; Err says why.
type SkippedError struct {
	ID  event.CheckpointID
	Err error
}

// Error reads "checkpoint N skipped: reason".
func (e *SkippedError) Error() string { return fmt.Sprintf("checkpoint %d skipped: %v", e.ID, e.Err) }

// Unwrap returns the reason.
func (e *SkippedError) Unwrap() error { return e.Err }

// RestoreError reports a restore of checkpoint ID that failed reading one
// of its files (a *CorruptError when the file is corrupt): a subtask's state
// backend fetching the files of an incremental snapshot returns it, so that
// the job can tell a corrupt checkpoint from any other failure of the
// attempt and restore an older one.
type RestoreError struct {
	ID  event.CheckpointID
	Err error
}

// Error reads "checkpoint N: reason".
func (e *RestoreError) Error() string { return fmt.Sprintf("checkpoint %d: %v", e.ID, e.Err) }

// Unwrap returns the reason.
func (e *RestoreError) Unwrap() error { return e.Err }
