package exec

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// SemiJoinMode is what a SemiJoin emits for a left row.
type SemiJoinMode uint8

const (
	// Semi emits a left row while at least one right row matches it
	// (IN, EXISTS).
	Semi SemiJoinMode = iota
	// Anti emits a left row while no right row matches it (NOT IN,
	// NOT EXISTS).
	Anti
	// Scalar emits every left row with the right side's single row of its
	// key appended, or NULLs while the key has none (a scalar subquery; a
	// correlated one is keyed by its correlated columns, a left row with a
	// NULL key gets NULLs). A second right row of a key is an error, as
	// in Flink.
	Scalar
)

// String names the mode as EXPLAIN prints the operator: LeftSemiJoin,
// LeftAntiJoin or ScalarJoin.
func (m SemiJoinMode) String() string {
	return [...]string{"LeftSemiJoin", "LeftAntiJoin", "ScalarJoin"}[m]
}

// ErrScalarSubquery reports a scalar subquery that returned more than one
// row.
var ErrScalarSubquery = errors.New("sql/exec: a scalar subquery returned more than one row")

// SemiJoinOptions configures a SemiJoin.
type SemiJoinOptions struct {
	Mode SemiJoinMode
	// LeftKeys and RightKeys are the equi-join fields, of equal length;
	// none (the default) puts every row under one key, so the operator
	// must run at parallelism 1 or behind an exchange by that key. A row
	// with a NULL in a key field matches nothing.
	LeftKeys, RightKeys []int
	// Condition is the rest of the correlation, over a left and a right
	// row. Default nil: true. Scalar takes none.
	Condition func(left, right []any) (bool, error)
	// LeftWidth is how many leading fields of a left row are output (the
	// planner may append computed key fields behind them). Default 0: all.
	LeftWidth int
	// RightArity is the width of a right row: Scalar pads with that many
	// NULLs while the right side is empty. Required for Scalar.
	RightArity int
	// StateTTL is table.exec.state.ttl for both sides' rows. Default 0:
	// keep state forever.
	StateTTL time.Duration
}

// Validate checks the options.
func (o *SemiJoinOptions) Validate() error {
	if o.Mode > Scalar {
		return fmt.Errorf("%w: unknown semi join mode %d", ErrInvalidOptions, o.Mode)
	}
	if len(o.LeftKeys) != len(o.RightKeys) {
		return fmt.Errorf("%w: a semi join needs as many LeftKeys as RightKeys (got %d and %d)", ErrInvalidOptions, len(o.LeftKeys), len(o.RightKeys))
	}
	if err := checkFields("LeftKeys", o.LeftKeys, 0); err != nil {
		return err
	}
	if err := checkFields("RightKeys", o.RightKeys, 0); err != nil {
		return err
	}
	if o.Mode == Scalar && (o.RightArity < 1 || o.Condition != nil) {
		return fmt.Errorf("%w: a scalar subquery join takes RightArity and no condition", ErrInvalidOptions)
	}
	return checkTTL(o.StateTTL)
}

// LeftKey is the KeyFunc the left input must be partitioned by: its
// LeftKeys fields.
func (o *SemiJoinOptions) LeftKey() KeyFunc { return FieldKey(o.LeftKeys...) }

// RightKey is the KeyFunc the right input must be partitioned by: its
// RightKeys fields, so that rows with equal join keys meet in one subtask.
func (o *SemiJoinOptions) RightKey() KeyFunc { return FieldKey(o.RightKeys...) }

// SemiJoin is Flink's streaming semi/anti join (and the join of a scalar
// subquery): the left rows of a key live in keyed state as a multiset,
// each with how many right rows match it; the right rows as a multiset.
// A left row goes out (+I) when it arrives matched (Semi) or unmatched
// (Anti), and is retracted (-D) with its retraction. A right row that
// gives a left row its first match emits it (Semi) or retracts it (Anti);
// one that takes away its last match does the opposite. So the output
// follows both sides' changes, as Flink's regular semi/anti join does.
//
// Input 1 (ProcessElement) is the left side, input 2 the right.
type SemiJoin struct {
	operator.Base
	opts  SemiJoinOptions
	keys  [2]KeyFunc
	reads [2][]int
	side  [2]state.MapState[string, []any]
}

var _ operator.TwoInput = (*SemiJoin)(nil)

// NewSemiJoin returns a SemiJoin; its inputs must be keyed by
// opts.LeftKey() and opts.RightKey().
func NewSemiJoin(opts SemiJoinOptions) (*SemiJoin, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &SemiJoin{opts: opts, keys: [2]KeyFunc{opts.LeftKey(), opts.RightKey()},
		reads: [2][]int{opts.LeftKeys, opts.RightKeys}}, nil
}

// Open registers the state.
func (j *SemiJoin) Open(ctx *operator.Context) error {
	if err := j.Base.Open(ctx); err != nil {
		return err
	}
	ttl := ttlConfig(j.opts.StateTTL)
	for s, name := range []string{"semi-left", "semi-right"} {
		j.side[s] = state.Map(ctx.Keyed, state.MapDescriptor[string, []any]{Name: name, ValueCodec: RowCodec{}, TTL: ttl})
	}
	return nil
}

// ProcessElement takes a row of the left input.
func (j *SemiJoin) ProcessElement(r event.Record) error { return j.process(0, r) }

// ProcessElement2 takes a row of the right input.
func (j *SemiJoin) ProcessElement2(r event.Record) error { return j.process(1, r) }

