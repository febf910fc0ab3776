package checkpointstorage

import (
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
)

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

func TestWriteReadState(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
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
	})
}

func TestWriteStateInvalidName(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		for _, name := range []string{"", "_metadata", "a/b", `a\b`, "..", ".hidden", "_x"} {
			if _, err := s.WriteState(1, name, nil); !errors.Is(err, ErrInvalidName) {
				t.Errorf("WriteState(%q) error = %v, want ErrInvalidName", name, err)
			}
		}
	})
}

func TestReadStateCorrupt(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, s *FS, rel string)
		reason string
	}{
		{"flipped byte", func(t *testing.T, s *FS, rel string) {
			damage(t, s, rel, func(b []byte) []byte { b[2] ^= 0x40; return b })
		}, "checksum"},
		{"truncated", func(t *testing.T, s *FS, rel string) {
			damage(t, s, rel, func(b []byte) []byte { return b[:3] })
		}, "size 3 bytes, want 11"},
		{"missing", mustRemove, "missing"},
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := b.open(t)
				h, err := s.WriteState(1, "src-0-op", []byte("hello world"))
				if err != nil {
					t.Fatal(err)
				}
				c.damage(t, s, "chk-1/src-0-op")
				_, err = s.ReadState(h)
				var ce *CorruptError
				if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("ReadState error = %v, want *CorruptError", err)
				}
				if p := s.Where("chk-1/src-0-op"); ce.Path != p || !strings.Contains(ce.Reason, c.reason) {
					t.Fatalf("CorruptError = %+v, want path %s and reason containing %q", ce, p, c.reason)
				}
			})
		}
	})
}

func TestReadStateRejectsEscapingHandle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		if _, err := s.ReadState(Handle{Path: "../etc/passwd"}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error = %v, want ErrCorrupt", err)
		}
	})
}

// A completed checkpoint is never overwritten: a second WriteMetadata of
// the same id fails, naming the file, and the first metadata stays.
func TestMetadataRoundTripAndNoOverwrite(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		want := complete(t, s, 7, "a", "b")
		again := want
		again.Final = true
		err := s.WriteMetadata(again)
		if !errors.Is(err, ErrCheckpointExists) || !strings.Contains(err.Error(), s.Where("chk-7/_metadata")) {
			t.Fatalf("second WriteMetadata = %v, want ErrCheckpointExists naming %s", err, s.Where("chk-7/_metadata"))
		}
		got, err := s.ReadMetadata(7)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ReadMetadata = %+v, want %+v", got, want)
		}
		if files := listAll(t, s); !reflect.DeepEqual(files, []string{"chk-7/_metadata", "chk-7/a", "chk-7/b"}) {
			t.Fatalf("files = %v (temp file left behind?)", files)
		}
	})
}

func TestWriteMetadataRejects(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		if err := s.WriteMetadata(Metadata{ID: 0}); err == nil {
			t.Error("id 0 accepted")
		}
		if err := s.WriteMetadata(Metadata{ID: 1, Handles: []Handle{{Path: "../x"}}}); err == nil {
			t.Error("escaping handle accepted")
		}
	})
}

func TestReadMetadataMissing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		if _, err := s.ReadMetadata(4); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrCorrupt) {
			t.Fatalf("error = %v, want fs.ErrNotExist and not ErrCorrupt", err)
		}
	})
}
