package checkpointstorage

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
)

// Retain never deletes a corrupt checkpoint (it moves it aside), nor the
// pinned one (what a restore started from), however old.
func TestRetainMovesCorruptAsideAndKeepsPin(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		for id := event.CheckpointID(1); id <= 5; id++ {
			complete(t, s, id, "op-0")
		}
		damageMetadata(t, s, 3, func(b []byte) []byte { return b[:len(b)-1] })
		c, err := s.Retain(1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.Deleted, []event.CheckpointID{1, 4}) {
			t.Errorf("deleted %v, want [1 4] (2 is pinned, 3 corrupt)", c.Deleted)
		}
		if len(c.Corrupt) != 1 || c.Corrupt[0].ID != 3 || c.Corrupt[0].To != "chk-3.corrupt" || !errors.Is(c.Corrupt[0].Err, ErrCorrupt) {
			t.Errorf("corrupt %+v, want chk-3 moved to chk-3.corrupt", c.Corrupt)
		}
		want := []string{"chk-2/_metadata", "chk-2/op-0", "chk-3.corrupt/_metadata", "chk-3.corrupt/op-0", "chk-5/_metadata", "chk-5/op-0"}
		if files := listAll(t, s); !reflect.DeepEqual(files, want) {
			t.Errorf("files = %v, want %v", files, want)
		}
		if id, err := s.NextID(); err != nil || id != 6 {
			t.Errorf("NextID = %d, %v; want 6", id, err)
		}
	})
}

// A corrupt checkpoint whose directory holds a file a valid checkpoint
// references stays in place (moving it would break the valid one).
func TestGCKeepsReferencedCorruptInPlace(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		h, err := s.WriteState(1, "finished-src", []byte("done"))
		if err != nil {
			t.Fatal(err)
		}
		complete(t, s, 1, "op-0")
		h2, err := s.WriteState(2, "op-0", []byte("y"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteMetadata(Metadata{ID: 2, Handles: []Handle{h2, h}}); err != nil {
			t.Fatal(err)
		}
		damageMetadata(t, s, 1, func(b []byte) []byte { return nil })
		c, err := s.GC()
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Corrupt) != 1 || c.Corrupt[0].To != "" || len(c.Removed) != 0 {
			t.Fatalf("GC = %+v, want chk-1 reported corrupt and left in place", c)
		}
		if _, _, err := s.Latest(); err != nil {
			t.Fatal(err)
		}
	})
}

// A restore of the latest checkpoint that finds nothing usable names the
// directory, what it holds and why each candidate was rejected.
func TestNoCheckpointErrorSaysWhatWasFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		complete(t, s, 1, "op-0")
		complete(t, s, 2, "op-0")
		complete(t, s, 3, "op-0")
		damageMetadata(t, s, 3, func(b []byte) []byte { return b[:len(b)/2] })
		mustRemove(t, s, "chk-2/"+metadataName)
		damageMetadata(t, s, 1, func(b []byte) []byte { return nil })
		mustWrite(t, s, "chk-7.corrupt/_metadata", "x")
		if b.name == "file" {
			other := filepath.Join(t.TempDir(), "jobs")
			if err := os.MkdirAll(filepath.Join(other, "billing", "chk-1"), 0o755); err != nil {
				t.Fatal(err)
			}
			cases := []struct{ dir, want string }{
				{s.Dir(), "no usable checkpoint in " + s.Dir() + ": found chk-3, corrupt: " + filepath.Join(s.Dir(), "chk-3", "_metadata") +
					": truncated or padded: "},
				{filepath.Join(t.TempDir(), "nope"), "the directory does not exist (is the checkpoint directory spelt right?)"},
				{t.TempDir(), ": the directory is empty"},
				{other, "it holds no chk-N directory, only billing/ (is it the job's checkpoint directory?)"},
			}
			for _, c := range cases {
				_, _, err := Resolve(c.dir, "latest")
				var ne *NoCheckpointError
				if !errors.Is(err, ErrNoCheckpoint) || !errors.As(err, &ne) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("Resolve(%s, latest) = %v\nwant ErrNoCheckpoint containing %q", c.dir, err, c.want)
				}
			}
		}
		if _, _, err := s.Latest(); err == nil || !strings.Contains(err.Error(), "no usable checkpoint in "+s.Dir()+": found chk-3, corrupt: "+s.Where("chk-3/_metadata")+": truncated or padded: ") {
			t.Errorf("Latest = %v", err)
		}
		_, _, err := s.Latest()
		for _, want := range []string{"; chk-2 without _metadata (the checkpoint never completed); chk-1, corrupt: ",
			"; moved aside earlier as corrupt: chk-7.corrupt"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Latest = %v, want it to contain %q", err, want)
			}
		}
	})
}
