package exec

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/binrow"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
)

// GroupAggOptions configures a GroupAggregate (and a GlobalAggregate).
type GroupAggOptions struct {
	// GroupKeys are the input fields of GROUP BY. The output row is
	// [GroupKeys' values…, Aggs' results…]. Empty: one global group.
	GroupKeys []int
	// Aggs are the aggregate calls. None is SELECT DISTINCT: the result row
	// is the group keys, emitted when the group appears and retracted when
	// its last row is (the group's row count is kept regardless).
	Aggs []AggCall
	// InputInsertOnly says the input has only +I rows, so MIN and MAX keep
	// just the extreme instead of a value → count map per group. A
	// retraction is then an error. Default false: any changelog.
	InputInsertOnly bool
	// NoUpdateBefore emits only +U on a change, not -U then +U (upsert
	// output, when the sink has the group keys as its primary key).
	// Default false: -U old, +U new (retract output).
	NoUpdateBefore bool
	// EmitUnchanged emits -U/+U even when a group's result did not change
	// (Flink does so when state TTL is on, so downstream state is
	// refreshed too). Default false: emit only when the result changed.
	EmitUnchanged bool
	// StateTTL is table.exec.state.ttl: a group untouched this long (in
	// processing time) is forgotten; a later row starts it afresh. Default
	// 0: keep state forever.
	StateTTL time.Duration
	// MiniBatchSize turns on Flink's mini-batch aggregation
	// (table.exec.mini-batch.enabled, …size): rows are folded into
	// in-memory accumulators, and each group's state is written and its
	// change emitted once per batch instead of once per row. A batch ends
	// after this many rows, MiniBatchLatency after its first row, before a
	// checkpoint barrier and at the end of the input. (Not on watermarks:
	// a group aggregation's output has no event time that a watermark
	// could overtake.) Default 0: off.
	MiniBatchSize int
	// MiniBatchLatency is table.exec.mini-batch.allow-latency: a batch
	// ends this long (processing time) after its first row, whether or
	// not more rows come — a processing-time callback ends it, or the
	// first row after the time if that comes first. Default 0: no time
	// limit.
	MiniBatchLatency time.Duration
	// Types, when set, are the input rows' field types, and each group's
	// accumulator is kept as a binary row (package sql/binrow) when
	// binrow holds every call's running value (AccTypes): Pebble stores
	// and reads its bytes as they are instead of RowCodec's encoding; the
	// heap keeps the values and encodes them only at a snapshot. A
	// checkpoint of the earlier format is read as it is. Default nil:
	// RowCodec values.
	Types []types.Type
}

// AccTypes are the field types of a group's accumulator as a binary row
// — [rows, n0, v0, n1, v1, …], see aggregator — and whether binrow holds
// it: Types are set, and every call is a COUNT, SUM, AVG, MIN or MAX, or
// a FIRST_VALUE or LAST_VALUE over insert-only input, of a type binrow
// holds (the others keep lists, moments or multisets).
func (o *GroupAggOptions) AccTypes() ([]types.Type, bool) {
	if o.Types == nil {
		return nil, false
	}
	count := types.Type{Kind: types.BigInt}
	ts := []types.Type{count}
	for _, c := range o.Aggs {
		v, ok := accValueType(c, o.Types, o.InputInsertOnly)
		if !ok {
			return nil, false
		}
		ts = append(ts, count, v)
	}
	return ts, binrow.Supports(ts)
}

// accValueType is the type of call c's running value vi.
func accValueType(c AggCall, in []types.Type, insertOnly bool) (types.Type, bool) {
	null := types.Type{Kind: types.Null, Nullable: true}
	if c.Kind == CountStar || c.Kind == Count {
		return null, true // counts keep no value
	}
	if c.Arg >= len(in) {
		return types.Type{}, false
	}
	t := in[c.Arg]
	t.Nullable, t.TimeAttr = true, ""
	switch c.Kind {
	case Sum, Avg:
		switch {
		case t.Kind == types.Null:
			return null, true
		case t.IsInteger():
			return types.Type{Kind: types.BigInt, Nullable: true}, true
		case t.Kind == types.Float || t.Kind == types.Double:
			return types.Type{Kind: types.Double, Nullable: true}, true
		case t.Kind == types.Decimal:
			// A sum at the argument's scale fits a slot up to 18 digits;
			// binrow keeps a longer one exactly in the tail.
			return types.Type{Kind: types.Decimal, Precision: 18, Scale: t.Scale, Nullable: true}, true
		}
		return types.Type{}, false
	case Min, Max:
		return t, true
	case FirstValue, LastValue:
		return t, insertOnly
	}
	return types.Type{}, false
}

