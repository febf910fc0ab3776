package pebble

import (
	"github.com/cockroachdb/pebble/v2/vfs"
)

// noSyncFS is the file system of a backend's database: the operating
// system's, with every fsync a no-op. A backend's files are never made
// durable by the database: it has no WAL, a failed subtask restores from
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

func (fs noSyncFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return noSync(fs.FS.ReuseForWrite(oldname, newname, c))
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
