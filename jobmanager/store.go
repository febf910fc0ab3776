package jobmanager

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/weirstream/weir/durable"
	"github.com/weirstream/weir/rest/api"
)

// storeFile is the job store's file in Options.Dir.
const storeFile = "jobs.json"

// record is what the store keeps of a job: enough to show it after the
// JobManager restarted and, for a job that had not ended, to run it again
// from its latest checkpoint.
type record struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Script and Settings are the submitted SQL job; Restore the
	// savepoint it was first started from.
	Script   string            `json:"script,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	Restore  string            `json:"restore,omitempty"`
	// CheckpointDir is where the job's checkpoints go ("" without).
	CheckpointDir string           `json:"checkpointDir,omitempty"`
	State         string           `json:"state"`
	Timestamps    map[string]int64 `json:"timestamps"`
	StartTime     int64            `json:"startTime"`
	EndTime       int64            `json:"endTime"`
	// Exceptions are the job's failures, newest first.
	Exceptions []api.Exception `json:"exceptions,omitempty"`
	// Savepoint is the savepoint a stop-with-savepoint ended the job with.
	Savepoint string `json:"savepoint,omitempty"`
}

// store keeps the records in one JSON file, rewritten whole (write to a
// temporary file, fsync, rename, fsync the directory) on every change: a
// JobManager holds tens to hundreds of jobs, not millions, and a file a
// person can read beats a database here. A nil *store keeps nothing
// (weir run).
type store struct {
	path string
	mu   struct {
		sync.Mutex
		recs map[string]record
	}
}

// openStore reads the store in dir, creating dir if needed.
func openStore(dir string) (*store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("jobmanager: job store: %w", err)
	}
	s := &store{path: filepath.Join(dir, storeFile)}
	s.mu.recs = map[string]record{}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jobmanager: job store: %w", err)
	}
	var recs []record
	if err := json.Unmarshal(b, &recs); err != nil {
		return nil, fmt.Errorf("jobmanager: job store %s is not valid JSON: %w (move it aside to start with no history)", s.path, err)
	}
	for _, r := range recs {
		s.mu.recs[r.ID] = r
	}
	return s, nil
}

// all returns the records, oldest first.
func (s *store) all() []record {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sortedLocked()
}

func (s *store) sortedLocked() []record {
	out := make([]record, 0, len(s.mu.recs))
	for _, r := range s.mu.recs {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].StartTime != out[j].StartTime {
			return out[i].StartTime < out[j].StartTime
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// put writes r and makes the store durable.
func (s *store) put(r record) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.recs[r.ID] = r
	b, err := json.MarshalIndent(s.sortedLocked(), "", "  ")
	if err != nil {
		return err
	}
	return writeDurably(s.path, b)
}

func writeDurably(path string, b []byte) error {
	if err := durable.WriteFile(path, b); err != nil {
		return fmt.Errorf("jobmanager: job store: %w", err)
	}
	return nil
}