func (j *SemiJoin) process(s int, r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if err := checkWidth(j.opts.Mode.String(), row.Fields, j.reads[s]...); err != nil {
		return err
	}
	add := row.Kind.IsAccumulate()
	if nullKey(row.Fields, j.reads[s]) {
		// It can match nothing: an anti join passes a left row on, a
		// semi join drops it, a right row is dropped.
		switch {
		case s == 0 && j.opts.Mode == Anti:
			j.emitLeft(add, row.Fields, 1, r.Timestamp)
		case s == 0 && j.opts.Mode == Scalar:
			j.emitScalar(add, row.Fields, 1, nil, r.Timestamp)
		}
		return nil
	}
	setKey(j.Ctx, j.keys[s](row.Fields))
	matches, err := j.matching(s, row.Fields)
	if err != nil {
		return err
	}
	if s == 0 {
		j.left(add, row.Fields, matches, r.Timestamp)
		return nil
	}
	return j.right(add, row.Fields, matches, r.Timestamp)
}

// matching returns the other side's rows that match row of side s.
func (j *SemiJoin) matching(s int, row []any) ([]joinEntry, error) {
	out, err := matchEntries(j.side[1-s], s, row, j.opts.Condition)
	if err != nil {
		return nil, fmt.Errorf("sql/exec: %s condition: %w", j.opts.Mode, err)
	}
	return out, nil
}

// left applies a left row (add: accumulate, else retract) that matches
// the right rows matches.
func (j *SemiJoin) left(add bool, row []any, matches []joinEntry, ts event.Timestamp) {
	var total int64
	for _, m := range matches {
		total += m.count
	}
	j.emitFor(add, row, total, matches, ts)
	k := valueKey(row)
	e := joinEntry{key: k, row: row}
	if v, ok := j.side[0].Get(k); ok {
		e = entryOf(k, v)
	}
	if add {
		e.count++
	} else if e.count--; e.count <= 0 {
		j.side[0].Remove(k)
		return
	}
	e.matches = total
	j.side[0].Put(k, e.value())
}

// emitFor emits what a left row's change shows given its matches.
func (j *SemiJoin) emitFor(add bool, row []any, total int64, matches []joinEntry, ts event.Timestamp) {
	switch j.opts.Mode {
	case Semi:
		if total > 0 {
			j.emitLeft(add, row, 1, ts)
		}
	case Anti:
		if total == 0 {
			j.emitLeft(add, row, 1, ts)
		}
	case Scalar:
		j.emitScalar(add, row, 1, j.single(matches), ts)
	}
}

// single is the right side's row for Scalar, or nil.
func (j *SemiJoin) single(matches []joinEntry) []any {
	if len(matches) == 0 {
		return nil
	}
	return matches[0].row
}

// right applies a right row to the left rows it matches.
func (j *SemiJoin) right(add bool, row []any, matches []joinEntry, ts event.Timestamp) error {
	k := valueKey(row)
	e := joinEntry{key: k, row: row}
	if v, ok := j.side[1].Get(k); ok {
		e = entryOf(k, v)
	}
	if j.opts.Mode == Scalar {
		return j.rightScalar(add, e, ts)
	}
	if !add && e.count == 0 {
		return nil // not there (its TTL expired): no left row counts it
	}
	for _, m := range matches {
		before := m.matches
		if add {
			m.matches++
		} else {
			m.matches--
		}
		j.side[0].Put(m.key, m.value())
		// The left row shows when it has a match (Semi) or none (Anti).
		was, is := (before > 0) == (j.opts.Mode == Semi), (m.matches > 0) == (j.opts.Mode == Semi)
		if was != is {
			j.emitLeft(is, m.row, m.count, ts)
		}
	}
	j.putRight(add, e)
	return nil
}

func (j *SemiJoin) putRight(add bool, e joinEntry) {
	if add {
		e.count++
	} else if e.count--; e.count <= 0 {
		j.side[1].Remove(e.key)
		return
	}
	j.side[1].Put(e.key, e.value())
}

// rightScalar replaces the single right row every left row carries.
func (j *SemiJoin) rightScalar(add bool, e joinEntry, ts event.Timestamp) error {
	var live []joinEntry
	j.side[1].Range(func(k string, v []any) bool {
		live = append(live, entryOf(k, v))
		return true
	})
	var n int64
	for _, o := range live {
		n += o.count
	}
	if add && n > 0 {
		return ErrScalarSubquery
	}
	if !add && (e.count == 0 || n == 0) {
		return nil // not there (its TTL expired): nothing shows it
	}
	old, now := []any(nil), e.row
	if !add {
		old, now = e.row, nil
	}
	var lefts []joinEntry
	j.side[0].Range(func(k string, v []any) bool {
		lefts = append(lefts, entryOf(k, v))
		return true
	})
	slices.SortFunc(lefts, func(a, b joinEntry) int { return strings.Compare(a.key, b.key) })
	for _, l := range lefts {
		j.emitScalar(false, l.row, l.count, old, ts)
		j.emitScalar(true, l.row, l.count, now, ts)
	}
	j.putRight(add, e)
	return nil
}

// emitLeft emits a left row n times: +I (add) or -D.
func (j *SemiJoin) emitLeft(add bool, row []any, n int64, ts event.Timestamp) {
	kind := event.Insert
	if !add {
		kind = event.Delete
	}
	if w := j.opts.LeftWidth; w > 0 && w < len(row) {
		row = row[:w:w]
	}
	for range n {
		emit(j.Ctx, kind, row, ts)
	}
}

// emitScalar emits a left row with the right row (nil: NULLs) n times.
func (j *SemiJoin) emitScalar(add bool, row []any, n int64, right []any, ts event.Timestamp) {
	if w := j.opts.LeftWidth; w > 0 && w < len(row) {
		row = row[:w:w]
	}
	if right == nil {
		right = nulls(j.opts.RightArity)
	}
	kind := event.Insert
	if !add {
		kind = event.Delete
	}
	out := concat(row, right)
	for range n {
		emit(j.Ctx, kind, out, ts)
	}
}
