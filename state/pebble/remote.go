package pebble

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/objstorage/remote"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/weirstream/weir/state"
)

// Disaggregated state, EXPERIMENTAL (Flink 2.0's ForSt, FLIP-423, on
// Pebble's shared objects): with Options.ExperimentalRemote set, the
// database creates its SSTs (those of L5 and L6, or all of them) as
// objects in checkpoint storage itself, under shared/pebble-remote/, and
// reads them from there through a local cache of blocks. A checkpoint
// uploads none of them: its manifest names them, as it names the shared
// SSTs it uploaded, so checkpoint storage's reference counting (Retain,
// GC) keeps them while a retained checkpoint needs them. A restore opens
// the database on the checkpoint's object catalog: no SST is downloaded,
// blocks are read when a read needs them (remotecheckpoint.go).

// remoteGroup is the shared/ group of every remote object of every
// backend: a restored database names the objects other databases created,
// so they must resolve in one flat namespace (Pebble's names carry the
// creator's random id).
const remoteGroup = "pebble-remote"

// remoteLocator is the one remote.Locator Weir's databases use.
const remoteLocator remote.Locator = "weir"

// RemoteOptions configures the experimental disaggregated state.
type RemoteOptions struct {
	// Bucket is the checkpoint storage as a bucket whose keys are relative
	// to the checkpoint directory (checkpointstorage.FS.ObjectBucket).
	// Required. The backend does not close it.
	Bucket *blob.Bucket
	// Location is that storage's state.SnapshotFiles Location: a
	// checkpoint into any other storage fails, since it cannot name the
	// remote SSTs. Required.
	Location string
	// AllLevels creates every SST remotely, the flush of each checkpoint's
	// memtables included (Flink's ForSt with its primary directory on the
	// object store). Default false: L0–L4 stay local and a checkpoint
	// uploads them as in local mode; L5 and L6, most of the state once it
	// has grown, are remote.
	AllLevels bool
	// CacheSize is the local cache of remote blocks in bytes, on disk in
	// the backend's directory (Pebble's SecondaryCacheSizeBytes; Flink's
	// state.backend.forst.cache.size-based-limit). Default 0: no cache
	// (the block cache in memory still is).
	CacheSize int64

	once    sync.Once
	storage *blobStorage
}

// ObjectBytesWritten is the bytes the backends configured with o have
// written as remote objects so far: flushes' and compactions' SSTs and
// their ref markers (what they upload outside checkpoints).
func (o *RemoteOptions) ObjectBytesWritten() int64 { return o.factory().written.Load() }

// factory returns the remote.StorageFactory of the bucket, one per
// RemoteOptions (shared by the backends configured with it).
func (o *RemoteOptions) factory() *blobStorage {
	o.once.Do(func() {
		o.storage = &blobStorage{b: o.Bucket, prefix: "shared/" + remoteGroup + "/",
			objects: map[string]state.FileHandle{}, markers: map[string][]string{}}
	})
	return o.storage
}

func (o *RemoteOptions) validate() error {
	if o.Bucket == nil || o.Location == "" {
		return errors.New("pebble: experimental disaggregated state needs the checkpoint storage's bucket and location (RemoteOptions.Bucket, .Location)")
	}
	if o.CacheSize < 0 {
		return fmt.Errorf("pebble: state.backend.forst.cache.size-based-limit is %d; want 0 or more bytes", o.CacheSize)
	}
	return nil
}

// blobStorage is Pebble's remote.Storage (and its StorageFactory) on a
// gocloud.dev bucket, under a key prefix. It remembers the size and
// CRC32C of every object it wrote, and of every object a restore adopted,
// for the checkpoint handles that name them.
type blobStorage struct {
	b      *blob.Bucket
	prefix string
	mu     sync.Mutex
	// objects by name (relative to prefix): written or adopted; ref
	// markers included.
	objects map[string]state.FileHandle
	// markers lists the ref markers in objects of each object.
	markers map[string][]string
	written atomic.Int64 // bytes of the objects created
}

var (
	_ remote.Storage        = (*blobStorage)(nil)
	_ remote.StorageFactory = (*blobStorage)(nil)
)

// CreateStorage serves the one locator.
func (s *blobStorage) CreateStorage(l remote.Locator) (remote.Storage, error) {
	if l != remoteLocator {
		return nil, fmt.Errorf("pebble: remote storage locator %q unknown (want %q)", l, remoteLocator)
	}
	return s, nil
}

