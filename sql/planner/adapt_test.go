package planner

import (
	"fmt"
	"slices"
	"testing"

	"github.com/weirstream/weir/connector/nexmark"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/operator/sourcetest"
)

// A mapped source (nexmark in SQL) turns values into rows and passes the
// wrapped reader's finished splits on to the runtime's output: hiding them
// would keep every finished split in the subtask's watermark minimum.
func TestMappedReaderPassesFinishedSplitsOn(t *testing.T) {
	gen, err := nexmark.NewSource(nexmark.Config{EventsNum: 4, Splits: 2})
	if err != nil {
		t.Fatal(err)
	}
	src := mappedSource{Source: gen, toRow: func(v any) []any { return v.(nexmark.Event).Row()[:1] }}
	// Each split holds two events; the rows keep only the event type.
	got := sourcetest.Drain(t, sourcetest.Open(t, src, nil), &sourcetest.Output{})
	want := []string{"0: +I[1] @1704067200000", "1: +I[2] @1704067200000",
		"0: +I[1] @1704067200000", "finished 0", "1: +I[2] @1704067200000", "finished 1"}
	if !slices.Equal(got, want) {
		t.Fatalf("reader output %q, want %q", got, want)
	}
}

// noAssigner is a source that leaves split placement to the runtime.
type noAssigner struct{ operator.Source }

// A mapped source places splits where the runtime places the wrapped
// source's splits: by the source's SplitAssigner, or else by HashSplit —
// never nowhere (-1), which no subtask would read.
func TestMappedSourceKeepsSplitPlacement(t *testing.T) {
	gen, err := nexmark.NewSource(nexmark.Config{EventsNum: 8, Splits: 8})
	if err != nil {
		t.Fatal(err)
	}
	assigned := mappedSource{Source: gen}
	hashed := mappedSource{Source: noAssigner{gen}}
	for i := 0; i < 8; i++ {
		id := fmt.Sprint(i)
		if got, want := assigned.AssignSplit(id, 3), gen.AssignSplit(id, 3); got != want {
			t.Errorf("split %s: mapped nexmark places it at %d, nexmark at %d", id, got, want)
		}
		if got, want := hashed.AssignSplit(id, 3), operator.HashSplit(id, 3); got != want || got < 0 || got > 2 {
			t.Errorf("split %s: mapped source without assigner places it at %d, want %d", id, got, want)
		}
	}
}
