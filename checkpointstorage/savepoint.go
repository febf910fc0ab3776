package checkpointstorage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// savepointPrefix starts the name of every savepoint directory.
const savepointPrefix = "savepoint-"

// CreateSavepoint creates a new savepoint directory under target and
// returns the storage that writes into it, opened with opts. target is a
// plain path or file:// URL (the directory is created with its parents if
// needed) or s3://bucket/prefix (nothing is created: a savepoint's objects
// appear as it is written, its _metadata last, with a conditional PUT as a
// checkpoint's). The directory is named as Flink names it, savepoint-<the
// job id's first 6 characters>-<12 random hex digits>, so savepoints of one
// job sort together and two never collide.
//
// A savepoint is self-contained: its state files and _metadata lie
// directly in its directory and its Handles are relative to it, so it
// restores from wherever it is moved or copied (Resolve). It is never a
// chk-N directory, so no checkpoint storage's Retain or GC deletes it, even
// when target is the checkpoint directory: a savepoint belongs to the user.
// The caller closes the storage.
func CreateSavepoint(target, jobID string, opts Options) (*FS, error) {
	if target == "" {
		return nil, errors.New("checkpointstorage: no savepoint directory given; pass one, or set " +
			"'execution.checkpointing.savepoint-dir' (Flink's state.savepoints.dir)")
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("checkpointstorage: naming savepoint: %w", err)
	}
	name := savepointPrefix + jobPrefix(jobID) + "-" + hex.EncodeToString(rnd[:])
	if dir, local := localPath(target); local {
		return createLocalSavepoint(dir, name, opts)
	}
	return createBucketSavepoint(target, name, opts)
}

// createLocalSavepoint creates directory name under target.
func createLocalSavepoint(target, name string, opts Options) (*FS, error) {
	if err := os.MkdirAll(target, 0o755); err != nil {
		return nil, fmt.Errorf("checkpointstorage: creating savepoint directory: %w", err)
	}
	dir := filepath.Join(target, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpointstorage: creating savepoint directory: %w", err)
	}
	if err := syncDir(target); err != nil {
		return nil, fmt.Errorf("checkpointstorage: creating savepoint directory: %w", err)
	}
	return openSavepoint(dir, opts), nil
}

// createBucketSavepoint opens prefix name under the bucket location target
// (checking the bucket is reachable) and makes sure nothing is there yet.
func createBucketSavepoint(target, name string, opts Options) (*FS, error) {
	s, err := open(join(target, name), opts, false)
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: savepoint directory %s: %w", target, err)
	}
	s.savepoint = true
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.OpTimeout)
	defer cancel()
	es, err := s.obj.list(ctx, "")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = s.Close()
		return nil, fmt.Errorf("checkpointstorage: creating savepoint %s: %w", s.loc, err)
	}
	if len(es) > 0 {
		_ = s.Close()
		return nil, fmt.Errorf("checkpointstorage: creating savepoint %s: the prefix is not empty", s.loc)
	}
	return s, nil
}

// jobPrefix is the first 6 characters of a job id, made safe for a file
// name.
func jobPrefix(jobID string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, jobID)
	if safe == "" {
		safe = "job"
	}
	return safe[:min(6, len(safe))]
}

// IsSavepoint reports whether s writes into a savepoint's directory.
func (s *FS) IsSavepoint() bool { return s.savepoint }

// openSavepoint is the storage of the savepoint at dir, for reading.
func openSavepoint(dir string, opts Options) *FS {
	opts.EnsureDefaults()
	s := newFS(dir, dirObjects{dir: dir}, opts)
	s.savepoint = true
	return s
}
