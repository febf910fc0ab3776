package checkpointstorage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Resolve finds the checkpoint a restore should start from (the argument of
// `weir run --restore`). which is "latest" — the newest valid completed
// checkpoint in dir, as FS.Latest, whose skipped newer checkpoints come back
// in the []error — or a path to a chk-N or savepoint directory or to its
// _metadata file.
// A relative path is tried as given first, then relative to dir. The
// checkpoint's Handles are relative to the directory holding chk-N: open it
// with OpenFS(that directory) to read them. Resolve creates nothing.
func Resolve(dir, which string) (Metadata, []error, error) {
	m, _, skipped, err := ResolveFS(dir, which)
	return m, skipped, err
}

// ResolveFS is Resolve that also returns the storage holding the
// checkpoint (dir itself for "latest"; the directory holding chk-N for a
// path), through which its state files are read.
func ResolveFS(dir, which string) (Metadata, *FS, []error, error) {
	if which == "latest" {
		storage := &FS{dir: dir}
		m, skipped, err := storage.Latest()
		return m, storage, skipped, err
	}
	p, err := findPath(dir, which)
	if err != nil {
		return Metadata{}, nil, nil, err
	}
	chkDir := p
	if filepath.Base(p) == metadataName {
		chkDir = filepath.Dir(p)
	}
	id, _ := parseChkName(filepath.Base(chkDir)) // 0, and no id check, for a renamed directory
	m, err := readMetadataFile(filepath.Join(chkDir, metadataName), id)
	if errors.Is(err, fs.ErrNotExist) {
		return Metadata{}, nil, nil, fmt.Errorf("%w: %s has no %s (the checkpoint never completed): %w", ErrNoCheckpoint, chkDir, metadataName, err)
	}
	if err != nil {
		return Metadata{}, nil, nil, err
	}
	storage := &FS{dir: filepath.Dir(chkDir)}
	if m.Savepoint {
		// A savepoint's handles are relative to its own directory,
		// wherever it was moved.
		storage = openSavepoint(chkDir)
	}
	return m, storage, nil, storage.checkHandles(m.Handles)
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
	return "", fmt.Errorf("checkpointstorage: no checkpoint at %q (want \"latest\", a chk-N or savepoint directory, or its _metadata file): %w", which, fs.ErrNotExist)
}
