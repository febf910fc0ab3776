package checkpointstorage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/weirstream/weir/event"
)

// Resolve finds the checkpoint a restore should start from (the argument of
// `weir run --restore`). which is "latest" — the newest valid completed
// checkpoint in dir, as FS.Latest, whose skipped newer checkpoints come back
// in the []error — or the location of a chk-N directory or of its
// _metadata file: a path (tried as given first, then relative to dir) or a
// URL (s3://bucket/prefix/chk-7). The checkpoint's Handles are relative to
// the location holding chk-N: ResolveFS returns the storage there. Resolve
// creates nothing.
func Resolve(dir, which string) (Metadata, []error, error) {
	m, storage, skipped, err := ResolveFS(dir, which)
	if storage != nil {
		_ = storage.Close()
	}
	return m, skipped, err
}

// ResolveFS is Resolve that also returns the storage holding the
// checkpoint (dir itself for "latest"; the location holding chk-N for a
// path or URL), through which its state files are read; the caller closes
// it. dir is opened with default Options; it may be "" when which is a path
// or URL.
func ResolveFS(dir, which string) (Metadata, *FS, []error, error) {
	var s *FS
	var err error
	if dir == "" && which != "latest" { // a path or URL on its own
		opts := Options{}
		opts.EnsureDefaults()
		s = newFS("", dirObjects{}, opts)
	} else if s, err = open(dir, Options{}, false); err != nil {
		return Metadata{}, nil, nil, err
	}
	m, storage, skipped, err := s.Resolve(which)
	if storage != s {
		_ = s.Close()
	}
	return m, storage, skipped, err
}

// Resolve is ResolveFS on this storage: "latest" is looked up here, and a
// relative path first here. The storage it returns is s when the
// checkpoint lies in s, else a new one with s's Options that the caller
// closes. It returns a nil storage with an error.
func (s *FS) Resolve(which string) (Metadata, *FS, []error, error) {
	if which == "latest" {
		m, skipped, err := s.Latest()
		return m, s, skipped, err
	}
	if _, local := localPath(which); !local {
		return s.resolveURL(which)
	}
	dir, local := localPath(s.loc)
	if !local {
		dir = ""
	}
	p, err := findPath(dir, strings.TrimPrefix(which, "file://"))
	if errors.Is(err, fs.ErrNotExist) && !local && !filepath.IsAbs(which) {
		return s.resolveIn(s, filepath.ToSlash(which))
	}
	if err != nil {
		return Metadata{}, nil, nil, err
	}
	chkDir := p
	if filepath.Base(p) == metadataName {
		chkDir = filepath.Dir(p)
	}
	parent := filepath.Dir(chkDir)
	storage := s
	if !local || !sameDir(parent, dir) {
		storage = newFS(parent, dirObjects{dir: parent}, s.opts)
	}
	return s.resolveIn(storage, filepath.Base(chkDir))
}

// resolveURL resolves s3://bucket/prefix/chk-N[/_metadata].
func (s *FS) resolveURL(which string) (Metadata, *FS, []error, error) {
	parent, last, err := split(which)
	if err == nil && last == metadataName {
		parent, last, err = split(parent)
	}
	if err != nil {
		return Metadata{}, nil, nil, err
	}
	storage := s
	if !sameLocation(parent, s.loc) {
		if storage, err = open(parent, s.opts, false); err != nil {
			return Metadata{}, nil, nil, err
		}
	}
	m, st, skipped, err := s.resolveIn(storage, last)
	if st == nil && storage != s {
		_ = storage.Close()
	}
	return m, st, skipped, err
}

// resolveIn reads the metadata of chk (a chk-N name, or chk-N/_metadata)
// in storage and checks its state files are there.
func (s *FS) resolveIn(storage *FS, chk string) (Metadata, *FS, []error, error) {
	chk = strings.TrimSuffix(chk, "/"+metadataName)
	if strings.ContainsAny(chk, "/") {
		return Metadata{}, nil, nil, fmt.Errorf("checkpointstorage: no checkpoint at %q in %s (want \"latest\", chk-N or chk-N/_metadata)", chk, storage.loc)
	}
	id, _ := parseChkName(chk) // 0, and no id check, for a renamed directory
	m, err := storage.readMetadataFile(path.Join(chk, metadataName), id)
	if errors.Is(err, fs.ErrNotExist) {
		if inside := storage.checkpointsIn(chk); inside != "" {
			return Metadata{}, nil, nil, fmt.Errorf("%w: %s is a directory of checkpoints or savepoints, not one: restore one inside it (%s)",
				ErrNoCheckpoint, storage.Where(chk), inside)
		}
		return Metadata{}, nil, nil, fmt.Errorf("%w: %s has no %s (the checkpoint never completed): %w", ErrNoCheckpoint, storage.Where(chk), metadataName, err)
	}
	if err == nil && m.Savepoint {
		// A savepoint's handles are relative to its own directory,
		// wherever it was moved.
		storage, err = storage.savepointAt(chk)
	} else if err == nil && chk != chkName(m.ID) {
		storage = storage.renamed(chkName(m.ID), chk, storage != s)
	}
	if err == nil {
		err = storage.checkHandles(m.Handles, false)
	}
	if err != nil {
		return Metadata{}, nil, nil, err
	}
	return m, storage, nil, nil
}

