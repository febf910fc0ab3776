package exec

import (
	"fmt"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// ExpandOptions configure an Expand.
type ExpandOptions struct {
	// Keys are the grouping columns of the input.
	Keys []int
	// Sets are the grouping sets: Sets[i][k] is true when set i groups by
	// Keys[k].
	Sets [][]bool
}

// Expand is Flink's Expand for GROUPING SETS, ROLLUP and CUBE: it emits
// each row once per grouping set, the input's fields followed by a copy
// of each grouping column (NULL where the set leaves it out) and the
// set's index (BIGINT), with the input's RowKind and timestamp. An
// aggregation keyed by the copies and the index then computes every set
// at once, and retracts as its input does. It keeps no state.
type Expand struct {
	operator.Base
	opts ExpandOptions
}

// NewExpand returns an Expand.
func NewExpand(opts ExpandOptions) (*Expand, error) {
	if len(opts.Sets) == 0 {
		return nil, fmt.Errorf("sql/exec: Expand needs at least one grouping set")
	}
	for i, s := range opts.Sets {
		if len(s) != len(opts.Keys) {
			return nil, fmt.Errorf("sql/exec: Expand: grouping set %d has %d flags for %d keys", i, len(s), len(opts.Keys))
		}
	}
	return &Expand{opts: opts}, nil
}

// ProcessElement emits the row once per grouping set.
func (e *Expand) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	n := len(row.Fields)
	for i, set := range e.opts.Sets {
		out := make([]any, n, n+len(e.opts.Keys)+1)
		copy(out, row.Fields)
		for k, on := range set {
			var v any
			if on {
				v = row.Fields[e.opts.Keys[k]]
			}
			out = append(out, v)
		}
		emit(e.Ctx, row.Kind, append(out, int64(i)), r.Timestamp)
	}
	return nil
}
