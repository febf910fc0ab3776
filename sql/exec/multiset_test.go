package exec

import (
	"reflect"
	"testing"

	"github.com/weirstream/weir/types"
)

// Two bags are equal whatever the order of their entries; a different
// count or element makes them differ.
func TestMultisetEquality(t *testing.T) {
	a := types.MultisetValue{{Elem: "x", Count: 2}, {Elem: []any{int64(1), "r"}, Count: 1}}
	b := types.MultisetValue{{Elem: []any{int64(1), "r"}, Count: 1}, {Elem: "x", Count: 2}}
	if !sameValue(a, b) || valueKey(a) != valueKey(b) {
		t.Fatalf("bags with the same entries in another order differ")
	}
	c := types.MultisetValue{{Elem: "x", Count: 1}, {Elem: []any{int64(1), "r"}, Count: 1}}
	if sameValue(a, c) {
		t.Fatalf("bags with different counts are equal")
	}
	d := types.MultisetValue{{Elem: "x", Count: 2}, {Elem: []any{int64(2), "r"}, Count: 1}}
	if sameValue(a, d) {
		t.Fatalf("bags with different ROW elements are equal")
	}
}

// The exact encoding gives back the same entries in the same order, ROW
// elements and a pending negative count included.
func TestMultisetEncodingRoundTrip(t *testing.T) {
	in := []any{types.MultisetValue{{Elem: []any{int64(12), "45.6"}, Count: 3}, {Elem: "b", Count: -1}},
		types.MultisetValue{}, "tail"}
	b := RowCodec{}.Encode(nil, in)
	out, rest, err := RowCodec{}.Decode(b)
	if err != nil || len(rest) != 0 {
		t.Fatalf("decode: %v (%d bytes left)", err, len(rest))
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("got %#v, want %#v", out, in)
	}
}

// A corrupt count of entries fails the decode instead of allocating.
func TestMultisetDecodeCorrupt(t *testing.T) {
	if _, _, err := (RowCodec{}).Decode([]byte{tagArray, 1, tagMultiset, 100}); err == nil {
		t.Fatal("decoded a bag of 100 entries from no bytes")
	}
}

// Retracting every occurrence removes the element; a retraction that
// arrives before its insertion waits as a negative count, which the
// result leaves out, and the insertion cancels it.
func TestMultisetAddRetract(t *testing.T) {
	var m types.MultisetValue
	m = multisetAdd(m, "x", 1)
	m = multisetAdd(m, "x", 1)
	m = multisetAdd(m, "y", 1)
	before := m
	m = multisetAdd(m, "x", -1)
	if want := (types.MultisetValue{{Elem: "x", Count: 2}, {Elem: "y", Count: 1}}); !reflect.DeepEqual(before, want) {
		t.Fatalf("multisetAdd changed its input: %v", before)
	}
	m = multisetAdd(m, "x", -1)
	if want := (types.MultisetValue{{Elem: "y", Count: 1}}); !reflect.DeepEqual(m, want) {
		t.Fatalf("after retracting x twice: got %v, want %v", m, want)
	}
	m = multisetAdd(m, "z", -1)
	if got, want := collectResult(m), (types.MultisetValue{{Elem: "y", Count: 1}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("result with a pending retraction: got %v, want %v", got, want)
	}
	m = multisetAdd(m, "z", 1)
	if want := (types.MultisetValue{{Elem: "y", Count: 1}}); !reflect.DeepEqual(m, want) {
		t.Fatalf("the insertion did not cancel the pending retraction: %v", m)
	}
	if got := collectResult(nil); got == nil || len(got) != 0 {
		t.Fatalf("COLLECT of nothing: got %#v, want an empty bag", got)
	}
}

// Merging partial bags (two-phase aggregation) adds their counts.
func TestMergeMultisets(t *testing.T) {
	a := types.MultisetValue{{Elem: "x", Count: 1}, {Elem: "y", Count: 1}}
	b := types.MultisetValue{{Elem: "x", Count: 2}, {Elem: "y", Count: -1}}
	if got, want := mergeMultisets(a, b), (types.MultisetValue{{Elem: "x", Count: 3}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Copy gives a bag whose ROW elements a later change cannot reach.
func TestMultisetCopy(t *testing.T) {
	row := []any{int64(1)}
	in := []any{types.MultisetValue{{Elem: row, Count: 1}}}
	out := RowCodec{}.Copy(in)
	row[0] = int64(2)
	if got := out[0].(types.MultisetValue)[0].Elem.([]any)[0]; got != int64(1) {
		t.Fatalf("the copy shares the element: %v", got)
	}
}
