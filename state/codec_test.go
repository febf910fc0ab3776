package state

import (
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

type userID string

type point struct {
	X, Y int
	Tags []string
	Meta map[string]float64
}

type gobKey struct {
	Region string
	Shard  int
}

func init() { gob.Register(gobKey{}) }

// roundTrip encodes vs back to back into one buffer, decodes them in order
// and checks each equals its original and that nothing is left over.
func roundTrip[T any](t *testing.T, c Codec[T], vs ...T) {
	t.Helper()
	var buf []byte
	for _, v := range vs {
		buf = c.Encode(buf, v)
	}
	rest := buf
	for _, want := range vs {
		got, r, err := c.Decode(rest)
		if err != nil {
			t.Fatalf("%T: decode %v: %v", c, want, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%T: got %#v (%T), want %#v (%T)", c, got, got, want, want)
		}
		rest = r
	}
	if len(rest) != 0 {
		t.Fatalf("%T: %d bytes left", c, len(rest))
	}
}

func TestBuiltinCodecsRoundTrip(t *testing.T) {
	roundTrip(t, StringCodec{}, "", "a", "héllo wörld", string(make([]byte, 300)))
	roundTrip(t, BytesCodec{}, []byte{}, []byte{0, 1, 2}, make([]byte, 1000))
	roundTrip(t, IntCodec{}, 0, 1, -1, math.MaxInt, math.MinInt)
	roundTrip(t, Int64Codec{}, 0, 63, -64, math.MaxInt64, math.MinInt64)
	roundTrip(t, Int32Codec{}, 0, math.MaxInt32, math.MinInt32)
	roundTrip(t, Uint64Codec{}, 0, 127, 128, math.MaxUint64)
	roundTrip(t, Float64Codec{}, 0, -0.5, math.Inf(1), math.MaxFloat64, math.SmallestNonzeroFloat64)
	roundTrip(t, BoolCodec{}, true, false)
	roundTrip(t, GobCodec[point]{}, point{}, point{X: 1, Y: -2, Tags: []string{"a"}, Meta: map[string]float64{"w": 1.5}})
	roundTrip(t, GobCodec[*point]{}, &point{X: 3})
	roundTrip(t, GobCodec[userID]{}, "u1", "")
}

func TestAnyCodecKeepsDynamicType(t *testing.T) {
	roundTrip[any](t, AnyCodec{},
		nil, "k", []byte("b"), true, false, 1.5, float32(2.5),
		int(-7), int64(math.MinInt64), int32(-3), int16(300), int8(-8),
		uint(7), uint64(math.MaxUint64), uint32(math.MaxUint32), uint16(65535), uint8(255),
		gobKey{Region: "eu", Shard: 3},
	)
}

func TestCodecFor(t *testing.T) {
	cases := []struct {
		got, want any
	}{
		{CodecFor[string](), StringCodec{}},
		{CodecFor[[]byte](), BytesCodec{}},
		{CodecFor[int](), IntCodec{}},
		{CodecFor[int64](), Int64Codec{}},
		{CodecFor[int32](), Int32Codec{}},
		{CodecFor[uint64](), Uint64Codec{}},
		{CodecFor[float64](), Float64Codec{}},
		{CodecFor[bool](), BoolCodec{}},
		{CodecFor[any](), AnyCodec{}},
		{CodecFor[userID](), GobCodec[userID]{}},
		{CodecFor[point](), GobCodec[point]{}},
	}
	for _, c := range cases {
		if reflect.TypeOf(c.got) != reflect.TypeOf(c.want) {
			t.Errorf("CodecFor gave %T, want %T", c.got, c.want)
		}
	}
}

func TestEraseRoundTrip(t *testing.T) {
	c := Erase[int](IntCodec{})
	v, rest, err := c.Decode(c.Encode(nil, 42))
	if err != nil || v != 42 || len(rest) != 0 {
		t.Fatalf("got %v, %v, %v", v, rest, err)
	}
	if _, ok := Erase[any](AnyCodec{}).(AnyCodec); !ok {
		t.Error("Erase of a Codec[any] should return it unchanged")
	}
	defer func() {
		if recover() == nil {
			t.Error("Encode of a wrong type did not panic")
		}
	}()
	c.Encode(nil, "not an int")
}

func TestEraseKeepsCopier(t *testing.T) {
	c, ok := Erase[[]byte](BytesCodec{}).(Copier[any])
	if !ok {
		t.Fatal("Erase of BytesCodec is not a Copier[any]")
	}
	orig := []byte("abc")
	cp := c.Copy(orig).([]byte)
	cp[0] = 'x'
	if string(orig) != "abc" {
		t.Fatalf("Copy shares its bytes: original is now %q", orig)
	}
	if _, ok := Erase[point](GobCodec[point]{}).(Copier[any]); ok {
		t.Error("Erase of a codec without Copy is a Copier[any]")
	}
}

// frozenCodec is a codec whose values are immutable (ImmutableType).
type frozenCodec struct{ StringCodec }

func (frozenCodec) IsImmutableType() bool { return true }

// copyingFrozenCodec is frozenCodec with a Copier, which Erase wraps
// differently.
type copyingFrozenCodec struct{ frozenCodec }

func (copyingFrozenCodec) Copy(s string) string { return s }

// TestEraseKeepsImmutableType: the backends see codecs erased, so Erase
// must pass ImmutableType on, with a Copier or without.
func TestEraseKeepsImmutableType(t *testing.T) {
	for name, c := range map[string]Codec[any]{
		"plain":   Erase[string](frozenCodec{}),
		"copying": Erase[string](copyingFrozenCodec{}),
	} {
		if !IsImmutableType(c) {
			t.Errorf("%s: Erase dropped IsImmutableType", name)
		}
	}
	if IsImmutableType(Erase[string](StringCodec{})) {
		t.Error("Erase of StringCodec says its type is immutable")
	}
}

// TestDecodeTruncated checks every strict prefix of a valid encoding is an
// ErrCorrupt error, not a panic or a wrong value.
func TestDecodeTruncated(t *testing.T) {
	encodings := map[string]struct {
		b   []byte
		dec func([]byte) error
	}{
		"string":  {StringCodec{}.Encode(nil, "hello"), decErr(StringCodec{})},
		"bytes":   {BytesCodec{}.Encode(nil, []byte("hello")), decErr(BytesCodec{})},
		"int64":   {Int64Codec{}.Encode(nil, math.MinInt64), decErr(Int64Codec{})},
		"uint64":  {Uint64Codec{}.Encode(nil, math.MaxUint64), decErr(Uint64Codec{})},
		"float64": {Float64Codec{}.Encode(nil, 1.5), decErr(Float64Codec{})},
		"bool":    {BoolCodec{}.Encode(nil, true), decErr(BoolCodec{})},
		"gob":     {GobCodec[point]{}.Encode(nil, point{X: 1}), decErr(GobCodec[point]{})},
		"any":     {AnyCodec{}.Encode(nil, "hello"), decErr(AnyCodec{})},
		"any gob": {AnyCodec{}.Encode(nil, gobKey{"eu", 1}), decErr(AnyCodec{})},
	}
	for name, e := range encodings {
		for n := range len(e.b) {
			if err := e.dec(e.b[:n]); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: prefix of %d/%d bytes: error %v, want ErrCorrupt", name, n, len(e.b), err)
			}
		}
	}
}

func decErr[T any](c Codec[T]) func([]byte) error {
	return func(b []byte) error { _, _, err := c.Decode(b); return err }
}

func TestDecodeRejectsOutOfRange(t *testing.T) {
	big := Int64Codec{}.Encode(nil, math.MaxInt32+1)
	if _, _, err := (Int32Codec{}).Decode(big); !errors.Is(err, ErrCorrupt) {
		t.Errorf("int32 overflow: %v", err)
	}
	if _, _, err := (BoolCodec{}).Decode([]byte{2}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bool 2: %v", err)
	}
	for _, b := range [][]byte{{tagInt8, 0x80, 0x02}, {tagUint8, 0x80, 0x02}, {200, 0}} {
		if _, _, err := (AnyCodec{}).Decode(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("any %v: %v", b, err)
		}
	}
}

func TestGobCodecEncodePanicsOnUnsupported(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "GobCodec") || !strings.Contains(fmt.Sprint(r), "func()") {
			t.Errorf("recovered %v", r)
		}
	}()
	GobCodec[any]{}.Encode(nil, func() {})
}

