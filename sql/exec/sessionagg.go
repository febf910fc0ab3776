package exec

import (
	"encoding/binary"
	"fmt"
	"maps"
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
	// Aggs are the aggregate calls. The input is insert-only. A DISTINCT
	// call keeps its session's distinct values in the session's state, and
	// sessions that merge merge those sets (Flink merges the distinct
	// views of merging session windows).
	Aggs []AggCall
	// Zone, when set, makes sessions of the zone's wall clock (a
	// TIMESTAMP_LTZ rowtime in a 'table.local-time-zone' other than UTC,
	// as Flink's shiftTimeZone): start and end are local times and a
	// session ends when the watermark passes the instant of its end − 1 ms
	// (toEpochMillsForTimer), which is also its rowtime. Default nil: UTC.
	Zone *time.Location
}

// Validate checks the options.
func (o *SessionAggOptions) Validate() error {
	if o.Gap <= 0 || o.Gap%time.Millisecond != 0 {
		return fmt.Errorf("%w: session gap %v must be a positive whole number of ms", ErrInvalidOptions, o.Gap)
	}
	if len(o.Aggs) == 0 {
		return fmt.Errorf("%w: SessionAggregate has no aggregate calls", ErrInvalidOptions)
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
// session [start, end, accumulator, distinct sets]. A key has at most one timer, at the
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
	zone  windowZone
	state state.ValueState[*sessionState]
	// distinct: a call is DISTINCT (keeps a set per session).
	distinct bool
}

// sessionState is the value of one key, held in state as it is (a
// pointer the heap backend keeps; sessionCodec encodes it as RowCodec
// encodes [keys, timer, [start, end, acc, sets]…], the layout checkpoints
// have always had). Boxed in nested []any, a key took a dozen objects,
// each a miss and a collector's visit as state grew; and each row that
// extended its session boxed the new end.
type sessionState struct {
	keys     []any
	timer    int64 // the registered timer, or noTimer
	sessions []session
}

// inlineSessions is a sessionState of one session whose keys, session
// and accumulator are inside it (inlineSessionState): a key of one
// session is one object, where its four were a miss each as state
// outgrew the caches.
type inlineSessions struct {
	sessionState
	one  [1]session
	vals [sessionInline]any
}

// sessionInline is how many keys and accumulator fields an
// inlineSessions holds: a key and COUNT(*)'s [rows, n, v].
const sessionInline = 4

// inlineSessionState returns a sessionState of keys and one session
// [start, end) of accumulator acc, as an inlineSessions holding copies of
// them, or nil when they do not fit (or the session has distinct sets).
func inlineSessionState(keys []any, timer, start, end int64, acc []any, sets distinctSets) *sessionState {
	nk, n := len(keys), len(keys)+len(acc)
	if n > sessionInline || sets != nil {
		return nil
	}
	in := newInlineSessions(nk, n, timer, start, end)
	copy(in.vals[:], keys)
	copy(in.vals[nk:], acc)
	return &in.sessionState
}

// newInlineSessions returns an inlineSessions of nk keys and a session
// [start, end) of an accumulator of n-nk fields, their values unset.
func newInlineSessions(nk, n int, timer, start, end int64) *inlineSessions {
	in := &inlineSessions{}
	in.keys, in.timer = in.vals[:nk:nk], timer
	in.one[0] = session{start: start, end: end, acc: in.vals[nk:n:n]}
	in.sessions = in.one[:1:1]
	return in
}

type session struct {
	start, end int64
	acc        []any
	sets       distinctSets
}

const noTimer = int64(-1 << 63)

// decodeSessions is the state RowCodec's layout holds, with accumulators
// of accLen fields.
func decodeSessions(v []any, accLen int) (*sessionState, error) {
	if len(v) < 2 {
		return nil, fmt.Errorf("%w: sql/exec: session state of %d fields, want 2 or more", state.ErrCorrupt, len(v))
	}
	keys, ok1 := v[0].([]any)
	timer, ok2 := v[1].(int64)
	if !ok1 && v[0] != nil || !ok2 {
		return nil, fmt.Errorf("%w: sql/exec: session state holds %T and %T, want keys and a timer", state.ErrCorrupt, v[0], v[1])
	}
	st := &sessionState{keys: keys, timer: timer}
	for _, x := range v[2:] {
		e, ok := x.([]any)
		if !ok || len(e) < 3 {
			return nil, fmt.Errorf("%w: sql/exec: a session in state is %T of %d fields, want 3 or 4", state.ErrCorrupt, x, len(e))
		}
		start, ok1 := e[0].(int64)
		end, ok2 := e[1].(int64)
		acc, ok3 := e[2].([]any)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("%w: sql/exec: a session in state holds %T, %T, %T, want start, end, accumulator", state.ErrCorrupt, e[0], e[1], e[2])
		}
		if len(acc) != accLen {
			return nil, fmt.Errorf("%w: sql/exec: a session's accumulator in state has %d fields, want %d", state.ErrCorrupt, len(acc), accLen)
		}
		x := session{start: start, end: end, acc: acc}
		if len(e) > 3 { // a checkpoint from before DISTINCT calls had sets has none
			sets, _ := e[3].([]any)
			var err error
			if x.sets, err = decodeDistinctSets(sets); err != nil {
				return nil, err
			}
		}
		st.sessions = append(st.sessions, x)
	}
	return st, nil
}

