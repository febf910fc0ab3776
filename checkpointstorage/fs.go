package checkpointstorage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/event"
)

const (
	metadataName = "_metadata"
	counterName  = "_checkpoint_id"
	chkPrefix    = "chk-"
	tmpInfix     = ".tmp-"
)

// FS is checkpoint storage (Flink's CheckpointStorage) on a local or
// mounted directory (Flink's FsCheckpointStorage) or in an S3 bucket.
// Create it with OpenFS or Open.
type FS struct {
	loc  string
	obj  objects
	opts Options
	// savepoint: the storage is one savepoint's directory, holding its
	// _metadata and state files directly (see CreateSavepoint).
	savepoint bool
	// renamedDir, when set, is the directory of the one checkpoint this
	// storage reads: a chk-N copied under that name (see renamed).
	renamedDir string
	// uploads holds a token per running WriteStates upload.
	uploads chan struct{}
	// known: what this handle has seen stored, for Retain.
	known *known
	// lost is set when this storage's lock lease was lost (see Lock).
	lost atomic.Pointer[error]
	mu   struct {
		// Mutex serialises read-modify-write of the id counter file.
		sync.Mutex
	}
}

func newFS(loc string, obj objects, opts Options) *FS {
	return &FS{loc: loc, obj: obj, opts: opts, uploads: make(chan struct{}, opts.UploadConcurrency), known: newKnown()}
}

// Handle names one state file of a checkpoint: the thing a task reports in
// its acknowledgement and the metadata lists (Flink's StreamStateHandle).
type Handle struct {
	// Path is relative to the storage directory, with forward slashes,
	// e.g. "chk-7/map-0-keyed".
	Path string `json:"path"`
	// Size is the file's length in bytes.
	Size int64 `json:"size"`
	// CRC32C is the CRC32C (Castagnoli) checksum of the file's content.
	CRC32C uint32 `json:"crc32c"`
}

// OpenFS opens checkpoint storage in dir with default Options: see Open.
func OpenFS(dir string) (*FS, error) { return Open(dir, Options{}) }

// Open opens checkpoint storage at loc: a plain path or file:// URL, a
// local directory created (with its parents) if needed; or
// s3://bucket/prefix, whose bucket must exist. Close releases it.
func Open(loc string, opts Options) (*FS, error) { return open(loc, opts, true) }

// Dir returns the storage location as given to Open.
func (s *FS) Dir() string { return s.loc }

// Where names the file or directory rel (slash-separated, relative to the
// storage) for a person: a filesystem path or a URL.
func (s *FS) Where(rel string) string { return s.obj.where(rel) }

// Location returns the location of checkpoint id, which Resolve accepts:
// Dir joined with chk-<id>, or Dir itself for a savepoint.
func (s *FS) Location(id event.CheckpointID) string { return join(s.loc, s.chkDir(id)) }

// chkDir is the directory of checkpoint id relative to the storage:
// chk-<id>, or "" (the storage itself) for a savepoint.
func (s *FS) chkDir(id event.CheckpointID) string {
	if s.savepoint {
		return ""
	}
	if s.renamedDir != "" {
		return s.renamedDir
	}
	return chkName(id)
}

// Close releases the storage's connections.
func (s *FS) Close() error { return s.obj.close() }

// chkName is the directory name of checkpoint id, e.g. "chk-7".
func chkName(id event.CheckpointID) string { return chkPrefix + strconv.FormatInt(int64(id), 10) }

// parseChkName parses a canonical "chk-N" name with N ≥ 1.
func parseChkName(name string) (event.CheckpointID, bool) {
	digits, ok := strings.CutPrefix(name, chkPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != digits {
		return 0, false
	}
	return event.CheckpointID(n), true
}

func validStateName(name string) bool {
	return name != "" && name != metadataName && !strings.ContainsAny(name, `/\`) &&
		!strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") && filepath.IsLocal(name)
}

// WriteState writes data to chk-<id>/<name> and makes it durable (a
// local file is fsynced; its directory entry becomes durable with the fsync
// WriteMetadata does on the same directory). name is chosen by the caller,
// e.g. "map-0-keyed"; see ErrInvalidName. Writing the same name twice
// replaces the file. A transient object-store failure is retried (Options.
// Retry); the error of the last attempt is an *UploadError naming the file.
func (s *FS) WriteState(id event.CheckpointID, name string, data []byte) (Handle, error) {
	if !validStateName(name) {
		return Handle{}, fmt.Errorf("%w: %q (want a plain file name such as \"map-0-keyed\")", ErrInvalidName, name)
	}
	rel := path.Join(s.chkDir(id), name)
	err := s.fault("upload", rel)
	if err == nil {
		err = s.retry(rel, func(ctx context.Context) error { return s.obj.put(ctx, rel, data, putState) })
	}
	if err != nil {
		return Handle{}, fmt.Errorf("checkpointstorage: writing state of checkpoint %d: %w", id, s.unwritable(err))
	}
	h := Handle{Path: rel, Size: int64(len(data)), CRC32C: checksum(data)}
	s.known.stored(h)
	return h, nil
}

// ReadState reads the file h names and verifies its size and checksum. A
// mismatch, or a missing file, is a *CorruptError naming the file.
func (s *FS) ReadState(h Handle) ([]byte, error) {
	if !filepath.IsLocal(filepath.FromSlash(h.Path)) {
		return nil, corrupt(h.Path, "handle path is not inside the checkpoint directory %s", s.loc)
	}
	p := s.Where(h.Path)
	data, err := s.get(h.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &CorruptError{Path: p, Reason: "state file referenced by the checkpoint is missing", Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: reading state file: %w", err)
	}
	if int64(len(data)) != h.Size {
		return nil, corrupt(p, "size %d bytes, want %d", len(data), h.Size)
	}
	if got := checksum(data); got != h.CRC32C {
		return nil, corrupt(p, "checksum %#08x, want %#08x", got, h.CRC32C)
	}
	return data, nil
}

// Discard removes the directory of checkpoint id, e.g. after it was aborted.
// Discarding a checkpoint that has no directory is not an error.
func (s *FS) Discard(id event.CheckpointID) error {
	if err := s.removeChk(s.chkDir(id)); err != nil {
		return fmt.Errorf("checkpointstorage: discarding checkpoint %d: %w", id, err)
	}
	return nil
}

// removeChk deletes a checkpoint directory, its _metadata first (see
// invalidate).
func (s *FS) removeChk(name string) error {
	if err := s.invalidate(name); err != nil {
		return err
	}
	return s.remove(name, true)
}

// invalidate removes chk-N/_metadata, durably (locally the directory is
// fsynced), before anything else of the checkpoint is deleted. Deleting a
// directory goes entry by entry in no set order (object by object in a
// bucket), so a crash midway (a SIGKILL during the cleanup after a
// checkpoint) would otherwise leave a completed checkpoint with some of its
// state files gone: the next start reports it as CORRUPT and keeps it
// aside forever. Without its _metadata it is an incomplete checkpoint,
// which GC removes silently.
func (s *FS) invalidate(name string) error {
	return s.remove(path.Join(name, metadataName), false)
}

// chkDirs lists the ids of every chk-N directory, in no particular order.
func (s *FS) chkDirs() ([]event.CheckpointID, error) {
	entries, err := s.list("")
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: listing %s: %w", s.loc, err)
	}
	var ids []event.CheckpointID
	for _, e := range entries {
		if id, ok := parseChkName(e.name); ok && e.dir {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
