package checkpointstorage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weirstream/weir/event"
)

// localFiles writes each name → content into a temp directory and returns
// them as LocalFiles (shared when the name has a slash).
func localFiles(t *testing.T, kv ...string) []LocalFile {
	t.Helper()
	dir := t.TempDir()
	var out []LocalFile
	for i := 0; i < len(kv); i += 2 {
		src := filepath.Join(dir, strings.ReplaceAll(kv[i], "/", "_"))
		if err := os.WriteFile(src, []byte(kv[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, LocalFile{Name: kv[i], Src: src, Shared: strings.Contains(kv[i], "/")})
	}
	return out
}

// commit writes files into checkpoint id and completes it with their
// handles (and those of reused, written by earlier checkpoints).
func commit(t *testing.T, s *FS, id event.CheckpointID, files []LocalFile, reused ...Handle) []Handle {
	t.Helper()
	hs, err := s.WriteFiles(id, files)
	if err != nil {
		t.Fatal(err)
	}
	hs = append(hs, reused...)
	if err := s.WriteMetadata(Metadata{ID: id, Tasks: map[string][]byte{}, Handles: hs}); err != nil {
		t.Fatal(err)
	}
	return hs
}

func handleOf(t *testing.T, hs []Handle, p string) Handle {
	t.Helper()
	i := slices.IndexFunc(hs, func(h Handle) bool { return h.Path == p })
	if i < 0 {
		t.Fatalf("no handle %s in %v", p, hs)
	}
	return hs[i]
}

// TestSharedFilesCountedAcrossRetain: a shared file lives while a retained
// checkpoint names it, and goes with the last one that did.
func TestSharedFilesCountedAcrossRetain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		h1 := commit(t, s, 1, localFiles(t, "g/1.sst", "one", "g/2.sst", "two", "MANIFEST", "m1"))
		a, b2 := handleOf(t, h1, "shared/g/1.sst"), handleOf(t, h1, "shared/g/2.sst")
		h2 := commit(t, s, 2, localFiles(t, "g/3.sst", "three", "MANIFEST", "m2"), a, b2)
		commit(t, s, 3, localFiles(t, "MANIFEST", "m3"), a, handleOf(t, h2, "shared/g/3.sst"))

		c, err := s.Retain(2, 0) // drops chk-1: every shared file it named is still named
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"chk-1"}; !slices.Equal(c.Removed, want) {
			t.Fatalf("Retain(2) removed %v, want %v", c.Removed, want)
		}
		c, err = s.Retain(1, 0) // drops chk-2: 2.sst's count reaches zero
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"chk-2", "shared/g/2.sst"}; !slices.Equal(c.Removed, want) {
			t.Fatalf("Retain(1) removed %v, want %v", c.Removed, want)
		}
		want := []string{"_checkpoint_id", "chk-3/MANIFEST", "chk-3/_metadata", "shared/g/1.sst", "shared/g/3.sst"}
		if got := withoutCounter(listAll(t, s)); !slices.Equal(got, want[1:]) {
			t.Fatalf("storage holds %v, want %v", got, want[1:])
		}
		if _, _, err := s.Latest(); err != nil {
			t.Fatalf("latest after Retain: %v", err)
		}
	})
}

func withoutCounter(files []string) []string {
	return slices.DeleteFunc(files, func(f string) bool { return f == counterName })
}

// TestGCCollectsOrphanSharedFiles: a shared file uploaded by a checkpoint
// that never completed is collected by GC; one a valid checkpoint names
// is kept.
func TestGCCollectsOrphanSharedFiles(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		h1 := commit(t, s, 1, localFiles(t, "g/1.sst", "one"))
		if _, err := s.WriteFiles(2, localFiles(t, "g/2.sst", "two", "h/7.sst", "seven", "MANIFEST", "m2")); err != nil {
			t.Fatal(err)
		}
		c, err := s.GC()
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"chk-2", "shared/g/2.sst", "shared/h/7.sst"}; !slices.Equal(c.Removed, want) {
			t.Fatalf("GC removed %v, want %v", c.Removed, want)
		}
		if got, want := withoutCounter(listAll(t, s)), []string{"chk-1/_metadata", "shared/g/1.sst"}; !slices.Equal(got, want) {
			t.Fatalf("storage holds %v, want %v", got, want)
		}
		if d, ok := s.obj.(dirObjects); ok {
			if _, err := os.Stat(filepath.Join(d.dir, "shared", "h")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("empty shared/h left behind: %v", err)
			}
		}
		dst := filepath.Join(t.TempDir(), "1.sst")
		if err := s.FetchFile(handleOf(t, h1, "shared/g/1.sst"), dst, false); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFetchFile: a copy and a link give the content; a missing or changed
