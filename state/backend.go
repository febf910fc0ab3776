package state

import (
	"fmt"

	"github.com/weirstream/weir/keygroup"
)

// Kind is the kind of a registered state. It is stored in snapshots.
type Kind uint8

const (
	// KindValue is a ValueState.
	KindValue Kind = iota + 1
	// KindList is a ListState.
	KindList
	// KindMap is a MapState.
	KindMap
	// KindReducing is a ReducingState.
	KindReducing
	// KindAggregating is an AggregatingState.
	KindAggregating
)

// String returns the kind's name, e.g. "value".
func (k Kind) String() string {
	switch k {
	case KindValue:
		return "value"
	case KindList:
		return "list"
	case KindMap:
		return "map"
	case KindReducing:
		return "reducing"
	case KindAggregating:
		return "aggregating"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// StateSpec is a type-erased descriptor: what a backend needs to store one
// state. The typed constructors (Value, List, …) build it from a descriptor.
type StateSpec struct {
	// Name identifies the state within the operator.
	Name string
	// Kind is the state's kind.
	Kind Kind
	// Codec encodes a value, list element, map value or accumulator.
	Codec Codec[any]
	// UserKeyCodec encodes map keys (KindMap only).
	UserKeyCodec Codec[any]
	// TTL, if set, expires entries (keyed state only).
	TTL *TTLConfig
}

// Validate checks the spec; errors wrap ErrInvalidDescriptor.
func (s StateSpec) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: state %q: "+format, append([]any{ErrInvalidDescriptor, s.Name}, args...)...)
	}
	switch {
	case s.Name == "":
		return bad("empty name")
	case s.Kind < KindValue || s.Kind > KindAggregating:
		return bad("unknown kind %d", s.Kind)
	case s.Codec == nil:
		return bad("nil codec")
	case s.Kind == KindMap && s.UserKeyCodec == nil:
		return bad("nil map key codec")
	}
	if err := s.TTL.validate(); err != nil {
		return bad("%v", err)
	}
	return nil
}

// Snapshot is the asynchronous part of a checkpoint of a backend: it holds
// what Snapshot captured and encodes it on demand.
type Snapshot interface {
	// Write encodes the captured state into a blob that Restore of a
	// backend of any parallelism accepts. It may run on any goroutine,
	// concurrently with the owner mutating the live state. It is called
	// once: when it returns, the backend stops keeping the values it
	// captured apart from the ones the owner modifies in place.
	Write() ([]byte, error)
}

// KeyedBackend stores the keyed state of one subtask of a keyed operator
// (Flink's KeyedStateBackend). It is used by the subtask's goroutine only.
// Typed access goes through Value, List, Map, Reducing and Aggregating.
type KeyedBackend interface {
	// SetCurrentKey scopes every state access to key, whose key group is
	// keyGroup. The runtime calls it before each record or timer. key must
	// be comparable and encodable by the backend's key codec; keyGroup must
	// lie in KeyGroupRange (it panics otherwise).
	SetCurrentKey(key any, keyGroup int)
	// CurrentKey returns the key set by SetCurrentKey, nil before the first.
	CurrentKey() any
	// KeyGroupRange returns the key groups this backend owns.
	KeyGroupRange() keygroup.Range
	// Snapshot synchronously captures the state (references only, no
	// encoding) as of now (ms, processing time: entries expired at now are
	// not written).
	Snapshot(now int64) (Snapshot, error)
	// Restore loads blobs written by Snapshot.Write of any subtasks, of any
	// old parallelism, keeping only the key groups in KeyGroupRange. It
	// must be called once, before any state is registered; an empty blob
	// stands for a subtask without state.
	Restore(blobs [][]byte) error
	// Keys returns the keys that have a value in the named state, in no
	// particular order.
	Keys(stateName string) []any
	// CleanupExpired examines up to maxEntries keys, resuming where the
	// previous call stopped, and removes their expired entries (Flink's
	// incremental TTL cleanup); a backend may examine more, in proportion
	// to what was written since (Pebble: TTLConfig.QueryTimeAfterNumEntries).
	// It returns how many entries it removed.
	CleanupExpired(maxEntries int) int

	// ValueTable registers (or returns the already registered) state for
	// ValueState, ReducingState and AggregatingState.
	ValueTable(spec StateSpec) (ValueTable, error)
	// ListTable registers (or returns) the state for ListState.
	ListTable(spec StateSpec) (ListTable, error)
	// MapTable registers (or returns) the state for MapState.
	MapTable(spec StateSpec) (MapTable, error)
}

// SizeEstimator is a KeyedBackend that can estimate the bytes its live
// state takes, for the operator metric stateSize and EXPLAIN ANALYZE.
// Like the rest of the backend it is called by the subtask's goroutine
// only; it must be cheap enough to run every few seconds.
type SizeEstimator interface {
	// EstimatedSize returns the estimated bytes of the live keyed state.
	EstimatedSize() int64
}

