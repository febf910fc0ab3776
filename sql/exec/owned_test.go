package exec

import (
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

// block is a source event's values in one allocation, its fields boxed
// in place (as the Nexmark source boxes them, connector/nexmark/row.go).
type block struct {
	id    int64
	small int32
	price float64
	dt    time.Time
	name  string
}

// boxedBlock returns a block's values as a row's fields, each interface
// pointing into the block, and the block's address range.
func boxedBlock() ([]any, uintptr, uintptr) {
	b := &block{id: 1 << 40, small: 1 << 20, price: 2.5, dt: time.UnixMilli(1700000000123).UTC(), name: "bidder-7"}
	fields := []any{
		event.BoxAt(any(int64(0)), unsafe.Pointer(&b.id)),
		event.BoxAt(any(int32(0)), unsafe.Pointer(&b.small)),
		event.BoxAt(any(float64(0)), unsafe.Pointer(&b.price)),
		event.BoxAt(any(time.Time{}), unsafe.Pointer(&b.dt)),
		event.BoxAt(any(""), unsafe.Pointer(&b.name)),
	}
	lo := uintptr(unsafe.Pointer(b))
	return fields, lo, lo + unsafe.Sizeof(*b)
}

// dataOf is an interface's value pointer.
func dataOf(v any) uintptr { return uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]) }

// inBlock reports the values that still point into [lo, hi).
func inBlock(t *testing.T, what string, vals []any, lo, hi uintptr) {
	t.Helper()
	for i, v := range vals {
		if p := dataOf(v); p >= lo && p < hi {
			t.Errorf("%s: value %d (%T %v) points into the source's block: it would keep the whole event alive", what, i, v, v)
		}
	}
}

// TestPickOwnedLeavesTheBlock: keys kept in state as long as their key
// lives (session, window and window-slice aggregates) are equal to the
// row's values but boxed apart from the event's block.
func TestPickOwnedLeavesTheBlock(t *testing.T) {
	fields, lo, hi := boxedBlock()
	if p := dataOf(fields[0]); p < lo || p >= hi {
		t.Fatal("the test's block is not boxed in place")
	}
	idx := []int{4, 0, 1, 2, 3}
	keys := pickOwned(fields, idx)
	for i, j := range idx {
		if keys[i] != fields[j] {
			t.Errorf("key %d = %v, want %v", i, keys[i], fields[j])
		}
	}
	inBlock(t, "pickOwned", keys, lo, hi)
}

// TestExtremesLeaveTheBlock: MIN, MAX, FIRST_VALUE and LAST_VALUE keep
// the value they hold apart from the row it came from.
func TestExtremesLeaveTheBlock(t *testing.T) {
	fields, lo, hi := boxedBlock()
	for _, kind := range []AggKind{Min, Max, FirstValue, LastValue} {
		for f := range fields {
			a := aggregator{calls: []AggCall{{Kind: kind, Arg: f}}, insertOnly: true}
			acc := a.newAcc()
			if err := a.accumulate(acc, fields, false, nil); err != nil {
				t.Fatal(err)
			}
			got, want := acc[2], widen(fields[f]) // INT aggregates as BIGINT
			if got != want {
				t.Errorf("%v of field %d holds %T %v, want %T %v", kind, f, got, got, want, want)
			}
			inBlock(t, kind.String(), []any{got}, lo, hi)
		}
	}
}

// leaves are the scalar values v holds, through lists and multisets.
func leaves(v any) []any {
	switch x := v.(type) {
	case []any:
		var out []any
		for _, e := range x {
			out = append(out, leaves(e)...)
		}
		return out
	case types.MultisetValue:
		var out []any
		for _, e := range x {
			out = append(out, e.Elem)
		}
		return out
	case nil:
		return nil
	}
	return []any{v}
}

// TestListsLeaveTheBlock: the calls that keep a list of values (LAG,
// COLLECT, and FIRST_VALUE and LAST_VALUE over an updating input, which
// keep every value to retract from) keep them apart from the rows they
// came from.
func TestListsLeaveTheBlock(t *testing.T) {
	fields, lo, hi := boxedBlock()
	for _, c := range []struct {
		kind       AggKind
		insertOnly bool
	}{{Lag, true}, {Collect, false}, {FirstValue, false}, {LastValue, false}} {
		for f := range fields {
			a := aggregator{calls: []AggCall{{Kind: c.kind, Arg: f}}, insertOnly: c.insertOnly}
			acc := a.newAcc()
			if err := a.accumulate(acc, fields, false, nil); err != nil {
				t.Fatal(err)
			}
			kept := leaves(acc[2])
			if want := widen(fields[f]); !slices.Contains(kept, want) {
				t.Errorf("%v of field %d keeps %v, want %v among them", c.kind, f, kept, want)
			}
			inBlock(t, c.kind.String(), kept, lo, hi)
		}
	}
}