// file is a *CorruptError naming it.
func TestFetchFile(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		hs := commit(t, s, 1, localFiles(t, "g/1.sst", "one", "g/2.sst", "two"))
		dir := t.TempDir()
		for _, link := range []bool{false, true} {
			dst := filepath.Join(dir, "x")
			_ = os.Remove(dst)
			if err := s.FetchFile(hs[0], dst, link); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(dst); string(got) != "one" {
				t.Fatalf("fetched %q, want %q", got, "one")
			}
		}
		mustWrite(t, s, "shared/g/2.sst", "twO")
		err := s.FetchFile(hs[1], filepath.Join(dir, "y"), false)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "checksum") || ce.Path != s.Where("shared/g/2.sst") {
			t.Fatalf("changed file: got %v, want a checksum CorruptError naming %s", err, s.Where("shared/g/2.sst"))
		}
		mustRemove(t, s, "shared/g/2.sst")
		for _, link := range []bool{false, true} {
			err = s.FetchFile(hs[1], filepath.Join(dir, "z"), link)
			if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "missing") || ce.Path != s.Where("shared/g/2.sst") {
				t.Fatalf("missing file (link %v): got %v, want a CorruptError naming %s", link, err, s.Where("shared/g/2.sst"))
			}
		}
	})
}

func TestWriteFilesRefusesBadNames(t *testing.T) {
	s := mustOpen(t, t.TempDir(), Options{})
	for _, f := range []LocalFile{{Name: "a/b", Src: "x"}, {Name: "a", Src: "x", Shared: true},
		{Name: "a/b/c", Src: "x", Shared: true}, {Name: "../b", Src: "x", Shared: true}} {
		if _, err := s.WriteFiles(1, []LocalFile{f}); !errors.Is(err, ErrInvalidName) {
			t.Errorf("%+v: got %v, want ErrInvalidName", f, err)
		}
	}
}

// TestVerifyFiles: every file is read and checked; with a changed file
// and a missing one among them, the error names the first of the two in
// the order given, whichever was read first.
func TestVerifyFiles(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		var kv []string
		for i := range 20 {
			kv = append(kv, fmt.Sprintf("g/%d.sst", i), strings.Repeat(fmt.Sprint(i), 100+i))
		}
		hs := commit(t, s, 1, localFiles(t, kv...))
		if err := s.VerifyFiles(hs); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, s, "shared/g/7.sst", strings.Repeat("x", 107))
		mustRemove(t, s, "shared/g/15.sst")
		err := s.VerifyFiles(hs)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "checksum") || ce.Path != s.Where("shared/g/7.sst") {
			t.Fatalf("got %v, want a checksum CorruptError naming %s", err, s.Where("shared/g/7.sst"))
		}
		err = s.VerifyFiles(hs[8:])
		if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "missing") || ce.Path != s.Where("shared/g/15.sst") {
			t.Fatalf("got %v, want a CorruptError naming the missing %s", err, s.Where("shared/g/15.sst"))
		}
	})
}

// TestWriteFilesFromWriter: a file produced by its Write function, not
// read from disk, is stored whole with its size and checksum (fetched back
// and checked), and a Write that fails fails the upload, naming the file,
// with no goroutine left writing.
func TestWriteFilesFromWriter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		content := strings.Repeat("0123456789", 300_000) // several pipe writes
		produce := func(w io.Writer) error {
			for i := 0; i < len(content); i += 7_000 {
				if _, err := io.WriteString(w, content[i:min(i+7_000, len(content))]); err != nil {
					return err
				}
			}
			return nil
		}
		hs := commit(t, s, 1, []LocalFile{{Name: "g/1.base", Write: produce, Shared: true}})
		if hs[0].Size != int64(len(content)) {
			t.Fatalf("stored %d bytes, want %d", hs[0].Size, len(content))
		}
		dst := filepath.Join(t.TempDir(), "x")
		if err := s.FetchFile(hs[0], dst, false); err != nil { // checks size and CRC32C
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(dst); string(got) != content {
			t.Fatalf("fetched %d bytes that differ from the %d written", len(got), len(content))
		}
		calls := 0
		broken := func(w io.Writer) error {
			calls++
			_, _ = io.WriteString(w, "partial")
			return errors.New("codec panicked")
		}
		_, err := s.WriteFiles(2, []LocalFile{{Name: "g/2.delta", Write: broken, Shared: true}})
		if err == nil || !strings.Contains(err.Error(), "codec panicked") || !strings.Contains(err.Error(), "2.delta") {
			t.Fatalf("got %v, want the producer's error naming g/2.delta", err)
		}
		if calls != 1 { // the producer's failure is not the store's: retrying cannot help
			t.Fatalf("the failing producer was called %d times, want 1", calls)
		}
		// An upload that stops reading early closes its source, and the close
		// returns only after the producer has: no Write is still running
		// when WriteFiles returns.
		var running atomic.Int32
		endless := func(w io.Writer) error {
			running.Add(1)
			defer running.Add(-1)
			for {
				if _, err := io.WriteString(w, content[:4096]); err != nil {
					return err
				}
			}
		}
		src, err := LocalFile{Name: "g/3.base", Write: endless, Shared: true}.open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(src, make([]byte, 10_000)); err != nil {
			t.Fatal(err)
		}
		_ = src.Close()
		if n := running.Load(); n != 0 {
			t.Fatalf("%d producers still running after the source was closed", n)
		}
	})
}
