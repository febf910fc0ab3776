package checkpointstorage

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"

	"gocloud.dev/blob"

	"github.com/weirstream/weir/event"
)

// sharedDir holds the files that checkpoints share (Flink's shared/ of the
// job's checkpoint directory): an incremental snapshot's SST files, each
// uploaded once and named by every later checkpoint that still needs it.
// A shared file belongs to no chk-N directory; it lives as long as some
// retained checkpoint's Handles name it (see Retain and GC).
const sharedDir = "shared"

// LocalFile is a file on local disk to put into checkpoint storage, for
// WriteFiles.
type LocalFile struct {
	// Name is the file's name: a plain name inside chk-<id> (as WriteState
	// takes), or, when Shared, "group/file" inside shared/, e.g.
	// "map-0-5f3a/000012.sst".
	Name string
	// Src is the local file's path.
	Src string
	// Write, when set instead of Src, produces the content: it writes it
	// all to w and returns nil, or an error that fails the upload. It may
	// be called again when a transient failure is retried: it then writes
	// the content again, whole.
	Write func(w io.Writer) error
	// Shared puts the file under shared/ instead of chk-<id>. Writing a
	// shared name again replaces the file: callers give a name to one
	// content only.
	Shared bool
}

// open returns the content: the local file, or a pipe Write writes into
// on a goroutine of its own.
func (f LocalFile) open() (io.ReadCloser, error) {
	if f.Write == nil {
		src, err := os.Open(f.Src)
		if err != nil {
			return nil, err
		}
		return src, nil
	}
	pr, pw := io.Pipe()
	p := &produced{PipeReader: pr, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		err := f.Write(pw)
		if err != nil {
			p.err.Store(&err)
		}
		pw.CloseWithError(err)
	}()
	return p, nil
}

// produced is the read end of a LocalFile's Write. Close returns only when
// Write has: an upload that stops early (it failed) makes Write's next
// write fail, and its caller may rely on Write no longer reading what it
// produces from (a state backend's snapshot, released when its upload
// returns).
type produced struct {
	*io.PipeReader
	done chan struct{}
	// err is Write's error, set before the reader sees it.
	err atomic.Pointer[error]
}

// failed returns Write's error once the upload has seen it: a failure of
// the producer (a codec that panicked), not of the store, so retrying the
// upload would only fail again.
func (p *produced) failed() error {
	if e := p.err.Load(); e != nil {
		return *e
	}
	return nil
}

func (p *produced) Close() error {
	err := p.CloseWithError(errUploadStopped)
	<-p.done
	return err
}

var errUploadStopped = errors.New("checkpointstorage: the upload stopped reading")

// validSharedName accepts "group/file" with two plain names.
func validSharedName(name string) bool {
	group, file, ok := strings.Cut(name, "/")
	return ok && validStateName(group) && validStateName(file)
}

// rel returns the file's path relative to the storage.
func (f LocalFile) rel(s *FS, id event.CheckpointID) (string, error) {
	if f.Shared {
		if !validSharedName(f.Name) {
			return "", fmt.Errorf("%w: shared file %q (want \"group/file\", two plain names)", ErrInvalidName, f.Name)
		}
		return path.Join(sharedDir, f.Name), nil
	}
	if !validStateName(f.Name) {
		return "", fmt.Errorf("%w: %q (want a plain file name such as \"map-0-keyed\")", ErrInvalidName, f.Name)
	}
	return path.Join(s.chkDir(id), f.Name), nil
}

