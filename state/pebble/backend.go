package pebble

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	pebbledb "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
)

// Backend is the keyed Pebble state backend of one subtask (Flink's
// EmbeddedRocksDBStateBackend, on Pebble). It implements state.KeyedBackend;
// like every backend it is used by the subtask's goroutine only, while the
// Snapshot it returns may be written from any goroutine. Close it when the
// subtask ends: its files are removed once the last snapshot is written.
type Backend struct {
	opts Options
	db   *pebbledb.DB
	life *lifetime
	up   *uploads // SSTs checkpoint storage holds (incremental checkpoints)

	key      any // current key
	kg       int // its key group
	keyBytes []byte
	hasKey   bool

	states    map[string]*stateInfo  // registered or restored, by name
	queues    map[string]*timerQueue // timer queues, by name (timers.go)
	ttlTables []table                // registered tables with a TTL, in registration order
	restored  bool
	closed    bool
	cursor    cleanupCursor
	sweeps    []*sweep    // by state id, for the states with a TTL (cleanup.go)
	sweeping  bool        // in CleanupExpired: its deletions are not counted
	mem       memEstimate // for EstimatedSize
	// restoreStats is what restoring an incremental checkpoint took
	// (nil without one), for tests.
	restoreStats *restoreStats
}

var _ state.KeyedBackend = (*Backend)(nil)

// stateInfo is one state of the backend: restored from a snapshot, or
// registered, or both.
type stateInfo struct {
	name  string
	id    uint16 // second part of its Pebble keys
	kind  state.Kind
	hasTS bool  // stored entries carry a timestamp
	ttl   ttl   // of its registration; none while only restored
	table table // nil until registered
	// stored: restored from a Pebble backend's files, so its entries are
	// in the stored form already (see adopt).
	stored bool
}

// table is the backend's view of one registered keyed state.
type table interface {
	info() *stateInfo
	// cleanup removes the expired parts of the entry of the key whose
	// Pebble keys start with prefix, and returns how many it removed.
	cleanup(prefix []byte, now int64) int
}

// lifetime closes the database and removes its directory when neither the
// backend nor any snapshot not yet written needs it.
type lifetime struct {
	refs atomic.Int64
	db   *pebbledb.DB
	dir  string
}

func (l *lifetime) acquire() { l.refs.Add(1) }

func (l *lifetime) release() {
	if l.refs.Add(-1) != 0 {
		return
	}
	if l.db == nil { // a failed restore closed it
	} else if err := l.db.Close(); err != nil {
		slog.Warn("pebble: closing state backend", "dir", l.dir, "err", err)
	}
	if err := os.RemoveAll(l.dir); err != nil {
		slog.Warn("pebble: removing state backend directory", "dir", l.dir, "err", err)
	}
}

// New opens an empty Backend in a new directory under opts.LocalDir. It
// fails if the options are invalid or the directory cannot be created.
func New(opts Options) (*Backend, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	db, dir, err := open(&opts)
	if err != nil {
		return nil, err
	}
	b := &Backend{opts: opts, db: db, life: &lifetime{db: db, dir: dir}, states: map[string]*stateInfo{}, up: newUploads(opts.Name)}
	b.life.acquire()
	return b, nil
}

// dirPrefix starts the name of every backend directory.
const dirPrefix = "weir-pebble-"

func open(opts *Options) (*pebbledb.DB, string, error) {
	if err := os.MkdirAll(opts.LocalDir, 0o755); err != nil {
		return nil, "", fmt.Errorf("pebble: state.backend.local-dir %s: %w", opts.LocalDir, err)
	}
	sweepStale(opts.LocalDir)
	dir, err := os.MkdirTemp(opts.LocalDir, dirPrefix+fileSafe(opts.Name)+"-")
	if err != nil {
		return nil, "", fmt.Errorf("pebble: creating a directory in state.backend.local-dir %s: %w", opts.LocalDir, err)
	}
	if err := writeOwner(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, "", fmt.Errorf("pebble: marking a directory in state.backend.local-dir %s: %w", opts.LocalDir, err)
	}
	db, err := openDB(opts, dir, false, nil)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, "", err
	}
	return db, dir, nil
}

