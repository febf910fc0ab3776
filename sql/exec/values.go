package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
)

// Type tags of the value encoding. They are part of the snapshot format:
// never reuse or renumber one.
const (
	tagNil     = 0
	tagFalse   = 1
	tagTrue    = 2
	tagInt64   = 3
	tagFloat64 = 4
	tagDecimal = 5
	tagString  = 6
	tagBytes   = 7
	tagTime    = 8
	tagArray   = 9
	tagMap     = 10
	tagInt     = 11
	// tagMultiset is a MULTISET: entries, then each element and its count.
	tagMultiset = 12
	// tagOther marks, in key encodings only, a value of a type the SQL
	// layer does not produce, encoded as its Go-syntax representation.
	tagOther = 255
)

// appendValue appends the encoding of v. With norm false the encoding is
// exact: decodeValue gives back v with its Go type and, for a decimal, its
// scale. With norm true it is a key encoding: values SQL calls equal encode
// equally (1.5 and 1.50, 0.0 and -0.0, int and int64 1, one instant in two
// time zones), and it is not meant to be decoded. Exact encoding panics on
// a type outside the SQL layer's value types (see sql/types).
func appendValue(buf []byte, v any, norm bool) []byte {
	if out, ok := appendScalar(buf, v, norm); ok {
		return out
	}
	switch x := v.(type) {
	case decimal.Decimal:
		return appendDecimal(append(buf, tagDecimal), x, norm)
	case []byte:
		return appendBytes(append(buf, tagBytes), x)
	case []any:
		buf = binary.AppendUvarint(append(buf, tagArray), uint64(len(x)))
		for _, e := range x {
			buf = appendValue(buf, e, norm)
		}
		return buf
	case map[any]any:
		return appendMap(buf, x, norm)
	case types.MultisetValue:
		return appendMultiset(buf, x, norm)
	}
	return appendOther(buf, v, norm)
}

// appendScalar is appendValue of NULL, a BOOLEAN, BIGINT, DOUBLE, string
// or TIMESTAMP; ok is false, and buf untouched, for other values. It only
// appends to buf, so a caller's buffer on the stack stays there.
func appendScalar(buf []byte, v any, norm bool) (out []byte, ok bool) {
	switch x := v.(type) {
	case nil:
		return append(buf, tagNil), true
	case bool:
		if x {
			return append(buf, tagTrue), true
		}
		return append(buf, tagFalse), true
	case int64:
		return binary.AppendVarint(append(buf, tagInt64), x), true
	case float64:
		if norm && x == 0 {
			x = 0 // -0.0 == 0.0 in SQL
		}
		return binary.BigEndian.AppendUint64(append(buf, tagFloat64), math.Float64bits(x)), true
	case string:
		return append(binary.AppendUvarint(append(buf, tagString), uint64(len(x))), x...), true
	case time.Time:
		buf = binary.AppendVarint(append(buf, tagTime), x.Unix())
		return binary.AppendUvarint(buf, uint64(x.Nanosecond())), true
	}
	return buf, false
}

// appendOther encodes the integer types a Go caller may hand in; norm
// widens them to int64 so a key of int 1 equals one of int64 1.
func appendOther(buf []byte, v any, norm bool) []byte {
	var n int64
	switch x := v.(type) {
	case int:
		if !norm {
			return binary.AppendVarint(append(buf, tagInt), int64(x))
		}
		n = int64(x)
	case int32:
		n = int64(x)
	case int16:
		n = int64(x)
	case int8:
		n = int64(x)
	case float32:
		return appendValue(buf, float64(x), norm)
	default:
		if !norm {
			panic(fmt.Sprintf("sql/exec: cannot encode a %T in state; SQL values are bool, int64, float64, decimal.Decimal, string, []byte, time.Time, []any, map[any]any and types.MultisetValue", v))
		}
		return appendBytes(append(buf, tagOther), fmt.Appendf(nil, "%#v", v))
	}
	if !norm {
		return appendValue(buf, n, false)
	}
	return binary.AppendVarint(append(buf, tagInt64), n)
}

func appendBytes(buf, b []byte) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(b))), b...)
}

// appendDecimal encodes the coefficient (sign byte and magnitude) and the
// exponent; norm strips trailing zeros first, so equal numbers of any scale
// encode alike.
func appendDecimal(buf []byte, d decimal.Decimal, norm bool) []byte {
	coef, exp := d.Coefficient(), d.Exponent()
	if norm {
		coef, exp = stripZeros(coef, exp)
	}
	sign := byte(0)
	if coef.Sign() < 0 {
		sign = 1
	}
	buf = binary.AppendVarint(append(buf, sign), int64(exp))
	return appendBytes(buf, coef.Bytes())
}

var bigTen = big.NewInt(10)

func stripZeros(coef *big.Int, exp int32) (*big.Int, int32) {
	if coef.Sign() == 0 {
		return coef, 0
	}
	var q, r big.Int
	for {
		q.QuoRem(coef, bigTen, &r)
		if r.Sign() != 0 {
			return coef, exp
		}
		coef, exp = new(big.Int).Set(&q), exp+1
	}
}