// sessionCodec encodes a key's sessionState in RowCodec's bytes for
// [keys, timer, [start, end, acc, sets]…]; accLen is the accumulators'
// width, which Decode checks.
type sessionCodec struct{ accLen int }

func (sessionCodec) Encode(buf []byte, st *sessionState) []byte {
	buf = binary.AppendUvarint(append(buf, tagArray), uint64(2+len(st.sessions)))
	buf = appendValue(buf, st.keys, false)
	buf = appendValue(buf, st.timer, false)
	for _, x := range st.sessions {
		buf = binary.AppendUvarint(append(buf, tagArray), 4)
		buf = appendValue(buf, x.start, false)
		buf = appendValue(buf, x.end, false)
		buf = appendValue(buf, x.acc, false)
		buf = appendValue(buf, x.sets.encode(), false)
	}
	return buf
}

func (c sessionCodec) Decode(b []byte) (*sessionState, []byte, error) {
	v, rest, err := RowCodec{}.Decode(b)
	if err != nil {
		return nil, b, err
	}
	st, err := decodeSessions(v, c.accLen)
	if err != nil {
		return nil, b, err
	}
	return st, rest, nil
}

// Copy is a deep copy, for the heap backend to hand the owner while a
// snapshot encodes the original.
func (sessionCodec) Copy(st *sessionState) *sessionState {
	if len(st.sessions) == 1 {
		x := st.sessions[0]
		if in := inlineSessionState(st.keys, st.timer, x.start, x.end, RowCodec{}.Copy(x.acc), x.sets); in != nil {
			return in // its own keys too: sharing them would keep st whole
		}
	}
	out := &sessionState{keys: st.keys, timer: st.timer, sessions: make([]session, len(st.sessions))}
	for i, x := range st.sessions {
		out.sessions[i] = session{start: x.start, end: x.end, acc: RowCodec{}.Copy(x.acc), sets: x.sets.clone()}
	}
	return out
}

// NewSessionAggregate returns a SessionAggregate; its input must be keyed
// by opts.Key().
func NewSessionAggregate(opts SessionAggOptions) (*SessionAggregate, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &SessionAggregate{opts: opts, key: opts.Key(), reads: concatInts(opts.GroupKeys, opts.TimeField),
		agg: aggregator{calls: opts.Aggs, insertOnly: true}, gap: opts.Gap.Milliseconds(), zone: newWindowZone(opts.Zone)}
	for i := range opts.Aggs {
		s.distinct = s.distinct || s.agg.needsSet(i)
	}
	return s, nil
}

// Open registers the state and makes the operator the timers' target.
func (s *SessionAggregate) Open(ctx *operator.Context) error {
	if err := s.Base.Open(ctx); err != nil {
		return err
	}
	ctx.Timers.SetTriggerable(s)
	s.state = state.Value(ctx.Keyed, state.ValueDescriptor[*sessionState]{Name: "sessions", Codec: sessionCodec{accLen: len(s.agg.newAcc())}})
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
	ts = s.zone.local(ts)
	setKey(s.Ctx, s.key(row.Fields))
	st, ok := s.state.Value()
	if ok {
		if done, err := s.extendOnly(st, row.Fields, ts); done || err != nil {
			return err
		}
	} else {
		st = s.newSessionState(row.Fields, ts)
		if st.sessions != nil {
			return s.addFirst(st, row.Fields)
		}
	}
	merged := session{start: ts, end: ts + s.gap}
	var keep, parts []session
	for _, o := range st.sessions {
		if o.start <= merged.end && merged.start <= o.end { // overlapping or touching: one session
			merged.start, merged.end = min(merged.start, o.start), max(merged.end, o.end)
			parts = append(parts, o)
		} else {
			keep = append(keep, o)
		}
	}
	if s.zone.timer(merged.end-1) <= s.Ctx.Timers.CurrentWatermark() {
		s.Ctx.Metrics.LateDropped++
		return nil
	}
	if err := s.mergeSessions(&merged, parts); err != nil {
		return fmt.Errorf("sql/exec: SessionAggregate: %w", err)
	}
	if err := s.agg.accumulate(merged.acc, row.Fields, false, merged.sets.of); err != nil {
		return fmt.Errorf("sql/exec: SessionAggregate: %w", err)
	}
	st.sessions = append(keep, merged)
	s.arm(st)
	s.state.Update(st)
	return nil
}

