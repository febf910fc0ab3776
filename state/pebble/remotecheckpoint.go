package pebble

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	pebbledb "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider/remoteobjcat"
	"github.com/cockroachdb/pebble/v2/objstorage/remote"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Checkpoints and restores of the experimental disaggregated state (see
// remote.go). Who deletes a remote object:
//   - Pebble, when a compaction obsoletes it (it removes the object's ref
//     marker, lists the object's markers, and deletes the object when
//     none is left) — but never an object protected in the instance: a
//     Pebble checkpoint protects every remote object of its version for
//     the life of the instance (objstorageprovider's CheckpointState), and
//     so does the checkpoint a restore takes right after opening;
//   - checkpoint storage, for every other: each checkpoint names its
//     remote objects (and their creators' markers) among its shared
//     files, so Retain deletes one once no retained checkpoint names it,
//     and GC deletes the unnamed ones after the attempt (the objects a
//     database made and no checkpoint named).
//
// So Pebble deletes only objects no checkpoint names, and checkpoint
// storage only objects no retained checkpoint names and no live database
// reads (the argument of incremental.go: an object live when a checkpoint
// in flight was taken and when a retired one was was live when the newest
// retained one was, and that one names it).

// remoteOptions turns the options' remote storage on in popts; a read-only
// database (a checkpoint's, a restore's source) creates nothing and keeps
// no cache.
func remoteOptions(opts *Options, popts *pebbledb.Options, readOnly bool) {
	ro := opts.ExperimentalRemote
	if ro == nil {
		return
	}
	popts.Experimental.RemoteStorage = ro.factory()
	popts.Experimental.CreateOnSharedLocator = remoteLocator
	if readOnly {
		return
	}
	popts.Experimental.CreateOnShared = remote.CreateOnSharedLower
	if ro.AllLevels {
		popts.Experimental.CreateOnShared = remote.CreateOnSharedAll
	}
	popts.Experimental.SecondaryCacheSizeBytes = ro.CacheSize
}

// ensureCreator gives the database in dir a random creator id, before
// Pebble opens it, unless its remote object catalog has one. The id names
// the objects the database creates: unique per instance, so a database
// restored twice from one checkpoint never writes an object under a name
// the other (or the original) used. It returns the id.
func ensureCreator(dir string) (uint64, error) {
	cat, contents, err := remoteobjcat.Open(vfs.Default, dir)
	if err != nil {
		return 0, fmt.Errorf("pebble: opening the remote object catalog in %s: %w", dir, err)
	}
	id := uint64(contents.CreatorID)
	if id == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = binary.LittleEndian.Uint64(b[:])>>1 | 1
		err = cat.SetCreatorID(objstorage.CreatorID(id))
	}
	if err = errors.Join(err, cat.Close()); err != nil {
		return 0, fmt.Errorf("pebble: setting the remote creator id in %s: %w", dir, err)
	}
	return id, nil
}

// isCatalogFile tells the remote object catalog's files (a catalog and
// its marker).
func isCatalogFile(name string) bool {
	return strings.HasPrefix(name, "REMOTE-OBJ-CATALOG") || strings.HasPrefix(name, "marker.remote-obj-catalog")
}

// objectName is Pebble's name of a remote object it created
// (objstorageprovider's remoteObjectName): a 16-bit hash of the creator
// and its file number, which spreads the keys over S3's partitions, then
// both.
func objectName(m remoteobjcat.RemoteObjectMetadata) (string, error) {
	if m.CustomObjectName != "" {
		return m.CustomObjectName, nil
	}
	if m.FileType.String() != "sstable" {
		return "", fmt.Errorf("pebble: remote object %s of type %s: only sstables are supported", m.FileNum, m.FileType)
	}
	h := uint16(uint64(m.CreatorID)*7459 + uint64(m.CreatorFileNum)*17539)
	return fmt.Sprintf("%04x-%d-%06d.sst", h, uint64(m.CreatorID), uint64(m.CreatorFileNum)), nil
}

// remoteFiles returns the manifest entries of the remote objects the
// local checkpoint in dir needs: those its version's tables use (the
// catalog may list more: outputs of a compaction not yet installed, which
// Pebble does not protect), each with its creator's ref marker. It opens
// the checkpoint read-only to read its version.
func remoteFiles(opts *Options, dir string) ([]manifestFile, error) {
	cat, contents, err := remoteobjcat.Open(vfs.Default, dir)
	if err != nil {
		return nil, fmt.Errorf("pebble: reading the remote object catalog of a checkpoint: %w", err)
	}
	_ = cat.Close()
	if len(contents.Objects) == 0 {
		return nil, nil
	}
	used, err := versionTables(opts, dir)
	if err != nil {
		return nil, err
	}
	st := opts.ExperimentalRemote.factory()
	var out []manifestFile
	for _, o := range contents.Objects {
		if !used[uint64(o.FileNum)] {
			continue
		}
		name, err := objectName(o)
		if err != nil {
			return nil, err
		}
		hs, ok := st.handles(name)
		if !ok {
			return nil, fmt.Errorf("pebble: remote object %s of the checkpoint is unknown to this backend", name)
		}
		for _, h := range hs {
			out = append(out, manifestFile{Name: path.Base(h.Path), Handle: h, Remote: true})
		}
	}
	return out, nil
}