// FuzzDecode feeds arbitrary bytes to every built-in codec: Decode must not
// panic, must return a suffix of its input, and whatever it accepts must
// re-encode to something that decodes to the same value.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add(StringCodec{}.Encode(nil, "seed"))
	f.Add(AnyCodec{}.Encode(nil, int64(-5)))
	f.Add(AnyCodec{}.Encode(nil, gobKey{"eu", 2}))
	f.Add(GobCodec[point]{}.Encode(nil, point{X: 1, Tags: []string{"t"}}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzCodec(t, StringCodec{}, b)
		fuzzCodec(t, BytesCodec{}, b)
		fuzzCodec(t, IntCodec{}, b)
		fuzzCodec(t, Int64Codec{}, b)
		fuzzCodec(t, Int32Codec{}, b)
		fuzzCodec(t, Uint64Codec{}, b)
		fuzzCodec(t, Float64Codec{}, b)
		fuzzCodec(t, BoolCodec{}, b)
		fuzzCodec(t, GobCodec[point]{}, b)
		fuzzCodec[any](t, AnyCodec{}, b)
	})
}

func fuzzCodec[T any](t *testing.T, c Codec[T], b []byte) {
	v, rest, err := c.Decode(b)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%T: error %v does not wrap ErrCorrupt", c, err)
		}
		return
	}
	if len(rest) > len(b) || (len(rest) > 0 && &rest[len(rest)-1] != &b[len(b)-1]) {
		t.Fatalf("%T: rest is not a suffix of the input", c)
	}
	// Compare printed forms: NaN is not DeepEqual to itself.
	again, _, err := c.Decode(c.Encode(nil, v))
	if err != nil || fmt.Sprintf("%#v", again) != fmt.Sprintf("%#v", v) {
		t.Fatalf("%T: %#v re-decoded as %#v, %v", c, v, again, err)
	}
}
