package exec

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/cep"
	"github.com/weirstream/weir/state"
)

// MatchOptions configures a Match operator (MATCH_RECOGNIZE, ONE ROW PER
// MATCH).
type MatchOptions struct {
	// PartitionKeys are the PARTITION BY fields; none for one partition
	// (the input then goes to one subtask).
	PartitionKeys []int
	// RowTime orders by event time, read from TimeField: rows wait in
	// state until the watermark passes them and are matched in timestamp
	// order (arrival order among equal timestamps). Default false:
	// processing time, rows are matched as they arrive.
	RowTime   bool
	TimeField int
	// OrderBy are the ORDER BY keys after the time attribute (event time
	// only): rows of one timestamp are matched in their order, ties in
	// arrival order. Default none: arrival order.
	OrderBy []SortKey
	// Pattern is the compiled PATTERN, AFTER MATCH SKIP and WITHIN.
	Pattern cep.Pattern
	// Defines holds each variable's DEFINE condition; nil: TRUE.
	Defines []*MatchExpr
	// Measures are the MEASURES; the output row is the partition keys'
	// values followed by them.
	Measures []*MatchExpr
}

// MatchExpr is a DEFINE condition or a measure: an expression over
// Slots, the values navigation reads from the rows of the match.
type MatchExpr struct {
	Eval  func(slots []any) (any, error)
	Slots []MatchSlot
}

// MatchSlotKind is what a MatchSlot reads.
type MatchSlotKind int

const (
	// SlotLast is LAST(v.expr, n) (and a bare v.col, n = 0).
	SlotLast MatchSlotKind = iota
	// SlotFirst is FIRST(v.expr, n).
	SlotFirst
	// SlotAgg is an aggregate over v's rows: SUM(v.expr), COUNT(*), ….
	SlotAgg
	// SlotMatchRowtime is MATCH_ROWTIME(): the last row's rowtime.
	SlotMatchRowtime
)

// MatchSlot reads one value from the rows mapped so far.
type MatchSlot struct {
	Kind MatchSlotKind
	// Var is the variable whose rows are read; AllVars: every row.
	Var    int
	Offset int
	// Arg computes the value from one input row.
	Arg func(row []any) (any, error)
	// Agg is the aggregate of SlotAgg; its Arg is 0 (the value of Arg).
	Agg AggCall
}

// AllVars is MatchSlot.Var of a reference without a variable (price,
// SUM(price)): the rows of every variable.
const AllVars = -1

// Validate checks the options.
func (o *MatchOptions) Validate() error {
	if err := o.Pattern.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	if err := checkFields("PartitionKeys", o.PartitionKeys, 0); err != nil {
		return err
	}
	if len(o.OrderBy) > 0 && !o.RowTime {
		return fmt.Errorf("%w: Match: ORDER BY keys after a processing-time attribute", ErrInvalidOptions)
	}
	if o.RowTime {
		return checkFields("TimeField", []int{o.TimeField}, 0)
	}
	return nil
}

// Key is the KeyFunc the operator's input must be partitioned by.
func (o *MatchOptions) Key() KeyFunc { return FieldKey(o.PartitionKeys...) }

// Match is Flink's MATCH_RECOGNIZE operator (CepOperator) over an
// insert-only input, keyed by the partition keys. Per key it keeps the
// automaton's state (partial matches, completed matches waiting for
// earlier ones, each with the rows it took) and, on event time, the rows
// waiting for the watermark by timestamp. An event-time timer at a row's
// timestamp feeds that timestamp's rows to the automaton in arrival order.
// A row at or behind the watermark when it arrives is late: dropped and
// counted (numLateRecordsDropped). Each match emits one +I row: the
// partition keys and the measures.
type Match struct {
	operator.Base
	opts    MatchOptions
	key     KeyFunc
	nfa     *cep.NFA
	reads   []int
	nfaSt   state.ValueState[[]any]
	pending rowtimeBuffer
	wm      watermarkKeeper
}

var _ operator.Operator = (*Match)(nil)

// NewMatch returns a Match; its input must be keyed by opts.Key().
func NewMatch(opts MatchOptions) (*Match, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	nfa, err := cep.New(opts.Pattern)
	if err != nil {
		return nil, err
	}
	reads := slices.Clone(opts.PartitionKeys)
	for _, k := range opts.OrderBy {
		reads = append(reads, k.Field)
	}
	if opts.RowTime {
		reads = append(reads, opts.TimeField)
	}
	return &Match{opts: opts, key: opts.Key(), nfa: nfa, reads: reads}, nil
}

