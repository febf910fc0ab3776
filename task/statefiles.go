package task

import (
	"sync/atomic"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/state"
)

// SnapshotFiles is checkpoint storage as an incremental snapshot of one
// part of one subtask writes to it (state.SnapshotFiles): its own files
// go into chk-<id>, named after the part's file ("map-0-keyed.MANIFEST-…"),
// shared ones under shared/.
type SnapshotFiles struct {
	Storage *checkpointstorage.FS
	ID      event.CheckpointID
	// Prefix names the part's own files: Prefix + "." + the file's name.
	Prefix string
	// written counts the bytes uploaded.
	written atomic.Int64
}

var _ state.SnapshotFiles = (*SnapshotFiles)(nil)

// Location returns the storage's location.
func (f *SnapshotFiles) Location() string { return f.Storage.Dir() }

// Put uploads files in parallel (Options.UploadConcurrency).
func (f *SnapshotFiles) Put(files []state.LocalFile) ([]state.FileHandle, error) {
	lfs := make([]checkpointstorage.LocalFile, len(files))
	for i, lf := range files {
		lfs[i] = checkpointstorage.LocalFile{Name: lf.Name, Src: lf.Path, Write: lf.Write, Shared: lf.Shared}
		if !lf.Shared {
			lfs[i].Name = f.Prefix + "." + lf.Name
		}
	}
	hs, err := f.Storage.WriteFiles(f.ID, lfs)
	if err != nil {
		return nil, err
	}
	out := make([]state.FileHandle, len(hs))
	for i, h := range hs {
		out[i] = state.FileHandle(h)
		f.written.Add(h.Size)
	}
	return out, nil
}

// Written returns the bytes Put uploaded.
func (f *SnapshotFiles) Written() int64 { return f.written.Load() }

// RestoreFiles is checkpoint storage as a restore fetches the files of
// incremental snapshots from it (state.RestoreFiles).
type RestoreFiles struct {
	Storage *checkpointstorage.FS
	// ID is the checkpoint being restored, named in errors.
	ID event.CheckpointID
}

var _ state.RestoreFiles = RestoreFiles{}

// Location returns the storage's location.
func (f RestoreFiles) Location() string { return f.Storage.Dir() }

// Fetch copies, or links, the file h names to dst.
func (f RestoreFiles) Fetch(h state.FileHandle, dst string, link bool) error {
	if err := f.Storage.FetchFile(checkpointstorage.Handle(h), dst, link); err != nil {
		return &checkpointstorage.RestoreError{ID: f.ID, Err: err}
	}
	return nil
}
