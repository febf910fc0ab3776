package exec

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// SessionAggOptions configures a SessionAggregate.
type SessionAggOptions struct {
	// Gap is the session gap: a row at ts opens the window [ts, ts+Gap),
	// and windows of a key that overlap or touch merge. Required.
	Gap time.Duration
	// TimeField is the rowtime column.
	TimeField int
	// GroupKeys are the GROUP BY fields besides SESSION(…).
	GroupKeys []int
	// Aggs are the aggregate calls; not DISTINCT (their accumulators are
	// merged when sessions merge). The input is insert-only.
	Aggs []AggCall
}

// Validate checks the options.
func (o *SessionAggOptions) Validate() error {
	if o.Gap <= 0 || o.Gap%time.Millisecond != 0 {
		return fmt.Errorf("%w: session gap %v must be a positive whole number of ms", ErrInvalidOptions, o.Gap)
	}
	if len(o.Aggs) == 0 {
		return fmt.Errorf("%w: SessionAggregate has no aggregate calls", ErrInvalidOptions)
	}
	for _, c := range o.Aggs {
		if c.Distinct {
			return fmt.Errorf("%w: %s in a session window is not supported (sessions merge their accumulators)", ErrInvalidOptions, c)
		}
	}
	if err := checkFields("GroupKeys and TimeField", concatInts(o.GroupKeys, o.TimeField), 0); err != nil {
		return err
	}
	return checkAggs(o.Aggs, false)
}

// Key is the KeyFunc the operator's input must be partitioned by.
func (o *SessionAggOptions) Key() KeyFunc { return FieldKey(o.GroupKeys...) }

// SessionAggregate is Flink's session group window (GROUP BY …,
// SESSION(ts, gap)): per key, rows closer than the gap form one session;
// when the watermark passes a session's end (its last row's time + gap) it
// emits one +I row [keys…, session start, session end, end − 1 ms (the
// rowtime), aggs…]. A row whose merged session already ended by the
// watermark is late: dropped and counted in Metrics.LateDropped.
//
// State is one value per key: [group keys, timer, sessions…] with each
// session [start, end, accumulator]. A key has at most one timer, at the
// earliest end of its sessions as it was when the timer was set: a
// session that grows later does not move the timer; when it fires, the
// sessions not yet ended re-arm it. That keeps one heap entry per key
// instead of one per row (a growing session would otherwise leave a stale
// timer for every row).
type SessionAggregate struct {
	operator.Base
	opts  SessionAggOptions
	key   KeyFunc
	agg   aggregator
	reads []int
	gap   int64
	state state.ValueState[[]any]
}

// sessionState is the decoded value of one key.
type sessionState struct {
	keys     []any
	timer    int64 // the registered timer, or noTimer
	sessions []session
}

type session struct {
	start, end int64
	acc        []any
}

const noTimer = int64(-1 << 63)

func decodeSessions(v []any) sessionState {
	st := sessionState{keys: v[0].([]any), timer: v[1].(int64)}
	for _, x := range v[2:] {
		e := x.([]any)
		st.sessions = append(st.sessions, session{start: e[0].(int64), end: e[1].(int64), acc: e[2].([]any)})
	}
	return st
}

func (st sessionState) encode() []any {
	v := make([]any, 2, 2+len(st.sessions))
	v[0], v[1] = st.keys, st.timer
	for _, s := range st.sessions {
		v = append(v, []any{s.start, s.end, s.acc})
	}
	return v
}

// NewSessionAggregate returns a SessionAggregate; its input must be keyed
// by opts.Key().
func NewSessionAggregate(opts SessionAggOptions) (*SessionAggregate, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &SessionAggregate{opts: opts, key: opts.Key(), reads: concatInts(opts.GroupKeys, opts.TimeField),
		agg: aggregator{calls: opts.Aggs, insertOnly: true}, gap: opts.Gap.Milliseconds()}, nil
}

