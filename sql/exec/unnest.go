package exec

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// UnnestOptions configure an Unnest.
type UnnestOptions struct {
	// Collection evaluates the UNNEST argument over the input row: an
	// ARRAY ([]any), a MAP (map[any]any) or a MULTISET
	// (types.MultisetValue); nil (SQL NULL) has no elements.
	Collection func(fields []any) (any, error)
	// RowElems expands each element, a ROW ([]any), into its fields (an
	// ARRAY of ROWs unnests into one column per field); default: the
	// element is one column.
	RowElems bool
	// Width is the number of columns an element gives: 1, a ROW
	// element's field count, or 2 (key, value) for a MAP.
	Width int
	// Ordinality appends the element's 1-based position (WITH ORDINALITY).
	Ordinality bool
	// Left keeps an input row whose collection is NULL or empty, with
	// NULLs for the element's columns (LEFT JOIN UNNEST … ON TRUE);
	// default: such a row gives nothing (CROSS JOIN UNNEST).
	Left bool
}

// Unnest joins each row with the elements of a collection it holds
// (Flink's Correlate of UNNEST): one output row per element, the input's
// fields followed by the element's columns, with the input's RowKind and
// timestamp, so it works on any changelog: a -U row unnests into -U rows
// of the same elements as its +I did. It keeps no state.
type Unnest struct {
	operator.Base
	opts UnnestOptions
}

// NewUnnest returns an Unnest.
func NewUnnest(opts UnnestOptions) (*Unnest, error) {
	if opts.Collection == nil || opts.Width < 1 {
		return nil, fmt.Errorf("sql/exec: Unnest needs a collection and the element's width")
	}
	return &Unnest{opts: opts}, nil
}

// ProcessElement emits one row per element of the row's collection.
func (u *Unnest) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	c, err := u.opts.Collection(row.Fields)
	if err != nil {
		return fmt.Errorf("sql/exec: UNNEST argument: %w", err)
	}
	elems, err := u.elements(c)
	if err != nil {
		return err
	}
	if len(elems) == 0 && u.opts.Left {
		n := u.opts.Width
		if u.opts.Ordinality {
			n++
		}
		emitRow(u.Ctx, concatRow(row.Kind, row.Fields, nulls(n)), r.Timestamp)
		return nil
	}
	for i, e := range elems {
		out := make([]any, 0, len(row.Fields)+len(e)+1)
		out = append(append(out, row.Fields...), e...)
		if u.opts.Ordinality {
			out = append(out, int64(i+1))
		}
		emit(u.Ctx, row.Kind, out, r.Timestamp)
	}
	return nil
}

// elements lists the columns of each element of c, in order: an ARRAY's
// elements in array order, a MAP's entries by key (a Go map has no order;
// Flink's is its HashMap's, so any order is Flink's order of some run).
func (u *Unnest) elements(c any) ([][]any, error) {
	switch x := c.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([][]any, len(x))
		for i, e := range x {
			out[i] = u.element(e)
		}
		return out, nil
	case map[any]any:
		keys := make([]any, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareValues)
		out := make([][]any, len(keys))
		for i, k := range keys {
			out[i] = []any{k, x[k]}
		}
		return out, nil
	case types.MultisetValue:
		return u.multisetElements(x), nil
	}
	return nil, fmt.Errorf("sql/exec: UNNEST of a %T: want an ARRAY, a MAP or a MULTISET", c)
}

// multisetElements repeats each element of a MULTISET as often as the bag
// holds it, the elements in value order (Flink's order is its HashMap's,
// so any order is Flink's order of some run).
func (u *Unnest) multisetElements(m types.MultisetValue) [][]any {
	m = slices.Clone(m)
	slices.SortFunc(m, func(a, b types.MultisetEntry) int { return compareValues(a.Elem, b.Elem) })
	var out [][]any
	for _, e := range m {
		for range e.Count {
			out = append(out, u.element(e.Elem))
		}
	}
	return out
}

// element is the columns of one array element: a ROW's fields (NULL
// fields for a NULL row) or the element itself.
func (u *Unnest) element(e any) []any {
	if !u.opts.RowElems {
		return []any{e}
	}
	if f, ok := e.([]any); ok {
		return f
	}
	return nulls(u.opts.Width)
}
