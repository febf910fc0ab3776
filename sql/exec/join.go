package exec

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/binrow"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
)

// JoinType is the kind of a join.
type JoinType uint8

const (
	// InnerJoin emits only the pairs of rows whose keys match.
	InnerJoin JoinType = iota
	// LeftJoin (LEFT [OUTER] JOIN) also emits each left row that has no
	// match, padded with NULLs; a regular Join retracts that row when a
	// match arrives later, as Flink's.
	LeftJoin
	// RightJoin is LeftJoin with the sides swapped.
	RightJoin
	// FullJoin keeps the unmatched rows of both sides, NULL-padded.
	FullJoin
)

// String is INNER, LEFT, RIGHT or FULL, as EXPLAIN prints the join type.
func (t JoinType) String() string {
	return [...]string{"INNER", "LEFT", "RIGHT", "FULL"}[t]
}

// outer reports whether side (0 left, 1 right) keeps its unmatched rows.
func (t JoinType) outer(side int) bool {
	return t == FullJoin || (side == 0 && t == LeftJoin) || (side == 1 && t == RightJoin)
}

// JoinOptions configures a Join.
type JoinOptions struct {
	// Type is INNER, LEFT, RIGHT or FULL (OUTER).
	Type JoinType
	// LeftKeys and RightKeys are the equi-join fields: LeftKeys[i] =
	// RightKeys[i], of equal length. A row with a NULL in any key field
	// (not NullSafe) matches no row (SQL has NULL = NULL unknown): an inner
	// side drops it, an outer side emits it NULL-padded and keeps no state
	// for it. Without keys (a join whose ON has no equality, as Flink
	// plans it with a singleton exchange) every row has the same key, so
	// one subtask joins them all.
	LeftKeys, RightKeys []int
	// NullSafe marks the key pairs compared by IS NOT DISTINCT FROM: NULL
	// matches NULL there (Flink's filterNullKeys false). Default nil: none.
	NullSafe []bool
	// LeftArity and RightArity are the number of fields of a row of each
	// side: an outer join pads the missing side with that many NULLs.
	// Required for the padded side of an outer join.
	LeftArity, RightArity int
	// Condition is the rest of the ON clause (non-equi), over a left and a
	// right row. Default nil: true.
	Condition func(left, right []any) (bool, error)
	// StateTTL is table.exec.state.ttl for both sides' rows. Default 0:
	// keep state forever.
	StateTTL time.Duration
	// LeftInsertOnly and RightInsertOnly say a side's input has only +I
	// rows. Such a side, unless it is an outer side, keeps its rows in a
	// list in arrival order instead of a multiset keyed by each row's
	// encoding: no row is ever looked up to be retracted, so none is
	// encoded. A retraction on it is an error. Default false.
	LeftInsertOnly, RightInsertOnly bool
	// LeftTypes and RightTypes, when set, are the field types of each
	// side's rows, and a side kept as a list (insert-only, inner) keeps
	// them as binary rows (package sql/binrow) when binrow holds the
	// types: Pebble stores and reads their bytes as they are instead of
	// RowCodec's encoding; the heap keeps the values and encodes them
	// only at a snapshot. A checkpoint of the earlier format is read as
	// it is. Default nil: RowCodec values.
	LeftTypes, RightTypes []types.Type
}

// listLayout is the binary row layout of side s's list (nil: RowCodec
// values, or a side kept as a map).
func (o *JoinOptions) listLayout(s int) *binrow.Layout {
	ts := [2][]types.Type{o.LeftTypes, o.RightTypes}[s]
	insertOnly := [2]bool{o.LeftInsertOnly, o.RightInsertOnly}[s]
	if ts == nil || !insertOnly || o.Type.outer(s) {
		return nil
	}
	l, err := binrow.NewLayout(ts)
	if err != nil {
		return nil
	}
	return l
}

// KeepsBinaryRows reports whether a side's state holds binary rows (see
// LeftTypes), for the state fingerprint.
func (o *JoinOptions) KeepsBinaryRows() bool { return o.listLayout(0) != nil || o.listLayout(1) != nil }

