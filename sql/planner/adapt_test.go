package planner

import (
	"slices"
	"testing"

	"github.com/weirstream/weir/connector/nexmark"
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
