package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/operator/sourcetest"
)

// readAll opens one reader of every split of src and drains it.
func readAll(t *testing.T, src operator.Source) []string {
	t.Helper()
	return sourcetest.Drain(t, sourcetest.Open(t, src, nil), &sourcetest.Output{})
}

// A bounded SeqSource reports each split finished right after its last
// element, and one without keys when the reader comes to it.
func TestSeqSourceReportsFinishedSplits(t *testing.T) {
	// Keys 0..2 over 4 splits: split i has key i, split 3 none. Two
	// elements per key, one split after the other.
	got := readAll(t, &SeqSource{Keys: 3, PerKey: 2, Splits: 4, Burst: 100})
	want := []string{
		"0: {0 0} @0", "1: {1 0} @0", "2: {2 0} @0", "finished 3",
		"0: {0 1} @10", "finished 0", "1: {1 1} @10", "finished 1", "2: {2 1} @10", "finished 2",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("reader output %q, want %q", got, want)
	}
}

// An unbounded SeqSource's splits never finish: they wait for more.
func TestUnboundedSeqSourceFinishesNothing(t *testing.T) {
	r := sourcetest.Open(t, &SeqSource{Keys: 2, PerKey: 2, Splits: 2, Burst: 100, Unbounded: true}, nil)
	out := &sourcetest.Output{}
	for range 3 {
		if st, err := r.Poll(out); err != nil || st != operator.NothingAvailable {
			t.Fatalf("Poll = %v, %v; want NothingAvailable", st, err)
		}
	}
	want := []string{"0: {0 0} @0", "1: {1 0} @0", "0: {0 1} @10", "1: {1 1} @10"}
	if !slices.Equal(out.Lines, want) {
		t.Fatalf("reader output %q, want %q", out.Lines, want)
	}
}

// A ScriptSource reports its split finished right after the last step.
func TestScriptSourceReportsFinishedSplit(t *testing.T) {
	got := readAll(t, &ScriptSource{Steps: []ScriptStep{
		{Values: []any{"a", "b"}, TS: []int64{1, 2}, Pause: time.Millisecond},
		{Values: []any{"c"}, TS: []int64{3}, Pause: time.Millisecond},
	}})
	want := []string{"script: a @1", "script: b @2", "script: c @3", "finished script"}
	if !slices.Equal(got, want) {
		t.Fatalf("reader output %q, want %q", got, want)
	}
}