// Validate checks the options.
func (o *JoinOptions) Validate() error {
	if o.Type > FullJoin {
		return fmt.Errorf("%w: unknown join type %d", ErrInvalidOptions, o.Type)
	}
	if len(o.LeftKeys) != len(o.RightKeys) {
		return fmt.Errorf("%w: a join needs as many LeftKeys as RightKeys (got %d and %d)", ErrInvalidOptions, len(o.LeftKeys), len(o.RightKeys))
	}
	if o.NullSafe != nil && len(o.NullSafe) != len(o.LeftKeys) {
		return fmt.Errorf("%w: NullSafe has %d entries for %d key pairs", ErrInvalidOptions, len(o.NullSafe), len(o.LeftKeys))
	}
	if err := checkFields("LeftKeys", o.LeftKeys, o.LeftArity); err != nil {
		return err
	}
	if err := checkFields("RightKeys", o.RightKeys, o.RightArity); err != nil {
		return err
	}
	if o.Type.outer(0) && o.RightArity < 1 {
		return fmt.Errorf("%w: a %s join pads right rows with NULLs; set RightArity", ErrInvalidOptions, o.Type)
	}
	if o.Type.outer(1) && o.LeftArity < 1 {
		return fmt.Errorf("%w: a %s join pads left rows with NULLs; set LeftArity", ErrInvalidOptions, o.Type)
	}
	return checkTTL(o.StateTTL)
}

// LeftKey is the KeyFunc the left input must be partitioned by: its
// LeftKeys fields. Rows of the two sides with equal join keys get equal
// keys.
func (o *JoinOptions) LeftKey() KeyFunc { return FieldKey(o.LeftKeys...) }

// RightKey is the KeyFunc the right input must be partitioned by: its
// RightKeys fields.
func (o *JoinOptions) RightKey() KeyFunc { return FieldKey(o.RightKeys...) }

// Join is a regular equi-join of two changelogs (Flink's streaming join):
// each side's rows live in keyed state, as a map from row to [count,
// matches, row] (a multiset, with, for an outer side, how many rows of the
// other side match each row). Output rows are [left…, right…], +I for a
// joined (or NULL-padded) row that appears, -D for one that goes.
//
// Outer sides: a row without a match emits +I [row, NULL…]; when its first
// match arrives it emits -D [row, NULL…] before the +I of the joined row;
// when its last match is retracted, -D of the joined row, then +I [row,
// NULL…] again.
//
// Input 1 (ProcessElement) is the left side, input 2 the right.
type Join struct {
	operator.Base
	opts  JoinOptions
	keys  [2]KeyFunc
	reads [2][]int
	side  [2]state.MapState[string, []any]
	// list[s] is set for an insert-only inner side s: its rows in order.
	list  [2]state.ListState[stateRow]
	codec [2]stateRowCodec // list[s]'s
	build binrow.Builder   // list rows are built here, then copied out
	arena [2]rowArena      // into list[s]'s arena
	// encodes[s]: list[s] keeps only its rows' encodings
	// (state.KeepsEncodings), so a row is built in enc, reused.
	encodes [2]bool
	enc     []byte
	// probed[s] counts the rows of list[s] probes read, added[s] the rows
	// added to it: a side read more often than added to (a lookup side,
	// each row read by many probes) keeps its rows boxed, the others
	// binary (see stateRowCodec.stored).
	probed, added [2]int64
	// found holds matchingList's result, kept the rows of list state it
	// read: a row's matches are used up before the next row comes, so one
	// slice of each serves every row.
	found []joinEntry
	kept  []stateRow
}

var _ operator.TwoInput = (*Join)(nil)

// NewJoin returns a Join; its inputs must be keyed by opts.LeftKey() and
// opts.RightKey().
func NewJoin(opts JoinOptions) (*Join, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	j := &Join{opts: opts, keys: [2]KeyFunc{opts.LeftKey(), opts.RightKey()},
		reads: [2][]int{opts.LeftKeys, opts.RightKeys}}
	for s, what := range []string{"Join left row", "Join right row"} {
		j.codec[s] = stateRowCodec{layout: opts.listLayout(s), what: what}
	}
	return j, nil
}

