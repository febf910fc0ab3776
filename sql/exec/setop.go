package exec

import (
	"fmt"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// SetOpKind is the set operation whose copies ReplicateRows emits.
type SetOpKind uint8

const (
	// Intersect keeps a row present on both sides, once.
	Intersect SetOpKind = iota
	// IntersectAll keeps min(left, right) copies.
	IntersectAll
	// Except keeps a row present on the left and absent on the right, once.
	Except
	// ExceptAll keeps left - right copies (none when right has more).
	ExceptAll
)

var setOpKindNames = [...]string{"INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"}

// String is the operation in SQL (INTERSECT, EXCEPT ALL, …); an unknown kind
// prints as SetOpKind(n).
func (k SetOpKind) String() string {
	if int(k) < len(setOpKindNames) {
		return setOpKindNames[k]
	}
	return fmt.Sprintf("SetOpKind(%d)", uint8(k))
}

// ReplicateRowsOptions configure a ReplicateRows.
type ReplicateRowsOptions struct {
	// Kind is the set operation.
	Kind SetOpKind
	// Arity is the number of the set operation's columns: the input rows
	// are those columns, then the count of the row on the left, then on
	// the right (BIGINT, as the GroupAggregate by every column before it
	// computes them).
	Arity int
}

// ReplicateRows is the last step of INTERSECT and EXCEPT, planned as
// Flink's rewrites (RewriteIntersectAllRule, RewriteMinusAllRule) plan
// them: the two inputs, each row tagged with its side, are counted per
// whole row by a GroupAggregate, and this operator turns each of that
// aggregate's changes into as many copies of the row, of the same kind,
// as the set operation keeps for those counts (Flink's ReplicateRows
// table function). It keeps no state: a -U of the old counts retracts the
// copies the +I/+U of those counts emitted.
type ReplicateRows struct {
	operator.Base
	opts ReplicateRowsOptions
}

// NewReplicateRows returns a ReplicateRows.
func NewReplicateRows(opts ReplicateRowsOptions) (*ReplicateRows, error) {
	if opts.Kind > ExceptAll {
		return nil, fmt.Errorf("%w: unknown set operation %d", ErrInvalidOptions, opts.Kind)
	}
	if opts.Arity < 1 {
		return nil, fmt.Errorf("%w: ReplicateRows needs at least one column, got %d", ErrInvalidOptions, opts.Arity)
	}
	return &ReplicateRows{opts: opts}, nil
}

// Copies is how many copies of a row the set operation keeps when the
// left input holds it l times and the right r times.
func (k SetOpKind) Copies(l, r int64) int64 {
	switch k {
	case Intersect:
		if l > 0 && r > 0 {
			return 1
		}
	case IntersectAll:
		return max(0, min(l, r))
	case Except:
		if l > 0 && r <= 0 {
			return 1
		}
	case ExceptAll:
		return max(0, l-r)
	}
	return 0
}

// ProcessElement emits the copies of one counted row.
func (o *ReplicateRows) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	n := o.opts.Arity
	if err := checkWidth("ReplicateRows", row.Fields, n+1); err != nil {
		return err
	}
	l, _ := row.Fields[n].(int64)
	rc, _ := row.Fields[n+1].(int64)
	for range o.opts.Kind.Copies(l, rc) {
		emit(o.Ctx, row.Kind, append([]any(nil), row.Fields[:n]...), r.Timestamp)
	}
	return nil
}
