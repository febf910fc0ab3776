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

// damageMetadata applies f to the bytes of chk-<id>/_metadata.
func damageMetadata(t *testing.T, s *FS, id event.CheckpointID, f func([]byte) []byte) {
	t.Helper()
	damage(t, s, chkName(id)+"/"+metadataName, f)
}

func TestLatestFallsBackOnCorruptMetadata(t *testing.T) {
	cases := []struct {
		name   string
		damage func([]byte) []byte
		reason string
	}{
		{"truncated payload", func(b []byte) []byte { return b[:len(b)-10] }, "truncated"},
		{"truncated header", func(b []byte) []byte { return b[:10] }, "shorter than the 24-byte header"},
		{"empty", func(b []byte) []byte { return nil }, "truncated"},
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }, "bad magic"},
		{"bad version", func(b []byte) []byte { b[11] = 9; return b }, "unsupported format version 9"},
		{"flipped payload byte", func(b []byte) []byte { b[len(b)-5] ^= 1; return b }, "checksum"},
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := b.open(t)
				want := complete(t, s, 8, "op-0")
				complete(t, s, 9, "op-0")
				damageMetadata(t, s, 9, c.damage)

				got, skipped, err := s.Latest()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("Latest = checkpoint %d, want 8", got.ID)
				}
				if len(skipped) != 1 {
					t.Fatalf("skipped = %v, want one error for checkpoint 9", skipped)
				}
				var ce *CorruptError
				if !errors.As(skipped[0], &ce) || !strings.Contains(ce.Reason, c.reason) ||
					!strings.HasPrefix(skipped[0].Error(), "checkpoint 9 skipped: ") ||
					ce.Path != s.Where("chk-9/_metadata") {
					t.Fatalf("skipped[0] = %v, want a CorruptError for chk-9/_metadata with reason %q", skipped[0], c.reason)
				}
			})
		}
	})
}

func TestLatestReportsIncompleteAndMissingState(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		complete(t, s, 1, "a")
		complete(t, s, 2, "a")
		mustRemove(t, s, "chk-2/a")
		if _, err := s.WriteState(3, "a", []byte("x")); err != nil { // crashed before metadata
			t.Fatal(err)
		}
		got, skipped, err := s.Latest()
		if err != nil || got.ID != 1 {
			t.Fatalf("Latest = %d, %v; want 1", got.ID, err)
		}
		if len(skipped) != 2 || !strings.Contains(skipped[0].Error(), "checkpoint 3 skipped") ||
			!strings.Contains(skipped[1].Error(), "checkpoint 2 skipped") || !errors.Is(skipped[1], ErrCorrupt) {
			t.Fatalf("skipped = %v", skipped)
		}
		ids, err := s.Completed()
		if err != nil || !reflect.DeepEqual(ids, []event.CheckpointID{1}) {
			t.Fatalf("Completed = %v, %v; want [1]", ids, err)
		}
	})
}

func TestLatestNone(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		if _, err := s.WriteState(1, "a", nil); err != nil {
			t.Fatal(err)
		}
		_, skipped, err := s.Latest()
		if !errors.Is(err, ErrNoCheckpoint) || len(skipped) != 1 {
			t.Fatalf("Latest = %v, %v; want ErrNoCheckpoint and one skipped", skipped, err)
		}
		if b.name == "file" {
			if _, _, err := Resolve(filepath.Join(t.TempDir(), "nope"), "latest"); !errors.Is(err, ErrNoCheckpoint) {
				t.Fatalf("Resolve on a missing directory = %v, want ErrNoCheckpoint", err)
			}
		}
	})
}