// noCompactions is set by tests (export_test.go) to keep a database's set
// of SSTs as flushes made it.
var noCompactions atomic.Bool

// openDB opens the database in dir, new or restored from a checkpoint's
// files; readOnly for a restore's other sources. st, when not nil, gets
// what Open did and how long it took.
func openDB(opts *Options, dir string, readOnly bool, st *openStats) (*pebbledb.DB, error) {
	cache := pebbledb.NewCache(opts.BlockCacheSize)
	defer cache.Unref() // the database holds its own reference
	popts := &pebbledb.Options{
		Cache:                       cache,
		MemTableSize:                uint64(opts.WriteBufferSize),
		MemTableStopWritesThreshold: opts.WriteBufferCount,
		LBaseMaxBytes:               opts.MaxSizeLevelBase,
		// Checkpoints make state durable (as Flink runs RocksDB): a
		// failed subtask restores from a checkpoint into a fresh
		// directory. The WAL, never fsynced (noSyncFS), is there only to
		// be shipped by incremental checkpoints (changelog.go); a restore
		// replays it whatever this option says.
		DisableWAL: !opts.changelog(),
		Merger:     listMerger, // ListState.Add appends by a merge
		Logger:     quietLogger{},
		ReadOnly:   readOnly,
		// Tests that count the files of checkpoints turn compactions off.
		DisableAutomaticCompactions: noCompactions.Load(),
		FS:                          noSyncFS{vfs.Default},
	}
	// A Bloom filter in every SST (RocksDB's, which Flink can turn on
	// with state.backend.rocksdb.use-bloom-filter): a point read — most
	// state accesses are one — skips the SSTs that do not hold its key
	// instead of reading and decompressing one of their blocks. L0 holds
	// several SSTs between compactions, every one overlapping every key
	// (many small ones when checkpoints flush: DisableChangelog).
	popts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	remoteOptions(opts, popts, readOnly)
	if opts.ExperimentalRemote != nil && !readOnly {
		if _, err := ensureCreator(dir); err != nil {
			return nil, err
		}
	}
	if st != nil {
		st.sched = newPausedScheduler(!readOnly)
		popts.Experimental.CompactionScheduler = st.sched
		popts.EventListener = st.listener()
		defer st.opening.Store(false)
		defer func(t time.Time) { st.open = time.Since(t) }(time.Now())
	}
	db, err := pebbledb.Open(dir, popts)
	if err != nil {
		return nil, fmt.Errorf("pebble: opening state backend in %s: %w", dir, err)
	}
	return db, nil
}

// Dir returns the backend's working directory.
func (b *Backend) Dir() string { return b.life.dir }

// Close releases the backend; its directory is removed when every snapshot
// taken from it is written (or dropped). Close is idempotent; the backend
// must not be used after it.
func (b *Backend) Close() error {
	if !b.closed {
		b.closed = true
		b.life.release()
	}
	return nil
}

// SetCurrentKey scopes state access to key in key group keyGroup. It panics
// if keyGroup is outside KeyGroupRange: the record was routed to the wrong
// subtask.
func (b *Backend) SetCurrentKey(key any, keyGroup int) {
	if b.hasKey && keyGroup == b.kg && key == b.key {
		return
	}
	if r := b.opts.KeyGroupRange; !r.Contains(keyGroup) {
		panic(fmt.Sprintf("pebble: key %s has key group %d, outside this subtask's range %v", keyed.KeyString(key), keyGroup, r))
	}
	b.key, b.kg, b.hasKey = key, keyGroup, true
	b.keyBytes = b.opts.KeyCodec.Encode(b.keyBytes[:0], key)
}

// CurrentKey returns the current key, nil before SetCurrentKey.
func (b *Backend) CurrentKey() any { return b.key }

// KeyGroupRange returns the key groups this backend owns.
func (b *Backend) KeyGroupRange() keygroup.Range { return b.opts.KeyGroupRange }

// current returns the current key's encoding; keyed state access without a
// current key is a runtime bug.
func (b *Backend) current() []byte {
	if !b.hasKey {
		panic("pebble: keyed state accessed with no current key; SetCurrentKey must come first")
	}
	return b.keyBytes
}