// Open registers the state and makes the operator the timers' target.
func (s *SessionAggregate) Open(ctx *operator.Context) error {
	if err := s.Base.Open(ctx); err != nil {
		return err
	}
	ctx.Timers.SetTriggerable(s)
	s.state = state.Value(ctx.Keyed, state.ValueDescriptor[[]any]{Name: "sessions", Codec: RowCodec{}})
	return nil
}

// ProcessElement adds a row to its session, merging the sessions it joins.
func (s *SessionAggregate) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if row.Kind != event.Insert {
		return fmt.Errorf("%w: SessionAggregate got a %s row; session windows take an append-only input", ErrUpdatesUnsupported, row.Kind)
	}
	if err := checkWidth("SessionAggregate", row.Fields, s.reads...); err != nil {
		return err
	}
	ts, err := timeMillis(row.Fields[s.opts.TimeField])
	if err != nil {
		return fmt.Errorf("sql/exec: SessionAggregate: rowtime field %d: %w", s.opts.TimeField, err)
	}
	setKey(s.Ctx, s.key(row.Fields))
	st := sessionState{keys: nil, timer: noTimer}
	if v, ok := s.state.Value(); ok {
		st = decodeSessions(v)
	} else {
		st.keys = pick(row.Fields, s.opts.GroupKeys)
	}
	merged := session{start: ts, end: ts + s.gap}
	var keep []session
	var parts [][]any
	for _, o := range st.sessions {
		if o.start <= merged.end && merged.start <= o.end { // overlapping or touching: one session
			merged.start, merged.end = min(merged.start, o.start), max(merged.end, o.end)
			parts = append(parts, o.acc)
		} else {
			keep = append(keep, o)
		}
	}
	if merged.end-1 <= s.Ctx.Timers.CurrentWatermark() {
		s.Ctx.Metrics.LateDropped++
		return nil
	}
	merged.acc = s.agg.newAcc()
	for _, p := range parts {
		if err := s.agg.merge(merged.acc, p); err != nil {
			return fmt.Errorf("sql/exec: SessionAggregate: %w", err)
		}
	}
	if err := s.agg.accumulate(merged.acc, row.Fields, false, nil); err != nil {
		return fmt.Errorf("sql/exec: SessionAggregate: %w", err)
	}
	st.sessions = append(keep, merged)
	s.arm(&st)
	s.state.Update(st.encode())
	return nil
}

// arm makes sure a timer is set at or before the earliest session end.
func (s *SessionAggregate) arm(st *sessionState) {
	next := int64(math.MaxInt64)
	for _, x := range st.sessions {
		next = min(next, x.end-1)
	}
	if len(st.sessions) == 0 || (st.timer != noTimer && st.timer <= next) {
		return
	}
	s.Ctx.Timers.Register(operator.EventTime, next, "")
	st.timer = next
}

// OnTimer emits the sessions of the key that the watermark has passed,
// and re-arms the timer for the others.
func (s *SessionAggregate) OnTimer(t operator.Timer) error {
	v, ok := s.state.Value()
	if !ok {
		return nil
	}
	st := decodeSessions(v)
	if t.Timestamp != st.timer {
		return nil // superseded by an earlier timer that already ran
	}
	wm := max(s.Ctx.Timers.CurrentWatermark(), t.Timestamp)
	var open []session
	sort.Slice(st.sessions, func(i, j int) bool { return st.sessions[i].start < st.sessions[j].start })
	for _, x := range st.sessions {
		if x.end-1 > wm {
			open = append(open, x)
			continue
		}
		out := append([]any(nil), st.keys...)
		out = append(out, millisTime(x.start), millisTime(x.end), millisTime(x.end-1))
		out = append(out, s.agg.result(x.acc)...)
		emit(s.Ctx, event.Insert, out, x.end-1)
	}
	if len(open) == 0 {
		s.state.Clear()
		return nil
	}
	st.sessions, st.timer = open, noTimer
	s.arm(&st)
	s.state.Update(st.encode())
	return nil
}