// newSessionState returns a new key's state: its group keys, of the row
// fields, boxed apart from the row (pickOwned), and, when they and an
// accumulator fit in an inlineSessions and no call is DISTINCT, the
// session of a row at ts, its accumulator of no rows (sessionsInPlace,
// as extendOnly; without it the general path makes the session).
func (s *SessionAggregate) newSessionState(fields []any, ts int64) *sessionState {
	keys := s.opts.GroupKeys
	nk, n := len(keys), len(keys)+s.agg.accLen()
	if s.distinct || !sessionsInPlace || n > sessionInline {
		return &sessionState{keys: pickOwned(fields, keys), timer: noTimer}
	}
	in := newInlineSessions(nk, n, noTimer, ts, ts+s.gap)
	for i, j := range keys {
		in.vals[i] = rebox(fields[j])
	}
	s.agg.initAcc(in.one[0].acc)
	return &in.sessionState
}

// addFirst folds the first row of a key into the session newSessionState
// made, unless the row is late.
func (s *SessionAggregate) addFirst(st *sessionState, fields []any) error {
	x := &st.sessions[0]
	if s.zone.timer(x.end-1) <= s.Ctx.Timers.CurrentWatermark() {
		s.Ctx.Metrics.LateDropped++
		return nil
	}
	if err := s.agg.accumulate(x.acc, fields, false, nil); err != nil {
		return fmt.Errorf("sql/exec: SessionAggregate: %w", err)
	}
	s.arm(st)
	s.state.Update(st)
	return nil
}

// extendOnly adds a row at ts to the key's state st when st holds one
// session, which the row's extends or falls in, and no call is DISTINCT:
// the common case (a key's rows close together) updates st in place (a
// value read from state is the owner's to change) instead of merging
// sessions. It reports whether it did; the general path handles the rest.
func (s *SessionAggregate) extendOnly(st *sessionState, fields []any, ts int64) (bool, error) {
	if len(st.sessions) != 1 || s.distinct || !sessionsInPlace {
		return false, nil
	}
	e := &st.sessions[0]
	if e.start > ts+s.gap || ts > e.end { // a new session beside it
		return false, nil
	}
	nstart, nend := min(e.start, ts), max(e.end, ts+s.gap)
	if s.zone.timer(nend-1) <= s.Ctx.Timers.CurrentWatermark() {
		s.Ctx.Metrics.LateDropped++
		return true, nil
	}
	if err := s.agg.accumulate(e.acc, fields, false, nil); err != nil {
		return true, fmt.Errorf("sql/exec: SessionAggregate: %w", err)
	}
	e.start, e.end = nstart, nend
	if next := s.zone.timer(nend - 1); st.timer == noTimer || st.timer > next {
		s.Ctx.Timers.Register(operator.EventTime, next, "")
		st.timer = next
	}
	s.state.Update(st)
	return true, nil
}

// sessionsInPlace turns extendOnly on (a variable for tests).
var sessionsInPlace = true

// mergeSessions gives merged the accumulator and distinct sets of parts
// (the sessions it absorbs). Accumulators merge, except a DISTINCT call's:
// a value in two parts counts once, so that call is folded again from the
// union of the parts' sets.
func (s *SessionAggregate) mergeSessions(merged *session, parts []session) error {
	merged.acc, merged.sets = s.agg.newAcc(), newDistinctSets(s.opts.Aggs)
	for _, p := range parts {
		if err := s.agg.merge(merged.acc, p.acc); err != nil {
			return err
		}
		merged.sets.union(p.sets)
	}
	if len(parts) < 2 {
		return nil // one part's DISTINCT slots are already right
	}
	for i, set := range merged.sets {
		if set == nil {
			continue
		}
		merged.acc[1+2*i], merged.acc[2+2*i] = int64(0), nil
		seen := memSet{}
		for _, v := range set.sorted() {
			if err := s.agg.fold(merged.acc, i, v, 1, func(int) multiset { return seen }); err != nil {
				return err
			}
		}
	}
	return nil
}

