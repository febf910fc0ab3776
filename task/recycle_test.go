package task

import (
	"context"
	"fmt"
	"testing"

	"github.com/weirstream/weir/event"
)

// TestProcessedBatchSliceReused: a batch the receiver processed goes back
// to its channel's sender cleared (no record held), and the writer fills
// it with later records, which arrive intact; batches not yet processed
// are never handed out again.
func TestProcessedBatchSliceReused(t *testing.T) {
	gate := NewInputGate([]int{0}, 2)
	w := NewRecordWriter(context.Background(), []*OutChannel{gate.Channel(0)}, Forward{}, 2)
	rec := func(i int64) event.Record { return event.Record{Value: i, Timestamp: event.Timestamp(i)} }
	w.Emit(rec(1))
	w.Emit(rec(2)) // full: sent
	first := <-gate.inbox
	w.Emit(rec(3))
	w.Emit(rec(4)) // sent in a new slice: the first is not processed yet
	second := <-gate.inbox
	if &first.Batch.Records[0] == &second.Batch.Records[0] {
		t.Fatal("a batch not yet processed was reused")
	}
	kept := first.Batch.Records[:2]
	gate.recycle(first)
	if kept[0].Value != nil || kept[1].Value != nil {
		t.Fatalf("a processed batch goes back holding %v", kept)
	}
	// 5 and 6 fill the slice taken when 3 and 4 went; the one taken
	// when 5 and 6 go is the recycled one.
	var got []any
	for _, r := range second.Batch.Records {
		got = append(got, r.Value)
	}
	gate.recycle(second)
	w.Emit(rec(5))
	w.Emit(rec(6))
	third := <-gate.inbox
	w.Emit(rec(7))
	w.Emit(rec(8))
	fourth := <-gate.inbox
	if &fourth.Batch.Records[0] != &kept[0] {
		t.Fatal("the processed batch's slice was not reused")
	}
	for _, e := range []Envelope{third, fourth} {
		for _, r := range e.Batch.Records {
			got = append(got, r.Value)
		}
	}
	if want := []any{int64(3), int64(4), int64(5), int64(6), int64(7), int64(8)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
}