// ValueTable registers (or returns) a value, reducing or aggregating state.
func (b *Backend) ValueTable(spec state.StateSpec) (state.ValueTable, error) {
	t, err := b.register(spec, func(si *stateInfo) table { return &valueTable{newTBase(b, si, spec)} },
		state.KindValue, state.KindReducing, state.KindAggregating)
	if err != nil {
		return nil, err
	}
	return t.(*valueTable), nil
}

// ListTable registers (or returns) a list state.
func (b *Backend) ListTable(spec state.StateSpec) (state.ListTable, error) {
	t, err := b.register(spec, func(si *stateInfo) table { return &listTable{tbase: newTBase(b, si, spec)} }, state.KindList)
	if err != nil {
		return nil, err
	}
	return t.(*listTable), nil
}

// MapTable registers (or returns) a map state.
func (b *Backend) MapTable(spec state.StateSpec) (state.MapTable, error) {
	t, err := b.register(spec, func(si *stateInfo) table { return &mapTable{newTBase(b, si, spec)} }, state.KindMap)
	if err != nil {
		return nil, err
	}
	return t.(*mapTable), nil
}

// register returns the table named by spec, creating it with mk on first
// use — and adopting its restored entries. kinds are the kinds the
// caller's table type serves.
func (b *Backend) register(spec state.StateSpec, mk func(*stateInfo) table, kinds ...state.Kind) (table, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if !slices.Contains(kinds, spec.Kind) {
		return nil, fmt.Errorf("%w: state %q of kind %v requested as %v", state.ErrIncompatible, spec.Name, spec.Kind, kinds[0])
	}
	si, ok := b.states[spec.Name]
	switch {
	case ok && si.table != nil && si.kind != spec.Kind:
		return nil, fmt.Errorf("%w: state %q is registered as %v, requested as %v", state.ErrIncompatible, spec.Name, si.kind, spec.Kind)
	case ok && si.table != nil:
		return si.table, nil
	case ok && si.kind != spec.Kind:
		return nil, fmt.Errorf("%w: state %q was a %v state in the restored snapshot, registered as %v", state.ErrIncompatible, spec.Name, si.kind, spec.Kind)
	case !ok:
		var err error
		if si, err = b.newState(spec.Name, spec.Kind, spec.TTL != nil); err != nil {
			return nil, err
		}
	}
	t := mk(si)
	if err := b.adopt(si, spec, keyed.NewTTL(spec.TTL)); err != nil {
		return nil, err
	}
	si.ttl, si.table = keyed.NewTTL(spec.TTL), t
	if spec.TTL != nil {
		b.ttlTables = append(b.ttlTables, t)
		for len(b.sweeps) <= int(si.id) {
			b.sweeps = append(b.sweeps, nil)
		}
		b.sweeps[si.id] = newSweep(spec.TTL)
	}
	return t, nil
}

// newState adds a state with the next free id.
func (b *Backend) newState(name string, kind state.Kind, hasTS bool) (*stateInfo, error) {
	if len(b.states) >= maxStates {
		return nil, fmt.Errorf("pebble: state %q: a keyed backend holds at most %d states", name, maxStates)
	}
	si := &stateInfo{name: name, id: uint16(len(b.states)), kind: kind, hasTS: hasTS}
	b.states[name] = si
	return si, nil
}

// sortedStates returns the states by name.
func (b *Backend) sortedStates() []*stateInfo {
	out := make([]*stateInfo, 0, len(b.states))
	for _, si := range b.states {
		out = append(out, si)
	}
	slices.SortFunc(out, func(x, y *stateInfo) int { return strings.Compare(x.name, y.name) })
	return out
}

// Keys returns the keys with a live entry in the named state (registered,
// or restored and not yet registered), in no particular order; nil for an
// unknown state.
func (b *Backend) Keys(stateName string) []any {
	si, ok := b.states[stateName]
	if !ok {
		return nil
	}
	var now int64
	if si.ttl.Enabled() {
		now = b.opts.Clock()
	}
	var ks []any
	var last []byte // the last key found live
	scanState(b.db, b.opts.KeyGroupRange, si, func(_ int, kb, _, _, v []byte) bool {
		if last != nil && bytes.Equal(kb, last) || !liveParts(si, v, now) {
			return true
		}
		last = append(last[:0], kb...)
		k, err := decodeKey(b.opts.KeyCodec, kb)
		if err != nil {
			panic(fmt.Errorf("pebble: state %q: stored key: %w", si.name, err))
		}
		ks = append(ks, k)
		return true
	})
	return ks
}

