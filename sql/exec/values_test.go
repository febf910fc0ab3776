package exec

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

func TestRowCodecRoundTrip(t *testing.T) {
	big, _ := decimal.NewFromString("-123456789012345678901234567890.123456789")
	row := []any{nil, true, false, int64(-7), int64(math.MaxInt64), 1.5, math.Inf(-1),
		decimal.RequireFromString("1.50"), big, decimal.Zero, "héllo", "", []byte{0, 1},
		time.UnixMilli(1_700_000_000_123).UTC(), time.Unix(-5, 7).UTC(),
		[]any{int64(1), []any{"x"}}, map[any]any{"k": int64(1), int64(2): nil}, 3}
	b := RowCodec{}.Encode([]byte("prefix"), row)
	got, rest, err := RowCodec{}.Decode(b[len("prefix"):])
	if err != nil || len(rest) != 0 {
		t.Fatalf("decode: %v, %d bytes left", err, len(rest))
	}
	if len(got) != len(row) {
		t.Fatalf("decoded %d fields, want %d", len(got), len(row))
	}
	for i := range row {
		if d, ok := row[i].(decimal.Decimal); ok {
			g := got[i].(decimal.Decimal)
			if !d.Equal(g) || d.Exponent() != g.Exponent() {
				t.Errorf("field %d: decimal %s (exp %d), want %s (exp %d)", i, g, g.Exponent(), d, d.Exponent())
			}
			continue
		}
		if !reflect.DeepEqual(got[i], row[i]) {
			t.Errorf("field %d: got %#v, want %#v", i, got[i], row[i])
		}
	}
}

func TestRowCodecRejectsCorruptInput(t *testing.T) {
	good := RowCodec{}.Encode(nil, []any{"abc", decimal.RequireFromString("1.25"), []any{int64(1)}})
	for n := range len(good) {
		if _, _, err := (RowCodec{}).Decode(good[:n]); !errors.Is(err, state.ErrCorrupt) {
			t.Errorf("truncated to %d bytes: err %v, want ErrCorrupt", n, err)
		}
	}
	if _, _, err := (RowCodec{}).Decode([]byte{tagArray, 0xff, 0xff, 0xff, 0xff, 0x0f}); !errors.Is(err, state.ErrCorrupt) {
		t.Errorf("huge count: err %v, want ErrCorrupt", err)
	}
}

func TestEncodeUnsupportedTypePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("encoding a struct did not panic")
		}
	}()
	RowCodec{}.Encode(nil, []any{struct{}{}})
}