// Validate checks the options.
func (o *GroupAggOptions) Validate() error {
	if err := checkFields("GroupKeys", o.GroupKeys, 0); err != nil {
		return err
	}
	if err := checkAggs(o.Aggs, false); err != nil {
		return err
	}
	return checkTTL(o.StateTTL)
}

// Key is the KeyFunc the operator's input must be partitioned by.
func (o *GroupAggOptions) Key() KeyFunc { return FieldKey(o.GroupKeys...) }

// GroupAggregate is GROUP BY with aggregates over a changelog (Flink's
// GroupAggFunction): per group it keeps an accumulator in keyed state and,
// for every input row, emits the change of the group's result: +I for the
// first result, -U old / +U new on a change, -D when the group's last row
// is retracted. -U and -D input rows retract.
type GroupAggregate struct {
	operator.Base
	opts    GroupAggOptions
	key     KeyFunc
	agg     aggregator
	partial bool // input rows are LocalAggregate's partial accumulators
	acc     state.ValueState[stateRow]
	codec   stateRowCodec // acc's: binary rows when AccTypes holds
	// encodes: acc keeps only its rows' encodings (state.KeepsEncodings),
	// so an accumulator is stored as a binary row built in enc, reused.
	encodes bool
	enc     []byte
	cache   accCache       // with encodes: accumulators of a few groups as fields
	sets    []valueSet     // per call; the zero valueSet when unused
	groups  []*distinctSet // per distinct group (aggregator.groups)
	batch   miniBatch
	ahead   batchPrefetch // Prefetch's
}

// miniBatch holds the groups a mini-batch touched, in first-touch order.
type miniBatch struct {
	groups   map[string]*batchGroup
	order    []*batchGroup
	rows     int
	deadline batchDeadline
}

// batchGroup is one group's accumulator during a batch, and its result
// before the batch.
type batchGroup struct {
	key     string
	keys    []any
	acc     []any
	prev    []any
	hadPrev bool
	ts      event.Timestamp
}