func TestGCAfterCrashMidCheckpoint(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		complete(t, s, 1, "src-0", "map-0")
		complete(t, s, 2, "src-0", "map-0")
		if err := s.SetNextID(4); err != nil {
			t.Fatal(err)
		}
		// Checkpoint 3 crashed after its state files, before its metadata.
		for _, n := range []string{"src-0", "map-0"} {
			if _, err := s.WriteState(3, n, []byte("partial")); err != nil {
				t.Fatal(err)
			}
		}
		mustWrite(t, s, "chk-2/stray", "x")
		mustWrite(t, s, "chk-2/_metadata.tmp-123", "x")
		mustWrite(t, s, "chk-2/sub/y", "y")
		mustWrite(t, s, "_checkpoint_id.tmp-9", "x")
		mustWrite(t, s, "README", "not ours")
		damageMetadata(t, s, 1, func(b []byte) []byte { return b[:30] })

		c, err := s.GC()
		if err != nil {
			t.Fatal(err)
		}
		wantRemoved := []string{"_checkpoint_id.tmp-9", "chk-2/_metadata.tmp-123", "chk-2/stray", "chk-2/sub", "chk-3"}
		if !reflect.DeepEqual(c.Removed, wantRemoved) {
			t.Fatalf("removed = %v, want %v", c.Removed, wantRemoved)
		}
		if len(c.Corrupt) != 1 || c.Corrupt[0].ID != 1 || c.Corrupt[0].To != "chk-1.corrupt" || !errors.Is(c.Corrupt[0].Err, ErrCorrupt) {
			t.Fatalf("corrupt = %+v, want chk-1 moved aside to chk-1.corrupt", c.Corrupt)
		}
		want := []string{"README", "_checkpoint_id", "chk-1.corrupt/_metadata", "chk-1.corrupt/map-0", "chk-1.corrupt/src-0",
			"chk-2/_metadata", "chk-2/map-0", "chk-2/src-0"}
		if files := listAll(t, s); !reflect.DeepEqual(files, want) {
			t.Fatalf("files after GC = %v, want %v", files, want)
		}
		if id, err := s.NextID(); err != nil || id != 4 {
			t.Fatalf("NextID after GC = %d, %v; want 4", id, err)
		}
		if again, err := s.GC(); err != nil || len(again.Removed)+len(again.Corrupt) != 0 {
			t.Fatalf("second GC removed %v, %v; want nothing", again, err)
		}
	})
}

func TestGCKeepsFilesReferencedAcrossCheckpoints(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		h, err := s.WriteState(1, "finished-src", []byte("done")) // chk-1 never completed
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.WriteState(1, "other", []byte("x")); err != nil {
			t.Fatal(err)
		}
		h2, err := s.WriteState(2, "map-0", []byte("y"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteMetadata(Metadata{ID: 2, Handles: []Handle{h2, h}}); err != nil {
			t.Fatal(err)
		}
		c, err := s.GC()
		if err != nil || !reflect.DeepEqual(c.Removed, []string{"chk-1/other"}) {
			t.Fatalf("GC = %v, %v", c.Removed, err)
		}
		want := []string{"chk-1/finished-src", "chk-2/_metadata", "chk-2/map-0"}
		if files := listAll(t, s); !reflect.DeepEqual(files, want) {
			t.Fatalf("files = %v, want %v", files, want)
		}
	})
}

func TestNextIDMonotoneAcrossReopen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		loc, opts := b.loc(t)
		steps := []struct {
			do   func(s *FS) error
			want event.CheckpointID
		}{
			{func(s *FS) error { return nil }, 1},
			{func(s *FS) error { return s.SetNextID(5) }, 5},
			{func(s *FS) error { return s.SetNextID(3) }, 5}, // ignored: never backwards
			{func(s *FS) error { _, err := s.WriteState(9, "a", nil); return err }, 10},
			{func(s *FS) error { return s.Discard(9) }, 5},
			{func(s *FS) error { return s.SetNextID(11) }, 11},
			{func(s *FS) error { return s.Discard(11) }, 11},
		}
		for i, st := range steps {
			s := mustOpen(t, loc, opts) // reopen every step, as after a restart
			if err := st.do(s); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if got, err := s.NextID(); err != nil || got != st.want {
				t.Fatalf("step %d: NextID = %d, %v; want %d", i, got, err, st.want)
			}
		}
	})
}

func TestNextIDCorruptCounter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		if err := s.SetNextID(5); err != nil {
			t.Fatal(err)
		}
		damage(t, s, counterName, func(b []byte) []byte { return b[:20] })
		if _, err := s.NextID(); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("NextID = %v, want ErrCorrupt", err)
		}
	})
}

func TestRetain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		for id := event.CheckpointID(1); id <= 5; id++ {
			complete(t, s, id, "op-0")
		}
		complete(t, s, 6, "op-0")
		damageMetadata(t, s, 6, func(b []byte) []byte { return b[:len(b)-1] })
		if _, err := s.WriteState(7, "op-0", []byte("in progress")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Retain(0, 0); err == nil {
			t.Fatal("Retain(0) accepted")
		}
		c, err := s.Retain(2, 0)
		if err != nil || !reflect.DeepEqual(c.Deleted, []event.CheckpointID{1, 2, 3}) || len(c.Corrupt) != 0 {
			t.Fatalf("Retain(2) = %+v, %v; want [1 2 3] deleted", c, err)
		}
		ids, err := s.Completed()
		if err != nil || !reflect.DeepEqual(ids, []event.CheckpointID{4, 5}) {
			t.Fatalf("Completed = %v, %v; want [4 5]", ids, err)
		}
		want := []string{"chk-4/_metadata", "chk-4/op-0", "chk-5/_metadata", "chk-5/op-0", "chk-6/_metadata", "chk-6/op-0", "chk-7/op-0"}
		if files := listAll(t, s); !reflect.DeepEqual(files, want) {
			t.Fatalf("files = %v, want %v", files, want)
		}
		if c, err := s.Retain(5, 0); err != nil || c.Deleted != nil || c.Removed != nil || c.Corrupt != nil {
			t.Fatalf("Retain(5) = %+v, %v; want nothing", c, err)
		}
	})
}

