package checkpointstorage

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
)

// A savepoint is self-contained: written under one directory, moved to
// another, it resolves and its state files verify where it now is.
func TestSavepointIsRelocatable(t *testing.T) {
	root := t.TempDir()
	sp, err := CreateSavepoint(filepath.Join(root, "savepoints"), "billing job")
	if err != nil {
		t.Fatal(err)
	}
	if name := filepath.Base(sp.Dir()); !strings.HasPrefix(name, "savepoint-billin-") || len(name) != len("savepoint-billin-")+12 {
		t.Fatalf("savepoint directory %q; want savepoint-<job id prefix>-<12 hex digits>", name)
	}
	m := complete(t, sp, 57, "map-0-keyed", "map-1-keyed")
	if got := listAll(t, sp); !reflect.DeepEqual(got, []string{"_metadata", "map-0-keyed", "map-1-keyed"}) {
		t.Fatalf("savepoint files %v; want _metadata and the state files side by side", got)
	}
	moved := filepath.Join(root, "elsewhere", "sp")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(sp.Dir(), moved); err != nil {
		t.Fatal(err)
	}
	for _, which := range []string{moved, filepath.Join(moved, metadataName)} {
		got, storage, _, err := ResolveFS(filepath.Join(root, "unrelated-checkpoints"), which)
		if err != nil {
			t.Fatalf("resolve %s: %v", which, err)
		}
		if !got.Savepoint || got.ID != 57 || !reflect.DeepEqual(got.Handles, m.Handles) {
			t.Fatalf("resolved %+v; want savepoint 57 with handles %v", got, m.Handles)
		}
		if storage.Location(got.ID) != moved {
			t.Fatalf("location %q; want %q", storage.Location(got.ID), moved)
		}
		for _, h := range got.Handles {
			b, err := storage.ReadState(h)
			if err != nil || string(b) != h.Path+" state of chk-57" {
				t.Fatalf("read %s: %q, %v", h.Path, b, err)
			}
		}
	}
}

// Retention and garbage collection of a checkpoint directory leave a
// savepoint written into it alone.
func TestRetainAndGCKeepSavepoints(t *testing.T) {
	s := backends[0].open(t) // savepoints are written to local directories
	sp, err := CreateSavepoint(s.Dir(), "job")
	if err != nil {
		t.Fatal(err)
	}
	complete(t, sp, 2, "map-0-keyed")
	for id := 1; id <= 5; id++ {
		if id != 2 {
			complete(t, s, event.CheckpointID(id), "map-0-keyed")
		}
	}
	before := listAll(t, sp)
	if _, err := s.Retain(1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GC(); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, sp); !reflect.DeepEqual(got, before) {
		t.Fatalf("savepoint files after Retain and GC: %v; want %v", got, before)
	}
	if ids, _ := s.Completed(); !reflect.DeepEqual(ids, []event.CheckpointID{5}) {
		t.Fatalf("checkpoints after Retain(1): %v; want [5]", ids)
	}
}
