package exec

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// TestReviewListAggInFlightSnapshot: a GroupAggregate with LISTAGG keeps
// its accumulator as a stateRow of fields (no binary layout) whose running
// value is a nested []any list. fieldsCopy copies only the top level, and
// foldList writes the new list into that nested slice (l[0] = append(...)),
// i.e. into the very object the heap backend stores. A snapshot taken
// before the second row and written after it must not see that row.
// TestListAggAccumulatorNotWrittenInPlace: a checkpoint of a LISTAGG taken
// at a barrier and written after more rows arrived restores the list as
// it was at the barrier. foldList appended to the stored accumulator in
// place, so on the heap backend the snapshot encoded rows from after the
// barrier, which replay then counted twice (a review found it, fifteenth
// session; wrong since 4c52cf7 kept accumulators as state rows).
func TestListAggAccumulatorNotWrittenInPlace(t *testing.T) {
	opts := GroupAggOptions{GroupKeys: []int{0}, Aggs: []AggCall{{Kind: ListAgg, Arg: 1}}}
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewGroupAggregate(opts) })}
	var clock int64
	c := openChain(t, mk, &clock, nil)
	in := func(c *chain, v string) {
		t.Helper()
		if err := c.process(t, 1, event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{"k", v}}, Timestamp: event.NoTimestamp}); err != nil {
			t.Fatal(err)
		}
	}
	in(c, "x")
	// The checkpoint's synchronous part (barrier), written later, as
	// checkpoint storage would on another goroutine.
	write := captureHead(t, c, 1)
	in(c, "y") // after the barrier
	parts := write()
	r := openChain(t, mk, &clock, []map[string][][]byte{parts})
	in(r, "z")
	got := fmt.Sprint(r.out.take())
	if want := "[-U[k, x] +U[k, 'x,z']]"; got != want {
		t.Fatalf("restored from checkpoint 1 (taken before y), then z: %s, want %s", got, want)
	}
}

// captureHead takes the synchronous part of checkpoint id of the chain's
// head (the barrier); the function it returns writes it, later, as
// checkpoint storage would on another goroutine, into the parts a
// restore takes.
func captureHead(t *testing.T, c *chain, id event.CheckpointID) (write func() map[string][][]byte) {
	t.Helper()
	s := c.head()
	if err := s.op.PrepareSnapshotPreBarrier(id); err != nil {
		t.Fatal(err)
	}
	snap, err := s.op.SnapshotState(id)
	if err != nil {
		t.Fatal(err)
	}
	return func() map[string][][]byte {
		t.Helper()
		parts := map[string][][]byte{}
		for _, p := range snap {
			blob, err := p.Snap.Write()
			if err != nil {
				t.Fatal(err)
			}
			parts[p.Name] = [][]byte{blob}
		}
		return parts
	}
}