// liveParts reports whether a stored value of si (a value, a whole list, a
// map entry) has a part not expired at now.
func liveParts(si *stateInfo, v []byte, now int64) bool {
	if !si.ttl.Enabled() {
		return true
	}
	if si.kind == state.KindList {
		items, _ := parseItems(v, si.hasTS)
		return slices.ContainsFunc(items, func(it item) bool { return !si.ttl.Expired(it.ts, now) })
	}
	ts, _, _ := splitTS(v, si.hasTS)
	return !si.ttl.Expired(ts, now)
}

// reader is a database or a snapshot of one.
type reader interface {
	NewIter(*pebbledb.IterOptions) (*pebbledb.Iterator, error)
}

// scanState calls f for every stored entry of si, key group by key group,
// in key order, with the entry's key group, stream key encoding, key
// prefix, user key (maps) and value, until f returns false. The slices are
// valid only during the call.
func scanState(r reader, rng keygroup.Range, si *stateInfo, f func(kg int, kb, prefix, uk, v []byte) bool) {
	for kg := rng.Start; kg <= rng.End && rng.Len() > 0; kg++ {
		lo := appendGroupState(nil, kg, si.id)
		if !scan(r, lo, succ(lo), func(k, v []byte) bool {
			_, kb, prefix, uk, ok := splitKey(k)
			if !ok {
				panic(fmt.Errorf("%w: pebble: state %q: malformed stored key %x", state.ErrCorrupt, si.name, k))
			}
			return f(kg, kb, prefix, uk, v)
		}) {
			return
		}
	}
}

// scan calls f for each entry in [lower, upper) until f returns false; it
// reports whether f never did.
func scan(r reader, lower, upper []byte, f func(k, v []byte) bool) bool {
	it, err := r.NewIter(&pebbledb.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		panic(ioFailure("iterating", err))
	}
	all := true
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			panic(ioFailure("reading", err))
		}
		if !f(it.Key(), v) {
			all = false
			break
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		panic(ioFailure("iterating", err))
	}
	return all
}

// get returns a copy of the value stored under k.
func (b *Backend) get(k []byte) ([]byte, bool) {
	v, closer, err := b.db.Get(k)
	if errors.Is(err, pebbledb.ErrNotFound) {
		return nil, false
	}
	if err != nil {
		panic(ioFailure("reading", err))
	}
	out := bytes.Clone(v)
	_ = closer.Close()
	return out, true
}

func (b *Backend) set(k, v []byte) {
	b.wrote(k)
	b.mem.written += int64(len(k) + len(v))
	if err := b.db.Set(k, v, pebbledb.NoSync); err != nil {
		panic(ioFailure("writing", err))
	}
}

func (b *Backend) merge(k, v []byte) {
	b.wrote(k)
	b.mem.written += int64(len(k) + len(v))
	if err := b.db.Merge(k, v, pebbledb.NoSync); err != nil {
		panic(ioFailure("writing", err))
	}
}

func (b *Backend) del(k []byte) {
	b.wrote(k)
	b.mem.written += int64(len(k))
	if err := b.db.Delete(k, pebbledb.NoSync); err != nil {
		panic(ioFailure("deleting", err))
	}
}

// ioFailure is the panic of a state access that Pebble failed: the state
// interfaces have no error results, and the subtask turns a panic into a
// failure (and the job restores from its last checkpoint).
func ioFailure(what string, err error) error {
	return fmt.Errorf("pebble: %s keyed state: %w (is state.backend.local-dir full or gone?)", what, err)
}

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == '\\' || r == ':' || r == os.PathSeparator {
			return '_'
		}
		return r
	}, s)
}

// quietLogger drops Pebble's informational messages and logs its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	slog.Error("pebble: " + fmt.Sprintf(format, args...))
}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
