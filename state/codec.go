package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/weirstream/weir/state/internal/wire"
)

// Codec turns values of type T into bytes and back (Flink's TypeSerializer).
// Encodings are self-delimiting: Decode consumes one value from the front of
// b and returns the rest. Decode must return an error wrapping ErrCorrupt —
// never panic — on bytes that are not a valid encoding, and must not retain b.
type Codec[T any] interface {
	// Encode appends the encoding of v to buf and returns the result.
	Encode(buf []byte, v T) []byte
	// Decode decodes one value from the front of b.
	Decode(b []byte) (T, []byte, error)
}

// Copier is an optional interface of a Codec (Flink's TypeSerializer.copy):
// Copy returns a deep copy of v, sharing nothing mutable with it. A backend
// that keeps values by reference copies a value that a snapshot in flight
// may still encode before handing it out; it uses Copy when the codec has
// one, and encodes and decodes the value otherwise.
type Copier[T any] interface {
	Copy(v T) T
}

// ImmutableType is an optional interface of a Codec (Flink's
// TypeSerializer.isImmutableType): IsImmutableType reports that its values
// are never modified once made, only replaced, so that a backend keeping
// values by reference hands them out without a copy while a snapshot in
// flight encodes them. Without it such a backend copies every value read
// then, and (the heap backend) stores the copy back as a change, which
// also puts the key into the next incremental delta.
type ImmutableType interface {
	IsImmutableType() bool
}

// IsImmutableType reports whether c declares its values immutable
// (ImmutableType), looking through Erase.
func IsImmutableType(c any) bool {
	im, ok := c.(ImmutableType)
	return ok && im.IsImmutableType()
}

// InPlace is an optional interface of a Codec for values a backend may
// keep as their encodings, in memory of its own that it never changes or
// frees while a value read from it lives: the heap backend then keeps a
// list or value state without TTL as bytes in large chunks, with no
// pointer per value for the garbage collector to mark at every cycle. A
// backend keeps no value that KeepsInPlace accepts, only its encoding. A
// list keeps the others as they are; a value state keeps their encodings
// too, and reads them with View, which then decodes.
type InPlace[T any] interface {
	// KeepsInPlace reports whether v is kept as its encoding: false for a
	// value read far more often than it is written, whose every read
	// would decode it.
	KeepsInPlace(v T) bool
	// View decodes the one value Encode wrote as b, as Decode does, but
	// the value may share b's bytes. b comes from Encode in this process,
	// or from a Decode that accepted it.
	View(b []byte) (T, error)
}

// InPlaceOf returns c's InPlace, looking through Erase; nil when c has
// none.
func InPlaceOf(c Codec[any]) InPlace[any] {
	switch e := c.(type) {
	case InPlace[any]:
		return e
	case interface{ inPlace() InPlace[any] }:
		return e.inPlace()
	}
	return nil
}

// CodecFor returns the built-in codec for T — string, []byte, int, int64,
// int32, uint64, float64, bool, or any (AnyCodec) — and GobCodec[T] for every
// other type, including named types such as `type UserID string`.
func CodecFor[T any]() Codec[T] {
	var c any
	switch any((*T)(nil)).(type) {
	case *string:
		c = StringCodec{}
	case *[]byte:
		c = BytesCodec{}
	case *int:
		c = IntCodec{}
	case *int64:
		c = Int64Codec{}
	case *int32:
		c = Int32Codec{}
	case *uint64:
		c = Uint64Codec{}
	case *float64:
		c = Float64Codec{}
	case *bool:
		c = BoolCodec{}
	case *any:
		c = AnyCodec{}
	default:
		return GobCodec[T]{}
	}
	return c.(Codec[T])
}

// codecOr returns c, or CodecFor[T] when c is nil.
func codecOr[T any](c Codec[T]) Codec[T] {
	if c == nil {
		return CodecFor[T]()
	}
	return c
}

// Erase adapts a Codec[T] to Codec[any], as the type-erased backends need.
// Encode panics if given a value that is not a T. The result is a
// Copier[any] when c is a Copier[T].
func Erase[T any](c Codec[T]) Codec[any] {
	if e, ok := any(c).(Codec[any]); ok {
		return e
	}
	if cp, ok := c.(Copier[T]); ok {
		return erasedCopier[T]{erased[T]{c}, cp}
	}
	return erased[T]{c}
}

type erased[T any] struct{ c Codec[T] }

// EncodeString appends c's encoding of the string s, as c.Encode(buf, s)
// does, without boxing s when c is a Codec[string] erased (Erase) or
// AnyCodec: a backend that holds string keys unboxed encodes them so.
func EncodeString(c Codec[any], buf []byte, s string) []byte {
	switch e := c.(type) {
	case AnyCodec:
		return e.AppendString(buf, s)
	case erased[string]:
		return e.c.Encode(buf, s)
	case erasedCopier[string]:
		return e.c.Encode(buf, s)
	}
	return c.Encode(buf, s)
}

func (e erased[T]) Encode(buf []byte, v any) []byte { return e.c.Encode(buf, e.unbox(v)) }

// unbox returns v as a T; nil, possible when T is an interface type, is
// T's zero value.
func (e erased[T]) unbox(v any) T {
	t, ok := v.(T)
	if !ok && v != nil {
		panic(fmt.Sprintf("state: codec for %T given a %T", *new(T), v))
	}
	return t
}

