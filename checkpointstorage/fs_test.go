package checkpointstorage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
)

func openTemp(t *testing.T) *FS {
	t.Helper()
	s, err := OpenFS(filepath.Join(t.TempDir(), "checkpoints"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// complete writes state files named names into checkpoint id and completes
// it with metadata referencing them.
func complete(t *testing.T, s *FS, id event.CheckpointID, names ...string) Metadata {
	t.Helper()
	m := Metadata{ID: id, Timestamp: 1000 * int64(id), JobID: "job", Tasks: map[string][]byte{"map/0": []byte("blob")}}
	for _, n := range names {
		h, err := s.WriteState(id, n, []byte(n+" state of "+chkName(id)))
		if err != nil {
			t.Fatal(err)
		}
		m.Handles = append(m.Handles, h)
	}
	if err := s.WriteMetadata(m); err != nil {
		t.Fatal(err)
	}
	return m
}

// listFiles returns every file under dir, relative, slash-separated, sorted.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

func mustWrite(t *testing.T, p string, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWriteReadState(t *testing.T) {
	s := openTemp(t)
	h, err := s.WriteState(3, "map-0-keyed", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Handle{Path: "chk-3/map-0-keyed", Size: 5, CRC32C: checksum([]byte("hello"))}); h != want {
		t.Fatalf("handle = %+v, want %+v", h, want)
	}
	got, err := s.ReadState(h)
	if err != nil || string(got) != "hello" {
		t.Fatalf("ReadState = %q, %v", got, err)
	}
}

func TestWriteStateInvalidName(t *testing.T) {
	s := openTemp(t)
	for _, name := range []string{"", "_metadata", "a/b", `a\b`, "..", ".hidden", "_x"} {
		if _, err := s.WriteState(1, name, nil); !errors.Is(err, ErrInvalidName) {
			t.Errorf("WriteState(%q) error = %v, want ErrInvalidName", name, err)
		}
	}
}

func TestReadStateCorrupt(t *testing.T) {
	cases := []struct {
		name   string
		damage func(p string) error
		reason string
	}{
		{"flipped byte", func(p string) error {
			b, _ := os.ReadFile(p)
			b[2] ^= 0x40
			return os.WriteFile(p, b, 0o644)
		}, "checksum"},
		{"truncated", func(p string) error { return os.Truncate(p, 3) }, "size 3 bytes, want 11"},
		{"missing", os.Remove, "missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openTemp(t)
			h, err := s.WriteState(1, "src-0-op", []byte("hello world"))
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(s.Dir(), "chk-1", "src-0-op")
			if err := c.damage(p); err != nil {
				t.Fatal(err)
			}
			_, err = s.ReadState(h)
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("ReadState error = %v, want *CorruptError", err)
			}
			if ce.Path != p || !strings.Contains(ce.Reason, c.reason) {
				t.Fatalf("CorruptError = %+v, want path %s and reason containing %q", ce, p, c.reason)
			}
		})
	}
}

func TestReadStateRejectsEscapingHandle(t *testing.T) {
	s := openTemp(t)
	if _, err := s.ReadState(Handle{Path: "../etc/passwd"}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error = %v, want ErrCorrupt", err)
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	s := openTemp(t)
	want := complete(t, s, 7, "a", "b")
	want.Final = true
	if err := s.WriteMetadata(want); err != nil { // rewriting replaces atomically
		t.Fatal(err)
	}
	got, err := s.ReadMetadata(7)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadMetadata = %+v, want %+v", got, want)
	}
	if files := listFiles(t, s.Dir()); !reflect.DeepEqual(files, []string{"chk-7/_metadata", "chk-7/a", "chk-7/b"}) {
		t.Fatalf("files = %v (temp file left behind?)", files)
	}
}

func TestWriteMetadataRejects(t *testing.T) {
	s := openTemp(t)
	if err := s.WriteMetadata(Metadata{ID: 0}); err == nil {
		t.Error("id 0 accepted")
	}
	if err := s.WriteMetadata(Metadata{ID: 1, Handles: []Handle{{Path: "../x"}}}); err == nil {
		t.Error("escaping handle accepted")
	}
}

func TestReadMetadataMissing(t *testing.T) {
	s := openTemp(t)
	if _, err := s.ReadMetadata(4); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("error = %v, want fs.ErrNotExist and not ErrCorrupt", err)
	}
}
