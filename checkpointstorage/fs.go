package checkpointstorage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/weirstream/weir/event"
)

const (
	metadataName = "_metadata"
	counterName  = "_checkpoint_id"
	chkPrefix    = "chk-"
	tmpInfix     = ".tmp-"
)

// FS is checkpoint storage on a local or mounted filesystem directory
// (Flink's FsCheckpointStorage). Create it with OpenFS.
type FS struct {
	dir string
	// savepoint: the storage is one savepoint's directory, holding its
	// _metadata and state files directly (see CreateSavepoint).
	savepoint bool
	// removeAll, when set, replaces os.RemoveAll: tests stop a deletion
	// midway through it, as a crash would.
	removeAll func(string) error
	mu        struct {
		// Mutex serialises read-modify-write of the id counter file.
		sync.Mutex
	}
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

// OpenFS opens checkpoint storage in dir, creating the directory (and its
// parents) if needed.
func OpenFS(dir string) (*FS, error) {
	if dir == "" {
		return nil, errors.New("checkpointstorage: empty directory name; set the checkpoint directory (execution.checkpointing.dir)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpointstorage: creating checkpoint directory: %w", err)
	}
	return &FS{dir: dir}, nil
}

// Dir returns the storage directory as given to OpenFS.
func (s *FS) Dir() string { return s.dir }

// chkDir is the directory of checkpoint id relative to the storage:
// chk-<id>, or "" (the storage itself) for a savepoint.
func (s *FS) chkDir(id event.CheckpointID) string {
	if s.savepoint {
		return ""
	}
	return chkName(id)
}

// Location is the directory of checkpoint id, which Resolve accepts:
// Dir joined with chk-<id>, or Dir itself for a savepoint.
func (s *FS) Location(id event.CheckpointID) string { return filepath.Join(s.dir, s.chkDir(id)) }

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

// abs turns a slash-separated path relative to the storage directory into
// a filesystem path.
func (s *FS) abs(rel string) string { return filepath.Join(s.dir, filepath.FromSlash(rel)) }

func validStateName(name string) bool {
	return name != "" && name != metadataName && !strings.ContainsAny(name, `/\`) &&
		!strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") && filepath.IsLocal(name)
}

// WriteState writes data to <dir>/chk-<id>/<name>, creating the checkpoint
// directory if needed, and fsyncs the file. The directory entry becomes
// durable with the fsync WriteMetadata does on the same directory. name is
// chosen by the caller, e.g. "map-0-keyed"; see ErrInvalidName. Writing the
// same name twice replaces the file.
func (s *FS) WriteState(id event.CheckpointID, name string, data []byte) (Handle, error) {
	if !validStateName(name) {
		return Handle{}, fmt.Errorf("%w: %q (want a plain file name such as \"map-0-keyed\")", ErrInvalidName, name)
	}
	if err := s.mkChkDir(id); err != nil {
		return Handle{}, err
	}
	rel := path.Join(s.chkDir(id), name)
	if err := writeFileSync(s.abs(rel), data); err != nil {
		return Handle{}, fmt.Errorf("checkpointstorage: writing state of checkpoint %d: %w", id, s.unwritable(err))
	}
	return Handle{Path: rel, Size: int64(len(data)), CRC32C: checksum(data)}, nil
}

// ReadState reads the file h names and verifies its size and checksum. A
// mismatch, or a missing file, is a *CorruptError naming the file.
func (s *FS) ReadState(h Handle) ([]byte, error) {
	if !filepath.IsLocal(filepath.FromSlash(h.Path)) {
		return nil, corrupt(h.Path, "handle path is not inside the checkpoint directory %s", s.dir)
	}
	p := s.abs(h.Path)
	data, err := os.ReadFile(p)
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
	if err := s.remove(s.abs(name)); err != nil {
		return err
	}
	return syncDir(s.dir)
}

// remove deletes p and everything under it.
func (s *FS) remove(p string) error {
	if s.removeAll != nil {
		return s.removeAll(p)
	}
	return os.RemoveAll(p)
}

// invalidate removes chk-N/_metadata and makes that durable before anything
// else of the checkpoint is deleted. Deleting a directory goes entry by
// entry in no set order, so a crash midway (a SIGKILL during the cleanup
// after a checkpoint) would otherwise leave a completed checkpoint with
// some of its state files gone: the next start reports it as CORRUPT and
// keeps it aside forever. Without its _metadata it is an incomplete
// checkpoint, which GC removes silently.
func (s *FS) invalidate(name string) error {
	if err := s.remove(s.abs(path.Join(name, metadataName))); err != nil {
		return err
	}
	if err := syncDir(s.abs(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// mkChkDir creates chk-<id>; when it is new, it fsyncs the storage directory
// so that the new entry survives a crash.
func (s *FS) mkChkDir(id event.CheckpointID) error {
	err := os.Mkdir(s.abs(s.chkDir(id)), 0o755)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpointstorage: creating directory of checkpoint %d: %w", id, s.unwritable(err))
	}
	return syncDir(s.dir)
}

// chkDirs lists the ids of every chk-N directory, in no particular order.
func (s *FS) chkDirs() ([]event.CheckpointID, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: listing %s: %w", s.dir, err)
	}
	var ids []event.CheckpointID
	for _, e := range entries {
		if id, ok := parseChkName(e.Name()); ok && e.IsDir() {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
