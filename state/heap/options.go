package heap

import (
	"time"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
)

// Options configures a keyed heap Backend.
type Options struct {
	// KeyGroupRange is the key groups the subtask owns, usually
	// keygroup.RangeFor(MaxParallelism, parallelism, index). No default:
	// the zero value is the single key group 0. An empty range is allowed.
	KeyGroupRange keygroup.Range
	// MaxParallelism is the number of key groups; it cannot change across
	// restores. Default keygroup.DefaultMaxParallelism (128).
	MaxParallelism int
	// KeyCodec encodes the stream's keys in snapshots. Default
	// state.AnyCodec{}.
	KeyCodec state.Codec[any]
	// Clock returns the processing time in ms since the epoch, for TTL. It
	// is called only by accesses to states with a TTL. Default
	// time.Now().UnixMilli.
	Clock func() int64
	// Incremental makes Snapshot return a state.IncrementalSnapshot whose
	// checkpoints write only the entries changed since the last one
	// (incremental.go; execution.checkpointing.incremental). Savepoints
	// stay full and canonical.
	Incremental bool
	// RestoreFiles is the checkpoint storage Restore fetches the files of
	// incremental checkpoints from; nil when not restoring one.
	RestoreFiles state.RestoreFiles
	// notPlaced keeps every list state in a listTable and every value
	// state in a valueTable (tests compare them with placedTable and
	// placedValueTable).
	notPlaced bool
}

// EnsureDefaults fills in the defaults of unset fields.
func (o *Options) EnsureDefaults() {
	if o.MaxParallelism == 0 {
		o.MaxParallelism = keygroup.DefaultMaxParallelism
	}
	if o.KeyCodec == nil {
		o.KeyCodec = state.AnyCodec{}
	}
	if o.Clock == nil {
		o.Clock = func() int64 { return time.Now().UnixMilli() }
	}
}

// Validate checks the options (after EnsureDefaults).
func (o *Options) Validate() error {
	if err := keyed.ValidateKeyGroups("heap", o.MaxParallelism, o.KeyGroupRange); err != nil {
		return err
	}
	return nil
}

// Factory creates heap backends: state.backend.type 'hashmap', Flink's
// HashMapStateBackend and Weir's default.
type Factory struct {
	// Incremental: see Options.Incremental.
	Incremental bool
}

var _ state.BackendFactory = Factory{}

// Type returns "hashmap".
func (Factory) Type() string { return "hashmap" }

// NewKeyedBackend returns an empty heap Backend for spec.
func (f Factory) NewKeyedBackend(spec state.BackendSpec) (state.KeyedBackend, error) {
	b, err := New(Options{KeyGroupRange: spec.KeyGroupRange, MaxParallelism: spec.MaxParallelism,
		KeyCodec: spec.KeyCodec, Clock: spec.Clock, Incremental: f.Incremental, RestoreFiles: spec.Files})
	if err != nil {
		return nil, err
	}
	return b, nil
}
