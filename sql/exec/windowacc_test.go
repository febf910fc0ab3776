package exec

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// TestWindowStateNotWrittenInPlace: a checkpoint of a WindowAggregate
// taken at a barrier and written after a later row of the key was
// folded into its window's accumulator in place (sliced: at the flush
// before a watermark; with a DISTINCT call, unsliced: at once) restores
// the window as it was at the barrier (windowAccCodec.Copy).
func TestWindowStateNotWrittenInPlace(t *testing.T) {
	for name, aggs := range map[string][]AggCall{
		"sliced":   {{Kind: CountStar}, {Kind: Max, Arg: 2}},
		"inline":   {{Kind: CountStar}}, // sliced, each entry an inlineWindowAcc
		"unsliced": {{Kind: CountStar}, {Kind: Count, Arg: 2, Distinct: true}},
	} {
		t.Run(name, func(t *testing.T) { checkWindowStateNotWrittenInPlace(t, aggs) })
	}
}

func checkWindowStateNotWrittenInPlace(t *testing.T, aggs []AggCall) {
	opts := WindowAggOptions{Window: WindowSpec{Kind: Tumble, Size: 10 * time.Millisecond}, TimeField: 1,
		GroupKeys: []int{0}, Aggs: aggs}
	checkNotWrittenInPlace(t, []newStage{keyedStage(func() (operator.Operator, error) { return NewWindowAggregate(opts) })})
}

// checkNotWrittenInPlace runs rows [key, rowtime, v] through mk: rows at 1
// and 7 ms, then a watermark past their window or session. It checks
// that a checkpoint taken after the row at 1 ms and written after a row at
// 5 ms of the same key — and a watermark at 2 ms, which flushes buffered
// rows into state — restores, with the row at 7 ms fed again, what the run
// without the row at 5 ms gives: state the owner changes in place after a
// barrier reaches no snapshot taken at it.
func checkNotWrittenInPlace(t *testing.T, mk []newStage) {
	t.Helper()
	var clock int64
	in := func(c *chain, ms, v int64) {
		t.Helper()
		row := event.Row{Kind: event.Insert, Fields: []any{"k", time.UnixMilli(ms).UTC(), v}}
		if err := c.process(t, 1, event.Record{Value: row, Timestamp: event.NoTimestamp}); err != nil {
			t.Fatal(err)
		}
	}
	want := openChain(t, mk, &clock, nil)
	in(want, 1, 3)
	in(want, 7, 4)
	want.watermark(t, 100)

	c := openChain(t, mk, &clock, nil)
	in(c, 1, 3)
	write := captureHead(t, c, 1)
	in(c, 5, 9) // after the barrier
	c.watermark(t, 2)
	parts := write()
	r := openChain(t, mk, &clock, []map[string][][]byte{parts})
	in(r, 7, 4)
	r.watermark(t, 100)
	if got, w := fmt.Sprint(r.out.take()), fmt.Sprint(want.out.take()); got != w || w == "[]" {
		t.Fatalf("restored from the checkpoint taken before the row at 5 ms, then 7 ms: %s, want %s", got, w)
	}
}

// TestWindowAccCodecKeepsTheCheckpointLayout: windowAccCodec writes the
// bytes RowCodec wrote for [keys, accumulator] and reads them back.
func TestWindowAccCodecKeepsTheCheckpointLayout(t *testing.T) {
	for _, e := range []*windowAcc{
		{keys: []any{"k", int64(3)}, acc: []any{int64(7), "x", nil}},
		{keys: nil, acc: []any{int64(1), nil, nil}},
		{keys: []any{}, acc: []any{nil, nil, nil}},
	} {
		checkOldLayout(t, windowAccCodec{accLen: 3}, e, []any{e.keys, e.acc})
	}
	checkRefused(t, windowAccCodec{accLen: 3}, [][]any{
		{"k", int64(1), int64(2)},        // three fields
		{[]any{"k"}, nil},                // no accumulator
		{[]any{"k"}, []any{int64(1)}},    // a narrow one
		{"k", []any{int64(1), nil, nil}}, // keys that are not a row
	})
}

// checkOldLayout checks that c writes for v the bytes RowCodec wrote for
// old, the state's layout before c, reads them back, and writes what it
// read alike.
func checkOldLayout[T any](t *testing.T, c state.Codec[T], v T, old []any) {
	t.Helper()
	b := c.Encode(nil, v)
	if w := (RowCodec{}).Encode(nil, old); !slices.Equal(b, w) {
		t.Fatalf("%T wrote %x, the old layout is %x", c, b, w)
	}
	back, rest, err := c.Decode(b)
	if err != nil || len(rest) != 0 {
		t.Fatalf("decode: %v, %d bytes left", err, len(rest))
	}
	if again := c.Encode(nil, back); !slices.Equal(again, b) {
		t.Fatalf("decoded %+v encodes as %x, want %x", back, again, b)
	}
}

// checkRefused checks that c refuses each of bad, in RowCodec's bytes,
// with state.ErrCorrupt.
func checkRefused[T any](t *testing.T, c state.Codec[T], bad [][]any) {
	t.Helper()
	for _, v := range bad {
		if _, _, err := c.Decode(RowCodec{}.Encode(nil, v)); !errors.Is(err, state.ErrCorrupt) {
			t.Fatalf("%v decoded: %v, want ErrCorrupt", v, err)
		}
	}
}