// Open registers the state.
func (j *Join) Open(ctx *operator.Context) error {
	if err := j.Base.Open(ctx); err != nil {
		return err
	}
	ttl := ttlConfig(j.opts.StateTTL)
	insertOnly := [2]bool{j.opts.LeftInsertOnly, j.opts.RightInsertOnly}
	for s, name := range []string{"join-left", "join-right"} {
		if insertOnly[s] && !j.opts.Type.outer(s) {
			j.list[s] = state.List(ctx.Keyed, state.ListDescriptor[stateRow]{Name: name + "-rows", Codec: j.codec[s].stateCodec(), TTL: ttl})
			j.encodes[s] = state.KeepsEncodings(j.list[s])
			continue
		}
		j.side[s] = state.Map(ctx.Keyed, state.MapDescriptor[string, []any]{Name: name, ValueCodec: RowCodec{}, TTL: ttl})
	}
	return nil
}

// ProcessElement takes a row of the left input.
func (j *Join) ProcessElement(r event.Record) error { return j.process(0, r) }

// ProcessElement2 takes a row of the right input.
func (j *Join) ProcessElement2(r event.Record) error { return j.process(1, r) }

// joinEntry is a stored row: [count, matches, row].
type joinEntry struct {
	key            string
	count, matches int64
	row            []any
}

func entryOf(k string, e []any) joinEntry {
	return joinEntry{key: k, count: e[0].(int64), matches: e[1].(int64), row: e[2].([]any)}
}

func (e joinEntry) value() []any { return []any{e.count, e.matches, e.row} }

func (j *Join) process(s int, r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if err := checkWidth("Join", row.Fields, j.reads[s]...); err != nil {
		return err
	}
	if j.list[s] != nil && !row.Kind.IsAccumulate() {
		return fmt.Errorf("%w: Join got a %s row on a side the planner marked insert-only", ErrUpdatesUnsupported, row.Kind)
	}
	if nullKeyUnsafe(row.Fields, j.reads[s], j.opts.NullSafe) {
		j.unmatchable(s, row, r.Timestamp)
		return nil
	}
	setKey(j.Ctx, j.keys[s](row.Fields))
	matches, err := j.matching(s, row.Fields)
	if err != nil {
		return err
	}
	if row.Kind.IsAccumulate() {
		j.accumulate(s, row.Fields, matches, r.Timestamp)
	} else {
		j.retract(s, row.Fields, matches, r.Timestamp)
	}
	clear(j.found) // no rows held past their use
	clear(j.kept)
	return nil
}

// unmatchable passes on a row whose key holds a NULL: no row of the other
// side can ever join it, so it needs no state; an outer side's row comes
// and goes NULL-padded, an inner side's is dropped.
func (j *Join) unmatchable(s int, row event.Row, ts event.Timestamp) {
	if !j.opts.Type.outer(s) {
		return
	}
	kind := event.Insert
	if !row.Kind.IsAccumulate() {
		kind = event.Delete
	}
	emitRow(j.Ctx, j.padded(kind, s, row.Fields), ts)
}

// matching returns the other side's rows that join with row of side s.
func (j *Join) matching(s int, row []any) ([]joinEntry, error) {
	if j.list[1-s] != nil {
		return j.matchingList(s, row)
	}
	out, err := matchEntries(j.side[1-s], s, row, j.opts.Condition)
	if err != nil {
		return nil, fmt.Errorf("sql/exec: Join condition: %w", err)
	}
	return out, nil
}

// matchEntries returns the live entries of other (the side facing side s)
// whose rows meet cond with row, in key order: map order is random, and a
// fixed output order keeps runs reproducible.
func matchEntries(other state.MapState[string, []any], s int, row []any, cond func(l, r []any) (bool, error)) ([]joinEntry, error) {
	var out []joinEntry
	var err error
	other.Range(func(k string, e []any) bool {
		o := entryOf(k, e)
		ok := true
		if cond != nil {
			l, r := row, o.row
			if s == 1 {
				l, r = r, l
			}
			ok, err = cond(l, r)
		}
		if ok && err == nil && o.count > 0 {
			out = append(out, o)
		}
		return err == nil
	})
	slices.SortFunc(out, func(a, b joinEntry) int { return strings.Compare(a.key, b.key) })
	return out, err
}

// matchingList is matching over a side kept as a list, in arrival order.
func (j *Join) matchingList(s int, row []any) ([]joinEntry, error) {
	out := j.found[:0]
	j.kept = j.list[1-s].AppendTo(j.kept[:0])
	j.probed[1-s] += int64(len(j.kept))
	for _, kept := range j.kept {
		o := j.codec[1-s].fieldsOf(kept)
		if j.opts.Condition != nil {
			l, r := row, o
			if s == 1 {
				l, r = r, l
			}
			ok, err := j.opts.Condition(l, r)
			if err != nil {
				clear(out) // no rows held past their use
				clear(j.kept)
				return nil, fmt.Errorf("sql/exec: Join condition: %w", err)
			}
			if !ok {
				continue
			}
		}
		out = append(out, joinEntry{count: 1, row: o})
	}
	j.found = out
	return out, nil
}