func TestResolve(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		complete(t, s, 1, "a")
		want := complete(t, s, 2, "a")
		chk2 := s.Location(2)
		for _, which := range []string{"latest", chk2, join(chk2, "_metadata"), "chk-2", "chk-2/_metadata"} {
			got, st, skipped, err := s.Resolve(which)
			if err != nil || len(skipped) != 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("Resolve(%q) = %d, %v, %v; want checkpoint 2", which, got.ID, skipped, err)
			}
			if st != s {
				t.Errorf("Resolve(%q) returned another storage for a checkpoint in s", which)
				_ = st.Close()
			}
			if b.name == "file" {
				if got, _, err := Resolve(s.Dir(), which); err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("package Resolve(%q) = %d, %v; want checkpoint 2", which, got.ID, err)
				}
			}
		}
		if b.name == "file" {
			// The checkpoint directory itself: the error names what it holds.
			_, _, err := Resolve(s.Dir(), s.Dir())
			want := "is a directory of checkpoints or savepoints, not one: restore one inside it (" + chk2 + ", the newest checkpoint; or make it the checkpoint directory and restore \"latest\")"
			if !errors.Is(err, ErrNoCheckpoint) || !strings.Contains(err.Error(), want) {
				t.Errorf("Resolve(the checkpoint directory) = %v, want ErrNoCheckpoint containing %q", err, want)
			}
		}
		if _, _, _, err := s.Resolve("chk-5"); err == nil || !strings.Contains(err.Error(), "chk-5") {
			t.Errorf("Resolve(chk-5) = %v", err)
		}
		if _, err := s.WriteState(3, "a", nil); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := s.Resolve("chk-3"); !errors.Is(err, ErrNoCheckpoint) {
			t.Errorf("Resolve(incomplete chk-3) = %v, want ErrNoCheckpoint", err)
		}
		damageMetadata(t, s, 2, func(b []byte) []byte { return b[:len(b)-1] })
		if _, _, _, err := s.Resolve("chk-2"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Resolve(corrupt chk-2) = %v, want ErrCorrupt", err)
		}
	})
}

func TestParseChkName(t *testing.T) {
	for name, want := range map[string]event.CheckpointID{"chk-1": 1, "chk-42": 42, "chk-0": 0, "chk-007": 0, "chk-": 0, "chk--1": 0, "chk-1a": 0, "x-1": 0} {
		if got, _ := parseChkName(name); got != want {
			t.Errorf("parseChkName(%q) = %d, want %d", name, got, want)
		}
	}
}

// A chk-N directory renamed (or copied) under another name restores: its
// metadata says which checkpoint it is, and its state files are read from
// where it now is — in the checkpoint directory, and, locally, elsewhere.
func TestResolveRenamedCheckpoint(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		want := complete(t, s, 7, "a", "b")
		if err := s.rename("chk-7", "mycp"); err != nil {
			t.Fatal(err)
		}
		places := map[string]string{"mycp": join(s.Dir(), "mycp")}
		if b.name == "file" {
			moved := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.Rename(filepath.Join(s.Dir(), "mycp"), moved); err != nil {
				t.Fatal(err)
			}
			places = map[string]string{moved: moved}
		}
		for which, at := range places {
			got, st, _, err := s.Resolve(which)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("Resolve(%q) = %+v, %v; want checkpoint 7", which, got, err)
			}
			if loc := st.Location(got.ID); loc != at {
				t.Errorf("Resolve(%q): location %s, want %s", which, loc, at)
			}
			for _, h := range got.Handles {
				data, err := st.ReadState(h)
				if wantData := filepath.Base(h.Path) + " state of chk-7"; err != nil || string(data) != wantData {
					t.Errorf("ReadState(%s) = %q, %v; want %q", h.Path, data, err, wantData)
				}
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
