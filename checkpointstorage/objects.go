package checkpointstorage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// objects is where a storage's files live: a local directory (dirObjects)
// or a bucket of an object store (bucketObjects). Keys are slash-separated
// paths relative to the storage root, e.g. "chk-7/_metadata"; a "directory"
// is a key prefix ending in "/".
type objects interface {
	// put writes data under key, creating parent directories as needed.
	put(ctx context.Context, key string, data []byte, mode putMode) error
	// get returns the content of key; a missing key matches fs.ErrNotExist.
	get(ctx context.Context, key string) ([]byte, error)
	// putStream writes what r yields under key as putState does.
	putStream(ctx context.Context, key string, r io.Reader) error
	// getStream calls read with the content of key; a missing key matches
	// fs.ErrNotExist.
	getStream(ctx context.Context, key string, read func(io.Reader) error) error
	// size returns the length of key; a missing key matches fs.ErrNotExist.
	size(ctx context.Context, key string) (int64, error)
	// list returns the children of directory dir ("" for the root), one
	// level deep; a missing root matches fs.ErrNotExist.
	list(ctx context.Context, dir string) ([]entry, error)
	// remove deletes key, or every key under it when dir is true. A missing
	// key is not an error.
	remove(ctx context.Context, key string, dir bool) error
	// exists reports whether key is a file or a non-empty directory.
	exists(ctx context.Context, key string) (bool, error)
	// rename moves directory from to to, which must not exist. In a
	// bucket it copies every object, then deletes the originals (_metadata
	// first): a crash part-way leaves a complete copy and an original that
	// is either whole or incomplete (so GC deletes the rest of it).
	rename(ctx context.Context, from, to string) error
	// where names key for a person: a filesystem path or a URL.
	where(key string) string
	// retryable tells a transient failure worth another attempt.
	retryable(err error) bool
	close() error
}

// entry is one child of a listed directory.
type entry struct {
	name string
	dir  bool
}

// putMode says how put replaces an existing key.
type putMode int

const (
	// putState writes a state file: durable once put returns, but its new
	// directory entry only becomes durable with the next put of a
	// metadata file in the same directory (one fsync of the directory per
	// checkpoint instead of one per file). An existing key is replaced.
	putState putMode = iota
	// putReplace replaces key atomically: a reader sees the old content or
	// the new, never a mix.
	putReplace
	// putExclusive writes key atomically and only if it does not exist yet;
	// otherwise put fails with errExists. It commits a checkpoint.
	putExclusive
)

// errExists is put's error for putExclusive on an existing key.
var errExists = errors.New("object exists")

// dirObjects keeps files under a local or mounted directory, with fsyncs
// and renames so that a crash never leaves a torn metadata or counter file.
type dirObjects struct{ dir string }

func (d dirObjects) abs(key string) string { return filepath.Join(d.dir, filepath.FromSlash(key)) }

func (d dirObjects) where(key string) string { return d.abs(key) }

func (d dirObjects) retryable(error) bool { return false } // a local disk error does not heal by itself

func (d dirObjects) close() error { return nil }

func (d dirObjects) put(_ context.Context, key string, data []byte, mode putMode) error {
	p := d.abs(key)
	if err := mkdirSynced(filepath.Dir(p)); err != nil {
		return err
	}
	switch mode {
	case putState:
		return writeFileSync(p, data)
	case putReplace:
		return writeFileAtomic(filepath.Dir(p), filepath.Base(p), data, false)
	default:
		return writeFileAtomic(filepath.Dir(p), filepath.Base(p), data, true)
	}
}

func (d dirObjects) get(_ context.Context, key string) ([]byte, error) {
	return os.ReadFile(d.abs(key))
}

func (d dirObjects) size(_ context.Context, key string) (int64, error) {
	fi, err := os.Stat(d.abs(key))
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (d dirObjects) list(_ context.Context, dir string) ([]entry, error) {
	es, err := os.ReadDir(d.abs(dir))
	if err != nil {
		return nil, err
	}
	out := make([]entry, 0, len(es))
	for _, e := range es {
		if e.IsDir() || e.Type().IsRegular() {
			out = append(out, entry{name: e.Name(), dir: e.IsDir()})
		}
	}
	return out, nil
}

func (d dirObjects) remove(_ context.Context, key string, _ bool) error {
	p := d.abs(key)
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (d dirObjects) exists(_ context.Context, key string) (bool, error) {
	_, err := os.Lstat(d.abs(key))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (d dirObjects) rename(_ context.Context, from, to string) error {
	if err := os.Rename(d.abs(from), d.abs(to)); err != nil {
		return err
	}
	return syncDir(filepath.Dir(d.abs(to)))
}

// mkdirSynced creates dir if needed (its parents too); when it is new, it
// fsyncs the parent so that the new entry survives a crash.
func mkdirSynced(dir string) error {
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err = mkdirSynced(filepath.Dir(dir)); err == nil {
			err = os.Mkdir(dir, 0o755)
		}
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating directory: %w", err)
	}
	return syncDir(filepath.Dir(dir))
}
