//go:build !unix

package checkpointstorage

// lockDir does not lock on systems without flock(2): a crashed job would
// leave an exclusive-create lock file behind for the user to delete, which
// is worse than the documented rule of one job per directory.
func lockDir(dirObjects, Holder) (func() error, error) { return func() error { return nil }, nil }

// processAlive cannot tell here: a process is taken to be alive, so only
// its lease's expiry frees its lock.
func processAlive(int) bool { return true }

// FileLock locks nothing on systems without flock(2) (see lockDir).
type FileLock struct{}

// LockFile locks nothing and writes nothing.
func LockFile(path string, content []byte) (*FileLock, error) {
	return &FileLock{}, nil
}

// Rewrite does nothing here.
func (*FileLock) Rewrite([]byte) error { return nil }

// Release does nothing here.
func (*FileLock) Release() error { return nil }
