package exec

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// IntervalJoinOptions configures an IntervalJoin:
//
//	l JOIN r ON l.k = r.k AND r.ts BETWEEN l.ts + Lower AND l.ts + Upper
//
// (so `r.ts BETWEEN l.ts - INTERVAL 'a' AND l.ts + INTERVAL 'b'` has
// Lower = -a, Upper = b).
type IntervalJoinOptions struct {
	// Type is INNER, LEFT, RIGHT or FULL. An outer side's rows that found
	// no match are emitted NULL-padded when the watermark shows no match
	// can come any more.
	Type JoinType
	// LeftKeys and RightKeys are the equi-join fields; none for a join on
	// the time bounds alone (every row then has the same key).
	LeftKeys, RightKeys []int
	// NullSafe marks key pairs compared by IS NOT DISTINCT FROM (see
	// JoinOptions). Default nil: none.
	NullSafe []bool
	// LeftTime and RightTime are the rowtime fields (time.Time or int64 ms).
	LeftTime, RightTime int
	// Lower and Upper bound r.ts - l.ts, inclusive; whole milliseconds,
	// Lower <= Upper.
	Lower, Upper time.Duration
	// LeftArity and RightArity size the NULL padding of outer joins.
	LeftArity, RightArity int
	// Condition is the rest of the ON clause. Default nil: true.
	Condition func(left, right []any) (bool, error)
}

// Validate checks the options.
func (o *IntervalJoinOptions) Validate() error {
	j := JoinOptions{Type: o.Type, LeftKeys: o.LeftKeys, RightKeys: o.RightKeys, NullSafe: o.NullSafe,
		LeftArity: o.LeftArity, RightArity: o.RightArity}
	if err := j.Validate(); err != nil {
		return err
	}
	if o.Lower > o.Upper || o.Lower%time.Millisecond != 0 || o.Upper%time.Millisecond != 0 {
		return fmt.Errorf("%w: interval join bounds [%v, %v] must be whole milliseconds, lower <= upper", ErrInvalidOptions, o.Lower, o.Upper)
	}
	return checkFields("LeftTime and RightTime", []int{o.LeftTime, o.RightTime}, 0)
}

// LeftKey is the KeyFunc the left input must be partitioned by: its
// LeftKeys fields.
func (o *IntervalJoinOptions) LeftKey() KeyFunc { return FieldKey(o.LeftKeys...) }

// RightKey is the KeyFunc the right input must be partitioned by: its
// RightKeys fields, so that rows with equal join keys meet in one subtask.
func (o *IntervalJoinOptions) RightKey() KeyFunc { return FieldKey(o.RightKeys...) }

// IntervalJoin joins two insert-only streams on a key and a time interval
// (Flink's interval join, event time). Each side buffers its rows in keyed
// state, by rowtime, as long as a row of the other side may still match:
// a left row at tl until the watermark reaches tl + Upper, a right row at
// tr until it reaches tr - Lower. An event-time timer then drops it (and,
// for an outer side, emits it NULL-padded if it never matched). A row
// that arrives after that point still joins what is buffered, but is not
// buffered itself. Output rows, +I only, are [left…, right…], stamped
// with the later of the two rowtimes.
//
// Input 1 (ProcessElement) is the left side, input 2 the right.
type IntervalJoin struct {
	operator.Base
	opts  IntervalJoinOptions
	keys  [2]KeyFunc
	reads [2][]int
	times [2]int
	// buf[s] maps a rowtime to the rows of side s at it: a list of
	// [row, matched].
	buf [2]state.MapState[int64, []any]
	wm  watermarkKeeper
}

var _ operator.TwoInput = (*IntervalJoin)(nil)

