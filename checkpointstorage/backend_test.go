package checkpointstorage

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/testsvc"
)

// backend is one kind of storage every storage test runs against.
type backend struct {
	name string
	// loc returns a fresh, empty location and the Options to open it with.
	loc func(t *testing.T) (string, Options)
}

// backends: a local directory, and a prefix of the S3 test server's bucket
// (skipped without the server, failed under CI=true).
var backends = []backend{
	{"file", func(t *testing.T) (string, Options) { return filepath.Join(t.TempDir(), "checkpoints"), Options{} }},
	{"s3", s3Loc},
}

var s3Seq atomic.Int64

var unsafeKey = regexp.MustCompile(`[^A-Za-z0-9_/-]+`)

// s3Loc returns a prefix of the test bucket unique to this test, and the
// server's options; the prefix is emptied when the test ends.
func s3Loc(t *testing.T) (string, Options) {
	srv := testsvc.S3(t)
	opts := Options{S3: S3Options{Endpoint: srv.Endpoint, Region: srv.Region, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}}
	loc := fmt.Sprintf("s3://%s/test/%s-%d-%d", srv.Bucket, unsafeKey.ReplaceAllString(t.Name(), "_"), time.Now().UnixNano(), s3Seq.Add(1))
	t.Cleanup(func() {
		s, err := Open(loc, opts)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer s.Close()
		for _, e := range listAll(t, s) {
			if err := s.obj.remove(context.Background(), e, false); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return loc, opts
}

// forEachBackend runs f as a subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

// open opens a fresh storage of b, closed when the test ends.
func (b backend) open(t *testing.T) *FS {
	t.Helper()
	loc, opts := b.loc(t)
	return mustOpen(t, loc, opts)
}

func mustOpen(t *testing.T, loc string, opts Options) *FS {
	t.Helper()
	s, err := Open(loc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// listAll returns every file of s, relative, slash-separated, sorted.
func listAll(t *testing.T, s *FS) []string {
	t.Helper()
	var files []string
	var walk func(dir string)
	walk = func(dir string) {
		es, err := s.obj.list(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			rel := e.name
			if dir != "" {
				rel = dir + "/" + e.name
			}
			if e.dir {
				walk(rel)
			} else {
				files = append(files, rel)
			}
		}
	}
	walk("")
	slices.Sort(files)
	return files
}

// mustWrite puts data at rel in s, bypassing every check.
func mustWrite(t *testing.T, s *FS, rel string, data string) {
	t.Helper()
	if err := s.obj.put(context.Background(), rel, []byte(data), putReplace); err != nil {
		t.Fatal(err)
	}
}

// damage applies f to the bytes of rel.
func damage(t *testing.T, s *FS, rel string, f func([]byte) []byte) {
	t.Helper()
	b, err := s.obj.get(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, rel, string(f(b)))
}

func mustRemove(t *testing.T, s *FS, rel string) {
	t.Helper()
	if err := s.obj.remove(context.Background(), rel, false); err != nil {
		t.Fatal(err)
	}
}
