package checkpointstorage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
)

// A savepoint is self-contained: written under one directory, moved to
// another (copied object by object in a bucket), it resolves and its state
// files verify where it now is. Its _metadata is written once, and never
// over an existing one, in a bucket as on disk.
func TestSavepointIsRelocatable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		root, opts := b.loc(t)
		sp, err := CreateSavepoint(join(root, "savepoints"), "billing job", opts)
		if err != nil {
			t.Fatal(err)
		}
		defer sp.Close()
		_, name, _ := cutLast(sp.Dir())
		if !strings.HasPrefix(name, "savepoint-billin-") || len(name) != len("savepoint-billin-")+12 {
			t.Fatalf("savepoint directory %q; want savepoint-<job id prefix>-<12 hex digits>", name)
		}
		if sp.Dir() != join(root, "savepoints", name) {
			t.Fatalf("savepoint at %s; want it under %s", sp.Dir(), join(root, "savepoints"))
		}
		m := complete(t, sp, 57, "map-0-keyed", "map-1-keyed")
		if got := listAll(t, sp); !reflect.DeepEqual(got, []string{"_metadata", "map-0-keyed", "map-1-keyed"}) {
			t.Fatalf("savepoint files %v; want _metadata and the state files side by side", got)
		}
		if err := sp.WriteMetadata(m); !errors.Is(err, ErrCheckpointExists) {
			t.Fatalf("second _metadata of the savepoint: %v; want ErrCheckpointExists", err)
		}
		top := mustOpen(t, root, opts)
		if dir, local := localPath(root); local {
			if err := os.MkdirAll(filepath.Join(dir, "elsewhere"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := top.obj.rename(context.Background(), "savepoints/"+name, "elsewhere/sp"); err != nil {
			t.Fatal(err)
		}
		moved := join(root, "elsewhere", "sp")
		for _, which := range []string{moved, join(moved, metadataName)} {
			got, storage, _, err := top.Resolve(which)
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
			if storage != top {
				_ = storage.Close()
			}
		}
	})
}

// cutLast splits a location into its parent and last element.
func cutLast(loc string) (string, string, bool) {
	i := strings.LastIndexAny(loc, `/\`)
	return loc[:max(i, 0)], loc[i+1:], i >= 0
}

// A savepoint that failed is discarded: every object under its directory
// goes, and nothing beside it.
func TestSavepointDiscard(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		root, opts := b.loc(t)
		s := mustOpen(t, root, opts)
		complete(t, s, 1, "map-0-keyed")
		sp, err := CreateSavepoint(root, "job", opts)
		if err != nil {
			t.Fatal(err)
		}
		defer sp.Close()
		if _, err := sp.WriteState(4, "map-0-keyed", []byte("part")); err != nil {
			t.Fatal(err)
		}
		if err := sp.Discard(4); err != nil {
			t.Fatal(err)
		}
		if got := listAll(t, s); !reflect.DeepEqual(got, []string{"chk-1/_metadata", "chk-1/map-0-keyed"}) {
			t.Fatalf("files after discarding the savepoint: %v; want only chk-1's", got)
		}
	})
}

// Retention and garbage collection of a checkpoint directory leave a
// savepoint written into it alone.
func TestRetainAndGCKeepSavepoints(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		sp, err := CreateSavepoint(s.Dir(), "job", s.opts)
		if err != nil {
			t.Fatal(err)
		}
		defer sp.Close()
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
		if got := listAll(t, sp); !reflect.DeepEqual(got, before) || len(got) != 2 {
			t.Fatalf("savepoint files after Retain and GC: %v; want %v", got, before)
		}
		if ids, _ := s.Completed(); !reflect.DeepEqual(ids, []event.CheckpointID{5}) {
			t.Fatalf("checkpoints after Retain(1): %v; want [5]", ids)
		}
	})
}