// NewIntervalJoin returns an IntervalJoin; its inputs must be keyed by
// opts.LeftKey() and opts.RightKey().
func NewIntervalJoin(opts IntervalJoinOptions) (*IntervalJoin, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &IntervalJoin{opts: opts, keys: [2]KeyFunc{opts.LeftKey(), opts.RightKey()},
		reads: [2][]int{concatInts(opts.LeftKeys, opts.LeftTime), concatInts(opts.RightKeys, opts.RightTime)},
		times: [2]int{opts.LeftTime, opts.RightTime}}, nil
}

// Open registers the state and makes the operator the timers' target.
func (j *IntervalJoin) Open(ctx *operator.Context) error {
	if err := j.Base.Open(ctx); err != nil {
		return err
	}
	ctx.Timers.SetTriggerable(j)
	for s, name := range []string{"interval-left", "interval-right"} {
		j.buf[s] = state.Map(ctx.Keyed, state.MapDescriptor[int64, []any]{Name: name, ValueCodec: RowCodec{}})
	}
	var err error
	j.wm, err = openWatermark(ctx)
	return err
}

// SnapshotState keeps the watermark with the state (see watermarkKeeper).
func (j *IntervalJoin) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	j.wm.save(j.Ctx)
	return j.Base.SnapshotState(id)
}

// ProcessElement takes a row of the left input.
func (j *IntervalJoin) ProcessElement(r event.Record) error { return j.process(0, r) }

// ProcessElement2 takes a row of the right input.
func (j *IntervalJoin) ProcessElement2(r event.Record) error { return j.process(1, r) }

// bounds returns the rowtimes of the other side that a row of side s at
// ts matches: [lo, hi].
func (j *IntervalJoin) bounds(s int, ts int64) (lo, hi int64) {
	lower, upper := j.opts.Lower.Milliseconds(), j.opts.Upper.Milliseconds()
	if s == 0 {
		return ts + lower, ts + upper
	}
	return ts - upper, ts - lower
}

// expiry is when a row of side s at ts can no longer match: the watermark
// passed the last rowtime of the other side it matches.
func (j *IntervalJoin) expiry(s int, ts int64) int64 {
	_, hi := j.bounds(s, ts)
	return hi
}

// ns names side s's timers.
var timerNS = [2]string{"left", "right"}

func (j *IntervalJoin) process(s int, r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if row.Kind != event.Insert {
		return fmt.Errorf("%w: IntervalJoin got a %s row; an interval join takes append-only inputs", ErrUpdatesUnsupported, row.Kind)
	}
	if err := checkWidth("IntervalJoin", row.Fields, j.reads[s]...); err != nil {
		return err
	}
	ts, err := timeMillis(row.Fields[j.times[s]])
	if err != nil {
		return fmt.Errorf("sql/exec: IntervalJoin: rowtime field %d of the %s input: %w", j.times[s], timerNS[s], err)
	}
	// A row with a NULL key matches nothing (NULL = x is unknown): an
	// inner side drops it, an outer side buffers it unmatched, to come out
	// NULL-padded when it expires, as any row that found no match.
	keyIdx := j.opts.LeftKeys
	if s == 1 {
		keyIdx = j.opts.RightKeys
	}
	unmatchable := nullKeyUnsafe(row.Fields, keyIdx, j.opts.NullSafe)
	if unmatchable && !j.opts.Type.outer(s) {
		return nil
	}
	setKey(j.Ctx, j.keys[s](row.Fields))
	matched := false
	if !unmatchable {
		if matched, err = j.probe(s, row.Fields, ts); err != nil {
			return err
		}
	}
	exp := j.expiry(s, ts)
	if exp > j.Ctx.Timers.CurrentWatermark() {
		rows, _ := j.buf[s].Get(ts)
		j.buf[s].Put(ts, append(append([]any(nil), rows...), []any{row.Fields, matched}))
		j.Ctx.Timers.Register(operator.EventTime, exp, timerNS[s])
		return nil
	}
	if !matched && j.opts.Type.outer(s) {
		emit(j.Ctx, event.Insert, j.padded(s, row.Fields), ts)
	}
	return nil
}

