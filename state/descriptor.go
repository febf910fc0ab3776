package state

import (
	"fmt"
	"time"
)

// TTLUpdateType says which accesses refresh an entry's time-to-live
// (Flink's StateTtlConfig.UpdateType).
type TTLUpdateType uint8

const (
	// OnCreateAndWrite refreshes the TTL when the entry is created or
	// written. The default.
	OnCreateAndWrite TTLUpdateType = iota
	// OnReadAndWrite also refreshes it when the entry is read.
	OnReadAndWrite
)

// TTLVisibility says whether an expired entry that was not yet cleaned up
// may be returned (Flink's StateTtlConfig.StateVisibility).
type TTLVisibility uint8

const (
	// NeverReturnExpired: an expired entry is never returned. The default,
	// and the only visibility Weir offers.
	NeverReturnExpired TTLVisibility = iota
)

// TTLConfig gives keyed state a time-to-live in processing time (Flink's
// StateTtlConfig). Each entry — a value, a list element, a map entry —
// carries the time it was last refreshed; it expires TTL after that. Expired
// entries are never returned; they are removed when read, left out of
// snapshots, and swept by KeyedBackend.CleanupExpired.
type TTLConfig struct {
	// TTL is the time-to-live; it must be at least 1ms.
	TTL time.Duration
	// UpdateType says which accesses refresh the TTL. Default
	// OnCreateAndWrite.
	UpdateType TTLUpdateType
	// Visibility of expired entries. Default NeverReturnExpired.
	Visibility TTLVisibility
	// QueryTimeAfterNumEntries is Flink's
	// cleanupInRocksdbCompactFilter(queryTimeAfterNumEntries). Pebble has
	// no compaction filter, so the Pebble backend sweeps the state in
	// proportion to its writes instead: for every QueryTimeAfterNumEntries
	// entries written to it, the subtask examines as many of its keys (at
	// its next processing-time tick, from where the last such sweep
	// stopped, with one reading of the clock) and removes the expired
	// entries. So expired state goes at about the rate state is written,
	// without waiting for a read. Default 1000 (Flink's); negative: no
	// write-driven sweep. The heap backend ignores it.
	QueryTimeAfterNumEntries int64
}

// DefaultQueryTimeAfterNumEntries is QueryTimeAfterNumEntries when unset
// (Flink's default).
const DefaultQueryTimeAfterNumEntries = 1000

// Millis returns the TTL in milliseconds, 0 for a nil config (no TTL).
func (c *TTLConfig) Millis() int64 {
	if c == nil {
		return 0
	}
	return c.TTL.Milliseconds()
}

func (c *TTLConfig) validate() error {
	if c != nil && c.TTL < time.Millisecond {
		return fmt.Errorf("TTL %v is below 1ms; set TTLConfig.TTL or leave TTL nil", c.TTL)
	}
	if c != nil && c.UpdateType > OnReadAndWrite {
		return fmt.Errorf("unknown TTL update type %d", c.UpdateType)
	}
	return nil
}

// ValueDescriptor names a ValueState (Flink's ValueStateDescriptor).
type ValueDescriptor[T any] struct {
	// Name identifies the state within the operator; it is stored in
	// snapshots, so renaming a state loses it on restore.
	Name string
	// Codec encodes values. Default CodecFor[T]().
	Codec Codec[T]
	// TTL, if set, expires values. Default nil: no TTL.
	TTL *TTLConfig
}

// ListDescriptor names a ListState (Flink's ListStateDescriptor).
type ListDescriptor[T any] struct {
	// Name identifies the state within the operator.
	Name string
	// Codec encodes elements. Default CodecFor[T]().
	Codec Codec[T]
	// TTL, if set, expires each element on its own. Default nil. Operator
	// state has no TTL.
	TTL *TTLConfig
}

// MapDescriptor names a MapState (Flink's MapStateDescriptor).
type MapDescriptor[K comparable, V any] struct {
	// Name identifies the state within the operator.
	Name string
	// KeyCodec encodes the map's keys (not the stream's key). Default
	// CodecFor[K]().
	KeyCodec Codec[K]
	// ValueCodec encodes the map's values. Default CodecFor[V]().
	ValueCodec Codec[V]
	// TTL, if set, expires each map entry on its own. Default nil.
	TTL *TTLConfig
}

// ReducingDescriptor names a ReducingState (Flink's
// ReducingStateDescriptor).
type ReducingDescriptor[T any] struct {
	// Name identifies the state within the operator.
	Name string
	// ReduceFunc combines the stored value a with an added value b.
	// Required.
	ReduceFunc func(a, b T) T
	// Codec encodes values. Default CodecFor[T]().
	Codec Codec[T]
	// TTL, if set, expires the value. Default nil.
	TTL *TTLConfig
}

// AggregateFunction folds inputs into an accumulator and derives a result
// from it (Flink's AggregateFunction).
type AggregateFunction[IN, ACC, OUT any] interface {
	// CreateAccumulator returns a new, empty accumulator.
	CreateAccumulator() ACC
	// Add folds value into acc and returns the new accumulator; it may
	// modify and return acc.
	Add(value IN, acc ACC) ACC
	// GetResult derives the result from an accumulator.
	GetResult(acc ACC) OUT
	// Merge combines two accumulators (merging windows).
	Merge(a, b ACC) ACC
}

// AggregatingDescriptor names an AggregatingState (Flink's
// AggregatingStateDescriptor).
type AggregatingDescriptor[IN, ACC, OUT any] struct {
	// Name identifies the state within the operator.
	Name string
	// AggregateFunc aggregates the added values. Required.
	AggregateFunc AggregateFunction[IN, ACC, OUT]
	// Codec encodes the accumulator. Default CodecFor[ACC]().
	Codec Codec[ACC]
	// TTL, if set, expires the accumulator. Default nil.
	TTL *TTLConfig
}
