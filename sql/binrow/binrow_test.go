package binrow

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/types"
)

// every is one field of each SQL type binary rows hold, with a value and
// the value it decodes to.
var every = []struct {
	t        types.Type
	in, want any
}{
	{types.Type{Kind: types.Boolean}, true, true},
	{types.Type{Kind: types.Boolean}, false, false},
	{types.Type{Kind: types.TinyInt}, int64(-128), int64(-128)},
	{types.Type{Kind: types.SmallInt}, int16(7), int64(7)},
	{types.Type{Kind: types.Int}, int32(-70000), int64(-70000)},
	{types.Type{Kind: types.BigInt}, int64(math.MinInt64), int64(math.MinInt64)},
	{types.Type{Kind: types.BigInt}, 42, int64(42)},
	{types.Type{Kind: types.Float}, float32(1.5), float64(1.5)},
	{types.Type{Kind: types.Double}, math.Inf(-1), math.Inf(-1)},
	{types.Type{Kind: types.Double}, -0.0, -0.0},
	{types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}, decimal.RequireFromString("-12345678.90"), decimal.RequireFromString("-12345678.90")},
	// Not at the type's scale, or beyond 18 digits: kept exactly in the tail.
	{types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}, decimal.RequireFromString("1.5"), decimal.RequireFromString("1.5")},
	{types.Type{Kind: types.Decimal, Precision: 18, Scale: 0}, decimal.RequireFromString("1234567890123456789"), decimal.RequireFromString("1234567890123456789")},
	{types.Type{Kind: types.Decimal, Precision: 38, Scale: 3}, decimal.RequireFromString("-12345678901234567890123.456"), decimal.RequireFromString("-12345678901234567890123.456")},
	{types.Type{Kind: types.Decimal, Precision: 38, Scale: 3}, decimal.RequireFromString("0.000"), decimal.RequireFromString("0.000")},
	{types.Type{Kind: types.Char, Precision: 3}, "abc", "abc"},
	{types.Type{Kind: types.Varchar, Precision: 10}, "", ""},
	{types.Type{Kind: types.String}, "héllo\x00", "héllo\x00"},
	{types.Type{Kind: types.Bytes}, []byte{0, 1, 255}, []byte{0, 1, 255}},
	{types.Type{Kind: types.Bytes}, []byte{}, []byte{}},
	{types.Type{Kind: types.Date}, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
	{types.Type{Kind: types.Time, Precision: 3}, time.Date(1970, 1, 1, 23, 59, 59, 999e6, time.UTC), time.Date(1970, 1, 1, 23, 59, 59, 999e6, time.UTC)},
	{types.Type{Kind: types.Timestamp, Precision: 9}, time.Date(2262, 4, 11, 23, 47, 16, 854775807, time.UTC), time.Date(2262, 4, 11, 23, 47, 16, 854775807, time.UTC)},
	// Outside epoch nanoseconds' range: in the tail.
	{types.Type{Kind: types.Timestamp, Precision: 9}, time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
	{types.Type{Kind: types.Date}, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
	// An instant in another zone decodes in UTC.
	{types.Type{Kind: types.TimestampLTZ, Precision: 3}, time.Date(2024, 1, 1, 1, 0, 0, 0, time.FixedZone("CET", 3600)), time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)},
	{types.Type{Kind: types.Null}, nil, nil},
}

func everyRow() (ts []types.Type, in, want []any) {
	for _, f := range every {
		ts = append(ts, f.t)
		in = append(in, f.in)
		want = append(want, f.want)
	}
	return ts, in, want
}

func mustLayout(t testing.TB, ts []types.Type) *Layout {
	t.Helper()
	l, err := NewLayout(ts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// same compares decoded fields exactly: Go types, decimal scales, float
// signs, instants and zones.
func same(t *testing.T, got, want []any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d fields, want %d", len(got), len(want))
	}
	for i := range want {
		switch w := want[i].(type) {
		case decimal.Decimal:
			g, ok := got[i].(decimal.Decimal)
			if !ok || g.String() != w.String() || g.Exponent() != w.Exponent() {
				t.Errorf("field %d: got %#v, want %s (exponent %d)", i, got[i], w, w.Exponent())
			}
		case float64:
			g, ok := got[i].(float64)
			if !ok || math.Float64bits(g) != math.Float64bits(w) {
				t.Errorf("field %d: got %#v, want %v", i, got[i], w)
			}
		case time.Time:
			g, ok := got[i].(time.Time)
			if !ok || !g.Equal(w) || g.Location() != time.UTC {
				t.Errorf("field %d: got %#v, want %v in UTC", i, got[i], w)
			}
		default:
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("field %d: got %#v, want %#v", i, got[i], want[i])
			}
		}
	}
}

func TestRoundTripEveryType(t *testing.T) {
	ts, in, want := everyRow()
	l := mustLayout(t, ts)
	var b Builder
	r, err := b.Build(l, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Validate(r); err != nil {
		t.Fatal(err)
	}
	same(t, l.Fields(r), want)
	for i := range want {
		same(t, []any{l.Value(r, i)}, want[i:i+1])
		if l.IsNull(r, i) != (want[i] == nil) {
			t.Errorf("field %d: IsNull %v", i, l.IsNull(r, i))
		}
	}
}

// TestNullsEveryType builds rows with each field NULL in turn, then all.
func TestNullsEveryType(t *testing.T) {
	ts, in, want := everyRow()
	l := mustLayout(t, ts)
	var b Builder
	for i := range in {
		in2, want2 := append([]any(nil), in...), append([]any(nil), want...)
		in2[i], want2[i] = nil, nil
		r, err := b.Build(l, in2)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Validate(r); err != nil {
			t.Fatalf("NULL field %d: %v", i, err)
		}
		same(t, l.Fields(r), want2)
	}
	r, err := b.Build(l, make([]any, len(ts)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != 2*((len(ts)+7)/8)+8*len(ts) {
		t.Errorf("an all-NULL row of %d fields has %d bytes: want the header only", len(ts), len(r))
	}
	same(t, l.Fields(r), make([]any, len(ts)))
}

func TestTypedAccessors(t *testing.T) {
	ts := []types.Type{{Kind: types.BigInt}, {Kind: types.Double}, {Kind: types.Boolean}, {Kind: types.String},
		{Kind: types.Timestamp, Precision: 3}, {Kind: types.Decimal, Precision: 18, Scale: 2}, {Kind: types.Bytes}}
	l := mustLayout(t, ts)
	at := time.UnixMilli(1704067200005).UTC()
	r, err := l.Append(nil, []any{int64(-9), 2.5, true, "bid", at, decimal.RequireFromString("3.07"), []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if l.Int64(r, 0) != -9 || l.Float64(r, 1) != 2.5 || !l.Bool(r, 2) || l.String(r, 3) != "bid" ||
		l.UnixNano(r, 4) != at.UnixNano() || l.Int64(r, 5) != 307 || string(l.Bytes(r, 6)) != "x" {
		t.Errorf("accessors read %d %v %v %q %d %d %q", l.Int64(r, 0), l.Float64(r, 1), l.Bool(r, 2), l.String(r, 3),
			l.UnixNano(r, 4), l.Int64(r, 5), l.Bytes(r, 6))
	}
	if l.InTail(r, 0) || l.InTail(r, 4) || l.InTail(r, 5) || !l.InTail(r, 3) || !l.InTail(r, 6) {
		t.Error("tail bits: want only the string and the bytes in the tail")
	}
	if n := testing.AllocsPerRun(100, func() { _ = l.Int64(r, 0) + int64(len(l.String(r, 3))) + l.UnixNano(r, 4) }); n != 0 {
		t.Errorf("typed accessors allocate %v times", n)
	}
}

func TestBuilderReusesMemory(t *testing.T) {
	l := mustLayout(t, []types.Type{{Kind: types.BigInt}, {Kind: types.String}})
	var b Builder
	fields := []any{int64(1), "a string of some length"}
	if _, err := b.Build(l, fields); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = b.Build(l, fields) }); n != 0 {
		t.Errorf("Build allocates %v times per row once its buffer is grown", n)
	}
}

// TestAppendFieldsSharesOneTail: a row's strings come from one copy of its
// tail, so decoding a row of several strings allocates once for them.
func TestAppendFieldsSharesOneTail(t *testing.T) {
	l := mustLayout(t, []types.Type{{Kind: types.String}, {Kind: types.String}, {Kind: types.String}, {Kind: types.Boolean}})
	r, err := l.Append(nil, []any{"channel", "https://example.com/x", "extra", true})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]any, 0, 4)
	// One allocation for the tail copy, three for boxing the strings.
	if n := testing.AllocsPerRun(100, func() { dst = l.AppendFields(dst[:0], r) }); n != 4 {
		t.Errorf("AppendFields allocates %v times, want 4", n)
	}
	r2 := bytes.Clone(r)
	got := l.Fields(r2)
	clear(r2) // decoded strings must not share the row
	same(t, got, []any{"channel", "https://example.com/x", "extra", true})
}

// FieldsOfImmutable decodes every type as Fields does, NULLs too, with
// its strings in the row's own bytes (no tail copy).
func TestFieldsOfImmutable(t *testing.T) {
	ts, in, want := everyRow()
	l := mustLayout(t, ts)
	r, err := l.Append(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	same(t, l.FieldsOfImmutable(r), want)
	nulls := make([]any, len(in))
	rn, err := l.Append(nil, nulls)
	if err != nil {
		t.Fatal(err)
	}
	same(t, l.FieldsOfImmutable(rn), nulls)

	ls := mustLayout(t, []types.Type{{Kind: types.String}, {Kind: types.BigInt}})
	rs, err := ls.Append(nil, []any{"a long description", int64(7)})
	if err != nil {
		t.Fatal(err)
	}
	got := ls.FieldsOfImmutable(rs)
	rs[len(rs)-1] = 'X' // the string is the row's bytes
	if got[0] != "a long descriptioX" {
		t.Errorf("string %q does not share the row's bytes", got[0])
	}
	// The fields and their values are one allocation (valueBlock).
	lb := mustLayout(t, []types.Type{{Kind: types.BigInt}, {Kind: types.String}, {Kind: types.Timestamp, Precision: 3},
		{Kind: types.Double}, {Kind: types.Boolean}, {Kind: types.Int, Nullable: true}})
	rb, err := lb.Append(nil, []any{int64(1) << 40, "a string", time.UnixMilli(1_700_000_000_123).UTC(), 2.5, true, nil})
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { got = lb.FieldsOfImmutable(rb) }); n != 1 {
		t.Errorf("FieldsOfImmutable of BIGINT, STRING, TIMESTAMP, DOUBLE, BOOLEAN, NULL allocates %v times, want 1", n)
	}
	same(t, got, []any{int64(1) << 40, "a string", time.UnixMilli(1_700_000_000_123).UTC(), 2.5, true, nil})
}

// TestFieldsOfImmutableSurviveGC: values read out of rows, held only by
// their interfaces (the []any dropped), stay intact through collections.
func TestFieldsOfImmutableSurviveGC(t *testing.T) {
	ts := []types.Type{{Kind: types.BigInt}, {Kind: types.String}, {Kind: types.Timestamp, Precision: 3}, {Kind: types.Double}}
	l := mustLayout(t, ts)
	type kept struct{ n, s, tm, f any }
	var all []kept
	for i := range 3000 {
		in := []any{int64(i) * 1000, fmt.Sprint("value ", i), time.UnixMilli(int64(i)).UTC(), float64(i) / 4}
		r, err := l.Append(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		f := l.FieldsOfImmutable(r)
		all = append(all, kept{f[0], f[1], f[2], f[3]})
		if i%500 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	for i, k := range all {
		if k.n != int64(i)*1000 || k.s != fmt.Sprint("value ", i) || k.tm != time.UnixMilli(int64(i)).UTC() || k.f != float64(i)/4 {
			t.Fatalf("row %d read back as %v", i, k)
		}
	}
}

func TestEqualAndHashOnBytes(t *testing.T) {
	l := mustLayout(t, []types.Type{{Kind: types.BigInt}, {Kind: types.String, Nullable: true}})
	a, _ := l.Append(nil, []any{int64(1), "x"})
	b, _ := l.Append(nil, []any{int64(1), "x"})
	c, _ := l.Append(nil, []any{int64(1), nil})
	d, _ := l.Append(nil, []any{int64(1), ""})
	seed := maphash.MakeSeed()
	if !Equal(a, b) || Hash(seed, a) != Hash(seed, b) {
		t.Error("equal rows differ")
	}
	if Equal(a, c) || Equal(c, d) {
		t.Error("a NULL string equals a string, or the empty string")
	}
}

func TestBuildErrors(t *testing.T) {
	l := mustLayout(t, []types.Type{{Kind: types.BigInt}, {Kind: types.Timestamp}})
	for _, fields := range [][]any{
		{int64(1)},
		{"1", time.Time{}},
		{int64(1), int64(2)},
		{1.5, time.Time{}},
	} {
		if _, err := l.Append(nil, fields); !errors.Is(err, ErrValue) {
			t.Errorf("%v: got %v, want ErrValue", fields, err)
		}
	}
	if _, err := NewLayout([]types.Type{{Kind: types.BigInt}, {Kind: types.Array, Elem: &types.Type{Kind: types.Int}}}); err == nil {
		t.Error("an ARRAY field: want an error")
	}
	if Supports([]types.Type{{Kind: types.Map}}) || !Supports([]types.Type{{Kind: types.Date}}) {
		t.Error("Supports: want MAP unsupported, DATE supported")
	}
}

func TestValidateRejectsCorruptRows(t *testing.T) {
	l := mustLayout(t, []types.Type{{Kind: types.String}, {Kind: types.BigInt}, {Kind: types.Timestamp}})
	good, _ := l.Append(nil, []any{"abc", int64(5), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err := l.Validate(good); err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(r Row)) Row { r := bytes.Clone(good); f(r); return r }
	for name, r := range map[string]Row{
		"short":              good[:10],
		"string past end":    mutate(func(r Row) { r[2+7]++ }),
		"bit beyond fields":  mutate(func(r Row) { r[0] |= 0x80 }),
		"null with value":    mutate(func(r Row) { r[0] |= 1 }),
		"int in tail":        mutate(func(r Row) { r[1] |= 2 }),
		"string inline":      mutate(func(r Row) { r[1] &^= 1 }),
		"time nanos too big": mutate(func(r Row) { copy(r[len(r)-4:], []byte{0xff, 0xff, 0xff, 0xff}) }),
	} {
		if err := l.Validate(r); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzRow feeds arbitrary bytes to Validate over a row of every type: a
// row it accepts decodes without panicking, and its fields build a row that
// decodes to the same fields.
func FuzzRow(f *testing.F) {
	ts, in, _ := everyRow()
	l := mustLayout(f, ts)
	r, _ := l.Append(nil, in)
	f.Add([]byte(r))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if l.Validate(b) != nil {
			return
		}
		fields := l.Fields(b)
		again, err := l.Append(nil, fields)
		if err != nil {
			t.Fatalf("fields of a valid row do not build: %v", err)
		}
		same(t, l.Fields(again), fields)
	})
}

// FuzzRoundTrip builds rows from fuzzed values of a fixed layout.
func FuzzRoundTrip(f *testing.F) {
	ts := []types.Type{{Kind: types.BigInt}, {Kind: types.String}, {Kind: types.Double},
		{Kind: types.Decimal, Precision: 12, Scale: 3}, {Kind: types.Timestamp, Precision: 9}, {Kind: types.Bytes}}
	l := mustLayout(f, ts)
	f.Add(int64(1), "a", 1.0, int64(1500), int32(-3), int64(0), []byte("b"), uint8(0))
	f.Fuzz(func(t *testing.T, n int64, s string, x float64, coef int64, exp int32, sec int64, b []byte, nulls uint8) {
		in := []any{n, s, x, decimal.New(coef, exp%40), time.Unix(sec%(1<<40), n%1e9&0x3fffffff).UTC(), b}
		if in[4].(time.Time).Nanosecond() < 0 {
			in[4] = time.Unix(sec%(1<<40), 0).UTC()
		}
		for i := range in {
			if nulls&(1<<i) != 0 {
				in[i] = nil
			}
		}
		r, err := l.Append(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Validate(r); err != nil {
			t.Fatal(err)
		}
		same(t, l.Fields(r), in)
	})
}
