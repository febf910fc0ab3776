//go:build unix

package checkpointstorage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// lockDir takes flock(2) on dir's _lock file and writes h into it. The
// kernel holds the lock for the open file: it is released when the file is
// closed or the process exits, so a crash leaves no stale lock.
func lockDir(d dirObjects, h Holder) (func() error, error) {
	f, err := os.OpenFile(d.abs(lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		// A job that cannot write here cannot corrupt the directory
		// either: it runs unlocked, and its first checkpoint fails
		// saying the directory is not writable (see unwritable.go).
		return func() error { return nil }, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: locking checkpoint directory %s: %w", d.dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := io.ReadAll(f)
			return nil, &LockedError{Dir: d.dir, Holder: decodeHolder(b)}
		}
		return nil, fmt.Errorf("checkpointstorage: locking %s: %w", f.Name(), err)
	}
	if err := writeHolder(f, h); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("checkpointstorage: writing %s: %w", f.Name(), err)
	}
	return func() error {
		// Emptied first: the file then names nobody once its lock is gone.
		return errors.Join(f.Truncate(0), f.Close())
	}, nil
}

func writeHolder(f *os.File, h Holder) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt(encodeHolder(h), 0)
	return err
}

// processAlive reports whether a process pid exists on this host (one
// that is not ours to signal exists too).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
