package exec

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// TemporalJoinOptions configures a TemporalJoin:
//
//	l [LEFT] JOIN r FOR SYSTEM_TIME AS OF l.time ON l.k = r.k
//
// where r is a versioned table: a changelog with a PRIMARY KEY (among the
// equi-join keys) and an event-time attribute.
type TemporalJoinOptions struct {
	// Type is INNER or LEFT.
	Type JoinType
	// LeftKeys and RightKeys are the equi-join fields; both inputs are
	// partitioned by them. A row with a NULL key matches nothing.
	LeftKeys, RightKeys []int
	// LeftTime is the probe side's event-time field (the AS OF column);
	// RightTime the versioned side's (each change is a version from that
	// time on). time.Time or int64 ms.
	LeftTime, RightTime int
	// LeftArity and RightArity are the fields of a row of each side.
	LeftArity, RightArity int
	// Condition is the rest of the ON clause. Default nil: true.
	Condition func(left, right []any) (bool, error)
}

// Validate checks the options.
func (o *TemporalJoinOptions) Validate() error {
	if o.Type != InnerJoin && o.Type != LeftJoin {
		return fmt.Errorf("%w: a temporal join is INNER or LEFT, not %s", ErrInvalidOptions, o.Type)
	}
	if len(o.LeftKeys) == 0 {
		return fmt.Errorf("%w: a temporal join needs an equi-join key", ErrInvalidOptions)
	}
	j := JoinOptions{Type: o.Type, LeftKeys: o.LeftKeys, RightKeys: o.RightKeys, LeftArity: o.LeftArity, RightArity: o.RightArity}
	if err := j.Validate(); err != nil {
		return err
	}
	if err := checkFields("LeftTime", []int{o.LeftTime}, o.LeftArity); err != nil {
		return err
	}
	return checkFields("RightTime", []int{o.RightTime}, o.RightArity)
}

// LeftKey is the KeyFunc the left input must be partitioned by: its
// LeftKeys fields.
func (o *TemporalJoinOptions) LeftKey() KeyFunc { return FieldKey(o.LeftKeys...) }

// RightKey is the KeyFunc the right input must be partitioned by: its
// RightKeys fields, so that rows with equal join keys meet in one subtask.
func (o *TemporalJoinOptions) RightKey() KeyFunc { return FieldKey(o.RightKeys...) }

// TemporalJoin is Flink's event-time temporal join
// (TemporalRowTimeJoinOperator): each probe row joins the version of the
// versioned side valid at the row's time — the change of its key with
// the largest time at or before it, unless that change is a delete.
//
// Both sides live in keyed state. Probe rows wait, in arrival order, until
// the watermark (the smaller of the two inputs') reaches their time: no
// version at or before it can come any more. They are then joined, in
// arrival order, and go out with their own row kind (the probe side may
// be a changelog) and time. Versions are kept by time (a change at the
// time of another replaces it, the later arrival winning); once the
// watermark passes a version's successor, the version can be valid for no
// row to come and is dropped: of the versions at or before the watermark
// only the latest stays. A
// probe row that comes after the watermark passed its time (late) is
// joined at the next watermark with the versions still kept, as Flink
// does (it may find none where an on-time row would have). An UPDATE_BEFORE
// of the versioned side is ignored: the version ends where the
// UPDATE_AFTER begins (Flink's planner drops it before the join).
//
// One event-time timer per key, at the earliest time that has work —
// a waiting probe row, or a version whose successor ends it — as Flink
// keeps one. Input 1 (ProcessElement) is the probe side, input 2 the
// versioned side.
type TemporalJoin struct {
	operator.Base
	opts TemporalJoinOptions
	keys [2]KeyFunc
	// probe maps an arrival number to a waiting probe row: [kind, fields].
	probe state.MapState[int64, []any]
	// next numbers the key's probe rows in arrival order.
	next state.ValueState[int64]
	// versions maps a version's time to its change: [kind, fields].
	versions state.MapState[int64, []any]
	// timer is the key's registered timer, if any.
	timer state.ValueState[int64]
	wm    watermarkKeeper
}

var _ operator.TwoInput = (*TemporalJoin)(nil)

// NewTemporalJoin returns a TemporalJoin; its inputs must be keyed by
// opts.LeftKey() and opts.RightKey().
func NewTemporalJoin(opts TemporalJoinOptions) (*TemporalJoin, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &TemporalJoin{opts: opts, keys: [2]KeyFunc{opts.LeftKey(), opts.RightKey()}}, nil
}

