package window

import (
	"errors"
	"slices"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

func TestOptionsValidate(t *testing.T) {
	tumbling := Tumbling{Size: 10 * ms}
	for _, o := range []Options{
		{Reduce: sum},
		{Assigner: Tumbling{}, Reduce: sum},
		{Assigner: tumbling},
		{Assigner: tumbling, Reduce: sum, Process: list},
		{Assigner: tumbling, Reduce: sum, AllowedLateness: -ms},
		{Assigner: tumbling, Reduce: sum, AllowedLateness: ms / 2},
	} {
		if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions", o, err)
		}
	}
}

func TestNoTimestamp(t *testing.T) {
	in := openInstance(t, Options{Assigner: Tumbling{Size: 10 * ms}, Reduce: sum}, allKeyGroups, nil)
	err := in.op.ProcessElement(event.Record{Value: "a:1", Timestamp: event.NoTimestamp})
	if !errors.Is(err, ErrNoTimestamp) {
		t.Fatalf("ProcessElement without timestamp = %v, want ErrNoTimestamp", err)
	}
}

func TestNotKeyed(t *testing.T) {
	op, err := New(Options{Assigner: Tumbling{Size: 10 * ms}, Reduce: sum})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(&operator.Context{UID: "w", Output: &recorder{}}); err == nil {
		t.Fatal("Open without keyed state succeeded")
	}
}

// An element in the gap of a sliding assigner (Slide > Size) belongs to no
// window: it is counted as filtered, not as late.
func TestSlidingGap(t *testing.T) {
	in := openInstance(t, Options{Assigner: Sliding{Size: 5 * ms, Slide: 10 * ms}, Reduce: sum}, allKeyGroups, nil)
	in.element(t, "a:1", 7)
	in.element(t, "a:2", 12)
	in.watermark(t, 100)
	m := in.ctx.Metrics
	if m.Filtered != 1 || m.LateDropped != 0 {
		t.Fatalf("filtered %d, late %d; want 1, 0", m.Filtered, m.LateDropped)
	}
	if want := []string{"emit a:2 @14", "watermark 100"}; !slices.Equal(in.out.lines, want) {
		t.Fatalf("output %q, want %q", in.out.lines, want)
	}
}

func TestProcessError(t *testing.T) {
	boom := errors.New("boom")
	fail := func(any, Window, []any, *operator.Collector) error { return boom }
	in := openInstance(t, Options{Assigner: Tumbling{Size: 10 * ms}, Process: fail}, allKeyGroups, nil)
	in.element(t, "a:1", 1)
	if err := in.op.ProcessWatermark(9); !errors.Is(err, boom) {
		t.Fatalf("ProcessWatermark = %v, want the function's error", err)
	}
}

func TestListCodec(t *testing.T) {
	c := listCodec{elem: state.AnyCodec{}}
	in := []any{"a", int64(3), nil, true}
	b := c.Encode([]byte("x"), in)
	got, rest, err := c.Decode(b[1:])
	if err != nil || len(rest) != 0 || !slices.Equal(got.([]any), in) {
		t.Fatalf("Decode = %v, %q, %v", got, rest, err)
	}
	for _, bad := range [][]byte{nil, {0xff}, {5, 1}, b[1 : len(b)-1]} {
		if _, _, err := c.Decode(bad); !errors.Is(err, state.ErrCorrupt) {
			t.Errorf("Decode(%v) = %v, want ErrCorrupt", bad, err)
		}
	}
}

func FuzzListCodec(f *testing.F) {
	c := listCodec{elem: state.AnyCodec{}}
	f.Add(c.Encode(nil, []any{"a", 1, 2.5}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, _, err := c.Decode(b)
		if err != nil {
			return
		}
		again, _, err := c.Decode(c.Encode(nil, v))
		if err != nil || len(again.([]any)) != len(v.([]any)) {
			t.Fatalf("re-decoding %v: %v, %v", v, again, err)
		}
	})
}