// ValueTable is one registered single-value state, scoped to the backend's
// current key. Values are of the spec's codec's type.
type ValueTable interface {
	// Get returns the current key's value, which the caller may modify in
	// place and Put back. A backend that stores values by reference
	// returns the stored one, or — when a snapshot in flight may still be
	// encoding it — a deep copy (Copier, or the codec's encoding and
	// decoding) that it stores in its place.
	Get() (any, bool)
	// Put sets the current key's value.
	Put(v any)
	// Delete removes the current key's value.
	Delete()
}

// ListTable is one registered list state, scoped to the current key (keyed
// state) or to the subtask (operator state).
type ListTable interface {
	// Get returns a copy of the list, nil when empty. Its elements are
	// the stored ones, or deep copies, as ValueTable.Get says.
	Get() []any
	// Add appends v.
	Add(v any)
	// AddAll appends vs.
	AddAll(vs []any)
	// Update replaces the list with vs; an empty vs deletes it.
	Update(vs []any)
	// Delete removes the list.
	Delete()
}

// ListAppender is a ListTable that can append its list to a slice the
// caller reuses (ListState.AppendTo), instead of making a new one per Get.
type ListAppender interface {
	// AppendTo appends what Get would return to dst.
	AppendTo(dst []any) []any
}

// EncodingKeeper is an optional interface of a ListTable or ValueTable
// that keeps no value its codec keeps in place (InPlace), only the
// value's encoding, made when the value is added or put: a caller may
// then add or put values over memory it reuses (KeepsEncodings).
type EncodingKeeper interface {
	KeepsEncodings() bool
}

// MapTable is one registered map state, scoped to the current key.
type MapTable interface {
	// Get returns the value under user key uk: the stored one, or a deep
	// copy, as ValueTable.Get says; so do the values Range visits.
	Get(uk any) (any, bool)
	// Put sets the value under uk.
	Put(uk, v any)
	// Remove deletes uk.
	Remove(uk any)
	// Contains reports whether uk has a value.
	Contains(uk any) bool
	// Range calls f for each entry, in no particular order, until f returns
	// false. Entries f puts or removes may or may not be visited.
	Range(f func(uk, v any) bool)
	// IsEmpty reports whether the map has no entries.
	IsEmpty() bool
	// Delete removes the whole map.
	Delete()
}

// StringKeyGetter is a MapTable that reads a string user key without
// boxing it into an interface (an allocation per read) and without keeping
// it: GetString(uk) is Get(uk), and uk may be a view over memory the
// caller writes again afterwards (GetView). A write the read makes (a TTL
// refreshed on read) keeps a copy.
type StringKeyGetter interface {
	GetString(uk string) (any, bool)
}

// Ahead is one lookup of a batch's prefetch (Prefetcher): key Key, in
// key group KeyGroup, and in a map state its user key UK.
type Ahead struct {
	Key      string
	KeyGroup int
	UK       string
}

// Prefetcher is a table that prefetches: Prefetch looks up each of as,
// back to back, and keeps nothing. The lookups of a batch then wait
// for memory together rather than one after another, and the reads that
// follow find the entries in the CPU's caches. A hint: it changes
// nothing, a key outside the table's key groups is skipped.
type Prefetcher interface {
	Prefetch(as []Ahead)
}

// Redistribution says how an operator list state is divided among the
// subtasks after a restore (Flink's OperatorStateHandle.Mode).
type Redistribution uint8

const (
	// EvenSplit concatenates the lists of all old subtasks and gives each
	// new subtask a contiguous, nearly equal share (Flink's
	// getListState).
	EvenSplit Redistribution = iota
	// Union gives every new subtask the whole concatenation (Flink's
	// getUnionListState).
	Union
)

// String returns the mode's name, e.g. "even-split".
func (r Redistribution) String() string {
	switch r {
	case EvenSplit:
		return "even-split"
	case Union:
		return "union"
	}
	return fmt.Sprintf("Redistribution(%d)", uint8(r))
}

// OperatorStateBackend stores the non-keyed state of one subtask: named
// lists (Flink's OperatorStateBackend). It is used by the subtask's
// goroutine only. Typed access goes through OperatorList.
type OperatorStateBackend interface {
	// Snapshot synchronously captures the lists (references only).
	Snapshot() (Snapshot, error)
	// Restore loads blobs written by Snapshot.Write of every old subtask,
	// in old subtask order, and keeps this subtask's share: newIndex of
	// newParallelism. It must be called once, before any state is
	// registered; an empty blob stands for a subtask without state.
	Restore(blobs [][]byte, newIndex, newParallelism int) error
	// ListTable registers (or returns the already registered) list state.
	ListTable(spec StateSpec, mode Redistribution) (ListTable, error)
}
