package exec

import (
	"fmt"
	"sort"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// NullOrder places NULLs in a sort.
type NullOrder uint8

const (
	// NullsDefault is Flink's default: NULL sorts as the lowest value,
	// so first in ASC and last in DESC.
	NullsDefault NullOrder = iota
	// NullsFirst is NULLS FIRST.
	NullsFirst
	// NullsLast is NULLS LAST.
	NullsLast
)

// SortKey is one ORDER BY item.
type SortKey struct {
	Field int
	Desc  bool
	Nulls NullOrder
}

// compareRows orders two rows by keys.
func compareRows(keys []SortKey, a, b []any) int {
	for _, k := range keys {
		if c := compareSortKey(k, a[k.Field], b[k.Field]); c != 0 {
			return c
		}
	}
	return 0
}

func compareSortKey(k SortKey, x, y any) int {
	if x == nil || y == nil {
		if x == nil && y == nil {
			return 0
		}
		first := k.Nulls == NullsFirst || (k.Nulls == NullsDefault && !k.Desc)
		if (x == nil) == first {
			return -1
		}
		return 1
	}
	c := compareValues(widen(x), widen(y))
	if k.Desc {
		return -c
	}
	return c
}

// TopNOptions configures a TopN: the query
//
//	SELECT … FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY p
//	  ORDER BY x DESC) AS rn FROM t) WHERE rn <= N
type TopNOptions struct {
	// PartitionKeys are the PARTITION BY fields.
	PartitionKeys []int
	// OrderBy is the ORDER BY. Required. Rows that tie keep their arrival
	// order.
	OrderBy []SortKey
	// N is the rank bound: rn <= N. Required, >= 1.
	N int
	// Start is the lowest rank kept: Start <= rn <= N (rn = 2, rn BETWEEN
	// 2 AND 5, rn > 1: Flink's ConstantRankRange). Default 0 or 1: from the
	// first. The state still holds the rows above Start.
	Start int
	// RankNumber appends rn (BIGINT) to every output row, and then a row
	// changes whenever its rank does: the output is -U/+U per changed
	// rank (upsert key: partition keys and rn). Default false: output rows
	// are the input rows, +I when one enters the top N and -D when one
	// leaves.
	RankNumber bool
	// InputInsertOnly keeps only the top N rows of each partition, as no
	// row can come back from below the top; a retraction is then an error.
	// Default false: every row of a partition is kept (an updating input
	// can retract a row of the top N, and the next one moves up).
	InputInsertOnly bool
	// StateTTL is table.exec.state.ttl: a partition untouched this long is
	// forgotten. Default 0: keep state forever.
	StateTTL time.Duration
}

// Validate checks the options.
func (o *TopNOptions) Validate() error {
	if o.N < 1 {
		return fmt.Errorf("%w: TopN has N = %d; the filter must be rn <= N with N >= 1", ErrInvalidOptions, o.N)
	}
	if o.Start > o.N {
		return fmt.Errorf("%w: TopN keeps ranks %d to %d; Start must not exceed N", ErrInvalidOptions, o.Start, o.N)
	}
	if len(o.OrderBy) == 0 {
		return fmt.Errorf("%w: TopN has no ORDER BY", ErrInvalidOptions)
	}
	for _, k := range o.OrderBy {
		if err := checkFields("OrderBy", []int{k.Field}, 0); err != nil {
			return err
		}
	}
	if err := checkFields("PartitionKeys", o.PartitionKeys, 0); err != nil {
		return err
	}
	return checkTTL(o.StateTTL)
}

// Key is the KeyFunc the operator's input must be partitioned by.
func (o *TopNOptions) Key() KeyFunc { return FieldKey(o.PartitionKeys...) }

// TopN keeps the first N rows of each partition in an order and emits the
// changes of that top N (Flink's Top-N). A partition's rows are one
// sorted list in keyed state, rewritten on every change: Top-N queries
// have a small N, and an updating input should set a state TTL.
type TopN struct {
	operator.Base
	opts  TopNOptions
	key   KeyFunc
	reads []int
	rows  state.ValueState[[]any] // the sorted rows ([]any each)
	moved []bool                  // diffRanks' scratch: which ranks changed
}

// NewTopN returns a TopN; its input must be keyed by opts.Key().
func NewTopN(opts TopNOptions) (*TopN, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	reads := append([]int(nil), opts.PartitionKeys...)
	for _, k := range opts.OrderBy {
		reads = append(reads, k.Field)
	}
	return &TopN{opts: opts, key: opts.Key(), reads: reads}, nil
}

// Open registers the state.
func (t *TopN) Open(ctx *operator.Context) error {
	if err := t.Base.Open(ctx); err != nil {
		return err
	}
	t.rows = state.Value(ctx.Keyed, state.ValueDescriptor[[]any]{Name: "topn-rows", Codec: RowCodec{},
		TTL: ttlConfig(t.opts.StateTTL)})
	return nil
}

// ProcessElement inserts or retracts the row and emits how the top N changed.
func (t *TopN) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if err := checkWidth("TopN", row.Fields, t.reads...); err != nil {
		return err
	}
	if !row.Kind.IsAccumulate() && t.opts.InputInsertOnly {
		return fmt.Errorf("%w: TopN got a %s row; the planner must not mark this input insert-only", ErrUpdatesUnsupported, row.Kind)
	}
	setKey(t.Ctx, t.key(row.Fields))
	old, _ := t.rows.Value()
	var next []any
	if row.Kind.IsAccumulate() {
		next = t.insert(old, row.Fields)
	} else {
		next = t.remove(old, row.Fields)
	}
	if next == nil {
		return nil // no change
	}
	if len(next) == 0 {
		t.rows.Clear()
	} else {
		t.rows.Update(next)
	}
	t.diff(old, next, r.Timestamp)
	return nil
}

