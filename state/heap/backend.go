package heap

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
)

// Backend is the keyed heap state backend of one subtask (Flink's
// HeapKeyedStateBackend). It implements state.KeyedBackend; like every
// backend it is used by the subtask's goroutine only, while the Snapshot it
// returns may be written from any goroutine.
type Backend struct {
	opts Options

	key    any // current key
	idx    int // current key group minus the range's start
	hasKey bool

	// version is bumped by every Snapshot: values and inner maps stored
	// at an older one may be shared with a snapshot (see private).
	version uint64
	// mapVersion is bumped by a Snapshot that captures the group maps
	// themselves (see groups for copy-on-write).
	mapVersion uint64
	// forCheckpoint: the next Snapshot is for a checkpoint, written by
	// WriteFiles, and may capture a delta (SnapshotFor).
	forCheckpoint bool
	// inFlight counts the snapshots taken and not yet written (see
	// private); their Write decrements it on another goroutine.
	inFlight atomic.Int64
	// blobSize is the size of the last snapshot blob written, which sizes
	// the next one's buffer (snapshot.Write).
	blobSize atomic.Int64

	// inc is the incremental checkpoints' record of what checkpoint
	// storage holds (incremental.go); nil when checkpoints are full.
	inc *chain
	// captured: Snapshot has run (tables created from now on track their
	// changed keys from the start; see groups).
	captured bool

	tables    map[string]table
	ttlTables []table              // tables with a TTL, in registration order, for CleanupExpired
	pending   map[string]*rawState // restored, not yet registered
	restored  bool
	cursor    cleanupCursor
}

var _ state.KeyedBackend = (*Backend)(nil)

// New returns an empty Backend. It fails if the options are invalid.
func New(opts Options) (*Backend, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	b := &Backend{
		opts:       opts,
		version:    1,
		mapVersion: 1,
		tables:     make(map[string]table),
		pending:    make(map[string]*rawState),
		cursor:     cleanupCursor{group: -1},
	}
	if opts.Incremental {
		b.inc = newChain()
	}
	return b, nil
}

// SetCurrentKey scopes state access to key in key group keyGroup. It panics
// if keyGroup is outside KeyGroupRange: the record was routed to the wrong
// subtask.
func (b *Backend) SetCurrentKey(key any, keyGroup int) {
	r := b.opts.KeyGroupRange
	if !r.Contains(keyGroup) {
		panic(fmt.Sprintf("heap: key %s has key group %d, outside this subtask's range %v", keyed.KeyString(key), keyGroup, r))
	}
	b.key, b.idx, b.hasKey = key, keyGroup-r.Start, true
}

// CurrentKey returns the current key, nil before SetCurrentKey.
func (b *Backend) CurrentKey() any { return b.key }

// KeyGroupRange returns the key groups this backend owns.
func (b *Backend) KeyGroupRange() keygroup.Range { return b.opts.KeyGroupRange }

func (b *Backend) groupCount() int { return b.opts.KeyGroupRange.Len() }

// current returns the current key and its group index; keyed state access
// without a current key is a runtime bug.
func (b *Backend) current() (any, int) {
	if !b.hasKey {
		panic("heap: keyed state accessed with no current key; SetCurrentKey must come first")
	}
	return b.key, b.idx
}

// ValueTable registers (or returns) a value, reducing or aggregating state.
func (b *Backend) ValueTable(spec state.StateSpec) (state.ValueTable, error) {
	t, err := b.register(spec, func() table {
		if ip, ok := placesInPlace(spec); ok && !b.opts.notPlaced {
			return newPlacedValueTable(b, spec, ip)
		}
		return newValueTable(b, spec)
	}, state.KindValue, state.KindReducing, state.KindAggregating)
	if err != nil {
		return nil, err
	}
	return t.(state.ValueTable), nil
}

// ListTable registers (or returns) a list state.
func (b *Backend) ListTable(spec state.StateSpec) (state.ListTable, error) {
	t, err := b.register(spec, func() table {
		if ip, ok := placesInPlace(spec); ok && !b.opts.notPlaced {
			return newPlacedTable(b, spec, ip)
		}
		return newListTable(b, spec)
	}, state.KindList)
	if err != nil {
		return nil, err
	}
	return t.(state.ListTable), nil
}

// MapTable registers (or returns) a map state.
func (b *Backend) MapTable(spec state.StateSpec) (state.MapTable, error) {
	t, err := b.register(spec, func() table { return newMapTable(b, spec) }, state.KindMap)
	if err != nil {
		return nil, err
	}
	return t.(*mapTable), nil
}

// register returns the table named by spec, creating it with mk — and
// loading its restored entries — on first use. kinds are the kinds the
// caller's table type serves.
func (b *Backend) register(spec state.StateSpec, mk func() table, kinds ...state.Kind) (table, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if !slices.Contains(kinds, spec.Kind) {
		return nil, fmt.Errorf("%w: state %q of kind %v requested as %v", state.ErrIncompatible, spec.Name, spec.Kind, kinds[0])
	}
	if t, ok := b.tables[spec.Name]; ok {
		if k := t.spec().Kind; k != spec.Kind {
			return nil, fmt.Errorf("%w: state %q is registered as %v, requested as %v", state.ErrIncompatible, spec.Name, k, spec.Kind)
		}
		return t, nil
	}
	t := mk()
	if err := b.loadPending(t); err != nil {
		return nil, err
	}
	// The entries loaded are the ones snapshots already hold (as the
	// restored bytes they wrote back verbatim): no delta needs them.
	t.forget()
	b.tables[spec.Name] = t
	if spec.TTL != nil {
		b.ttlTables = append(b.ttlTables, t)
	}
	return t, nil
}