// Open registers the state and makes the operator the timers' target.
func (o *Match) Open(ctx *operator.Context) error {
	if err := o.Base.Open(ctx); err != nil {
		return err
	}
	o.nfaSt = state.Value(ctx.Keyed, state.ValueDescriptor[[]any]{Name: "match-nfa", Codec: RowCodec{}})
	o.pending = openRowtimeBuffer(ctx, "match-pending")
	if !o.opts.RowTime {
		return nil
	}
	ctx.Timers.SetTriggerable(o)
	var err error
	o.wm, err = openWatermark(ctx)
	return err
}

// SnapshotState keeps the watermark with the state (see watermarkKeeper).
func (o *Match) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	o.wm.save(o.Ctx)
	return o.Base.SnapshotState(id)
}

// ProcessElement matches a row (processing time) or buffers it until the
// watermark passes it (event time).
func (o *Match) ProcessElement(r event.Record) error {
	row, err := appendOnlyRow(o.Ctx, "Match", "MATCH_RECOGNIZE", r.Value, o.reads, o.key)
	if err != nil {
		return err
	}
	if !o.opts.RowTime {
		return o.feed(o.Ctx.Now(), []any{row.Fields}, r.Timestamp)
	}
	return o.pending.bufferRow(o.Ctx, "Match", row.Fields, o.opts.TimeField)
}

// OnTimer matches the partition's rows at the timer's time.
func (o *Match) OnTimer(t operator.Timer) error {
	// A timer with no rows is a WITHIN timeout (see feed).
	rows, _ := o.pending.take(t.Timestamp)
	if len(o.opts.OrderBy) > 0 {
		slices.SortStableFunc(rows, func(a, b any) int { return compareRows(o.opts.OrderBy, a.([]any), b.([]any)) })
	}
	return o.feed(t.Timestamp, rows, t.Timestamp)
}

// ProcessWatermark fires the timers the watermark passed and forwards it.
func (o *Match) ProcessWatermark(wm event.Timestamp) error {
	if !o.opts.RowTime {
		return o.Base.ProcessWatermark(wm)
	}
	return forwardWatermark(o.Ctx, wm)
}

// feed runs the current partition's automaton over rows, all at time
// now, and emits the matches stamped ts.
func (o *Match) feed(now int64, rows []any, ts event.Timestamp) error {
	st, seq, err := o.load()
	if err != nil {
		return err
	}
	for _, r := range rows {
		seq++
		ms, err := o.nfa.Process(st, cep.Event{Seq: seq, Time: now, Row: r.([]any)}, o.condition)
		if err != nil {
			return fmt.Errorf("sql/exec: MATCH_RECOGNIZE: %w", err)
		}
		if err := o.emitMatches(ms, ts); err != nil {
			return err
		}
	}
	ms, err := o.nfa.Advance(st, now)
	if err != nil {
		return fmt.Errorf("sql/exec: MATCH_RECOGNIZE: %w", err)
	}
	if err := o.emitMatches(ms, ts); err != nil {
		return err
	}
	o.store(st, seq)
	o.timeoutTimer(st)
	return nil
}

// timeoutTimer makes sure a completed match waiting for an earlier
// partial match is emitted when WITHIN times that one out, even if no
// later row comes (the final watermark fires the timer).
func (o *Match) timeoutTimer(st *cep.State) {
	if !o.opts.RowTime || o.opts.Pattern.Within <= 0 || len(st.Completed) == 0 {
		return
	}
	first := st.Partials[0].Steps[0].Time
	for _, p := range st.Partials {
		first = min(first, p.Steps[0].Time)
	}
	o.Ctx.Timers.Register(operator.EventTime, first+o.opts.Pattern.Within, "")
}

func (o *Match) condition(v int, steps []cep.Step, ev cep.Event) (bool, error) {
	d := o.opts.Defines[v]
	if d == nil {
		return true, nil
	}
	res, err := d.eval(steps, &cep.Step{Event: ev, Var: v}, o.opts.TimeField)
	return res == true, err
}