// appendMap encodes entries in the order of their keys' encodings, so equal
// maps encode alike whatever Go's iteration order.
func appendMap(buf []byte, m map[any]any, norm bool) []byte {
	type kv struct{ k, v []byte }
	es := make([]kv, 0, len(m))
	for k, v := range m {
		es = append(es, kv{appendValue(nil, k, norm), appendValue(nil, v, norm)})
	}
	slices.SortFunc(es, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	buf = binary.AppendUvarint(append(buf, tagMap), uint64(len(es)))
	for _, e := range es {
		buf = append(append(buf, e.k...), e.v...)
	}
	return buf
}

// reader decodes the exact value encoding; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: sql/exec value: "+format, append([]any{state.ErrCorrupt}, args...)...)
	}
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if r.err != nil || n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if r.err != nil || n <= 0 {
		r.fail("bad uvarint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || uint64(len(r.b)) < n {
		r.fail("length %d beyond the input", n)
		return nil
	}
	p := bytes.Clone(r.b[:n])
	r.b = r.b[n:]
	return p
}

// count reads a length of a sequence whose elements take at least one
// byte each, so corrupt input cannot make it allocate without bound.
func (r *reader) count() int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)) {
		r.fail("%d elements in %d bytes", n, len(r.b))
		return 0
	}
	return int(n)
}

func (r *reader) value(depth int) any {
	if depth > 64 {
		r.fail("nested more than 64 levels")
		return nil
	}
	switch tag := r.byte(); tag {
	case tagNil:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt64:
		return r.varint()
	case tagInt:
		return int(r.varint())
	case tagFloat64:
		if len(r.b) < 8 {
			r.fail("truncated float64")
			return nil
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(r.b))
		r.b = r.b[8:]
		return f
	case tagDecimal:
		return r.decimal()
	case tagString:
		return string(r.bytes())
	case tagBytes:
		return r.bytes()
	case tagTime:
		sec := r.varint()
		nsec := r.uvarint()
		if nsec >= 1e9 {
			r.fail("nanoseconds %d out of range", nsec)
		}
		return time.Unix(sec, int64(nsec)).UTC()
	case tagArray:
		return r.array(depth)
	case tagMap:
		return r.mapValue(depth)
	case tagMultiset:
		return r.multiset(depth)
	default:
		r.fail("unknown type tag %d", tag)
		return nil
	}
}

func (r *reader) decimal() any {
	sign := r.byte()
	exp := r.varint()
	mag := r.bytes()
	if r.err != nil {
		return nil
	}
	if sign > 1 || exp < math.MinInt32 || exp > math.MaxInt32 {
		r.fail("bad decimal sign %d or exponent %d", sign, exp)
		return nil
	}
	coef := new(big.Int).SetBytes(mag)
	if sign == 1 {
		coef.Neg(coef)
	}
	return decimal.NewFromBigInt(coef, int32(exp))
}

func (r *reader) array(depth int) any {
	n := r.count()
	out := make([]any, n)
	for i := range out {
		out[i] = r.value(depth + 1)
	}
	return out
}

func (r *reader) mapValue(depth int) any {
	n := r.count()
	out := make(map[any]any, n)
	for range n {
		k := r.value(depth + 1)
		v := r.value(depth + 1)
		if r.err != nil {
			return nil
		}
		if !isComparable(k) {
			r.fail("map key of type %T", k)
			return nil
		}
		out[k] = v
	}
	return out
}

func isComparable(v any) bool {
	switch v.(type) {
	case []any, []byte, map[any]any, types.MultisetValue:
		return false
	}
	return true
}

// RowCodec encodes a row's fields ([]any of SQL values, see sql/types)
// exactly: a decoded row has the same Go types, decimal scales and
// instants (times decode in UTC). It is the codec of every state this
// package keeps. Encode panics on a value of another type; the state
// backends turn that panic into an error of the checkpoint.
type RowCodec struct{}

// Encode appends fields' encoding.
func (RowCodec) Encode(buf []byte, fields []any) []byte { return appendValue(buf, fields, false) }

// Decode decodes one row.
func (RowCodec) Decode(b []byte) ([]any, []byte, error) {
	r := reader{b: b}
	v := r.value(0)
	if r.err != nil {
		return nil, b, r.err
	}
	fields, ok := v.([]any)
	if !ok && v != nil {
		return nil, b, fmt.Errorf("%w: sql/exec: row codec decoded a %T, want []any", state.ErrCorrupt, v)
	}
	return fields, r.b, nil
}

// valueKey is the key encoding of one value, as a map key.
func valueKey(v any) string { return string(appendValue(nil, v, true)) }

// sameValue reports whether a and b are equal as SQL sees it (and NULL
// equals NULL, as IS NOT DISTINCT FROM).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case int64:
		if y, ok := b.(int64); ok {
			return x == y
		}
	case string:
		if y, ok := b.(string); ok {
			return x == y
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y
		}
	}
	return bytes.Equal(appendValue(nil, a, true), appendValue(nil, b, true))
}

// sameRow reports whether two rows' fields are pairwise sameValue. Rows
// are compared field by field without encoding them, and a row is the
// same as itself (operators pass stored rows on by reference).
func sameRow(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if !sameValue(a[i], b[i]) {
			return false
		}
	}
	return true
}
