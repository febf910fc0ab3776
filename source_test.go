package weir

import (
	"slices"
	"testing"

	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/operator/sourcetest"
)

// The slice source's reader reports each split finished right after its
// last element, and one restored at its end when a Poll comes to it.
func TestSliceReaderReportsFinishedSplits(t *testing.T) {
	src := &sliceSource{data: []any{"a", "b", "c", "d", "e"}, splits: 3}
	read := func(splits []operator.SplitState) []string {
		t.Helper()
		return sourcetest.Drain(t, sourcetest.Open(t, src, splits), &sourcetest.Output{})
	}
	// Split i holds elements i, i+3.
	got := read(nil)
	want := []string{"0: a", "0: d", "finished 0", "1: b", "1: e", "finished 1", "2: c", "finished 2"}
	if !slices.Equal(got, want) {
		t.Fatalf("reader output %q, want %q", got, want)
	}
	// Split 2 restored at its end (position 5), split 1 after b.
	got = read([]operator.SplitState{{ID: "2", Position: []byte{5}}, {ID: "1", Position: []byte{4}}})
	if want := []string{"finished 2", "1: e", "finished 1"}; !slices.Equal(got, want) {
		t.Fatalf("restored reader output %q, want %q", got, want)
	}
}