// NewGroupAggregate returns a GroupAggregate; its input must be keyed by
// opts.Key().
func NewGroupAggregate(opts GroupAggOptions) (*GroupAggregate, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	g := &GroupAggregate{opts: opts, key: opts.Key(),
		agg:   aggregator{calls: opts.Aggs, insertOnly: opts.InputInsertOnly},
		batch: miniBatch{deadline: batchDeadline{latency: opts.MiniBatchLatency}},
		codec: stateRowCodec{what: "GroupAggregate accumulator"}}
	g.agg.shareDistinct()
	g.agg.groupSet = func(i int) *distinctSet { return g.groups[i] }
	if ts, ok := opts.AccTypes(); ok {
		var err error
		if g.codec.layout, err = binrow.NewLayout(ts); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Open registers the operator's state.
func (g *GroupAggregate) Open(ctx *operator.Context) error {
	if err := g.Base.Open(ctx); err != nil {
		return err
	}
	ttl := ttlConfig(g.opts.StateTTL)
	g.acc = state.Value(ctx.Keyed, state.ValueDescriptor[stateRow]{Name: "group-acc", Codec: g.codec.stateCodec(), TTL: ttl})
	g.encodes = state.KeepsEncodings(g.acc)
	g.cache = newAccCache(g.encodes)
	g.sets = make([]valueSet, len(g.opts.Aggs))
	for i := range g.opts.Aggs {
		if g.agg.needsSet(i) {
			g.sets[i] = valueSet{m: state.Map(ctx.Keyed, state.MapDescriptor[string, []any]{
				Name: fmt.Sprintf("group-values-%d", i), ValueCodec: RowCodec{}, TTL: ttl})}
		}
	}
	g.groups = make([]*distinctSet, len(g.agg.groups))
	for gi, dg := range g.agg.groups {
		g.groups[gi] = g.distinctSet(ctx.Keyed, dg, ttl)
	}
	if ctx.Restored {
		return g.refuseUnsharedDistinct(ctx.Keyed)
	}
	return nil
}

// distinctSet registers distinct group dg's map: of presence bits over
// an insert-only input, of counts and values otherwise (see distinct.go).
func (g *GroupAggregate) distinctSet(keyed state.KeyedBackend, dg distinctGroup, ttl *state.TTLConfig) *distinctSet {
	name := fmt.Sprintf("group-distinct-%d", dg.calls[0])
	s := &distinctSet{refresh: ttl != nil}
	if g.opts.InputInsertOnly {
		s.bits = state.Map(keyed, state.MapDescriptor[string, uint64]{Name: name, ValueCodec: distinctBitsCodec{}, TTL: ttl})
	} else {
		s.m = state.Map(keyed, state.MapDescriptor[string, *distinctEntry]{Name: name, ValueCodec: distinctEntryCodec{}, TTL: ttl})
	}
	return s
}

// refuseUnsharedDistinct fails a restore of a checkpoint from before
// shared distinct maps (one "group-values-<call>" map per DISTINCT call),
// whose values the operator would otherwise not see: its DISTINCT results
// would restart from nothing.
func (g *GroupAggregate) refuseUnsharedDistinct(keyed state.KeyedBackend) error {
	for _, dg := range g.agg.groups {
		for _, i := range dg.calls {
			if name := fmt.Sprintf("group-values-%d", i); len(keyed.Keys(name)) > 0 {
				return fmt.Errorf("%w: GroupAggregate: the checkpoint keeps the values of %s in state %q, the format before DISTINCT calls over one field shared a map; "+
					"this Weir cannot read it: start the query without state, or restore it with the Weir that wrote the checkpoint",
					state.ErrIncompatible, g.opts.Aggs[i], name)
			}
		}
	}
	return nil
}

func (g *GroupAggregate) set(i int) multiset { return g.sets[i] }

// ProcessElement folds a row into its group and emits the change (with
// mini-batches, folds it and emits at the batch's end).
func (g *GroupAggregate) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if err := checkWidth("GroupAggregate", row.Fields, g.opts.GroupKeys...); err != nil {
		return err
	}
	if g.opts.MiniBatchSize > 0 {
		return g.batchElement(row, r.Timestamp)
	}
	setKey(g.Ctx, g.ahead.key(1, row.Fields, g.key))
	stored, ok := g.acc.Value()
	if !ok && !row.Kind.IsAccumulate() {
		return nil // retracting from a group we do not know (expired by TTL)
	}
	var acc, prev []any
	if ok {
		acc = g.accOf(stored) // never modify state in place
		prev = g.agg.result(acc)
	} else {
		acc = g.agg.newAcc()
	}
	if g.partial {
		err = g.mergePartial(acc, row.Fields)
	} else {
		err = g.agg.accumulate(acc, row.Fields, !row.Kind.IsAccumulate(), g.set)
	}
	if err != nil {
		return fmt.Errorf("sql/exec: GroupAggregate: %w", err)
	}
	keys := groupKeys(row.Fields, g.opts.GroupKeys)
	g.update(keys, acc, prev, ok, r.Timestamp)
	return nil
}

func (g *GroupAggregate) mergePartial(acc, fields []any) error {
	k := len(g.opts.GroupKeys)
	if len(fields) != k+len(acc) {
		return fmt.Errorf("%w: partial row of %d fields, want %d keys and %d accumulator fields", ErrType, len(fields), k, len(acc))
	}
	return g.agg.merge(acc, fields[k:])
}

// groupKeys are the group key fields of a row as the group's rows carry
// them: DOUBLE -0.0 is 0.0, as the key (RowKey) has it, so that a group
// that 0.0 and -0.0 rows both update retracts the very row it emitted.
func groupKeys(fields []any, idx []int) []any {
	keys := pick(fields, idx)
	for i, v := range keys {
		if f, ok := v.(float64); ok && f == 0 {
			keys[i] = 0.0
		}
	}
	return keys
}

// update stores acc and emits the group's change from prev (when hadPrev).
func (g *GroupAggregate) update(keys, acc, prev []any, hadPrev bool, ts event.Timestamp) {
	if rows(acc) <= 0 {
		if hadPrev {
			emitRow(g.Ctx, concatRow(event.Delete, keys, prev), ts)
		}
		g.clear()
		return
	}
	g.acc.Update(g.stored(acc))
	g.cache.put(g.currentKey(), acc)
	next := g.agg.result(acc)
	switch {
	case !hadPrev:
		emitRow(g.Ctx, concatRow(event.Insert, keys, next), ts)
	case !g.opts.EmitUnchanged && sameRow(prev, next):
		// unchanged: nothing to tell downstream
	default:
		if !g.opts.NoUpdateBefore {
			emitRow(g.Ctx, concatRow(event.UpdateBefore, keys, prev), ts)
		}
		emitRow(g.Ctx, concatRow(event.UpdateAfter, keys, next), ts)
	}
}

// stored is acc as state keeps it: a binary row built in g.enc when acc
// keeps only encodings, else its fields, encoded only by a snapshot.
func (g *GroupAggregate) stored(acc []any) stateRow {
	if g.encodes {
		return g.codec.over(&g.enc, acc)
	}
	return fieldsRow(acc)
}

// accOf is the current group's accumulator, stored, as fields for the
// caller to modify: a copy of the cached ones when the cache holds them
// (accCache), else stored decoded.
func (g *GroupAggregate) accOf(stored stateRow) []any {
	if acc, ok := g.cache.get(g.currentKey()); ok {
		return append([]any(nil), acc...)
	}
	return g.codec.fieldsCopy(stored)
}

// currentKey is the key of the group being updated (setKey's).
func (g *GroupAggregate) currentKey() string {
	k, _ := g.Ctx.Keyed.CurrentKey().(string)
	return k
}

func (g *GroupAggregate) clear() {
	g.acc.Clear()
	for _, s := range g.sets {
		if s.m != nil {
			s.clear()
		}
	}
	for _, s := range g.groups {
		s.clear()
	}
}

// batchElement folds a row into its group's batch accumulator.
func (g *GroupAggregate) batchElement(row event.Row, ts event.Timestamp) error {
	k := g.ahead.key(1, row.Fields, g.key)
	setKey(g.Ctx, k) // DISTINCT and MIN/MAX value sets are state, updated as rows come
	b := &g.batch
	bg := b.groups[k]
	if bg == nil {
		stored, ok := g.acc.Value()
		if !ok && !row.Kind.IsAccumulate() {
			return nil // retracting from a group we do not know (expired by TTL)
		}
		bg = &batchGroup{key: k, keys: groupKeys(row.Fields, g.opts.GroupKeys), hadPrev: ok}
		if ok {
			bg.acc = g.accOf(stored)
			bg.prev = g.agg.result(bg.acc)
		} else {
			bg.acc = g.agg.newAcc()
		}
		if b.groups == nil {
			b.groups = map[string]*batchGroup{}
		}
		if len(b.order) == 0 {
			b.deadline.begin(g.Ctx, g.flushBatch)
		}
		b.groups[k] = bg
		b.order = append(b.order, bg)
	} else if !row.Kind.IsAccumulate() && rows(bg.acc) <= 0 {
		return nil // the group emptied in this batch: as if forgotten
	}
	var err error
	if g.partial {
		err = g.mergePartial(bg.acc, row.Fields)
	} else {
		err = g.agg.accumulate(bg.acc, row.Fields, !row.Kind.IsAccumulate(), g.set)
	}
	if err != nil {
		return fmt.Errorf("sql/exec: GroupAggregate: %w", err)
	}
	bg.ts = ts
	b.rows++
	if b.rows >= g.opts.MiniBatchSize || b.deadline.expired(g.Ctx.Now()) {
		g.flushBatch()
	}
	return nil
}

// flushBatch ends the batch: it stores every group the batch touched and
// emits its change.
func (g *GroupAggregate) flushBatch() {
	b := &g.batch
	b.deadline.stop()
	for _, bg := range b.order {
		setKey(g.Ctx, bg.key)
		g.update(bg.keys, bg.acc, bg.prev, bg.hadPrev, bg.ts)
	}
	clear(b.groups)
	b.order, b.rows = b.order[:0], 0
}

// PrepareSnapshotPreBarrier ends the batch, so that the checkpoint holds
// every row before the barrier in state.
func (g *GroupAggregate) PrepareSnapshotPreBarrier(id event.CheckpointID) error {
	g.flushBatch()
	return g.Base.PrepareSnapshotPreBarrier(id)
}

// Finish ends the batch at the end of the input.
func (g *GroupAggregate) Finish() error {
	g.flushBatch()
	return g.Base.Finish()
}
