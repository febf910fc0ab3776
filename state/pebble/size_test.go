package pebble_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state/pebble"
)

// EstimatedSize of a Pebble backend: the bytes written while they sit in
// the memtables (each entry its ~100-byte value and its key), then, once
// a checkpoint flushed them (DisableChangelog), exactly the live SSTs'
// bytes in its directory.
func TestEstimatedSizeMemtablesThenSSTs(t *testing.T) {
	pebble.WithoutCompactions(func() { estimatedSize(t) })
}

func estimatedSize(t *testing.T) {
	local := t.TempDir()
	b := newIncremental(t, local, keygroup.Range{Start: 0, End: metaMaxPar - 1}, nil, flushing)
	if n := b.EstimatedSize(); n != 0 {
		t.Fatalf("empty backend: %d bytes, want 0", n)
	}
	fill(b, 0, 1000)
	if n := b.EstimatedSize(); n < 1000*100 || n > 1000*(100+40) {
		t.Errorf("1000 values of 100 bytes in the memtables: estimated %d bytes, want 100-140 KB", n)
	}
	if _, err := b.Snapshot(0); err != nil { // an incremental snapshot flushes
		t.Fatal(err)
	}
	if n, ssts := b.EstimatedSize(), sstBytes(t, local); n != ssts || n == 0 {
		t.Errorf("after the flush: estimated %d bytes, the SSTs hold %d", n, ssts)
	}
}

// sstBytes sums the sizes of the database's .sst files under local (its
// directory's own: a checkpoint's subdirectory links the same files).
func sstBytes(t *testing.T, local string) int64 {
	var n int64
	err := filepath.WalkDir(local, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), "checkpoint-") {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sst") {
			return err
		}
		info, err := d.Info()
		n += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