// WriteFiles copies local files into checkpoint id (or, Shared, into
// shared/), streaming them, in parallel as WriteStates does, and returns
// their handles in the order of files. A transient object-store failure is
// retried; the first failure, naming the file, is returned (the
// checkpoint is then declined; what was written is left to Discard, GC or
// a later checkpoint that writes the same shared name).
func (s *FS) WriteFiles(id event.CheckpointID, files []LocalFile) ([]Handle, error) {
	hs := make([]Handle, len(files))
	err := s.parallel(len(files), func(i int) (err error) {
		hs[i], err = s.writeFile(id, files[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	return hs, nil
}

func (s *FS) writeFile(id event.CheckpointID, f LocalFile) (Handle, error) {
	rel, err := f.rel(s, id)
	if err != nil {
		return Handle{}, err
	}
	var sum hashCount
	if err := s.fault("upload", rel); err != nil {
		return Handle{}, fmt.Errorf("checkpointstorage: writing file of checkpoint %d: %w", id, err)
	}
	err = s.retry(rel, func(ctx context.Context) error {
		src, err := f.open()
		if err != nil {
			return err
		}
		defer src.Close()
		sum = newHashCount()
		err = s.obj.putStream(ctx, rel, io.TeeReader(src, &sum))
		if p, ok := src.(*produced); ok && err != nil && p.failed() != nil {
			return permanent{p.failed()}
		}
		return err
	})
	if err != nil {
		return Handle{}, fmt.Errorf("checkpointstorage: writing file of checkpoint %d: %w", id, s.unwritable(err))
	}
	h := Handle{Path: rel, Size: sum.n, CRC32C: sum.h.Sum32()}
	s.known.stored(h)
	return h, nil
}

// FetchFile puts the file h names at dst, a new local file, and checks its
// size and checksum. From a local directory with link set it hard-links the
// file instead of copying it (falling back to a copy across filesystems):
// the caller must then never write to dst. A link is read once to check its
// checksum: Pebble checks its blocks only as it reads them, and a flipped
// byte in a restored SST surfaced as a panic in a background goroutine
// (table statistics), killing the process, instead of an error naming the
// checkpoint's file. A missing file, or one of the wrong size or checksum,
// is a *CorruptError naming it.
func (s *FS) FetchFile(h Handle, dst string, link bool) error {
	if !filepath.IsLocal(filepath.FromSlash(h.Path)) {
		return corrupt(h.Path, "handle path is not inside the checkpoint directory %s", s.loc)
	}
	p := s.Where(h.Path)
	if d, ok := s.obj.(dirObjects); ok && link {
		if err := os.Link(d.abs(h.Path), dst); err == nil {
			return s.checkFetched(h, dst, nil)
		} else if errors.Is(err, fs.ErrNotExist) {
			return &CorruptError{Path: p, Reason: "file referenced by the checkpoint is missing", Err: err}
		}
	}
	var sum hashCount
	err := s.retry(h.Path, func(ctx context.Context) error {
		sum = newHashCount()
		return s.obj.getStream(ctx, h.Path, func(r io.Reader) error { return copyToFile(dst, io.TeeReader(r, &sum)) })
	})
	if err = unwrapUpload(err); errors.Is(err, fs.ErrNotExist) {
		return &CorruptError{Path: p, Reason: "file referenced by the checkpoint is missing", Err: err}
	}
	if err != nil {
		return fmt.Errorf("checkpointstorage: fetching %s: %w", p, err)
	}
	return s.checkFetched(h, dst, &sum)
}

// checkFetched compares a fetched file with its handle: the size, and
// the checksum sum computed while copying (nil for a link).
func (s *FS) checkFetched(h Handle, dst string, sum *hashCount) error {
	p := s.Where(h.Path)
	fi, err := os.Stat(dst)
	if err != nil {
		return err
	}
	if fi.Size() != h.Size {
		return corrupt(p, "size %d bytes, want %d", fi.Size(), h.Size)
	}
	if sum == nil {
		if sum, err = fileSum(dst); err != nil {
			return err
		}
	}
	if sum.h.Sum32() != h.CRC32C {
		return corrupt(p, "checksum %#08x, want %#08x", sum.h.Sum32(), h.CRC32C)
	}
	return nil
}

// copyToFile creates (or truncates) name and copies r into it.
func copyToFile(name string, r io.Reader) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	return errors.Join(err, f.Close())
}

// VerifyFile reads the file h names, keeping nothing, and checks its size
// and checksum: a restore verifies the files its subtasks will fetch
// before any of them starts (see runtime's loadState). A missing file, or
// one of the wrong size or checksum, is a *CorruptError naming it.
func (s *FS) VerifyFile(h Handle) error {
	if !filepath.IsLocal(filepath.FromSlash(h.Path)) {
		return corrupt(h.Path, "handle path is not inside the checkpoint directory %s", s.loc)
	}
	p := s.Where(h.Path)
	var sum hashCount
	err := s.retry(h.Path, func(ctx context.Context) error {
		sum = newHashCount()
		return s.obj.getStream(ctx, h.Path, func(r io.Reader) error {
			_, err := io.Copy(&sum, r)
			return err
		})
	})
	if err = unwrapUpload(err); errors.Is(err, fs.ErrNotExist) {
		return &CorruptError{Path: p, Reason: "file referenced by the checkpoint is missing", Err: err}
	}
	if err != nil {
		return fmt.Errorf("checkpointstorage: reading %s: %w", p, err)
	}
	if sum.n != h.Size {
		return corrupt(p, "size %d bytes, want %d", sum.n, h.Size)
	}
	if sum.h.Sum32() != h.CRC32C {
		return corrupt(p, "checksum %#08x, want %#08x", sum.h.Sum32(), h.CRC32C)
	}
	return nil
}

// VerifyFiles verifies the files hs names as VerifyFile does, in
// parallel as WriteFiles writes (Options.UploadConcurrency at once): a
// restore reads every file of the checkpoint, and one request at a time
// it waited for each round trip in turn (764 MiB of SSTs from the S3
// test server: 10.4 s one by one, 2.5 s eight at once). The error is the
// first failure in the order of hs.
func (s *FS) VerifyFiles(hs []Handle) error {
	return s.parallel(len(hs), func(i int) error { return s.VerifyFile(hs[i]) })
}

// fileSum returns the checksum of the local file name.
func fileSum(name string) (*hashCount, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum := newHashCount()
	_, err = io.Copy(&sum, f)
	return &sum, err
}

// hashCount is an io.Writer that keeps the CRC32C and length of what is
// written to it.
type hashCount struct {
	h hash.Hash32
	n int64
}

func newHashCount() hashCount { return hashCount{h: crc32.New(castagnoli)} }

func (c *hashCount) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

// sharedFiles lists every file under shared/, as paths relative to the
// storage; none when there is no shared/.
func (s *FS) sharedFiles() ([]string, error) {
	groups, err := s.list(sharedDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: listing %s: %w", s.Where(sharedDir), err)
	}
	var out []string
	for _, g := range groups {
		rel := path.Join(sharedDir, g.name)
		if !g.dir {
			out = append(out, rel)
			continue
		}
		files, err := s.list(rel)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("checkpointstorage: listing %s: %w", s.Where(rel), err)
		}
		for _, f := range files {
			out = append(out, path.Join(rel, f.name))
		}
	}
	return out, nil
}

// pruneShared removes every shared file refs does not name (GC: nothing
// is being written, so an unnamed shared file is an orphan — uploaded by a
// checkpoint that failed or never completed — or was only needed by
// checkpoints since deleted). It returns the removed paths.
func (s *FS) pruneShared(refs map[string]bool) ([]string, error) {
	files, err := s.sharedFiles()
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, f := range files {
		if refs[f] {
			continue
		}
		if err := s.remove(f, false); err != nil {
			return removed, fmt.Errorf("checkpointstorage: removing %s: %w", f, err)
		}
		removed = append(removed, f)
	}
	return removed, s.removeEmptySharedDirs()
}

// dropShared removes the shared files the retired checkpoints named and
// refs (the kept checkpoints' references) does not: the reference count
// of each reached zero. Retain runs while newer checkpoints are being
// written, so it must not remove shared files no checkpoint names yet:
// a checkpoint in flight may be uploading them. It may not be reusing one
// that only a retired checkpoint names, though: a file that was live in
// the backend when a retired checkpoint was taken and still is when the
// checkpoint in flight was taken was live when the newest retained one
// was taken too, in between, and that one names it under the same name.
func (s *FS) dropShared(retired []Metadata, refs map[string]bool) ([]string, error) {
	var removed []string
	seen := map[string]bool{}
	for _, m := range retired {
		for _, h := range m.Handles {
			if !strings.HasPrefix(h.Path, sharedDir+"/") || refs[h.Path] || seen[h.Path] {
				continue
			}
			seen[h.Path] = true
			if err := s.remove(h.Path, false); err != nil {
				return removed, fmt.Errorf("checkpointstorage: removing %s: %w", h.Path, err)
			}
			removed = append(removed, h.Path)
		}
	}
	return removed, nil
}

// removeEmptySharedDirs removes the group directories of shared/ left
// empty, in a local directory (a bucket has no directories).
func (s *FS) removeEmptySharedDirs() error {
	d, ok := s.obj.(dirObjects)
	if !ok {
		return nil
	}
	groups, err := os.ReadDir(d.abs(sharedDir))
	if err != nil {
		return nil // no shared/ yet, or nothing to tidy
	}
	for _, g := range groups {
		if g.IsDir() {
			_ = os.Remove(filepath.Join(d.abs(sharedDir), g.Name())) // fails unless empty
		}
	}
	return nil
}

// putStream writes a temp file, fsyncs it and renames it into place, then
// fsyncs the directory: a file already there may be hard-linked into a
// restored database (FetchFile), whose SST must never change, so it is
// replaced, never rewritten.
func (d dirObjects) putStream(_ context.Context, key string, r io.Reader) error {
	p := d.abs(key)
	dir := filepath.Dir(p)
	if err := mkdirSynced(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(p)+tmpInfix+"*")
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return syncDir(dir)
}

func (d dirObjects) getStream(_ context.Context, key string, read func(io.Reader) error) error {
	f, err := os.Open(d.abs(key))
	if err != nil {
		return err
	}
	defer f.Close()
	return read(f)
}

func (o bucketObjects) putStream(ctx context.Context, key string, r io.Reader) error {
	// A gocloud writer whose context is cancelled before Close abandons
	// the upload: a failed read must not leave a partial object.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := o.b.NewWriter(ctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		cancel()
		_ = w.Close()
		return err
	}
	return w.Close()
}

func (o bucketObjects) getStream(ctx context.Context, key string, read func(io.Reader) error) error {
	r, err := o.b.NewReader(ctx, key, nil)
	if err != nil {
		return notExist(err)
	}
	defer r.Close()
	return read(r)
}