// arm makes sure a timer is set at or before the earliest session end.
func (s *SessionAggregate) arm(st *sessionState) {
	next := int64(math.MaxInt64)
	for _, x := range st.sessions {
		next = min(next, s.zone.timer(x.end-1))
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
	st, ok := s.state.Value()
	if !ok {
		return nil
	}
	if t.Timestamp != st.timer {
		return nil // superseded by an earlier timer that already ran
	}
	wm := max(s.Ctx.Timers.CurrentWatermark(), t.Timestamp)
	var open []session
	sort.Slice(st.sessions, func(i, j int) bool { return st.sessions[i].start < st.sessions[j].start })
	for _, x := range st.sessions {
		fire := s.zone.timer(x.end - 1)
		if fire > wm {
			open = append(open, x)
			continue
		}
		out := append([]any(nil), st.keys...)
		out = append(out, millisTime(x.start), millisTime(x.end), millisTime(fire))
		out = append(out, s.agg.result(x.acc)...)
		emit(s.Ctx, event.Insert, out, fire)
	}
	if len(open) == 0 {
		s.state.Clear()
		return nil
	}
	st.sessions, st.timer = open, noTimer
	s.arm(st)
	s.state.Update(st)
	return nil
}

// distinctSets holds, per aggregate call, the distinct values a session's
// DISTINCT call has seen (nil for a call that is not DISTINCT).
type distinctSets []memSet

func newDistinctSets(calls []AggCall) distinctSets {
	var sets distinctSets
	for i, c := range calls {
		if c.Distinct {
			if sets == nil {
				sets = make(distinctSets, len(calls))
			}
			sets[i] = memSet{}
		}
	}
	return sets
}

// of is the multiset of call i, as aggregator.accumulate asks for it.
func (ds distinctSets) of(i int) multiset { return ds[i] }

// clone copies the sets (an entry is never changed in place: add
// replaces it).
func (ds distinctSets) clone() distinctSets {
	if ds == nil {
		return nil
	}
	out := make(distinctSets, len(ds))
	for i, m := range ds {
		if m != nil {
			out[i] = maps.Clone(m)
		}
	}
	return out
}

// union adds other's counts to ds.
func (ds distinctSets) union(other distinctSets) {
	for i, o := range other {
		if i < len(ds) && ds[i] != nil {
			for _, e := range o {
				ds[i].add(e[1], e[0].(int64))
			}
		}
	}
}

// encode is the sets as RowCodec stores them: per call nil or [count, v,
// count, v, …].
func (ds distinctSets) encode() []any {
	out := make([]any, len(ds))
	for i, m := range ds {
		if m == nil {
			continue
		}
		flat := make([]any, 0, 2*len(m))
		for _, e := range m {
			flat = append(flat, e[0], e[1])
		}
		out[i] = flat
	}
	return out
}

func decodeDistinctSets(v []any) (distinctSets, error) {
	if len(v) == 0 {
		return nil, nil
	}
	ds := make(distinctSets, len(v))
	for i, x := range v {
		flat, ok := x.([]any)
		if !ok {
			continue
		}
		ds[i] = memSet{}
		for j := 0; j+1 < len(flat); j += 2 {
			n, ok := flat[j].(int64)
			if !ok {
				return nil, fmt.Errorf("%w: sql/exec: a session's distinct values of call %d hold a count of %T", state.ErrCorrupt, i, flat[j])
			}
			ds[i].add(flat[j+1], n)
		}
	}
	return ds, nil
}

// memSet is a multiset held in memory: valueKey(v) → [count, v].
type memSet map[string][]any

func (m memSet) add(v any, delta int64) (int64, int64) {
	k := valueKey(v)
	var before int64
	if e, ok := m[k]; ok {
		before = e[0].(int64)
	}
	after := before + delta
	if after == 0 {
		delete(m, k)
	} else {
		m[k] = []any{after, v}
	}
	return before, after
}

func (m memSet) each(f func(v any)) {
	for _, v := range m.sorted() {
		f(v)
	}
}

// sorted is the values with a positive count, in valueKey order (so a
// LISTAGG(DISTINCT …) folds them in the same order on every run).
func (m memSet) sorted() []any {
	keys := make([]string, 0, len(m))
	for k, e := range m {
		if e[0].(int64) > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = m[k][1]
	}
	return out
}