// insert returns rows with row in place, after the rows it ties with; nil
// when row cannot enter the kept rows.
func (t *TopN) insert(rows []any, row []any) []any {
	i := sort.Search(len(rows), func(i int) bool { return compareRows(t.opts.OrderBy, row, rows[i].([]any)) < 0 })
	if t.opts.InputInsertOnly && i >= t.opts.N {
		return nil
	}
	next := make([]any, 0, len(rows)+1)
	next = append(append(append(next, rows[:i]...), row), rows[i:]...)
	if t.opts.InputInsertOnly && len(next) > t.opts.N {
		next = next[:t.opts.N]
	}
	return next
}

// remove returns rows without one row equal to row; nil when there is none.
func (t *TopN) remove(rows []any, row []any) []any {
	lo := sort.Search(len(rows), func(i int) bool { return compareRows(t.opts.OrderBy, row, rows[i].([]any)) <= 0 })
	for i := lo; i < len(rows) && compareRows(t.opts.OrderBy, row, rows[i].([]any)) == 0; i++ {
		if sameRow(rows[i].([]any), row) {
			next := make([]any, 0, len(rows)-1)
			return append(append(next, rows[:i]...), rows[i+1:]...)
		}
	}
	return nil
}

// top is the kept ranks of rows: Start to N.
func (t *TopN) top(rows []any) []any {
	return rows[min(len(rows), t.first()-1):min(len(rows), t.opts.N)]
}

// first is the lowest rank kept.
func (t *TopN) first() int { return max(1, t.opts.Start) }

// diff emits the change from old's top N to next's.
func (t *TopN) diff(old, next []any, ts event.Timestamp) {
	before, after := t.top(old), t.top(next)
	if t.opts.RankNumber {
		t.diffRanks(before, after, ts)
		return
	}
	// Retractions first, so the output never holds more than N rows.
	// count starts as the multiset after; rows also in before cancel out,
	// leaving the rows that entered.
	count := map[string]int{}
	for _, r := range after {
		count[valueKey(r)]++
	}
	for _, r := range before {
		if k := valueKey(r); count[k] > 0 {
			count[k]--
		} else {
			emit(t.Ctx, event.Delete, r.([]any), ts)
		}
	}
	for _, r := range after {
		if k := valueKey(r); count[k] > 0 {
			count[k]--
			emit(t.Ctx, event.Insert, r.([]any), ts)
		}
	}
}

// diffRanks emits, for every rank whose row changed, -U/+U (or +I for a
// new rank, -D for a lost one), each row with its rank appended.
//
// An insert at rank i shifts every rank below it, so one input row can
// emit 2 × (N − i) rows: this is q19's hot path. The ranked rows are
// carved out of one allocation per call (rankedRows), and whether a rank
// changed is decided once (rows that did not move are equal by identity,
// the first test of sameRow).
func (t *TopN) diffRanks(before, after []any, ts event.Timestamp) {
	n := max(len(before), len(after))
	moved := t.moved[:0] // which ranks changed, decided once
	changed := 0
	for i := range n {
		m := i >= len(before) || i >= len(after) || !sameRow(before[i].([]any), after[i].([]any))
		moved = append(moved, m)
		switch {
		case m && i < len(before) && i < len(after):
			changed += 2
		case m:
			changed++
		}
	}
	t.moved = moved
	if changed == 0 {
		return
	}
	rr := t.rankedRows(changed, before, after)
	for i, m := range moved {
		switch {
		case !m:
		case i >= len(before):
			emit(t.Ctx, event.Insert, rr.next(after[i], i+t.first()), ts)
		case i >= len(after):
			emit(t.Ctx, event.Delete, rr.next(before[i], i+t.first()), ts)
		default:
			emit(t.Ctx, event.UpdateBefore, rr.next(before[i], i+t.first()), ts)
			emit(t.Ctx, event.UpdateAfter, rr.next(after[i], i+t.first()), ts)
		}
	}
}

// rankedRows hands out rows with their rank appended from one backing
// array sized for count rows of the widest row of before and after. The
// rows do not overlap (each has its own capacity), so a downstream
// operator may keep or append to one without touching another; a kept row
// keeps the others of its call alive, at most 2 × N rows.
type rankedRows struct{ buf []any }

func (t *TopN) rankedRows(count int, before, after []any) rankedRows {
	w := 0
	for _, rows := range [][]any{before, after} {
		for _, r := range rows {
			w = max(w, len(r.([]any)))
		}
	}
	return rankedRows{buf: make([]any, 0, count*(w+1))}
}

// next is row r with rank appended.
func (rr *rankedRows) next(r any, rank int) []any {
	row := r.([]any)
	start := len(rr.buf)
	rr.buf = append(append(rr.buf, row...), int64(rank))
	return rr.buf[start:len(rr.buf):len(rr.buf)]
}
