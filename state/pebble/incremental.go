package pebble

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	pebbledb "github.com/cockroachdb/pebble/v2"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
)

// Incremental checkpoints (Flink's RocksDB incremental checkpoints, on
// Pebble). The synchronous part of a checkpoint takes a Pebble checkpoint
// (hard links of the SSTs, copies of the small MANIFEST, OPTIONS and
// marker files, and of the WAL) into a directory inside the database's,
// after flushing the WAL to its file or, without a WAL
// (Options.DisableChangelog), the memtables into an SST; the asynchronous
// part (WriteFiles) uploads the SSTs the storage does not hold yet as
// shared files, the WAL bytes it does not hold yet as shared chunks
// (changelog.go), and returns a manifest naming all of them that carries
// the small files (MANIFEST, OPTIONS, markers) inline.
//
// A local SST has one shared name for the life of the backend:
// "<group>/<file number>.sst", the group unique to this backend instance,
// or, for an SST restored from a checkpoint in the same storage, the name
// it had there. An SST is never written under two names, and one name
// never holds two contents, so:
//   - uploading it again (two checkpoints in flight both found it new) is
//     harmless; the storage needs no confirmation that a checkpoint
//     completed before its files are reused;
//   - every checkpoint taken while the SST was live names it, under the
//     same name: retention may delete a checkpoint whose files a newer one
//     in flight reuses, because the newest retained checkpoint, taken in
//     between, names them too (see checkpointstorage's dropShared).

// manifestMagic starts a manifest blob; a canonical blob starts with
// keyed.Magic instead.
const manifestMagic = keyed.IncrementalMagic

// manifest is the keyed part of an incremental checkpoint: the states of
// the database (their ids are in its keys) and its files.
type manifest struct {
	MaxParallelism int             `json:"maxParallelism"`
	KeyGroups      [2]int          `json:"keyGroups"` // first and last; first > last when empty
	States         []manifestState `json:"states"`
	Files          []manifestFile  `json:"files"`
	// Queues are the timer queues whose elements the files hold, with
	// their ids, so that a restore keeps those elements in place (see
	// keepTimers); nil in manifests written before they were listed,
	// whose timers a restore deletes.
	Queues []manifestQueue `json:"queues"`
	// Logs are the WAL files (changelog.go); nil when checkpoints flush
	// the memtables instead.
	Logs []manifestLog `json:"logs,omitempty"`
}

// manifestQueue is one timer queue of the database.
type manifestQueue struct {
	Name string `json:"name"`
	ID   uint16 `json:"id"`
}

type manifestState struct {
	Name  string     `json:"name"`
	ID    uint16     `json:"id"`
	Kind  state.Kind `json:"kind"`
	HasTS bool       `json:"hasTS,omitempty"`
}

// manifestFile is one file of the database: its local name and where it
// is stored.
type manifestFile struct {
	Name   string           `json:"name"`
	Handle state.FileHandle `json:"handle"`
	// Remote: an object of the experimental disaggregated state (or one
	// of its ref markers), read in place, never fetched (remote.go).
	Remote bool `json:"remote,omitempty"`
	// Inline: a small file of the checkpoint's own (MANIFEST, OPTIONS,
	// markers) carried in the manifest as Data, with no Handle; see
	// inlineLimit. Manifests written before had every file stored apart,
	// which a restore still fetches.
	Inline bool   `json:"inline,omitempty"`
	Data   []byte `json:"data,omitempty"`
}

// inlineLimit is the size up to which a file of the checkpoint's own
// travels inside the manifest rather than as a file of the checkpoint:
// each of those is a storage write with its own temporary file and fsync
// (or a PUT on S3), and Pebble's checkpoint has four or five of them, most
// under a few KiB (the MANIFEST grows with the number of SSTs, about 100
// bytes each). The manifest is itself a state file with a checksum.
const inlineLimit = 64 << 10

func (m *manifest) keyGroups() keygroup.Range {
	return keygroup.Range{Start: m.KeyGroups[0], End: m.KeyGroups[1]}
}

func encodeManifest(m *manifest) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append([]byte(manifestMagic), b...), nil
}

// isManifest tells a manifest blob from a canonical one.
func isManifest(blob []byte) bool { return strings.HasPrefix(string(blob), manifestMagic) }

func decodeManifest(blob []byte) (*manifest, error) {
	var m manifest
	if err := json.Unmarshal(blob[len(manifestMagic):], &m); err != nil {
		return nil, corrupt("incremental snapshot manifest: %v", err)
	}
	return &m, nil
}