// savepointAt is the storage of the savepoint in directory chk of s.
func (s *FS) savepointAt(chk string) (*FS, error) {
	if dir, local := localPath(s.loc); local {
		return openSavepoint(filepath.Join(dir, chk), s.opts), nil
	}
	sp, err := open(join(s.loc, chk), s.opts, false)
	if err == nil {
		sp.savepoint = true
	}
	return sp, err
}

// sameLocation reports whether two URLs name the same bucket and prefix
// with the same parameters.
func sameLocation(a, b string) bool {
	ua, _ := url.Parse(a)
	ub, _ := url.Parse(b)
	norm := func(u *url.URL) string {
		return u.Scheme + "://" + u.Host + "/" + strings.Trim(u.Path, "/") + "?" + u.Query().Encode()
	}
	return norm(ua) == norm(ub)
}

// sameDir reports whether two paths name the same directory.
func sameDir(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// findPath returns the first of which and dir/which that exists.
func findPath(dir, which string) (string, error) {
	candidates := []string{which}
	if !filepath.IsAbs(which) && dir != "" {
		candidates = append(candidates, filepath.Join(dir, which))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("checkpointstorage: no checkpoint at %q (want \"latest\", a chk-N directory or its _metadata file): %w", which, fs.ErrNotExist)
}

// checkpointsIn names the checkpoints and savepoints directly inside dir
// (the newest chk-N, and the savepoints), or "" when there are none: a
// restore given the checkpoint directory itself says what it holds.
func (s *FS) checkpointsIn(dir string) string {
	es, err := s.list(dir)
	if err != nil {
		return ""
	}
	var newest event.CheckpointID
	var found []string
	for _, e := range es {
		if id, ok := parseChkName(e.name); ok && e.dir && id > newest {
			newest = id
		} else if e.dir && strings.HasPrefix(e.name, "savepoint-") {
			found = append(found, s.Where(path.Join(dir, e.name)))
		}
	}
	sort.Strings(found)
	if newest > 0 {
		found = append([]string{s.Where(path.Join(dir, chkName(newest))) + `, the newest checkpoint; or make it the checkpoint directory and restore "latest"`}, found...)
	}
	return strings.Join(found, ", ")
}

// renamed is the storage of a checkpoint directory copied or renamed from
// chk-N (from) to another name (to): the metadata, not the name, says
// which checkpoint it is, and its handles, which name chk-N/…, are read
// from to/…. owned says whether closing it closes s's connections (false
// when s is the caller's own storage).
func (s *FS) renamed(from, to string, owned bool) *FS {
	r := newFS(s.loc, renamedObjects{objects: s.obj, from: from + "/", to: to + "/", owned: owned}, s.opts)
	r.renamedDir = to
	return r
}

// renamedObjects reads the keys under from/ from to/ instead.
type renamedObjects struct {
	objects
	from, to string
	owned    bool
}

func (r renamedObjects) key(k string) string {
	if rest, ok := strings.CutPrefix(k, r.from); ok {
		return r.to + rest
	}
	return k
}

func (r renamedObjects) get(ctx context.Context, key string) ([]byte, error) {
	return r.objects.get(ctx, r.key(key))
}

func (r renamedObjects) getStream(ctx context.Context, key string, read func(io.Reader) error) error {
	return r.objects.getStream(ctx, r.key(key), read)
}

func (r renamedObjects) size(ctx context.Context, key string) (int64, error) {
	return r.objects.size(ctx, r.key(key))
}

func (r renamedObjects) exists(ctx context.Context, key string) (bool, error) {
	return r.objects.exists(ctx, r.key(key))
}

func (r renamedObjects) where(key string) string { return r.objects.where(r.key(key)) }

func (r renamedObjects) close() error {
	if !r.owned {
		return nil
	}
	return r.objects.close()
}
