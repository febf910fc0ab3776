package checkpointstorage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// lockName is the file (or object) that holds the lock of a checkpoint
// directory: two jobs writing one directory would overwrite each other's
// id counter and checkpoints, and each one's GC and retention would delete
// the other's.
const lockName = "_lock"

// ErrLocked classifies every *LockedError: match it with errors.Is.
var ErrLocked = errors.New("checkpointstorage: checkpoint directory in use")

// Holder names who holds a checkpoint directory's lock; it is the lock
// file's content.
type Holder struct {
	Job   string    `json:"job"`
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
	// Renewed is when the holder last renewed a bucket's lease; a lease
	// not renewed for LockLease is free.
	Renewed time.Time `json:"renewed,omitzero"`
	// Released marks a bucket's lease given back (the object stays).
	Released bool `json:"released,omitempty"`
}

// String is "job "x" (pid 12 on host, since 15:04:05)".
func (h Holder) String() string {
	if h.PID == 0 {
		return "another job (it has not written its name yet)"
	}
	return fmt.Sprintf("job %q (pid %d on %s, since %s)", h.Job, h.PID, h.Host, h.Since.Local().Format(time.DateTime))
}

// LockedError refuses a job a checkpoint directory another job holds.
type LockedError struct {
	// Dir is the checkpoint directory; Holder the job that holds it.
	Dir    string
	Holder Holder
	// Lease is how long a bucket's lease lasts unrenewed (0: a local
	// directory, whose lock its holder's exit releases).
	Lease time.Duration
}

func (e *LockedError) Error() string {
	free := "it is free once that job ends"
	if e.Lease > 0 {
		free = fmt.Sprintf("it is free once that job ends, or %v after it last renewed its lease (%s) if it crashed", e.Lease, e.Holder.Renewed.Local().Format(time.DateTime))
	}
	return fmt.Sprintf("checkpointstorage: checkpoint directory %s is in use by %s: two jobs writing one directory corrupt each other's checkpoints; "+
		"give this job its own directory (--checkpoint-dir or execution.checkpointing.dir), or stop the other one (%s)", e.Dir, e.Holder, free)
}

// Is matches ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Lock is a held checkpoint-directory lock; Release gives it back.
type Lock struct {
	s       *FS
	release func() error
	once    sync.Once
	err     error
}

// Lock takes the exclusive lock of the storage's directory for job, or
// fails with a *LockedError naming the job that holds it. A local
// directory is locked with flock(2) on its _lock file, which the kernel
// releases when the holder exits, however it exits. A bucket has no locks:
// there _lock is a lease object, taken and renewed with conditional PUTs
// (If-None-Match, If-Match), that a holder which crashed leaves behind
// until it expires (Options.LockLease) — at once when the holder was a
// process of this host that is gone. A holder that loses its lease (it
// could not renew it in time and another job took it) fails every
// WriteMetadata from then on, so it never completes a checkpoint there
// again.
func (s *FS) Lock(job string) (*Lock, error) {
	host, _ := os.Hostname()
	now := time.Now()
	h := Holder{Job: job, PID: os.Getpid(), Host: host, Since: now, Renewed: now}
	var release func() error
	var err error
	switch o := s.obj.(type) {
	case dirObjects:
		release, err = lockDir(o, h)
	case bucketObjects:
		release, err = s.lockBucket(o, h)
	default:
		err = fmt.Errorf("checkpointstorage: %s cannot be locked", s.loc)
	}
	if err != nil {
		return nil, err
	}
	return &Lock{s: s, release: release}, nil
}

// Release gives the lock back; later calls return the first one's error.
func (l *Lock) Release() error {
	l.once.Do(func() { l.err = l.release() })
	return l.err
}

// encodeHolder is the lock file's content.
func encodeHolder(h Holder) []byte {
	b, _ := json.Marshal(h) // a struct of strings, ints and times always encodes
	return append(b, '\n')
}

// decodeHolder reads a lock file; one that does not decode (empty, being
// written) names nobody.
func decodeHolder(b []byte) Holder {
	var h Holder
	if json.Unmarshal(b, &h) != nil {
		return Holder{}
	}
	return h
}