// readSmall returns the content of the file at path when it is at most
// inlineLimit bytes long.
func readSmall(path string) ([]byte, bool, error) {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > inlineLimit {
		return nil, false, err
	}
	b, err := os.ReadFile(path)
	return b, err == nil, err
}

// sharedFile tells the files a checkpoint shares (immutable: SSTs and
// blob files) from its own (MANIFEST, OPTIONS, markers, WALs).
func sharedFile(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

// uploads remembers the shared name of every SST of the database that
// checkpoint storage holds (or is being given) so that a checkpoint
// uploads only the new ones. It is shared by the backend and its
// snapshots, whose WriteFiles run on other goroutines.
type uploads struct {
	group string // this instance's shared directory
	mu    struct {
		sync.Mutex
		// stored maps a local SST name to its handle in checkpoint
		// storage at location (set on the first write, or by a restore).
		stored map[string]state.FileHandle
		// logs maps a local WAL file's name to the chunks of it the
		// storage at location holds, in order.
		logs     map[string][]state.FileHandle
		location string
	}
}

func newUploads(name string) *uploads {
	var b [4]byte
	_, _ = rand.Read(b[:])
	u := &uploads{group: fileSafe(name) + "-" + hex.EncodeToString(b[:])}
	u.mu.stored, u.mu.logs = map[string]state.FileHandle{}, map[string][]state.FileHandle{}
	return u
}

// restored records the shared files of the checkpoint the database was
// restored from, in storage loc, for reuse.
func (u *uploads) restored(loc string, files map[string]state.FileHandle) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.mu.location, u.mu.stored = loc, files
}

// known returns the handles the storage at loc holds for the local SSTs
// names, and the chunks it holds of the WAL files logs; the rest must be
// uploaded.
func (u *uploads) known(loc string, names, logs []string) (map[string]state.FileHandle, map[string][]state.FileHandle) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.mu.location != loc {
		// Restored from elsewhere (Flink's no-claim mode): this storage
		// holds none of them, and must never name the other's files.
		u.mu.location, u.mu.stored, u.mu.logs = loc, map[string]state.FileHandle{}, map[string][]state.FileHandle{}
	}
	out := map[string]state.FileHandle{}
	for _, n := range names {
		if h, ok := u.mu.stored[n]; ok {
			out[n] = h
		}
	}
	outLogs := map[string][]state.FileHandle{}
	for _, n := range logs {
		if cs, ok := u.mu.logs[n]; ok {
			outLogs[n] = cs
		}
	}
	return out, outLogs
}

// written records a checkpoint's SSTs (all of them: reused and uploaded)
// and WAL chunks as the ones the storage holds, forgetting the SSTs the
// database has compacted away and the WAL files it has deleted since.
func (u *uploads) written(loc string, files map[string]state.FileHandle, logs []manifestLog) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.mu.location == loc {
		u.mu.stored = files
		u.mu.logs = map[string][]state.FileHandle{}
		for _, l := range logs {
			u.mu.logs[l.Name] = l.Chunks
		}
	}
}

// localCheckpoint is the synchronous part of an incremental checkpoint:
// a Pebble checkpoint of the database in its own directory.
type localCheckpoint struct {
	dir    string
	rng    keygroup.Range
	up     *uploads
	queues []manifestQueue // the timer queues when it was taken, by id
	opts   *Options        // for the remote objects (remotecheckpoint.go)
	// shipLogs: its WAL files are uploaded in chunks (changelog.go), not
	// as its own files (without a WAL they are empty).
	shipLogs bool
}

var checkpointSeq atomic.Int64

// checkpointLocal takes a Pebble checkpoint into a directory inside the
// database's: with the WAL written out to its file (changelog.go), or,
// without a WAL, after flushing the memtables, so that it holds
// everything.
func (b *Backend) checkpointLocal() (*localCheckpoint, error) {
	var opts []pebbledb.CheckpointOption
	if b.opts.changelog() {
		opts = append(opts, pebbledb.WithFlushedWAL())
	} else if err := b.db.Flush(); err != nil {
		return nil, fmt.Errorf("pebble: flushing for a checkpoint: %w", err)
	}
	// Inside the backend's directory (see copyFrom).
	dir := filepath.Join(b.life.dir, fmt.Sprintf("checkpoint-%d", checkpointSeq.Add(1)))
	if err := b.db.Checkpoint(dir, opts...); err != nil {
		return nil, fmt.Errorf("pebble: checkpoint of the state backend into %s: %w", dir, err)
	}
	lc := &localCheckpoint{dir: dir, rng: b.opts.KeyGroupRange, up: b.up, queues: []manifestQueue{}, opts: &b.opts,
		shipLogs: b.opts.changelog()}
	for name, q := range b.queues {
		lc.queues = append(lc.queues, manifestQueue{Name: name, ID: q.id})
	}
	slices.SortFunc(lc.queues, func(a, b manifestQueue) int { return int(b.ID) - int(a.ID) })
	return lc, nil
}

