package pebble

import (
	"fmt"

	"github.com/weirstream/weir/state"
)

// Factory creates Pebble backends: state.backend.type 'pebble' (and
// 'rocksdb', Flink's name for its disk backend). Options holds the memory
// and directory options; the per-subtask fields (key groups, codec, clock,
// name) come from each BackendSpec.
type Factory struct {
	Options Options
}

var _ state.BackendFactory = Factory{}

// Type returns "pebble".
func (Factory) Type() string { return "pebble" }

// NewKeyedBackend opens an empty Backend for spec in a new directory under
// Options.LocalDir.
func (f Factory) NewKeyedBackend(spec state.BackendSpec) (state.KeyedBackend, error) {
	o := f.Options
	o.KeyGroupRange, o.MaxParallelism, o.KeyCodec, o.Clock = spec.KeyGroupRange, spec.MaxParallelism, spec.KeyCodec, spec.Clock
	o.RestoreFiles = spec.Files
	o.Name = fmt.Sprintf("%s-%d", spec.Operator, spec.Subtask)
	b, err := New(o)
	if err != nil {
		return nil, err
	}
	return b, nil
}
