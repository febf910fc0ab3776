package pebble

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The backend's file system skips fsyncs but must write and read like the
// operating system's.
func TestNoSyncFSWritesAndReads(t *testing.T) {
	fs := noSyncFS{vfs.Default}
	name := filepath.Join(t.TempDir(), "f")
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("state")); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if full, err := f.SyncTo(5); err != nil || !full {
		t.Fatalf("SyncTo: %v, %v", full, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil || string(got) != "state" {
		t.Fatalf("read %q, %v; want %q", got, err, "state")
	}
	if _, ok := r.(noSyncFile); !ok {
		t.Fatalf("Open returned %T, want noSyncFile", r)
	}
}