// Open registers the state and makes the operator the timers' target.
func (j *TemporalJoin) Open(ctx *operator.Context) error {
	if err := j.Base.Open(ctx); err != nil {
		return err
	}
	ctx.Timers.SetTriggerable(j)
	j.probe = state.Map(ctx.Keyed, state.MapDescriptor[int64, []any]{Name: "temporal-probe", ValueCodec: RowCodec{}})
	j.next = state.Value(ctx.Keyed, state.ValueDescriptor[int64]{Name: "temporal-next"})
	j.versions = state.Map(ctx.Keyed, state.MapDescriptor[int64, []any]{Name: "temporal-versions", ValueCodec: RowCodec{}})
	j.timer = state.Value(ctx.Keyed, state.ValueDescriptor[int64]{Name: "temporal-timer"})
	var err error
	j.wm, err = openWatermark(ctx)
	return err
}

// SnapshotState keeps the watermark with the state (see watermarkKeeper).
func (j *TemporalJoin) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	j.wm.save(j.Ctx)
	return j.Base.SnapshotState(id)
}

// ProcessElement buffers a probe row until the watermark reaches its time.
func (j *TemporalJoin) ProcessElement(r event.Record) error {
	row, ts, err := j.read(0, r)
	if err != nil {
		return err
	}
	if nullKey(row.Fields, j.opts.LeftKeys) && j.opts.Type == InnerJoin {
		return nil // matches no version
	}
	setKey(j.Ctx, j.keys[0](row.Fields))
	n, _ := j.next.Value()
	j.next.Update(n + 1)
	j.probe.Put(n, []any{int64(row.Kind), row.Fields})
	j.registerAt(ts)
	return nil
}

// ProcessElement2 keeps a change of the versioned side as the version
// from its time on.
func (j *TemporalJoin) ProcessElement2(r event.Record) error {
	row, ts, err := j.read(1, r)
	if err != nil {
		return err
	}
	if row.Kind == event.UpdateBefore || nullKey(row.Fields, j.opts.RightKeys) {
		return nil
	}
	setKey(j.Ctx, j.keys[1](row.Fields))
	j.versions.Put(ts, []any{int64(row.Kind), row.Fields})
	j.registerAt(ts)
	return nil
}

var temporalSide = [2]string{"probe", "versioned"}

// read checks a row of side s and returns it with its event time.
func (j *TemporalJoin) read(s int, r event.Record) (event.Row, int64, error) {
	row, err := rowOf(r.Value)
	if err != nil {
		return row, 0, err
	}
	keys, tf := j.opts.LeftKeys, j.opts.LeftTime
	if s == 1 {
		keys, tf = j.opts.RightKeys, j.opts.RightTime
	}
	if err := checkWidth("TemporalJoin", row.Fields, concatInts(keys, tf)...); err != nil {
		return row, 0, err
	}
	ts, err := timeMillis(row.Fields[tf])
	if err != nil {
		return row, 0, fmt.Errorf("sql/exec: TemporalJoin: time field %d of the %s input: %w", tf, temporalSide[s], err)
	}
	return row, ts, nil
}

// registerAt makes the key's timer fire by ts: one timer per key, at the
// earliest time with work. A time the watermark has passed (a late row)
// fires at the next watermark, as a timer Flink registers in the past
// does; it is registered just above the watermark, not in the past, so
// that a restore, which advances the timers to the restored watermark,
// does not fire it early.
func (j *TemporalJoin) registerAt(ts int64) {
	if wm := j.Ctx.Timers.CurrentWatermark(); ts <= wm {
		ts = wm + 1
	}
	cur, ok := j.timer.Value()
	if ok && cur <= ts {
		return
	}
	if ok {
		j.Ctx.Timers.Delete(operator.EventTime, cur, "")
	}
	j.timer.Update(ts)
	j.Ctx.Timers.Register(operator.EventTime, ts, "")
}

// OnTimer joins the key's probe rows the watermark has reached, drops
// the versions no row to come can see, and registers the next timer.
func (j *TemporalJoin) OnTimer(operator.Timer) error {
	j.timer.Clear()
	wm := j.Ctx.Timers.CurrentWatermark()
	versions, err := j.sortedVersions()
	if err != nil {
		return err
	}
	nextProbe, err := j.fireProbes(wm, versions)
	if err != nil {
		return err
	}
	versions = j.dropExpired(wm, versions)
	next := nextProbe
	// The earliest version after wm ends the one before it: when the
	// watermark reaches it, that one can go.
	if len(versions) > 1 {
		for _, v := range versions {
			if v.ts > wm {
				next = min(next, v.ts)
				break
			}
		}
	}
	if next != math.MaxInt64 {
		j.timer.Update(next)
		j.Ctx.Timers.Register(operator.EventTime, next, "")
	}
	if nextProbe == math.MaxInt64 {
		j.next.Clear() // no row waits: numbering can start again
	}
	return nil
}

