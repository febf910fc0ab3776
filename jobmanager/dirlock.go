package jobmanager

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
)

// lockFile, in Options.Dir, is locked (flock(2)) by the JobManager that
// owns the directory. Two JobManagers on one directory would both resume
// its jobs into the same checkpoint directories and overwrite each other's
// jobs.json; the kernel releases the lock when its holder exits, a crash
// included, so a restarted JobManager is never refused by its dead self.
const lockFile = "jobmanager.lock"

// ErrDirLocked classifies every *DirLockedError: match it with errors.Is.
var ErrDirLocked = errors.New("jobmanager: directory in use by another JobManager")

// DirHolder names the JobManager that holds a directory; it is the lock
// file's content.
type DirHolder struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
	// REST is its REST endpoint's URL, once it listens ("" before).
	REST string `json:"rest,omitempty"`
}

// DirLockedError refuses a JobManager the directory another one holds.
type DirLockedError struct {
	Dir    string
	Holder DirHolder
}

func (e *DirLockedError) Error() string {
	who := "another JobManager (it has not written its name yet)"
	if h := e.Holder; h.PID != 0 {
		rest := h.REST
		if rest == "" {
			rest = "not listening yet"
		}
		who = fmt.Sprintf("the JobManager with pid %d on %s (REST %s, since %s)", h.PID, h.Host, rest, h.Since.Local().Format(time.DateTime))
	}
	return fmt.Sprintf("jobmanager: %s %s is in use by %s: two JobManagers on one directory resume the same jobs into "+
		"the same checkpoints; talk to that one (weir submit -m ADDRESS), stop it, or give this one its own %s",
		KeyDir, e.Dir, who, KeyDir)
}

// Is matches ErrDirLocked.
func (e *DirLockedError) Is(target error) bool { return target == ErrDirLocked }

// lockDir takes the lock of dir (created if needed) for this process.
func lockDir(dir string) (*checkpointstorage.FileLock, DirHolder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, DirHolder{}, fmt.Errorf("jobmanager: %s %s: %w", KeyDir, dir, err)
	}
	host, _ := os.Hostname()
	h := DirHolder{PID: os.Getpid(), Host: host, Since: time.Now()}
	l, err := checkpointstorage.LockFile(filepath.Join(dir, lockFile), encodeDirHolder(h))
	var held *checkpointstorage.FileLockedError
	switch {
	case errors.As(err, &held):
		var other DirHolder
		_ = json.Unmarshal(held.Content, &other) // content being written names nobody
		return nil, DirHolder{}, &DirLockedError{Dir: dir, Holder: other}
	case err != nil:
		return nil, DirHolder{}, fmt.Errorf("jobmanager: locking %s %s: %w", KeyDir, dir, err)
	}
	return l, h, nil
}

func encodeDirHolder(h DirHolder) []byte {
	b, _ := json.Marshal(h) // strings, an int and a time always encode
	return append(b, '\n')
}
