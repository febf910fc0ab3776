package state

import (
	"encoding/binary"
	"math"

	"github.com/weirstream/weir/state/internal/wire"
)

// Type tags of AnyCodec. They are part of the snapshot format: never reuse
// or renumber one.
const (
	tagNil     = 0
	tagString  = 1
	tagInt     = 2
	tagInt64   = 3
	tagInt32   = 4
	tagUint64  = 5
	tagBool    = 6
	tagFloat64 = 7
	tagBytes   = 8
	tagInt8    = 9
	tagInt16   = 10
	tagUint    = 11
	tagUint8   = 12
	tagUint16  = 13
	tagUint32  = 14
	tagFloat32 = 15
	tagGob     = 255
)

// AnyCodec encodes a value of dynamic type: one type-tag byte, then the
// value. Built-in tags cover nil, string, []byte, bool, float32, float64 and
// every sized and unsized integer type, so the decoded value has the same
// dynamic type as the encoded one (an int32 key stays an int32 key). Other
// types go through encoding/gob and must be registered with gob.Register;
// Encode panics on an unregistered or unencodable type. It is the default
// key codec of keyed backends.
type AnyCodec struct{}

// Encode appends the tag and encoding of v.
func (AnyCodec) Encode(buf []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, tagNil)
	case string:
		return AnyCodec{}.AppendString(buf, x)
	case []byte:
		return wire.AppendBytes(append(buf, tagBytes), x)
	case bool:
		return BoolCodec{}.Encode(append(buf, tagBool), x)
	case float64:
		return Float64Codec{}.Encode(append(buf, tagFloat64), x)
	case float32:
		return binary.BigEndian.AppendUint32(append(buf, tagFloat32), math.Float32bits(x))
	}
	if b, ok := encodeSigned(buf, v); ok {
		return b
	}
	if b, ok := encodeUnsigned(buf, v); ok {
		return b
	}
	return GobCodec[any]{}.Encode(append(buf, tagGob), v)
}

// AppendString appends the encoding of the string s, as Encode does for
// s boxed, without boxing it.
func (AnyCodec) AppendString(buf []byte, s string) []byte {
	return wire.AppendString(append(buf, tagString), s)
}

func encodeSigned(buf []byte, v any) ([]byte, bool) {
	var tag byte
	var n int64
	switch x := v.(type) {
	case int:
		tag, n = tagInt, int64(x)
	case int64:
		tag, n = tagInt64, x
	case int32:
		tag, n = tagInt32, int64(x)
	case int16:
		tag, n = tagInt16, int64(x)
	case int8:
		tag, n = tagInt8, int64(x)
	default:
		return buf, false
	}
	return wire.AppendVarint(append(buf, tag), n), true
}

func encodeUnsigned(buf []byte, v any) ([]byte, bool) {
	var tag byte
	var n uint64
	switch x := v.(type) {
	case uint64:
		tag, n = tagUint64, x
	case uint:
		tag, n = tagUint, uint64(x)
	case uint32:
		tag, n = tagUint32, uint64(x)
	case uint16:
		tag, n = tagUint16, uint64(x)
	case uint8:
		tag, n = tagUint8, uint64(x)
	default:
		return buf, false
	}
	return wire.AppendUvarint(append(buf, tag), n), true
}

// Decode decodes one tagged value.
func (AnyCodec) Decode(b []byte) (any, []byte, error) {
	if len(b) == 0 {
		return nil, b, corruptf("any: missing type tag")
	}
	tag, p := b[0], b[1:]
	var v any
	var rest []byte
	var err error
	switch tag {
	case tagNil:
		return nil, p, nil
	case tagString:
		v, rest, err = StringCodec{}.Decode(p)
	case tagBytes:
		v, rest, err = BytesCodec{}.Decode(p)
	case tagBool:
		v, rest, err = BoolCodec{}.Decode(p)
	case tagFloat64:
		v, rest, err = Float64Codec{}.Decode(p)
	case tagFloat32:
		v, rest, err = decodeFloat32(p)
	case tagGob:
		v, rest, err = GobCodec[any]{}.Decode(p)
	case tagInt, tagInt64, tagInt32, tagInt16, tagInt8:
		v, rest, err = decodeSigned(tag, p)
	case tagUint64, tagUint, tagUint32, tagUint16, tagUint8:
		v, rest, err = decodeUnsigned(tag, p)
	default:
		return nil, b, corruptf("any: unknown type tag %d", tag)
	}
	if err != nil {
		return nil, b, err
	}
	return v, rest, nil
}

func decodeFloat32(p []byte) (any, []byte, error) {
	if len(p) < 4 {
		return nil, p, corruptf("float32: %d bytes, want 4", len(p))
	}
	return math.Float32frombits(binary.BigEndian.Uint32(p)), p[4:], nil
}

// decodeSigned decodes a signed integer of the tag's type, checking that
// the value fits it.
func decodeSigned(tag byte, p []byte) (any, []byte, error) {
	n, rest, err := Int64Codec{}.Decode(p)
	if err != nil {
		return nil, p, err
	}
	var v any
	ok := true
	switch tag {
	case tagInt:
		v, ok = int(n), int64(int(n)) == n
	case tagInt64:
		v = n
	case tagInt32:
		v, ok = int32(n), int64(int32(n)) == n
	case tagInt16:
		v, ok = int16(n), int64(int16(n)) == n
	default:
		v, ok = int8(n), int64(int8(n)) == n
	}
	if !ok {
		return nil, p, corruptf("any: %d overflows %T", n, v)
	}
	return v, rest, nil
}

// decodeUnsigned decodes an unsigned integer of the tag's type, checking
// that the value fits it.
func decodeUnsigned(tag byte, p []byte) (any, []byte, error) {
	n, rest, err := Uint64Codec{}.Decode(p)
	if err != nil {
		return nil, p, err
	}
	var v any
	ok := true
	switch tag {
	case tagUint64:
		v = n
	case tagUint:
		v, ok = uint(n), uint64(uint(n)) == n
	case tagUint32:
		v, ok = uint32(n), uint64(uint32(n)) == n
	case tagUint16:
		v, ok = uint16(n), uint64(uint16(n)) == n
	default:
		v, ok = uint8(n), uint64(uint8(n)) == n
	}
	if !ok {
		return nil, p, corruptf("any: %d overflows %T", n, v)
	}
	return v, rest, nil
}
