package exec

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// LocalAggOptions configures a LocalAggregate.
type LocalAggOptions struct {
	// Agg is the aggregation, as the GlobalAggregate after the exchange
	// has it. Two-phase aggregation takes no DISTINCT calls, and MIN and
	// MAX only over insert-only input (Agg.InputInsertOnly).
	Agg GroupAggOptions
	// BatchSize is how many groups the operator buffers before it flushes
	// them (Flink's table.exec.mini-batch.size). Default 1000.
	BatchSize int
	// Latency is table.exec.mini-batch.allow-latency: the buffer is
	// flushed this long (processing time) after its first group came, as
	// GroupAggOptions.MiniBatchLatency ends a batch, even when no more rows
	// come. Default 0: no time limit.
	Latency time.Duration
	// Slice, when set, makes the operator the local phase of a window
	// TVF's aggregation (Flink's LocalWindowAggregate): rows group by
	// Agg.GroupKeys and the slice of Slice.Window their rowtime falls in,
	// and a partial is [keys…, slice start, accumulator…] (see
	// WindowAggOptions.Slices). Default nil.
	Slice *SliceOptions
}

// SliceOptions place a row in a slice of a window TVF, as the
// WindowAggregate of the same options does.
type SliceOptions struct {
	Window    WindowSpec
	TimeField int
	Zone      *time.Location
}

// EnsureDefaults fills in the defaults of unset fields.
func (o *LocalAggOptions) EnsureDefaults() {
	if o.BatchSize == 0 {
		o.BatchSize = 1000
	}
}

// Validate checks the options (after EnsureDefaults).
func (o *LocalAggOptions) Validate() error {
	if err := o.Agg.Validate(); err != nil {
		return err
	}
	if err := checkAggs(o.Agg.Aggs, true); err != nil {
		return err
	}
	for _, c := range o.Agg.Aggs {
		if c.Kind >= ListAgg && c.Kind != Collect { // COLLECT merges its bags by adding counts
			return fmt.Errorf("%w: %s cannot run in two phases; set 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE'", ErrInvalidOptions, c)
		}
		if (c.Kind == Min || c.Kind == Max) && !o.Agg.InputInsertOnly {
			return fmt.Errorf("%w: %s over an updating input cannot run in two phases; set 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE'", ErrInvalidOptions, c)
		}
	}
	if o.Slice != nil {
		if err := o.Slice.Window.Validate(); err != nil {
			return err
		}
	}
	if o.BatchSize < 1 {
		return fmt.Errorf("%w: BatchSize is %d; use at least 1", ErrInvalidOptions, o.BatchSize)
	}
	if o.Latency < 0 {
		return fmt.Errorf("%w: Latency is %s; use 0 (no limit) or more", ErrInvalidOptions, o.Latency)
	}
	return nil
}

// LocalAggregate is the first phase of two-phase aggregation for hot keys
// (Flink's LocalGroupAggregate with mini-batch): before the keyed
// exchange, it folds the rows of each group into an accumulator in memory
// and emits one partial row per group — +I [keys…, accumulator…] — when
// BatchSize groups are buffered, Latency after the buffer's first group
// came, before a watermark, before a checkpoint barrier
// (PrepareSnapshotPreBarrier) and at the end of input. A GlobalAggregate
// merges the partials. The operator keeps no state across
// checkpoints: its buffer is always empty when one is taken.
type LocalAggregate struct {
	operator.Base
	opts     LocalAggOptions
	key      KeyFunc
	agg      aggregator
	order    []localKey // groups in the order they first appeared, for a stable output
	groups   map[localKey]*localGroup
	deadline batchDeadline
	zone     windowZone // Slice's
}

// localKey is a group's key, and its slice with LocalAggOptions.Slice.
type localKey struct {
	key   string
	slice int64
}

// localGroup is one group's partial accumulator, and the timestamp of its
// latest row: the partial carries it, so the GlobalAggregate's output has
// the timestamps a one-phase aggregate's would.
type localGroup struct {
	keys, acc []any
	ts        event.Timestamp
}

// NewLocalAggregate returns a LocalAggregate. It is not keyed.
func NewLocalAggregate(opts LocalAggOptions) (*LocalAggregate, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var zone windowZone
	if opts.Slice != nil {
		zone = newWindowZone(opts.Slice.Zone)
	}
	return &LocalAggregate{opts: opts, key: opts.Agg.Key(), zone: zone,
		agg:      aggregator{calls: opts.Agg.Aggs, insertOnly: opts.Agg.InputInsertOnly},
		groups:   map[localKey]*localGroup{},
		deadline: batchDeadline{latency: opts.Latency}}, nil
}