// incrementalSnapshot is a snapshot that can also be written as files.
type incrementalSnapshot struct {
	*snapshot
	local *localCheckpoint
}

var _ state.IncrementalSnapshot = (*incrementalSnapshot)(nil)

// WriteFiles uploads the SSTs of the local checkpoint that files' storage
// does not hold yet, the WAL bytes it does not hold yet, and its small
// files, and returns the manifest. It releases the snapshot.
func (s *incrementalSnapshot) WriteFiles(files state.SnapshotFiles) (blob []byte, needs []state.FileHandle, err error) {
	defer s.h.release()
	ents, err := os.ReadDir(s.local.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("pebble: reading local checkpoint: %w", err)
	}
	var ssts, logs []string
	for _, e := range ents {
		switch n := e.Name(); {
		case sharedFile(n):
			ssts = append(ssts, n)
		case s.local.shipLogs && isLog(n):
			logs = append(logs, n)
		}
	}
	loc := files.Location()
	have, haveLogs := s.local.up.known(loc, ssts, logs)
	chunks, err := s.local.newChunks(logs, haveLogs)
	if err != nil {
		return nil, nil, err
	}
	var put []state.LocalFile
	var inline []manifestFile
	for _, e := range ents {
		n := e.Name()
		if _, ok := have[n]; ok || slices.Contains(logs, n) {
			continue
		}
		f := state.LocalFile{Name: n, Path: filepath.Join(s.local.dir, n), Shared: sharedFile(n)}
		if f.Shared {
			f.Name = s.local.up.group + "/" + n
		} else if data, ok, err := readSmall(f.Path); err != nil {
			return nil, nil, err
		} else if ok {
			inline = append(inline, manifestFile{Name: n, Inline: true, Data: data})
			continue
		}
		put = append(put, f)
	}
	for _, c := range chunks {
		put = append(put, c.file)
	}
	hs, err := putAll(files, put, s.local.opts.TransferThreads)
	if err != nil {
		return nil, nil, err
	}
	m := &manifest{MaxParallelism: s.maxPar, KeyGroups: [2]int{s.rng.Start, s.rng.End}, Queues: s.local.queues}
	if s.local.shipLogs {
		m.Logs = manifestLogs(logs, haveLogs, chunks, hs[len(put)-len(chunks):])
	}
	put, hs = put[:len(put)-len(chunks)], hs[:len(put)-len(chunks)]
	for _, si := range s.states {
		m.States = append(m.States, manifestState{Name: si.name, ID: si.id, Kind: si.kind, HasTS: si.hasTS})
	}
	all := maps.Clone(have)
	for i, f := range put {
		n := filepath.Base(f.Path)
		m.Files = append(m.Files, manifestFile{Name: n, Handle: hs[i]})
		if f.Shared {
			all[n] = hs[i]
		}
	}
	for _, n := range slices.Sorted(maps.Keys(have)) {
		m.Files = append(m.Files, manifestFile{Name: n, Handle: have[n]})
	}
	m.Files = append(m.Files, inline...)
	if err := s.local.nameRemote(m, loc); err != nil {
		return nil, nil, err
	}
	s.local.up.written(loc, all, m.Logs)
	for _, f := range m.Files {
		if !f.Inline {
			needs = append(needs, f.Handle)
		}
	}
	for _, l := range m.Logs {
		needs = append(needs, l.Chunks...)
	}
	blob, err = encodeManifest(m)
	return blob, needs, err
}

// putAll uploads files, each by a Put of its own, at most threads at once
// (Options.TransferThreads), and returns their handles in order or the
// first failure in that order.
func putAll(files state.SnapshotFiles, put []state.LocalFile, threads int) ([]state.FileHandle, error) {
	hs := make([]state.FileHandle, len(put))
	jobs := make([]func() error, len(put))
	for i, f := range put {
		jobs[i] = func() error {
			h, err := files.Put([]state.LocalFile{f})
			if err == nil && len(h) != 1 {
				err = fmt.Errorf("pebble: uploading %s: the storage returned %d handles for one file", f.Name, len(h))
			}
			if err == nil {
				hs[i] = h[0]
			}
			return err
		}
	}
	if err := inParallel(threads, jobs); err != nil {
		return nil, err
	}
	return hs, nil
}
