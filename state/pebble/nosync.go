package pebble

import (
	"errors"
	"io/fs"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// noSyncFS is the file system of a backend's database: the operating
// system's, with every fsync a no-op. A backend's files are never made
// durable by the database: its WAL is never synced, a failed subtask restores from
// checkpoint storage into a fresh directory, and a local checkpoint's
// files are read by the upload from the page cache. Pebble fsyncs each SST
// it writes (and, with BytesPerSync, parts of it while writing), its
// MANIFEST on every flush and compaction, and a checkpoint's directory and
// copied files — each a disk round trip, several of them on the subtask's
// goroutine during the synchronous part of a checkpoint (measured on a
// shared 2-core machine: 3–6 ms each when quiet, tens of ms under load).
// Durability is checkpoint storage's job, which syncs what it writes.
type noSyncFS struct{ vfs.FS }

func (fs noSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return noSync(fs.FS.Create(name, c))
}

func (fs noSyncFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	return noSync(fs.FS.Open(name, opts...))
}

func (fs noSyncFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return noSync(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs noSyncFS) OpenDir(name string) (vfs.File, error) { return noSync(fs.FS.OpenDir(name)) }

// ReuseForWrite creates newname afresh and removes oldname, never reusing
// its file (Pebble recycles an obsolete WAL file for a new WAL this way,
// and the interface allows this). A WAL is shipped to checkpoint storage
// by the bytes appended since the last checkpoint (changelog.go): a
// recycled file would start at its old, full length, its new records
// overwriting old ones in place, and a chunk uploaded from it would not
// be what a replay reads.
func (nfs noSyncFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := nfs.FS.Remove(oldname); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return nfs.Create(newname, c)
}

// Unwrap returns the operating system's file system.
func (fs noSyncFS) Unwrap() vfs.FS { return fs.FS }

func noSync(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

// noSyncFile is a file whose syncs do nothing.
type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error                { return nil }
func (noSyncFile) SyncData() error            { return nil }
func (noSyncFile) SyncTo(int64) (bool, error) { return true, nil }
