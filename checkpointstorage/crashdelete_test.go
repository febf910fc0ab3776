package checkpointstorage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

var errCrash = errors.New("crash")

// crashDeleting makes s's deletions stop the way a SIGKILL would stop
// os.RemoveAll of a directory in the worst order: every entry but the
// checkpoint's _metadata is gone, then the process is.
func crashDeleting(s *FS) {
	s.removeAll = func(p string) error {
		entries, err := os.ReadDir(p)
		if err != nil { // a file: removed whole
			return os.RemoveAll(p)
		}
		for _, e := range entries {
			if e.Name() != metadataName {
				_ = os.RemoveAll(filepath.Join(p, e.Name()))
			}
		}
		return errCrash
	}
}

// A job killed while its cleanup deletes an old checkpoint (Retain after
// the next checkpoint, Discard of an aborted one) must not leave a
// completed checkpoint with missing state files behind: bench/soak found
// one after a SIGKILL, which the next start reported as CORRUPT and moved
// aside, kept forever. The _metadata goes first, so what a crash leaves is
// an incomplete checkpoint that GC removes without a word.
func TestCrashWhileDeletingLeavesNoCorruptCheckpoint(t *testing.T) {
	for _, c := range []struct {
		name   string
		delete func(s *FS) error
	}{
		{"Retain", func(s *FS) error { _, err := s.Retain(1, 0); return err }},
		{"Discard", func(s *FS) error { return s.Discard(8) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openTemp(t)
			complete(t, s, 8, "op-0", "op-1", "op-2")
			complete(t, s, 9, "op-0")
			crashDeleting(s)
			if err := c.delete(s); !errors.Is(err, errCrash) {
				t.Fatalf("deletion: %v, want the simulated crash", err)
			}
			s.removeAll = os.RemoveAll // the next start
			cl, err := s.GC()
			if err != nil {
				t.Fatal(err)
			}
			if len(cl.Corrupt) != 0 {
				t.Fatalf("GC after the crash found corrupt checkpoints %+v; want the half-deleted chk-8 removed as incomplete", cl.Corrupt)
			}
			if _, err := os.Stat(filepath.Join(s.Dir(), "chk-8")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("chk-8 still there after GC: %v", err)
			}
			if m, _, err := s.Latest(); err != nil || m.ID != 9 {
				t.Fatalf("Latest = %d, %v; want 9", m.ID, err)
			}
		})
	}
}
