package checkpointstorage

import (
	"errors"
	"fmt"
)

// ErrFileLocked classifies every *FileLockedError: match it with errors.Is.
var ErrFileLocked = errors.New("checkpointstorage: file locked by another process")

// FileLockedError refuses LockFile a file another holder has locked;
// Content is what that holder wrote into it (its name, as the caller
// encodes it; empty while it is still writing it).
type FileLockedError struct {
	Path    string
	Content []byte
}

func (e *FileLockedError) Error() string {
	return fmt.Sprintf("checkpointstorage: %s is locked by another process", e.Path)
}

// Is matches ErrFileLocked.
func (e *FileLockedError) Is(target error) bool { return target == ErrFileLocked }