func (e erased[T]) Decode(b []byte) (any, []byte, error) { return e.c.Decode(b) }

// IsImmutableType passes on the erased codec's ImmutableType.
func (e erased[T]) IsImmutableType() bool { return IsImmutableType(e.c) }

// inPlace is the erased codec's InPlace, if it has one (InPlaceOf).
func (e erased[T]) inPlace() InPlace[any] {
	if ip, ok := e.c.(InPlace[T]); ok {
		return erasedInPlace[T]{e, ip}
	}
	return nil
}

type erasedInPlace[T any] struct {
	e  erased[T]
	ip InPlace[T]
}

func (x erasedInPlace[T]) KeepsInPlace(v any) bool { return x.ip.KeepsInPlace(x.e.unbox(v)) }

func (x erasedInPlace[T]) View(b []byte) (any, error) { return x.ip.View(b) }

type erasedCopier[T any] struct {
	erased[T]
	cp Copier[T]
}

func (e erasedCopier[T]) Copy(v any) any { return e.cp.Copy(e.unbox(v)) }

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// StringCodec encodes a string as a uvarint length and its bytes.
type StringCodec struct{}

// Encode appends v.
func (StringCodec) Encode(buf []byte, v string) []byte { return wire.AppendString(buf, v) }

// Decode decodes a string.
func (StringCodec) Decode(b []byte) (string, []byte, error) {
	r := wire.NewReader(b)
	p := r.Bytes()
	if r.Err() != nil {
		return "", b, corruptf("string: %v", r.Err())
	}
	return string(p), r.Rest(), nil
}

// BytesCodec encodes a []byte as a uvarint length and its bytes. Decode
// returns a copy; a nil slice decodes as an empty one.
type BytesCodec struct{}

// Encode appends v.
func (BytesCodec) Encode(buf []byte, v []byte) []byte { return wire.AppendBytes(buf, v) }

// Copy returns a copy of v (nil stays nil).
func (BytesCodec) Copy(v []byte) []byte { return bytes.Clone(v) }

// Decode decodes a byte slice.
func (BytesCodec) Decode(b []byte) ([]byte, []byte, error) {
	r := wire.NewReader(b)
	p := r.Bytes()
	if r.Err() != nil {
		return nil, b, corruptf("bytes: %v", r.Err())
	}
	return append([]byte{}, p...), r.Rest(), nil
}

// Int64Codec encodes an int64 as a zig-zag varint.
type Int64Codec struct{}

// Encode appends v.
func (Int64Codec) Encode(buf []byte, v int64) []byte { return wire.AppendVarint(buf, v) }

// Decode decodes an int64.
func (Int64Codec) Decode(b []byte) (int64, []byte, error) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, b, corruptf("int64: bad varint")
	}
	return v, b[n:], nil
}

// IntCodec encodes an int as Int64Codec does.
type IntCodec struct{}

// Encode appends v.
func (IntCodec) Encode(buf []byte, v int) []byte { return wire.AppendVarint(buf, int64(v)) }

// Decode decodes an int; a value that overflows int is an error.
func (IntCodec) Decode(b []byte) (int, []byte, error) {
	v, rest, err := Int64Codec{}.Decode(b)
	if err == nil && int64(int(v)) != v {
		return 0, b, corruptf("int: %d overflows int", v)
	}
	return int(v), rest, err
}

// Int32Codec encodes an int32 as Int64Codec does.
type Int32Codec struct{}

// Encode appends v.
func (Int32Codec) Encode(buf []byte, v int32) []byte { return wire.AppendVarint(buf, int64(v)) }

// Decode decodes an int32; a value that overflows int32 is an error.
func (Int32Codec) Decode(b []byte) (int32, []byte, error) {
	v, rest, err := Int64Codec{}.Decode(b)
	if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
		return 0, b, corruptf("int32: %d overflows int32", v)
	}
	return int32(v), rest, err
}

// Uint64Codec encodes a uint64 as a uvarint.
type Uint64Codec struct{}

// Encode appends v.
func (Uint64Codec) Encode(buf []byte, v uint64) []byte { return wire.AppendUvarint(buf, v) }

// Decode decodes a uint64.
func (Uint64Codec) Decode(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, b, corruptf("uint64: bad uvarint")
	}
	return v, b[n:], nil
}

// Float64Codec encodes a float64 as its 8 IEEE 754 bytes, big-endian.
type Float64Codec struct{}

// Encode appends v.
func (Float64Codec) Encode(buf []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(buf, math.Float64bits(v))
}

// Decode decodes a float64.
func (Float64Codec) Decode(b []byte) (float64, []byte, error) {
	if len(b) < 8 {
		return 0, b, corruptf("float64: %d bytes, want 8", len(b))
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), b[8:], nil
}

// BoolCodec encodes a bool as one byte, 0 or 1.
type BoolCodec struct{}

// Encode appends v.
func (BoolCodec) Encode(buf []byte, v bool) []byte {
	if v {
		return append(buf, 1)
	}
	return append(buf, 0)
}

// Decode decodes a bool; a byte other than 0 or 1 is an error.
func (BoolCodec) Decode(b []byte) (bool, []byte, error) {
	if len(b) < 1 || b[0] > 1 {
		return false, b, corruptf("bool: want a 0 or 1 byte")
	}
	return b[0] == 1, b[1:], nil
}