// ProcessElement folds the row into its group's partial accumulator.
func (l *LocalAggregate) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if err := checkWidth("LocalAggregate", row.Fields, l.opts.Agg.GroupKeys...); err != nil {
		return err
	}
	k := localKey{key: l.key(row.Fields)}
	if l.opts.Slice != nil {
		if k.slice, err = l.sliceOf(row.Fields); err != nil {
			return err
		}
	}
	g := l.groups[k]
	if g == nil {
		g = &localGroup{keys: pick(row.Fields, l.opts.Agg.GroupKeys), acc: l.agg.newAcc()}
		if l.opts.Slice != nil {
			g.keys = append(g.keys, k.slice)
		}
		if len(l.order) == 0 {
			l.deadline.begin(l.Ctx, l.flush)
		}
		l.groups[k] = g
		l.order = append(l.order, k)
	}
	noSets := func(int) multiset { return nil } // Validate rules out DISTINCT and retracting MIN/MAX
	if err := l.agg.accumulate(g.acc, row.Fields, !row.Kind.IsAccumulate(), noSets); err != nil {
		return fmt.Errorf("sql/exec: LocalAggregate: %w", err)
	}
	g.ts = r.Timestamp
	if len(l.groups) >= l.opts.BatchSize || l.deadline.expired(l.Ctx.Now()) {
		l.flush()
	}
	return nil
}

// sliceOf is the start of the slice a row's rowtime falls in.
func (l *LocalAggregate) sliceOf(fields []any) (int64, error) {
	s := l.opts.Slice
	if err := checkWidth("LocalWindowAggregate", fields, s.TimeField); err != nil {
		return 0, err
	}
	ts, err := timeMillis(fields[s.TimeField])
	if err != nil {
		return 0, fmt.Errorf("sql/exec: LocalWindowAggregate: rowtime field %d: %w", s.TimeField, err)
	}
	return s.Window.sliceStart(l.zone.local(ts)), nil
}

// flush emits every buffered partial and empties the buffer.
func (l *LocalAggregate) flush() {
	l.deadline.stop()
	for _, k := range l.order {
		g := l.groups[k]
		emitRow(l.Ctx, concatRow(event.Insert, g.keys, g.acc), g.ts)
	}
	clear(l.groups)
	l.order = l.order[:0]
}

// ProcessWatermark flushes, then forwards wm: the partials belong before it.
func (l *LocalAggregate) ProcessWatermark(wm event.Timestamp) error {
	l.flush()
	return l.Base.ProcessWatermark(wm)
}

// PrepareSnapshotPreBarrier flushes, so the checkpoint needs no state of
// this operator: the partials travel ahead of the barrier and land in the
// GlobalAggregate's state.
func (l *LocalAggregate) PrepareSnapshotPreBarrier(event.CheckpointID) error {
	l.flush()
	return nil
}

// Finish flushes at the end of input.
func (l *LocalAggregate) Finish() error {
	l.flush()
	return nil
}

// NewGlobalAggregate returns the second phase of two-phase aggregation: a
// GroupAggregate whose input is a LocalAggregate's partial rows [keys…,
// accumulator…], keyed by GlobalKey(opts). opts are the LocalAggregate's
// (the same GroupAggOptions); the output is that of a one-phase
// GroupAggregate with those options.
func NewGlobalAggregate(opts GroupAggOptions) (*GroupAggregate, error) {
	local := LocalAggOptions{Agg: opts, BatchSize: 1}
	if err := local.Validate(); err != nil {
		return nil, err
	}
	g, err := NewGroupAggregate(opts)
	if err != nil {
		return nil, err
	}
	g.partial = true
	g.opts.GroupKeys = firstN(len(opts.GroupKeys))
	g.key = GlobalKey(opts)
	// merging partial extremes needs no value multisets: two-phase MIN and
	// MAX exist only for insert-only input.
	g.agg.insertOnly = true
	return g, nil
}

// GlobalKey is the KeyFunc of a GlobalAggregate's input: the group keys
// lead every partial row.
func GlobalKey(opts GroupAggOptions) KeyFunc { return FieldKey(firstN(len(opts.GroupKeys))...) }

func firstN(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
