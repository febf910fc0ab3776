package exec

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// OverAggOptions configures an OverAggregate:
//
//	agg(…) OVER (PARTITION BY keys ORDER BY time
//	             ROWS|RANGE BETWEEN n|UNBOUNDED PRECEDING AND CURRENT ROW)
type OverAggOptions struct {
	// PartitionKeys are the PARTITION BY fields; none for one partition
	// (the input then goes to one subtask).
	PartitionKeys []int
	// RowTime orders by event time, read from TimeField (a time.Time or
	// int64 ms): rows wait in state until the watermark passes them and
	// are aggregated in timestamp order. Default false: processing time,
	// rows are aggregated as they arrive.
	RowTime   bool
	TimeField int
	// Rows makes the frame count rows (ROWS); default false: RANGE, where
	// rows of equal time are peers, each seeing the others.
	Rows bool
	// Preceding bounds the frame: the number of rows before the current one
	// (ROWS) or the time in ms before it (RANGE, the frame holds rows at t
	// with t >= now − Preceding). Negative: UNBOUNDED PRECEDING.
	Preceding int64
	// Aggs are the aggregate calls; the output row is the input row with
	// their results appended.
	Aggs []AggCall
}

// Validate checks the options.
func (o *OverAggOptions) Validate() error {
	if len(o.Aggs) == 0 {
		return fmt.Errorf("%w: OverAggregate has no aggregate calls", ErrInvalidOptions)
	}
	if err := checkFields("PartitionKeys", o.PartitionKeys, 0); err != nil {
		return err
	}
	if o.RowTime {
		if err := checkFields("TimeField", []int{o.TimeField}, 0); err != nil {
			return err
		}
	}
	return checkAggs(o.Aggs, false)
}

// Key is the KeyFunc the operator's input must be partitioned by.
func (o *OverAggOptions) Key() KeyFunc { return FieldKey(o.PartitionKeys...) }

func (o *OverAggOptions) bounded() bool { return o.Preceding >= 0 }

// OverAggregate is Flink's OVER aggregation over an insert-only input: for
// every row it emits the row with the aggregates of its frame appended
// (+I only). Per partition key it keeps an accumulator; a bounded frame
// also keeps the rows still in it and retracts each as it leaves (so MIN
// and MAX keep their values' counts).
//
// On event time a row waits in state, under its timestamp, for the
// watermark; an event-time timer at the timestamp then aggregates the
// partition's rows of that time, in arrival order, and emits them stamped
// with it. A row at or behind the watermark when it arrives is late:
// dropped and counted in Metrics.LateDropped (Flink's bounded functions
// compare with the partition's last fired timestamp instead, which can
// only be at or behind the watermark: a row they keep that we drop would
// be aggregated after rows later than it). On processing time a row is
// aggregated when it arrives, at the operator's clock.
type OverAggregate struct {
	operator.Base
	opts  OverAggOptions
	key   KeyFunc
	agg   aggregator
	reads []int
	// acc is the partition's accumulator.
	acc state.ValueState[[]any]
	// pending holds the rows waiting for the watermark (event time), by
	// timestamp; frame the rows of a bounded frame, by their time, each
	// list in arrival order.
	pending rowtimeBuffer
	frame   state.MapState[int64, []any]
	sets    []valueSet
	wm      watermarkKeeper
}

var _ operator.Operator = (*OverAggregate)(nil)

// NewOverAggregate returns an OverAggregate; its input must be keyed by
// opts.Key().
func NewOverAggregate(opts OverAggOptions) (*OverAggregate, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	reads := slices.Clone(opts.PartitionKeys)
	if opts.RowTime {
		reads = append(reads, opts.TimeField)
	}
	return &OverAggregate{opts: opts, key: opts.Key(), reads: reads,
		agg: aggregator{calls: opts.Aggs, insertOnly: !opts.bounded()}}, nil
}

// Open registers the state and makes the operator the timers' target.
func (o *OverAggregate) Open(ctx *operator.Context) error {
	if err := o.Base.Open(ctx); err != nil {
		return err
	}
	o.acc = state.Value(ctx.Keyed, state.ValueDescriptor[[]any]{Name: "over-acc", Codec: RowCodec{}})
	o.pending = openRowtimeBuffer(ctx, "over-pending")
	o.frame = state.Map(ctx.Keyed, state.MapDescriptor[int64, []any]{Name: "over-frame", ValueCodec: RowCodec{}})
	o.sets = make([]valueSet, len(o.opts.Aggs))
	for i := range o.opts.Aggs {
		if o.agg.needsSet(i) {
			o.sets[i] = valueSet{m: state.Map(ctx.Keyed, state.MapDescriptor[string, []any]{
				Name: fmt.Sprintf("over-values-%d", i), ValueCodec: RowCodec{}})}
		}
	}
	if !o.opts.RowTime {
		return nil
	}
	ctx.Timers.SetTriggerable(o)
	var err error
	o.wm, err = openWatermark(ctx)
	return err
}

