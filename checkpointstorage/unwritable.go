package checkpointstorage

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"gocloud.dev/gcerrors"
)

// UnwritableError is a checkpoint directory the job may not write to
// (permission denied, a read-only file system). Every restart tries to
// write there again, so it implements Position (operator.PositionedError):
// the runtime fails the job after the second time instead of restarting it
// forever. The message leaves out the file's name, which holds the
// checkpoint id, so that the same directory fails with the same message.
type UnwritableError struct {
	Dir string
	Err error
}

// Error implements error.
func (e *UnwritableError) Error() string {
	cause := e.Err
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err
	}
	return fmt.Sprintf("checkpointstorage: the checkpoint directory %s is not writable (%v); make it writable, "+
		"or set the checkpoint directory ('execution.checkpointing.dir', runtime.Options.CheckpointDir) to one that is",
		e.Dir, cause)
}

// Position implements operator.PositionedError.
func (e *UnwritableError) Position() string { return "checkpoint directory " + e.Dir }

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *UnwritableError) Unwrap() error { return e.Err }

// unwritable turns a write error that no retry can fix into an
// *UnwritableError (on S3: access denied); other errors (a full disk may get space back) pass.
func (s *FS) unwritable(err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) || gcerrors.Code(err) == gcerrors.PermissionDenied {
		return &UnwritableError{Dir: s.loc, Err: err}
	}
	return err
}