// version is one change of the versioned side at time ts.
type version struct {
	ts     int64
	kind   event.RowKind
	fields []any
}

func (j *TemporalJoin) sortedVersions() ([]version, error) {
	var vs []version
	var err error
	j.versions.Range(func(ts int64, e []any) bool {
		var v version
		if v, err = versionOf(ts, e); err != nil {
			return false
		}
		vs = append(vs, v)
		return true
	})
	slices.SortFunc(vs, func(a, b version) int { return cmp.Compare(a.ts, b.ts) })
	return vs, err
}

func versionOf(ts int64, e []any) (version, error) {
	if len(e) != 2 {
		return version{}, fmt.Errorf("sql/exec: TemporalJoin: a version in state has %d parts, want 2", len(e))
	}
	kind, ok1 := e[0].(int64)
	fields, ok2 := e[1].([]any)
	if !ok1 || !ok2 {
		return version{}, fmt.Errorf("sql/exec: TemporalJoin: a version in state is %T, %T", e[0], e[1])
	}
	return version{ts: ts, kind: event.RowKind(kind), fields: fields}, nil
}

// fireProbes joins, in arrival order, the probe rows at or before wm and
// removes them; it returns the earliest time of those still waiting
// (math.MaxInt64: none).
func (j *TemporalJoin) fireProbes(wm int64, versions []version) (int64, error) {
	next := int64(math.MaxInt64)
	var due []int64
	var err error
	j.probe.Range(func(n int64, e []any) bool {
		var p version
		if p, err = j.probeOf(e); err != nil {
			return false
		}
		if p.ts <= wm {
			due = append(due, n)
		} else {
			next = min(next, p.ts)
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	slices.Sort(due)
	for _, n := range due {
		e, _ := j.probe.Get(n)
		p, _ := j.probeOf(e)
		if err := j.join(p, versions); err != nil {
			return 0, err
		}
		j.probe.Remove(n)
	}
	return next, nil
}

// probeOf reads a waiting probe row, with its time as ts.
func (j *TemporalJoin) probeOf(e []any) (version, error) {
	p, err := versionOf(0, e)
	if err != nil {
		return p, err
	}
	p.ts, err = timeMillis(p.fields[j.opts.LeftTime])
	return p, err
}

// join emits probe row p joined with the version valid at its time, or
// NULL-padded (LEFT) when there is none, it is a delete, or the rest of
// the ON clause rejects it.
func (j *TemporalJoin) join(p version, versions []version) error {
	// the first version after p.ts; the one before it is valid at p.ts
	i, _ := slices.BinarySearchFunc(versions, p.ts+1, func(v version, t int64) int { return cmp.Compare(v.ts, t) })
	if i > 0 && versions[i-1].kind.IsAccumulate() && !nullKey(p.fields, j.opts.LeftKeys) {
		v := versions[i-1]
		ok := true
		if j.opts.Condition != nil {
			var err error
			if ok, err = j.opts.Condition(p.fields, v.fields); err != nil {
				return fmt.Errorf("sql/exec: TemporalJoin condition: %w", err)
			}
		}
		if ok {
			emitRow(j.Ctx, concatRow(p.kind, p.fields, v.fields), p.ts)
			return nil
		}
	}
	if j.opts.Type == LeftJoin {
		emitRow(j.Ctx, concatRow(p.kind, p.fields, nulls(j.opts.RightArity)), p.ts)
	}
	return nil
}

// dropExpired removes the versions before the latest one at or before wm:
// no probe row to come is earlier than wm, so none can see them. That
// one stays, even a delete, as Flink keeps it: a version arriving late,
// before it, is valid only up to it. It returns the versions kept.
func (j *TemporalJoin) dropExpired(wm int64, versions []version) []version {
	i, _ := slices.BinarySearchFunc(versions, wm+1, func(v version, t int64) int { return cmp.Compare(v.ts, t) })
	keep := max(i-1, 0) // the version valid at wm
	for _, v := range versions[:keep] {
		j.versions.Remove(v.ts)
	}
	return versions[keep:]
}

// ProcessWatermark fires the keys whose probe rows the watermark reached.
// Joined rows keep their probe row's time, at or below the watermark but
// above the previous one: they are not late downstream.
func (j *TemporalJoin) ProcessWatermark(wm event.Timestamp) error {
	wm, err := advanceWatermark(j.Ctx, wm)
	if err != nil {
		return err
	}
	j.Ctx.Output.EmitWatermark(wm)
	return nil
}
