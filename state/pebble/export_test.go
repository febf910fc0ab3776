package pebble

import (
	"os"
	"path/filepath"

	"github.com/weirstream/weir/state"
)

// WithoutCompactions runs f with automatic compactions off in the
// databases it opens, so that a test sees each flush's SST unchanged.
func WithoutCompactions(f func()) {
	noCompactions.Store(true)
	defer noCompactions.Store(false)
	f()
}

// OpenCompactions returns how many compactions ended while the database
// of b's incremental restore was being opened.
func OpenCompactions(b *Backend) int64 { return b.restoreStats.open.compacted.Load() }

// L0Tables returns how many SSTs the database of b holds in L0.
func L0Tables(b *Backend) int64 { return b.db.Metrics().Levels[0].TablesCount }

// StoreInlineApart rewrites an incremental manifest as written before small
// files were carried inline: each inline file is put in files and named by
// its handle.
func StoreInlineApart(blob []byte, files state.SnapshotFiles, dir string) ([]byte, error) {
	m, err := decodeManifest(blob)
	if err != nil {
		return nil, err
	}
	for i, f := range m.Files {
		if !f.Inline {
			continue
		}
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return nil, err
		}
		hs, err := files.Put([]state.LocalFile{{Name: f.Name, Path: p}})
		if err != nil {
			return nil, err
		}
		m.Files[i] = manifestFile{Name: f.Name, Handle: hs[0]}
	}
	return encodeManifest(m)
}

// InlineFiles returns the names of the files a manifest carries inline.
func InlineFiles(blob []byte) ([]string, error) {
	m, err := decodeManifest(blob)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range m.Files {
		if f.Inline {
			out = append(out, f.Name)
		}
	}
	return out, nil
}