func (o *Match) emitMatches(ms []*cep.Partial, ts event.Timestamp) error {
	for _, m := range ms {
		out := make([]any, 0, len(o.opts.PartitionKeys)+len(o.opts.Measures))
		last := m.Steps[len(m.Steps)-1].Row
		for _, k := range o.opts.PartitionKeys {
			out = append(out, last[k])
		}
		for _, me := range o.opts.Measures {
			v, err := me.eval(m.Steps, nil, o.opts.TimeField)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		emit(o.Ctx, event.Insert, out, ts)
	}
	return nil
}

// eval computes the expression over the rows of steps and, for a DEFINE
// condition, the row cur being tried.
func (e *MatchExpr) eval(steps []cep.Step, cur *cep.Step, timeField int) (any, error) {
	slots := make([]any, len(e.Slots))
	for i := range e.Slots {
		v, err := e.Slots[i].read(steps, cur, timeField)
		if err != nil {
			return nil, err
		}
		slots[i] = v
	}
	return e.Eval(slots)
}

func (s *MatchSlot) rows(steps []cep.Step, cur *cep.Step) [][]any {
	var rows [][]any
	for _, st := range steps {
		if s.Var == AllVars || st.Var == s.Var {
			rows = append(rows, st.Row)
		}
	}
	if cur != nil && (s.Var == AllVars || cur.Var == s.Var) {
		rows = append(rows, cur.Row)
	}
	return rows
}

func (s *MatchSlot) read(steps []cep.Step, cur *cep.Step, timeField int) (any, error) {
	rows := s.rows(steps, cur)
	switch s.Kind {
	case SlotLast, SlotFirst:
		i := s.Offset
		if s.Kind == SlotLast {
			i = len(rows) - 1 - s.Offset
		}
		if i < 0 || i >= len(rows) {
			return nil, nil
		}
		return s.Arg(rows[i])
	case SlotMatchRowtime:
		return rows[len(rows)-1][timeField], nil
	}
	agg := aggregator{calls: []AggCall{s.Agg}, insertOnly: true}
	acc := agg.newAcc()
	for _, r := range rows {
		var v any
		if s.Arg != nil {
			var err error
			if v, err = s.Arg(r); err != nil {
				return nil, err
			}
		}
		if err := agg.accumulate(acc, []any{v}, false, nil); err != nil {
			return nil, err
		}
	}
	return agg.result(acc)[0], nil
}

// ---------------------------------------------------------------- state

// load reads the current key's automaton state: the rows' sequence
// counter, the partial matches and the completed ones.
func (o *Match) load() (*cep.State, int64, error) {
	v, ok := o.nfaSt.Value()
	if !ok {
		return &cep.State{}, 0, nil
	}
	if len(v) != 3 {
		return nil, 0, fmt.Errorf("%w: sql/exec: Match state has %d fields, want 3", state.ErrCorrupt, len(v))
	}
	seq, _ := v[0].(int64)
	partials, err := decodePartials(v[1])
	if err != nil {
		return nil, 0, err
	}
	completed, err := decodePartials(v[2])
	if err != nil {
		return nil, 0, err
	}
	for _, p := range append(slices.Clip(partials), completed...) {
		if !o.fits(p) {
			return nil, 0, fmt.Errorf("%w: sql/exec: Match state holds a partial match of another PATTERN; restore it into the query that took it", state.ErrCorrupt)
		}
	}
	return &cep.State{Partials: partials, Completed: completed}, seq, nil
}

// fits reports whether a restored partial match can belong to this
// operator's pattern.
func (o *Match) fits(p *cep.Partial) bool {
	els := o.opts.Pattern.Elements
	if p.Elem >= len(els) {
		return false
	}
	for _, s := range p.Steps {
		if s.Var < 0 || s.Var >= len(o.opts.Defines) {
			return false
		}
	}
	return true
}

func (o *Match) store(st *cep.State, seq int64) {
	if len(st.Partials) == 0 && len(st.Completed) == 0 {
		// Nothing in flight: the counter only orders rows within a match.
		o.nfaSt.Clear()
		return
	}
	o.nfaSt.Update([]any{seq, encodePartials(st.Partials), encodePartials(st.Completed)})
}

func encodePartials(ps []*cep.Partial) []any {
	out := make([]any, len(ps))
	for i, p := range ps {
		steps := make([]any, len(p.Steps))
		for j, s := range p.Steps {
			steps[j] = []any{s.Seq, s.Time, int64(s.Var), s.Row}
		}
		out[i] = []any{int64(p.Elem), int64(p.Count), steps}
	}
	return out
}

func decodePartials(v any) ([]*cep.Partial, error) {
	bad := fmt.Errorf("%w: sql/exec: Match state: malformed partial match", state.ErrCorrupt)
	list, ok := v.([]any)
	if !ok && v != nil {
		return nil, bad
	}
	out := make([]*cep.Partial, 0, len(list))
	for _, x := range list {
		f, ok := x.([]any)
		if !ok || len(f) != 3 {
			return nil, bad
		}
		elem, _ := f[0].(int64)
		count, _ := f[1].(int64)
		steps, _ := f[2].([]any)
		p := &cep.Partial{Elem: int(elem), Count: int(count)}
		for _, s := range steps {
			sf, ok := s.([]any)
			if !ok || len(sf) != 4 {
				return nil, bad
			}
			seq, _ := sf[0].(int64)
			t, _ := sf[1].(int64)
			vr, _ := sf[2].(int64)
			row, _ := sf[3].([]any)
			p.Steps = append(p.Steps, cep.Step{Event: cep.Event{Seq: seq, Time: t, Row: row}, Var: int(vr)})
		}
		if len(p.Steps) == 0 {
			return nil, bad
		}
		out = append(out, p)
	}
	return out, nil
}
