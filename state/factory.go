package state

import (
	"github.com/weirstream/weir/keygroup"
)

// BackendSpec is what a BackendFactory needs to create the keyed backend
// of one subtask of a keyed operator.
type BackendSpec struct {
	// Operator is the operator's UID and Subtask its index; a backend that
	// keeps files names its working directory after them.
	Operator string
	Subtask  int
	// KeyGroupRange is the key groups the subtask owns.
	KeyGroupRange keygroup.Range
	// MaxParallelism is the number of key groups.
	MaxParallelism int
	// KeyCodec encodes the stream's keys.
	KeyCodec Codec[any]
	// Clock returns the processing time in ms, for TTL.
	Clock func() int64
	// Files is the storage of the checkpoint being restored, from which a
	// backend with incremental checkpoints fetches the files its
	// manifests name; nil when not restoring a checkpoint.
	Files RestoreFiles
}

// BackendFactory creates keyed state backends (Flink's StateBackend, chosen
// by state.backend.type). The runtime calls NewKeyedBackend once per
// subtask of a keyed operator and attempt; when the returned backend is
// also an io.Closer, the runtime closes it after the subtask has ended and
// its last snapshot is written (a disk backend removes its files then).
type BackendFactory interface {
	// Type is the backend's state.backend.type, e.g. "hashmap".
	Type() string
	// NewKeyedBackend returns an empty backend for spec.
	NewKeyedBackend(spec BackendSpec) (KeyedBackend, error)
}