func (o *OverAggregate) set(i int) multiset { return o.sets[i] }

// SnapshotState keeps the watermark with the state (see watermarkKeeper).
func (o *OverAggregate) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	o.wm.save(o.Ctx)
	return o.Base.SnapshotState(id)
}

// ProcessElement aggregates a row (processing time) or buffers it until
// the watermark passes it (event time).
func (o *OverAggregate) ProcessElement(r event.Record) error {
	row, err := appendOnlyRow(o.Ctx, "OverAggregate", "OVER aggregation", r.Value, o.reads, o.key)
	if err != nil {
		return err
	}
	if !o.opts.RowTime {
		return o.aggregate(o.Ctx.Now(), []any{row.Fields}, r.Timestamp)
	}
	return o.pending.bufferRow(o.Ctx, "OverAggregate", row.Fields, o.opts.TimeField)
}

// OnTimer aggregates the partition's rows at the timer's time.
func (o *OverAggregate) OnTimer(t operator.Timer) error {
	rows, ok := o.pending.take(t.Timestamp)
	if !ok {
		return nil
	}
	return o.aggregate(t.Timestamp, rows, t.Timestamp)
}

// ProcessWatermark fires the timers the watermark passed and forwards it.
func (o *OverAggregate) ProcessWatermark(wm event.Timestamp) error {
	if !o.opts.RowTime {
		return o.Base.ProcessWatermark(wm)
	}
	return forwardWatermark(o.Ctx, wm)
}

// aggregate folds batch, rows all at time now, into the current partition's
// frame and emits each with its frame's results, stamped ts.
func (o *OverAggregate) aggregate(now int64, batch []any, ts event.Timestamp) error {
	acc, ok := o.acc.Value()
	if !ok {
		acc = o.agg.newAcc()
	}
	if o.opts.bounded() && !o.opts.Rows {
		if err := o.expireRange(acc, now-o.opts.Preceding); err != nil {
			return err
		}
	}
	if o.opts.bounded() {
		cur, _ := o.frame.Get(now)
		o.frame.Put(now, append(slices.Clip(cur), batch...))
	}
	var peers [][]any
	for _, r := range batch {
		fields := r.([]any)
		if err := o.agg.accumulate(acc, fields, false, o.set); err != nil {
			return fmt.Errorf("sql/exec: OverAggregate: %w", err)
		}
		if o.opts.bounded() && o.opts.Rows && rows(acc) > o.opts.Preceding+1 {
			if err := o.retractOldest(acc); err != nil {
				return err
			}
		}
		if !o.opts.Rows { // RANGE: peers see each other, emitted below
			peers = append(peers, fields)
			continue
		}
		emitRow(o.Ctx, concatRow(event.Insert, fields, o.agg.result(acc)), ts)
	}
	if len(peers) > 0 {
		res := o.agg.result(acc)
		for _, fields := range peers {
			emitRow(o.Ctx, concatRow(event.Insert, fields, res), ts)
		}
	}
	o.acc.Update(acc)
	return nil
}

// frameTimes returns the times of the rows in the frame, ascending.
func (o *OverAggregate) frameTimes() []int64 {
	var ts []int64
	o.frame.Range(func(t int64, _ []any) bool {
		ts = append(ts, t)
		return true
	})
	slices.Sort(ts)
	return ts
}

// retractOldest retracts the frame's first row (ROWS n PRECEDING).
func (o *OverAggregate) retractOldest(acc []any) error {
	ts := o.frameTimes()
	if len(ts) == 0 {
		return nil
	}
	rows, _ := o.frame.Get(ts[0])
	if err := o.agg.accumulate(acc, rows[0].([]any), true, o.set); err != nil {
		return fmt.Errorf("sql/exec: OverAggregate: %w", err)
	}
	if len(rows) == 1 {
		o.frame.Remove(ts[0])
	} else {
		o.frame.Put(ts[0], rows[1:])
	}
	return nil
}

// expireRange retracts the frame's rows before start (RANGE PRECEDING).
func (o *OverAggregate) expireRange(acc []any, start int64) error {
	for _, t := range o.frameTimes() {
		if t >= start {
			break
		}
		rows, _ := o.frame.Get(t)
		for _, r := range rows {
			if err := o.agg.accumulate(acc, r.([]any), true, o.set); err != nil {
				return fmt.Errorf("sql/exec: OverAggregate: %w", err)
			}
		}
		o.frame.Remove(t)
	}
	return nil
}