func FuzzRowCodecDecode(f *testing.F) {
	f.Add(RowCodec{}.Encode(nil, []any{int64(1), "a", nil, 2.5}))
	f.Add(RowCodec{}.Encode(nil, []any{decimal.RequireFromString("-0.001"), time.Unix(1, 2).UTC()}))
	f.Add(RowCodec{}.Encode(nil, []any{map[any]any{"k": []any{true}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		row, _, err := RowCodec{}.Decode(b)
		if err != nil {
			return
		}
		// What decodes must encode and decode to the same.
		again, _, err := RowCodec{}.Decode(RowCodec{}.Encode(nil, row))
		if err != nil || !sameRow(row, again) {
			t.Fatalf("re-decoding %#v gave %#v, %v", row, again, err)
		}
	})
}

func TestRowKeyEquality(t *testing.T) {
	same := [][2]any{
		{decimal.RequireFromString("1.5"), decimal.RequireFromString("1.500")},
		{decimal.RequireFromString("0"), decimal.RequireFromString("0.00")},
		{decimal.RequireFromString("100"), decimal.New(1, 2)},
		{1, int64(1)},
		{int32(-3), int64(-3)},
		{0.0, math.Copysign(0, -1)},
		{time.UnixMilli(5).UTC(), time.UnixMilli(5).In(time.FixedZone("x", 3600))},
		{nil, nil},
	}
	for _, p := range same {
		if RowKey([]any{p[0]}, []int{0}) != RowKey([]any{p[1]}, []int{0}) {
			t.Errorf("keys of %v and %v differ", p[0], p[1])
		}
	}
	differ := [][2]any{
		{"1", int64(1)}, {decimal.RequireFromString("1.5"), decimal.RequireFromString("1.05")},
		{nil, ""}, {int64(1), 1.0}, {"ab", []byte("ab")},
	}
	for _, p := range differ {
		if RowKey([]any{p[0]}, []int{0}) == RowKey([]any{p[1]}, []int{0}) {
			t.Errorf("keys of %#v and %#v are equal", p[0], p[1])
		}
	}
	// Field boundaries are part of the key: ("ab", "c") is not ("a", "bc").
	if RowKey([]any{"ab", "c"}, []int{0, 1}) == RowKey([]any{"a", "bc"}, []int{0, 1}) {
		t.Error("keys of two-field rows run together")
	}
}

// TestRowKeyIsAppendValue: RowKey, which encodes scalars into a buffer on
// the stack and goes on in one of its own at the first other value, is the
// key encoding of appendValue field after field, and a key of scalars that
// fits the stack buffer is one allocation (the string).
func TestRowKeyIsAppendValue(t *testing.T) {
	long := string(make([]byte, 100))
	fields := []any{int64(7), "auction", decimal.RequireFromString("1.50"), nil, true, 2.5, long,
		time.UnixMilli(1_700_000_000_123).UTC(), []any{int64(1), "x"}, int32(4), []byte("b")}
	for _, idx := range [][]int{{0}, {0, 1}, {1, 2, 3}, {2, 0}, {3, 4, 5, 7}, {6, 1}, {8, 0}, {0, 9, 10}, {}} {
		var want []byte
		for _, i := range idx {
			want = appendValue(want, fields[i], true)
		}
		if got := RowKey(fields, idx); got != string(want) {
			t.Errorf("RowKey(fields, %v) = %q, want %q", idx, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = RowKey(fields, []int{0, 1, 7}) }); n != 1 {
		t.Errorf("RowKey of BIGINT, STRING, TIMESTAMP: %v allocations, want 1", n)
	}
}

// A hash exchange partitions by the hash of the key it would make
// (FieldKeyOf, KeyFunc.Of), as the keyed operator after it keys its state
// by the key: a row must reach the subtask owning its key's group.
func TestKeyOfHashesTheKey(t *testing.T) {
	long := string(make([]byte, 100))
	fields := []any{int64(7), "auction", decimal.RequireFromString("1.50"), nil, true, 2.5, long,
		time.UnixMilli(1_700_000_000_123).UTC(), []any{int64(1), "x"}, int32(4), []byte("b"), int64(-1 << 40)}
	row := event.Row{Kind: event.Insert, Fields: fields}
	for _, idx := range [][]int{{0}, {0, 1}, {1, 2, 3}, {2, 0}, {3, 4, 5, 7}, {6, 1}, {1, 6}, {8, 0}, {0, 9, 10}, {11}, {}} {
		want := keygroup.HashKey(RowKey(fields, idx))
		for name, k := range map[string]KeyOf{"FieldKeyOf": FieldKeyOf(idx...), "Of": FieldKey(idx...).Of()} {
			if got := k.Hash(row); got != want {
				t.Errorf("%s(%v): hash %x, want %x", name, idx, got, want)
			}
			if got := keygroup.HashKey(k.Key(row)); got != want {
				t.Errorf("%s(%v): the key's hash %x, want %x", name, idx, got, want)
			}
		}
	}
	k, v := FieldKeyOf(0, 1, 7), any(row) // a record's value is boxed already
	if n := testing.AllocsPerRun(100, func() { _ = k.Hash(v) }); n != 0 {
		t.Errorf("the hash of a BIGINT, STRING, TIMESTAMP key: %v allocations, want 0", n)
	}
}

func TestKeySelector(t *testing.T) {
	sel := FieldKey(1).Selector()
	if sel(event.Row{Fields: []any{"x", int64(3)}}) != RowKey([]any{int64(3)}, []int{0}) {
		t.Fatal("selector disagrees with RowKey")
	}
}

func TestCompareValues(t *testing.T) {
	ordered := []any{int64(-2), -1.5, decimal.RequireFromString("-1.25"), int64(0), 0.5, decimal.RequireFromString("1"), int64(2)}
	for i := range ordered {
		for j := range ordered {
			c := compareValues(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if c != want {
				t.Errorf("compare(%v, %v) = %d, want %d", ordered[i], ordered[j], c, want)
			}
		}
	}
}
