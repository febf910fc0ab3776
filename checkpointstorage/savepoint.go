package checkpointstorage

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// savepointPrefix starts the name of every savepoint directory.
const savepointPrefix = "savepoint-"

// CreateSavepoint creates a new savepoint directory under target (created
// with its parents if needed) and returns the storage that writes into it.
// The directory is named as Flink names it, savepoint-<the job id's first
// 6 characters>-<12 random hex digits>, so savepoints of one job sort
// together and two never collide.
//
// A savepoint is self-contained: its state files and _metadata lie
// directly in its directory and its Handles are relative to it, so it
// restores from wherever it is moved or copied (Resolve). It is never a
// chk-N directory, so no checkpoint storage's Retain or GC deletes it, even
// when target is the checkpoint directory: a savepoint belongs to the user.
func CreateSavepoint(target, jobID string) (*FS, error) {
	if target == "" {
		return nil, errors.New("checkpointstorage: no savepoint directory given; pass one, or set " +
			"'execution.checkpointing.savepoint-dir' (Flink's state.savepoints.dir)")
	}
	target = strings.TrimPrefix(target, "file://")
	if IsURL(target) {
		return nil, fmt.Errorf("checkpointstorage: savepoint directory %q: savepoints are written to a local or mounted directory for now; give a path", target)
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return nil, fmt.Errorf("checkpointstorage: creating savepoint directory: %w", err)
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("checkpointstorage: naming savepoint: %w", err)
	}
	dir := filepath.Join(target, savepointPrefix+jobPrefix(jobID)+"-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpointstorage: creating savepoint directory: %w", err)
	}
	if err := syncDir(target); err != nil {
		return nil, fmt.Errorf("checkpointstorage: creating savepoint directory: %w", err)
	}
	return openSavepoint(dir), nil
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
func openSavepoint(dir string) *FS {
	opts := Options{}
	opts.EnsureDefaults()
	s := newFS(dir, dirObjects{dir: dir}, opts)
	s.savepoint = true
	return s
}
