package exec

import (
	"context"
	"fmt"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// LookupJoinOptions configures a LookupJoin.
type LookupJoinOptions struct {
	// Left is INNER (rows without a match are dropped) or LEFT (they are
	// padded with NULLs). Default INNER.
	Type JoinType
	// LeftKeys compute the lookup key from a left row: LeftKeys[i] is
	// matched with the table's field RightKeys[i]. Required.
	LeftKeys []func(fields []any) (any, error)
	// RightKeys are the table's key fields. Required, as many as LeftKeys.
	RightKeys []int
	// RightArity is the width of a table row (for LEFT padding). Required.
	RightArity int
	// Load reads the table, once per subtask when it opens. Exactly one
	// of Load and Lookup.
	Load func() ([][]any, error)
	// Lookup opens a per-key lookup of the table, once per subtask when it
	// opens (Flink's LookupFunction): each row then asks it for the table
	// rows whose RightKeys fields equal the row's key, in RightKeys order.
	// A row with a NULL key is not looked up (NULL = x is never true).
	// Exactly one of Load and Lookup.
	Lookup func() (LookupFunc, error)
	// Table names the table in errors. Default "".
	Table string
	// Condition is the rest of the ON clause over a left and a table row.
	// Default nil: true.
	Condition func(left, right []any) (bool, error)
	// Output, when set, are the columns of the joined row (the left row's,
	// then the table row's) that the join emits, in this order: the
	// planner folds a projection of columns after the join into it, so
	// that a joined row is built once, as the query reads it. Default nil:
	// every column.
	Output []int
}

// Validate checks the options.
func (o *LookupJoinOptions) Validate() error {
	switch {
	case o.Type != InnerJoin && o.Type != LeftJoin:
		return fmt.Errorf("%w: a lookup join is INNER or LEFT, not %s", ErrInvalidOptions, o.Type)
	case len(o.LeftKeys) == 0 || len(o.LeftKeys) != len(o.RightKeys):
		return fmt.Errorf("%w: a lookup join needs as many LeftKeys as RightKeys, at least one", ErrInvalidOptions)
	case (o.Load == nil) == (o.Lookup == nil):
		return fmt.Errorf("%w: a lookup join needs exactly one of Load and Lookup", ErrInvalidOptions)
	}
	for _, i := range o.Output {
		if i < 0 {
			return fmt.Errorf("%w: a lookup join's Output column %d is negative", ErrInvalidOptions, i)
		}
	}
	return checkFields("RightKeys", o.RightKeys, o.RightArity)
}

// LookupFunc finds a table's rows by key for one subtask (a JDBC query,
// with or without a cache). It is called from the subtask's goroutine only.
type LookupFunc interface {
	// Lookup returns the rows whose key fields equal key (no NULL in it).
	Lookup(ctx context.Context, key []any) ([][]any, error)
	// Close releases what the function holds (connections, its cache).
	Close() error
}

// LookupJoin joins each row with the rows of a table that match its key
// (Flink's lookup join, FOR SYSTEM_TIME AS OF a processing-time
// attribute). With Load the table is read whole when the operator opens
// and kept in memory, indexed by key (a table that does not change while
// the job runs); with Lookup each row asks for its key's rows as it
// arrives, so it sees the table as it is then (or as the lookup's cache
// remembers it). Nothing is checkpointed. A row keeps its RowKind, so any
// changelog passes. The operator is not keyed.
type LookupJoin struct {
	operator.Base
	opts   LookupJoinOptions
	index  map[string][][]any
	lookup LookupFunc
	key    []any
	keyBuf []byte // the index key of key, reused row after row
}

// NewLookupJoin returns a LookupJoin.
func NewLookupJoin(opts LookupJoinOptions) (*LookupJoin, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &LookupJoin{opts: opts, key: make([]any, len(opts.LeftKeys))}, nil
}

// Open loads and indexes the table, or opens its lookup.
func (j *LookupJoin) Open(ctx *operator.Context) error {
	if err := j.Base.Open(ctx); err != nil {
		return err
	}
	if j.opts.Lookup != nil {
		l, err := j.opts.Lookup()
		if err != nil {
			return fmt.Errorf("sql/exec: LookupJoin: opening the lookup of table %q: %w", j.opts.Table, err)
		}
		j.lookup = l
		return nil
	}
	rows, err := j.opts.Load()
	if err != nil {
		return fmt.Errorf("sql/exec: LookupJoin: loading the table: %w", err)
	}
	j.index = map[string][][]any{}
	for _, r := range rows {
		if err := checkWidth("LookupJoin", r, j.opts.RightKeys...); err != nil {
			return err
		}
		k := RowKey(r, j.opts.RightKeys)
		j.index[k] = append(j.index[k], r)
	}
	return nil
}

// ProcessElement joins one row.
func (j *LookupJoin) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	null := false
	for i, f := range j.opts.LeftKeys {
		if j.key[i], err = f(row.Fields); err != nil {
			return fmt.Errorf("sql/exec: LookupJoin key: %w", err)
		}
		null = null || j.key[i] == nil
	}
	matched := false
	if !null { // NULL = x is never true
		rights, err := j.rows()
		if err != nil {
			return err
		}
		for _, right := range rights {
			if j.opts.Condition != nil {
				ok, err := j.opts.Condition(row.Fields, right)
				if err != nil {
					return fmt.Errorf("sql/exec: LookupJoin condition: %w", err)
				}
				if !ok {
					continue
				}
			}
			matched = true
			if err := j.emitJoined(row, right, r.Timestamp); err != nil {
				return err
			}
		}
	}
	if !matched && j.opts.Type == LeftJoin {
		return j.emitJoined(row, nulls(j.opts.RightArity), r.Timestamp)
	}
	return nil
}

// emitJoined emits left joined with right: every column, or the Output
// columns.
func (j *LookupJoin) emitJoined(left event.Row, right []any, ts event.Timestamp) error {
	if j.opts.Output == nil {
		emitRow(j.Ctx, concatRow(left.Kind, left.Fields, right), ts)
		return nil
	}
	out := make([]any, len(j.opts.Output))
	n := len(left.Fields)
	for k, i := range j.opts.Output {
		switch {
		case i < n:
			out[k] = left.Fields[i]
		case i-n < len(right):
			out[k] = right[i-n]
		default:
			return fmt.Errorf("sql/exec: LookupJoin: output column %d of a row of %d columns joined with %d", i, n, len(right))
		}
	}
	emit(j.Ctx, left.Kind, out, ts)
	return nil
}

// rows returns the table rows of j.key.
func (j *LookupJoin) rows() ([][]any, error) {
	if j.lookup == nil {
		buf := j.keyBuf[:0]
		for _, v := range j.key {
			buf = appendValue(buf, v, true) // as RowKey encodes the table's keys
		}
		j.keyBuf = buf
		return j.index[string(buf)], nil
	}
	ctx := j.Ctx.Context
	if ctx == nil {
		ctx = context.Background()
	}
	rows, err := j.lookup.Lookup(ctx, j.key)
	if err != nil {
		return nil, fmt.Errorf("sql/exec: LookupJoin: table %q: looking up key %v: %w", j.opts.Table, j.key, err)
	}
	for _, r := range rows {
		if err := checkWidth("LookupJoin", r, j.opts.RightKeys...); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// Close closes the lookup.
func (j *LookupJoin) Close() error {
	if j.lookup == nil {
		return nil
	}
	err := j.lookup.Close()
	j.lookup = nil
	return err
}