// joined is the output row of kind of row of side s with other.
func (j *Join) joined(kind event.RowKind, s int, row, other []any) *event.Row {
	if s == 0 {
		return concatRow(kind, row, other)
	}
	return concatRow(kind, other, row)
}

// padded is row of side s with the other side's fields NULL.
func (j *Join) padded(kind event.RowKind, s int, row []any) *event.Row {
	if s == 0 {
		return concatRow(kind, row, nulls(j.opts.RightArity))
	}
	return concatRow(kind, nulls(j.opts.LeftArity), row)
}

// emitN emits r n times (a stored row counts n identical rows): one boxed
// value, shared.
func (j *Join) emitN(r *event.Row, n int64, ts event.Timestamp) {
	if n <= 0 {
		return
	}
	rec := event.Record{Value: event.BoxRow(r), Timestamp: ts}
	for range n {
		j.Ctx.Output.Collect(rec)
	}
}

func (j *Join) accumulate(s int, row []any, matches []joinEntry, ts event.Timestamp) {
	var total int64
	for _, m := range matches {
		if j.opts.Type.outer(1 - s) {
			if m.matches == 0 {
				j.emitN(j.padded(event.Delete, 1-s, m.row), m.count, ts)
			}
			m.matches++
			j.side[1-s].Put(m.key, m.value())
		}
		j.emitN(j.joined(event.Insert, s, row, m.row), m.count, ts)
		total += m.count
	}
	if total == 0 && j.opts.Type.outer(s) {
		emitRow(j.Ctx, j.padded(event.Insert, s, row), ts)
	}
	if j.list[s] != nil {
		j.added[s]++
		j.list[s].Add(j.listRow(s, row))
		return
	}
	k := valueKey(row)
	e := joinEntry{key: k, row: row}
	if v, ok := j.side[s].Get(k); ok {
		e = entryOf(k, v)
	}
	e.count++
	e.matches = total
	j.side[s].Put(k, e.value())
}

// listRow is row as list[s] keeps it: boxed on a side probes read more
// often than rows are added to it, else a binary row: built in a buffer
// reused row after row when the state keeps only its encoding (the heap
// backend's lists without TTL keep it in chunks of their own; Pebble),
// else placed in the side's arena when the state has no TTL. Strings read from a stored row
// share its bytes and may be kept downstream (an aggregate's MAX, a
// sink's buffer), which keeps their chunk alive; without a TTL the side's
// rows, and so their chunks, live as long anyway, but with one a chunk
// of expired rows would outlive them, so each row is then its own
// allocation.
func (j *Join) listRow(s int, row []any) stateRow {
	if j.probed[s] > j.added[s] {
		return fieldsRow(row)
	}
	if j.encodes[s] {
		return j.codec[s].over(&j.enc, row)
	}
	arena := &j.arena[s]
	if j.opts.StateTTL > 0 {
		arena = nil
	}
	return j.codec[s].stored(arena, &j.build, row)
}

// retract undoes row. Its outputs go out even when the row is not in
// state (its TTL expired): downstream may still hold them.
func (j *Join) retract(s int, row []any, matches []joinEntry, ts event.Timestamp) {
	var total int64
	for _, m := range matches {
		j.emitN(j.joined(event.Delete, s, row, m.row), m.count, ts)
		total += m.count
		if j.opts.Type.outer(1 - s) {
			m.matches--
			j.side[1-s].Put(m.key, m.value())
			if m.matches == 0 {
				j.emitN(j.padded(event.Insert, 1-s, m.row), m.count, ts)
			}
		}
	}
	if total == 0 && j.opts.Type.outer(s) {
		emitRow(j.Ctx, j.padded(event.Delete, s, row), ts)
	}
	k := valueKey(row)
	v, ok := j.side[s].Get(k)
	if !ok {
		return
	}
	e := entryOf(k, v)
	if e.count--; e.count <= 0 {
		j.side[s].Remove(k)
		return
	}
	j.side[s].Put(k, e.value())
}