// handles returns the checkpoint handles of object name and of its known
// ref markers; false when the object is unknown.
func (s *blobStorage) handles(name string) ([]state.FileHandle, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.objects[name]
	if !ok {
		return nil, false
	}
	out := []state.FileHandle{h}
	for _, m := range s.markers[name] {
		out = append(out, s.objects[m])
	}
	return out, true
}

// adopt records the handle of a restored checkpoint's remote object or
// marker.
func (s *blobStorage) adopt(h state.FileHandle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordLocked(strings.TrimPrefix(h.Path, s.prefix), h)
}

// refInfix separates an object's name from its ref marker's suffix
// (Pebble's "<object>.ref.<creator>.<file number>").
const refInfix = ".ref."

func (s *blobStorage) recordLocked(name string, h state.FileHandle) {
	_, had := s.objects[name]
	s.objects[name] = h
	if obj, _, ok := strings.Cut(name, refInfix); ok && !had {
		s.markers[obj] = append(s.markers[obj], name)
	}
}

// Close does nothing: the bucket is the caller's.
func (s *blobStorage) Close() error { return nil }

// ReadObject opens name for reads at offsets; each ReadAt is a ranged GET.
func (s *blobStorage) ReadObject(ctx context.Context, name string) (remote.ObjectReader, int64, error) {
	a, err := s.b.Attributes(ctx, s.prefix+name)
	if err != nil {
		return nil, 0, err
	}
	return &blobReader{b: s.b, key: s.prefix + name, size: a.Size}, a.Size, nil
}

// CreateObject writes name; the object exists (whole) once Close returns.
func (s *blobStorage) CreateObject(name string) (io.WriteCloser, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w, err := s.b.NewWriter(ctx, s.prefix+name, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		cancel()
		return nil, err
	}
	return &blobWriter{s: s, name: name, w: w, cancel: cancel, sum: crc32.New(crc32.MakeTable(crc32.Castagnoli))}, nil
}

// List lists the names under prefix, trimmed of it (remote.Storage's
// contract).
func (s *blobStorage) List(prefix, delimiter string) ([]string, error) {
	it := s.b.List(&blob.ListOptions{Prefix: s.prefix + prefix, Delimiter: delimiter})
	var out []string
	for {
		o, err := it.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, strings.TrimPrefix(o.Key, s.prefix+prefix))
	}
}

// Delete removes name. Pebble deletes only objects no checkpoint named
// (see remotecheckpoint.go), so the record can go too.
func (s *blobStorage) Delete(name string) error {
	s.mu.Lock()
	delete(s.objects, name)
	if obj, _, ok := strings.Cut(name, refInfix); ok {
		s.markers[obj] = slices.DeleteFunc(s.markers[obj], func(m string) bool { return m == name })
		if len(s.markers[obj]) == 0 {
			delete(s.markers, obj)
		}
	}
	s.mu.Unlock()
	return s.b.Delete(context.Background(), s.prefix+name)
}

// Size returns the length of name.
func (s *blobStorage) Size(name string) (int64, error) {
	a, err := s.b.Attributes(context.Background(), s.prefix+name)
	if err != nil {
		return 0, err
	}
	return a.Size, nil
}

// IsNotExistError tells a missing object.
func (s *blobStorage) IsNotExistError(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }

// blobReader reads ranges of one object.
type blobReader struct {
	b    *blob.Bucket
	key  string
	size int64
}

func (r *blobReader) ReadAt(ctx context.Context, p []byte, off int64) error {
	if off+int64(len(p)) > r.size {
		return fmt.Errorf("pebble: reading %s at %d+%d: past its end (%d bytes)", r.key, off, len(p), r.size)
	}
	rr, err := r.b.NewRangeReader(ctx, r.key, off, int64(len(p)), nil)
	if err != nil {
		return err
	}
	_, err = io.ReadFull(rr, p)
	return errors.Join(err, rr.Close())
}

func (r *blobReader) Close() error { return nil }

// blobWriter streams an object and records its handle when it is stored.
type blobWriter struct {
	s      *blobStorage
	name   string
	w      *blob.Writer
	cancel context.CancelFunc
	sum    hash.Hash32
	n      int64
}

func (w *blobWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.sum.Write(p[:n])
	w.n += int64(n)
	return n, err
}

func (w *blobWriter) Close() error {
	defer w.cancel()
	if err := w.w.Close(); err != nil {
		return err
	}
	w.s.written.Add(w.n)
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.recordLocked(w.name, state.FileHandle{Path: w.s.prefix + w.name, Size: w.n, CRC32C: w.sum.Sum32()})
	return nil
}
