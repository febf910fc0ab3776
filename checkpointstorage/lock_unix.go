//go:build unix

package checkpointstorage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// lockDir takes flock(2) on dir's _lock file and writes h into it (see
// LockFile).
func lockDir(d dirObjects, h Holder) (func() error, error) {
	l, err := LockFile(d.abs(lockName), encodeHolder(h))
	var held *FileLockedError
	switch {
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		// A job that cannot write here cannot corrupt the directory
		// either: it runs unlocked, and its first checkpoint fails
		// saying the directory is not writable (see unwritable.go).
		return func() error { return nil }, nil
	case errors.As(err, &held):
		return nil, &LockedError{Dir: d.dir, Holder: decodeHolder(held.Content)}
	case err != nil:
		return nil, fmt.Errorf("checkpointstorage: locking checkpoint directory %s: %w", d.dir, err)
	}
	return l.Release, nil
}

// FileLock is an exclusive flock(2) on one file, whose content names its
// holder. The kernel holds the lock for the open file: it is released when
// the file is closed or the process exits, so a crash leaves no stale lock.
type FileLock struct {
	f    *os.File
	once sync.Once
	err  error
}

// LockFile creates path if needed, locks it without waiting and writes
// content into it. A file another open file holds locked (another
// process, or this one through another LockFile) is refused with a
// *FileLockedError carrying the holder's content. An error opening path
// wraps the os error (fs.ErrPermission, syscall.EROFS).
func LockFile(path string, content []byte) (*FileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := io.ReadAll(f)
			return nil, &FileLockedError{Path: path, Content: b}
		}
		return nil, fmt.Errorf("checkpointstorage: locking %s: %w", path, err)
	}
	l := &FileLock{f: f}
	if err := l.Rewrite(content); err != nil {
		_ = f.Close()
		return nil, err
	}
	return l, nil
}

// Rewrite replaces the lock file's content (a holder that learns more
// about itself after locking, such as its address).
func (l *FileLock) Rewrite(content []byte) error {
	if err := writeHolder(l.f, content); err != nil {
		return fmt.Errorf("checkpointstorage: writing %s: %w", l.f.Name(), err)
	}
	return nil
}

// Release empties the file — it then names nobody once its lock is gone —
// and closes it, which releases the lock; later calls return the first
// one's error.
func (l *FileLock) Release() error {
	l.once.Do(func() { l.err = errors.Join(l.f.Truncate(0), l.f.Close()) })
	return l.err
}

func writeHolder(f *os.File, content []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt(content, 0)
	return err
}

// processAlive reports whether a process pid exists on this host (one
// that is not ours to signal exists too).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
