package heap

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

// maxMaxParallelism is Flink's upper bound on the number of key groups.
const maxMaxParallelism = 1 << 15

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
	if o.MaxParallelism < 1 || o.MaxParallelism > maxMaxParallelism {
		return fmt.Errorf("heap: max parallelism %d out of range [1, %d]", o.MaxParallelism, maxMaxParallelism)
	}
	r := o.KeyGroupRange
	if r.Len() > 0 && (r.Start < 0 || r.End >= o.MaxParallelism) {
		return fmt.Errorf("heap: key group range %v outside [0, %d); use keygroup.RangeFor", r, o.MaxParallelism)
	}
	return nil
}