// loadPending moves the restored entries of t's state, if any, into t.
func (b *Backend) loadPending(t table) error {
	sp := t.spec()
	raw, ok := b.pending[sp.Name]
	if !ok {
		return nil
	}
	if raw.kind != sp.Kind {
		return fmt.Errorf("%w: state %q was a %v state in the restored snapshot, registered as %v", state.ErrIncompatible, sp.Name, raw.kind, sp.Kind)
	}
	var now int64
	if sp.TTL != nil {
		now = b.opts.Clock()
	}
	if err := t.load(raw, now); err != nil {
		return err
	}
	if b.inc != nil && raw.hasTTL != keyed.NewTTL(sp.TTL).Enabled() {
		b.inc.reset()
	}
	delete(b.pending, sp.Name)
	return nil
}

// Keys returns the keys with a live value in the named state (registered,
// or restored and not yet registered), in no particular order; nil for an
// unknown state.
func (b *Backend) Keys(stateName string) []any {
	if t, ok := b.tables[stateName]; ok {
		var now int64
		if t.spec().TTL != nil {
			now = b.opts.Clock()
		}
		return t.keys(now)
	}
	if raw, ok := b.pending[stateName]; ok {
		return raw.keys()
	}
	return nil
}

// SnapshotFor tells the backend what its next Snapshot is for: a
// checkpoint (written by WriteFiles) or a savepoint (Write, in full). The
// runtime calls it before each; without it a Snapshot captures in full.
func (b *Backend) SnapshotFor(checkpoint bool) { b.forCheckpoint = checkpoint }

// Snapshot captures every state as of now (ms): the map references of
// registered states and the bytes of restored, unregistered ones. It costs
// O(states × key groups) and, for a checkpoint's incremental capture, the
// encoding of a sample of each state's entries (capture.live); entries
// expired at now are left out when the snapshot is written.
//
// A snapshot for an incremental checkpoint that will extend a chain
// (chain.captured decides) captures less: the entries of the keys changed
// since the newest chain written, which is all its delta can need. It
// leaves the group maps uncaptured, so no write after it clones one.
func (b *Backend) Snapshot(now int64) (state.Snapshot, error) {
	s := &snapshot{
		maxParallelism: b.opts.MaxParallelism,
		start:          b.opts.KeyGroupRange.Start,
		keyCodec:       b.opts.KeyCodec,
		now:            now,
		size:           &b.blobSize,
	}
	cp := capture{version: b.version, changed: map[string][]changes{}, uks: map[string][]userKeys{}}
	for name, t := range b.tables {
		if dirty, uks := t.takeDirty(); dirty != nil {
			cp.changed[name], cp.uks[name] = dirty, uks
		}
	}
	v, epoch, delta := b.version, 0, false
	var d deltaKeys
	if b.inc != nil {
		if b.forCheckpoint { // a savepoint's capture writes no chain
			cp.live = b.estimatedSize(liveSample, liveElems)
		}
		epoch, d, delta = b.inc.captured(cp, b.forCheckpoint)
	}
	b.forCheckpoint = false
	for name, t := range b.tables {
		s.states = append(s.states, t.capture(delta, tableDelta{keys: d.keys[name], uks: d.uks[name], own: cp.uks[name], alone: d.alone}))
	}
	for name, raw := range b.pending {
		s.states = append(s.states, raw.capture(name))
	}
	slices.SortFunc(s.states, func(x, y captured) int { return strings.Compare(x.header().name, y.header().name) })
	b.captured = true
	// From now on, until s is written, every read of a value stored
	// before copies it, and every write to an inner map clones it; with
	// the group maps captured, every write to one clones it too.
	b.version++
	if !delta {
		b.mapVersion = b.version
	}
	b.inFlight.Add(1)
	s.flight = &flight{count: &b.inFlight, records: cp.uks}
	// A snapshot dropped unwritten (its checkpoint failed first) can never
	// read the state again: it leaves the count when it is garbage.
	runtime.AddCleanup(s, (*flight).land, s.flight)
	if b.inc == nil {
		return s, nil
	}
	return &incrementalSnapshot{snapshot: s, chain: b.inc, version: v, epoch: epoch, delta: delta, since: d.since}, nil
}

// loadedVersion is the version of the values a restore loads: one before
// the backend's, so that none counts as written since the last capture. A
// write that finds a value of the current version skips recording the
// key (the list's append, listTable.Add); a restored list registered
// after a capture would otherwise lose its next append from the next
// delta. A value so marked is copied when a snapshot is in flight
// (shared), which costs a copy, never correctness.
func (b *Backend) loadedVersion() uint64 { return b.version - 1 }

// shared reports whether a snapshot in flight may be encoding a value
// stored at version ver: one was taken since (ver is older than the
// backend's version), and some snapshot is not written yet. The second
// test is coarse — an older snapshot still in flight makes values stored
// after it count as shared too — which costs copies, never correctness.
func (b *Backend) shared(ver uint64) bool {
	return ver != b.version && b.inFlight.Load() > 0
}