// probe joins row (side s, at ts) with the other side's buffered rows and
// reports whether it matched any. Matches go out in rowtime order, then
// arrival order.
func (j *IntervalJoin) probe(s int, row []any, ts int64) (bool, error) {
	lo, hi := j.bounds(s, ts)
	o := 1 - s
	var times []int64
	j.buf[o].Range(func(ots int64, _ []any) bool {
		if ots >= lo && ots <= hi {
			times = append(times, ots)
		}
		return true
	})
	slices.Sort(times)
	matched := false
	for _, ots := range times {
		rows, _ := j.buf[o].Get(ots)
		m, changed, err := j.joinAt(s, row, ts, ots, rows)
		if err != nil {
			return false, fmt.Errorf("sql/exec: IntervalJoin condition: %w", err)
		}
		matched = matched || m
		if changed != nil {
			j.buf[o].Put(ots, changed)
		}
	}
	return matched, nil
}

// joinAt joins row with the other side's rows at ots. It returns whether
// any matched and, when an outer side's row matched for the first time,
// the rows with their matched flags updated.
func (j *IntervalJoin) joinAt(s int, row []any, ts, ots int64, rows []any) (bool, []any, error) {
	var changed []any
	matched := false
	for i, e := range rows {
		entry := e.([]any)
		l, r := row, entry[0].([]any)
		if s == 1 {
			l, r = r, l
		}
		if j.opts.Condition != nil {
			ok, err := j.opts.Condition(l, r)
			if err != nil {
				return false, nil, err
			}
			if !ok {
				continue
			}
		}
		matched = true
		emitRow(j.Ctx, concatRow(event.Insert, l, r), max(ts, ots))
		if !entry[1].(bool) && j.opts.Type.outer(1-s) {
			if changed == nil {
				changed = append([]any(nil), rows...)
			}
			changed[i] = []any{entry[0], true}
		}
	}
	return matched, changed, nil
}

func (j *IntervalJoin) padded(s int, row []any) []any {
	if s == 0 {
		return concat(row, nulls(j.opts.RightArity))
	}
	return concat(nulls(j.opts.LeftArity), row)
}

// OnTimer drops the rows of one side and rowtime that can no longer
// match, emitting an outer side's unmatched ones NULL-padded.
func (j *IntervalJoin) OnTimer(t operator.Timer) error {
	s := 0
	if t.Namespace == timerNS[1] {
		s = 1
	}
	// invert expiry: the rowtime whose rows expire at t.Timestamp
	ts := t.Timestamp - j.opts.Upper.Milliseconds()
	if s == 1 {
		ts = t.Timestamp + j.opts.Lower.Milliseconds()
	}
	rows, ok := j.buf[s].Get(ts)
	if !ok {
		return nil
	}
	j.buf[s].Remove(ts)
	if !j.opts.Type.outer(s) {
		return nil
	}
	for _, e := range rows {
		entry := e.([]any)
		if !entry[1].(bool) {
			emit(j.Ctx, event.Insert, j.padded(s, entry[0].([]any)), ts)
		}
	}
	return nil
}

// ProcessWatermark fires the timers due at wm and forwards wm held back
// by the longer interval bound: a NULL-padded row goes out when the
// watermark passed its rowtime by up to that much, and must not be late
// downstream (Flink delays the watermark the same way).
func (j *IntervalJoin) ProcessWatermark(wm event.Timestamp) error {
	wm, err := advanceWatermark(j.Ctx, wm)
	if err != nil {
		return err
	}
	delay := max(0, j.opts.Upper.Milliseconds(), -j.opts.Lower.Milliseconds())
	if wm != event.MaxWatermark && wm > event.MinWatermark+delay {
		wm -= delay
	} else if wm != event.MaxWatermark {
		wm = event.MinWatermark
	}
	j.Ctx.Output.EmitWatermark(wm)
	return nil
}