// versionTables returns the file numbers of the backing tables of the
// version of the database in dir.
func versionTables(opts *Options, dir string) (map[uint64]bool, error) {
	ro := *opts
	ro.BlockCacheSize, ro.WriteBufferSize, ro.WriteBufferCount = 1<<20, 1<<20, 2
	db, err := openDB(&ro, dir, true, nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	levels, err := db.SSTables()
	if err != nil {
		return nil, fmt.Errorf("pebble: listing the tables of a checkpoint: %w", err)
	}
	used := map[uint64]bool{}
	for _, l := range levels {
		for _, t := range l {
			used[uint64(t.BackingSSTNum)] = true
		}
	}
	return used, nil
}

// checkRemote checks a manifest against the backend's options: remote
// objects need the remote storage they are in, which is the storage
// restored from (a restore from another job's checkpoint directory would
// have to copy them first, Flink's no-claim mode: not done).
func (b *Backend) checkRemote(m *manifest) error {
	ro := b.opts.ExperimentalRemote
	for _, f := range m.Files {
		switch {
		case !f.Remote:
		case ro == nil:
			return fmt.Errorf("pebble: the checkpoint keeps its SSTs on remote storage (%s); restoring it needs the experimental disaggregated state on (pebble.Options.ExperimentalRemote)", f.Handle.Path)
		case b.opts.RestoreFiles.Location() != ro.Location:
			return fmt.Errorf("pebble: the checkpoint's remote SSTs are in %s, the disaggregated state's storage is %s: restoring from another storage is not supported (its objects would have to be copied)",
				b.opts.RestoreFiles.Location(), ro.Location)
		}
	}
	return nil
}

// adoptRemote prepares the restored files in dir for opening: it records
// m's remote objects, and rewrites the object catalog without the old
// creator id (the database takes a new one when it opens, see setCreator).
func (b *Backend) adoptRemote(m *manifest, dir string) error {
	if b.opts.ExperimentalRemote == nil {
		return nil
	}
	b.adoptObjects(m)
	st := b.opts.ExperimentalRemote.factory()
	cat, contents, err := remoteobjcat.Open(vfs.Default, dir)
	if err != nil {
		return fmt.Errorf("pebble: restoring the remote object catalog: %w", err)
	}
	if err := cat.Close(); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if isCatalogFile(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	cat, _, err = remoteobjcat.Open(vfs.Default, dir)
	if err != nil {
		return err
	}
	var batch remoteobjcat.Batch
	for _, o := range contents.Objects {
		batch.AddObject(o)
	}
	if err := errors.Join(cat.ApplyBatch(batch), cat.Close()); err != nil {
		return fmt.Errorf("pebble: restoring the remote object catalog: %w", err)
	}
	id, err := ensureCreator(dir)
	if err != nil {
		return err
	}
	return refObjects(st, contents.Objects, id)
}

// refObjects writes the ref markers of the new instance id on the adopted
// objects, as Pebble writes them on the objects it creates (and checks
// them on open in its invariants builds — race builds included): the
// markers an object has are what keeps Pebble from deleting it. Each
// checkpoint names them with their object. Concurrent PUTs, 16 at a time.
func refObjects(st *blobStorage, objs []remoteobjcat.RemoteObjectMetadata, id uint64) error {
	sem := make(chan struct{}, 16)
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	for i, o := range objs {
		name, err := objectName(o)
		if err != nil {
			return err
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			w, err := st.CreateObject(fmt.Sprintf("%s%s%d.%06d", name, refInfix, id, uint64(o.FileNum)))
			if err == nil {
				err = w.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pebble: restoring: writing ref markers of remote objects: %w", err)
	}
	return nil
}

// protectRemote protects every remote object of the restored database
// from its own compactions: they belong to the checkpoint restored (and
// to older ones), whose retention deletes them. A Pebble checkpoint
// protects the remote objects of its version, for the instance's life.
func (b *Backend) protectRemote() error {
	if b.opts.ExperimentalRemote == nil {
		return nil
	}
	dir := filepath.Join(b.life.dir, "protect")
	err := b.db.Checkpoint(dir)
	return errors.Join(err, os.RemoveAll(dir))
}

// adoptObjects records m's remote objects, with their handles, for the
// checkpoints that will name them; a source a restore opens read-only
// (copyFrom) only reads them.
func (b *Backend) adoptObjects(m *manifest) {
	if b.opts.ExperimentalRemote == nil {
		return
	}
	st := b.opts.ExperimentalRemote.factory()
	for _, f := range m.Files {
		if f.Remote {
			st.adopt(f.Handle)
		}
	}
}

// nameRemote adds the remote objects the local checkpoint needs to m.
func (lc *localCheckpoint) nameRemote(m *manifest, loc string) error {
	ro := lc.opts.ExperimentalRemote
	if ro == nil {
		return nil
	}
	if loc != ro.Location {
		return fmt.Errorf("pebble: checkpoint into %s, but the disaggregated state's SSTs are in %s: a checkpoint can only name them in their own storage", loc, ro.Location)
	}
	fs, err := remoteFiles(lc.opts, lc.dir)
	m.Files = append(m.Files, fs...)
	return err
}
