package parquet

import (
	"fmt"
	"reflect"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/weirstream/weir/types"
)

// schemaNode is the file's root: one leaf per column, in the table's order
// (parquet-go's Group sorts its fields by name; Flink keeps the order).
func (f *Format) schemaNode() (pq.Node, error) {
	g := make(orderedGroup, len(f.Fields))
	for i, fl := range f.Fields {
		n, err := f.leaf(fl.Type)
		if err != nil {
			return nil, fmt.Errorf("format parquet: column %q: %w", fl.Name, err)
		}
		if f.Dictionary && fl.Type.Kind != types.Boolean {
			n = pq.Encoded(n, &pq.RLEDictionary)
		}
		if fl.Type.Nullable {
			n = pq.Optional(n)
		} else {
			n = pq.Required(n)
		}
		g[i] = field{Node: n, name: fl.Name}
	}
	return g, nil
}

// leaf is the Parquet type of a column of SQL type t.
func (f *Format) leaf(t types.Type) (pq.Node, error) {
	switch t.Kind {
	case types.Boolean:
		return pq.Leaf(pq.BooleanType), nil
	case types.TinyInt:
		return pq.Int(8), nil
	case types.SmallInt:
		return pq.Int(16), nil
	case types.Int:
		return pq.Leaf(pq.Int32Type), nil
	case types.BigInt:
		return pq.Leaf(pq.Int64Type), nil
	case types.Float:
		return pq.Leaf(pq.FloatType), nil
	case types.Double:
		return pq.Leaf(pq.DoubleType), nil
	case types.Decimal:
		return pq.Decimal(t.Scale, t.Precision, pq.FixedLenByteArrayType(decimalBytes(t.Precision))), nil
	case types.Char, types.Varchar, types.String:
		return pq.String(), nil
	case types.Bytes:
		return pq.Leaf(pq.ByteArrayType), nil
	case types.Date:
		return pq.Date(), nil
	case types.Timestamp, types.TimestampLTZ:
		if !f.Int64Timestamp {
			return pq.Leaf(pq.Int96Type), nil
		}
		// A TIMESTAMP is a wall-clock time (not adjusted to UTC), a
		// TIMESTAMP_LTZ an instant.
		return pq.TimestampAdjusted(timeUnits[f.TimeUnit], t.Kind == types.TimestampLTZ), nil
	}
	return nil, fmt.Errorf("type %s is not supported by the parquet format yet (supported: scalar types)", t)
}

var timeUnits = map[string]pq.TimeUnit{"millis": pq.Millisecond, "micros": pq.Microsecond, "nanos": pq.Nanosecond}

// decimalBytes is the fewest bytes whose two's complement holds every
// unscaled value of precision digits (Flink's
// computeMinBytesForDecimalPrecision).
func decimalBytes(precision int) int {
	n := 1
	for ; ; n++ {
		// 2^(8n-1) > 10^precision - 1, i.e. 8n-1 bits hold the digits.
		if float64(8*n-1)*0.30102999566398120 >= float64(precision) {
			return n
		}
	}
}

// orderedGroup is a group node whose fields keep their order.
type orderedGroup []pq.Field

func (g orderedGroup) ID() int                     { return 0 }
func (g orderedGroup) String() string              { return pq.NewSchema("", g).String() }
func (g orderedGroup) Type() pq.Type               { return pq.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Fields() []pq.Field          { return g }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) GoType() reflect.Type        { return g.group().GoType() }
func (g orderedGroup) group() pq.Group {
	m := pq.Group{}
	for _, f := range g {
		m[f.Name()] = f
	}
	return m
}

// field is a named field of an orderedGroup.
type field struct {
	pq.Node
	name string
}

func (f field) Name() string { return f.name }

func (f field) Value(base reflect.Value) reflect.Value {
	if base.Kind() == reflect.Map {
		return base.MapIndex(reflect.ValueOf(f.name))
	}
	return base.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, f.name) })
}
