package exec

import (
	"bytes"
	"fmt"
	"sort"
	"time"
	"unsafe"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/binrow"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
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
	// Types, when set, are the input rows' field types, and the state
	// keeps each partition's rows as binary rows (package sql/binrow):
	// the rows are compared on their bytes, and on Pebble a partition's
	// list is read without decoding its rows, only the ones emitted. A
	// checkpoint of the earlier format (rows as RowCodec values) is
	// converted as it is read. Types binrow does not hold (binrow.Supports)
	// are an error. Default nil: rows as RowCodec values.
	Types []types.Type
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
	if o.Types != nil {
		if _, err := binrow.NewLayout(o.Types); err != nil {
			return fmt.Errorf("%w: TopN Types: %v", ErrInvalidOptions, err)
		}
		for _, k := range o.OrderBy {
			if k.Field >= len(o.Types) {
				return fmt.Errorf("%w: TopN orders by field %d of rows of %d Types", ErrInvalidOptions, k.Field, len(o.Types))
			}
		}
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
	opts    TopNOptions
	key     KeyFunc
	reads   []int
	rows    state.ValueState[[]rankedRow] // the sorted rows
	moved   []bool                        // diffRanks' scratch: which ranks changed
	ids     map[unsafe.Pointer]int        // unmatched's scratch
	gone    []rankedRow                   // unmatched's results
	came    []rankedRow
	used    []bool         // diff's scratch: which rows of came cancelled
	layout  *binrow.Layout // of binary rows; nil without TopNOptions.Types
	builder binrow.Builder // the input row's binary form, until it is kept
	decoder rowDecoder
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
	t := &TopN{opts: opts, key: opts.Key(), reads: reads}
	if opts.Types != nil {
		var err error
		if t.layout, err = binrow.NewLayout(opts.Types); err != nil {
			return nil, err
		}
		t.decoder.layout = t.layout
	}
	return t, nil
}

// Open registers the state.
func (t *TopN) Open(ctx *operator.Context) error {
	if err := t.Base.Open(ctx); err != nil {
		return err
	}
	t.rows = state.Value(ctx.Keyed, state.ValueDescriptor[[]rankedRow]{Name: "topn-rows",
		Codec: rankedRowsCodec{layout: t.layout}, TTL: ttlConfig(t.opts.StateTTL)})
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
	t.decoder.reset()
	old, _ := t.rows.Value()
	in := rankedRow{fields: row.Fields}
	if t.layout != nil && !withFields(old) {
		if err := t.encode(&in); err != nil {
			return err
		}
	}
	var next []rankedRow
	if row.Kind.IsAccumulate() {
		next = t.insert(old, in)
	} else {
		next = t.remove(old, in)
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

// withFields reports whether every row carries its fields: on the heap,
// rows that arrived since the last restore. Then the input row is
// compared on its fields, as before binary rows, and joins the list
// without a binary form (the codec encodes it when the state is written:
// on Pebble at once, on the heap at a snapshot). Otherwise every row of
// the list has its binary form (it was read from bytes, or joined such a
// list), and the input row is encoded to be compared on its bytes.
func withFields(rows []rankedRow) bool {
	for _, r := range rows {
		if r.fields == nil {
			return false
		}
	}
	return true
}

// encode gives r its binary form, in the builder's buffer.
func (t *TopN) encode(r *rankedRow) error {
	bin, err := t.builder.Build(t.layout, r.fields)
	if err != nil {
		return fmt.Errorf("sql/exec: TopN: %w", err)
	}
	r.bin = bin
	return nil
}

// compare orders two rows by the ORDER BY: on their fields when both
// carry them, else on their binary forms (see withFields).
func (t *TopN) compare(a, b rankedRow) int {
	if a.fields != nil && b.fields != nil {
		return compareRows(t.opts.OrderBy, a.fields, b.fields)
	}
	return compareBinary(t.layout, t.opts.OrderBy, a.bin, b.bin)
}

// same reports whether two rows are equal (by identity first: rows that
// did not move are the same rankedRow).
func (t *TopN) same(a, b rankedRow) bool {
	if len(a.bin) > 0 && len(a.bin) == len(b.bin) && unsafe.SliceData(a.bin) == unsafe.SliceData(b.bin) {
		return true
	}
	if a.fields != nil && b.fields != nil {
		return sameRow(a.fields, b.fields)
	}
	return binrow.Equal(a.bin, b.bin)
}

// insert returns rows with row in place, after the rows it ties with; nil
// when row cannot enter the kept rows.
func (t *TopN) insert(rows []rankedRow, row rankedRow) []rankedRow {
	i := sort.Search(len(rows), func(i int) bool { return t.compare(row, rows[i]) < 0 })
	if t.opts.InputInsertOnly && i >= t.opts.N {
		return nil
	}
	if row.bin != nil {
		row.bin = bytes.Clone(row.bin) // kept: out of the builder's buffer
	}
	next := make([]rankedRow, 0, len(rows)+1)
	next = append(append(append(next, rows[:i]...), row), rows[i:]...)
	if t.opts.InputInsertOnly && len(next) > t.opts.N {
		next = next[:t.opts.N]
	}
	return next
}

// remove returns rows without one row equal to row; nil when there is none.
func (t *TopN) remove(rows []rankedRow, row rankedRow) []rankedRow {
	lo := sort.Search(len(rows), func(i int) bool { return t.compare(row, rows[i]) <= 0 })
	for i := lo; i < len(rows) && t.compare(row, rows[i]) == 0; i++ {
		if t.same(rows[i], row) {
			next := make([]rankedRow, 0, len(rows)-1)
			return append(append(next, rows[:i]...), rows[i+1:]...)
		}
	}
	return nil
}

// top is the kept ranks of rows: Start to N.
func (t *TopN) top(rows []rankedRow) []rankedRow {
	return rows[min(len(rows), t.first()-1):min(len(rows), t.opts.N)]
}

// first is the lowest rank kept.
func (t *TopN) first() int { return max(1, t.opts.Start) }

// diff emits the change from old's top N to next's.
func (t *TopN) diff(old, next []rankedRow, ts event.Timestamp) {
	before, after := t.top(old), t.top(next)
	if t.opts.RankNumber {
		t.diffRanks(before, after, ts)
		return
	}
	// Retractions first, so the output never holds more than N rows.
	// Rows in both lists are the same rankedRow (the list is copied, not
	// its rows) and cancel by identity. What is left are the rows the
	// input row moved out of and into the top N, one or two each way;
	// of those, equal rows cancel too.
	gone, came := t.unmatched(before, after)
	used := t.used[:0]
	for range came {
		used = append(used, false)
	}
	t.used = used
	for _, g := range gone {
		cancelled := false
		for j, c := range came {
			if !used[j] && t.same(g, c) {
				used[j], cancelled = true, true
				break
			}
		}
		if !cancelled {
			emit(t.Ctx, event.Delete, t.decoder.fields(g), ts)
		}
	}
	for j, c := range came {
		if !used[j] {
			emit(t.Ctx, event.Insert, t.decoder.fields(c), ts)
		}
	}
}

// unmatched returns the rows of before and of after that the other list
// does not hold by identity (the same fields, or the same bytes), in
// scratch slices valid until the next call.
func (t *TopN) unmatched(before, after []rankedRow) (gone, came []rankedRow) {
	if t.ids == nil {
		t.ids = map[unsafe.Pointer]int{}
	}
	clear(t.ids)
	for _, r := range after {
		t.ids[r.id()]++
	}
	gone, came = t.gone[:0], t.came[:0]
	for _, r := range before {
		if id := r.id(); t.ids[id] > 0 {
			t.ids[id]--
		} else {
			gone = append(gone, r)
		}
	}
	for _, r := range after {
		if id := r.id(); t.ids[id] > 0 {
			t.ids[id]--
			came = append(came, r)
		}
	}
	t.gone, t.came = gone, came
	return gone, came
}

// diffRanks emits, for every rank whose row changed, -U/+U (or +I for a
// new rank, -D for a lost one), each row with its rank appended.
//
// An insert at rank i shifts every rank below it, so one input row can
// emit 2 × (N − i) rows: this is q19's hot path. Each ranked row is one
// allocation with its header (emitRanked), and whether a rank changed is
// decided once (rows that did not move are equal by identity, the first
// test of sameRow).
func (t *TopN) diffRanks(before, after []rankedRow, ts event.Timestamp) {
	n := max(len(before), len(after))
	moved := t.moved[:0] // which ranks changed, decided once
	for i := range n {
		moved = append(moved, i >= len(before) || i >= len(after) || !t.same(before[i], after[i]))
	}
	t.moved = moved
	for i, m := range moved {
		rank := i + t.first()
		switch {
		case !m:
		case i >= len(before):
			t.emitRanked(event.Insert, after[i], rank, ts)
		case i >= len(after):
			t.emitRanked(event.Delete, before[i], rank, ts)
		default:
			t.emitRanked(event.UpdateBefore, before[i], rank, ts)
			t.emitRanked(event.UpdateAfter, after[i], rank, ts)
		}
	}
}

// emitRanked emits row r of kind with its rank appended, in a row of its
// own: a downstream operator may keep it (a sink's materializer, a join)
// without keeping other rows alive. Rows of one call carved out of one
// array did that, once a projection after the Top-N handed its rows on
// as they are (Calc.Prefix; a review's find).
func (t *TopN) emitRanked(kind event.RowKind, r rankedRow, rank int, ts event.Timestamp) {
	fields := t.decoder.fields(r)
	out := event.NewRow(kind, len(fields)+1)
	copy(out.Fields, fields)
	out.Fields[len(fields)] = int64(rank)
	emitRow(t.Ctx, out, ts)
}
