package format

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

// Avro is Flink's avro format for message queues: a message is the Avro
// binary encoding of one record, with no header, of the schema derived
// from the table (AvroSchemaConverter), which is both the writer's and the
// reader's schema. Types map as Flink maps them:
//
//	BOOLEAN → boolean; TINYINT, SMALLINT, INT → int; BIGINT → long
//	FLOAT → float; DOUBLE → double; CHAR, VARCHAR, STRING → string
//	BYTES → bytes; DECIMAL(p, s) → bytes with logicalType decimal
//	DATE → int date; TIMESTAMP(p ≤ 3) → long timestamp-millis,
//	TIMESTAMP(p ≤ 6) → long timestamp-micros (local-timestamp-* without
//	'avro.timestamp_mapping.legacy'; TIMESTAMP_LTZ always timestamp-*)
//	ARRAY → array; MAP<STRING, V> → map; ROW → record
//	a nullable type T → the union ["null", T], a field of it default null
//
// The top-level record is org.apache.flink.avro.generated.record, a nested
// ROW column c of record R is the record R_c.
type Avro struct {
	Fields []types.Field
	// LegacyTimestamps is Flink's 'avro.timestamp_mapping.legacy' (default
	// true): TIMESTAMP as timestamp-millis/micros; false maps it to
	// local-timestamp-millis/micros.
	LegacyTimestamps bool
	schema           avro.Schema
	text             string // the schema as JSON, defaults included
}

// avroRecordName is the name Flink gives the table's record.
const avroRecordName = "org.apache.flink.avro.generated.record"

// NewAvro derives the Avro schema of fields and checks it: every type must
// have an Avro form and every name be an Avro name.
func NewAvro(fields []types.Field, legacyTimestamps bool) (*Avro, error) {
	a := &Avro{Fields: fields, LegacyTimestamps: legacyTimestamps}
	root := types.Type{Kind: types.Row, Fields: fields}
	js, err := a.schemaOf(root, avroRecordName, "")
	if err != nil {
		return nil, &Error{Format: "avro", Err: err}
	}
	text, _ := json.Marshal(js)
	a.text = string(text)
	if a.schema, err = avro.Parse(a.text); err != nil {
		return nil, &Error{Format: "avro", Err: fmt.Errorf("the schema derived from the table does not parse: %v", err)}
	}
	return a, nil
}

// Schema returns the Avro schema derived from the table, as JSON.
func (a *Avro) Schema() string { return a.text }

// The JSON forms of the schemas, with their keys in the order Avro's
// Schema.toString writes them.
type (
	avroLogical struct {
		Type        string `json:"type"`
		LogicalType string `json:"logicalType"`
		Precision   int    `json:"precision,omitempty"`
		Scale       *int   `json:"scale,omitempty"`
	}
	avroArray struct {
		Type  string `json:"type"`
		Items any    `json:"items"`
	}
	avroMap struct {
		Type   string `json:"type"`
		Values any    `json:"values"`
	}
	avroRecord struct {
		Type   string      `json:"type"`
		Name   string      `json:"name"`
		Fields []avroField `json:"fields"`
	}
	avroField struct {
		Name    string          `json:"name"`
		Type    any             `json:"type"`
		Default json.RawMessage `json:"default,omitempty"`
	}
)

// avroName is what the Avro specification allows as a name.
var avroName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// schemaOf returns the JSON form of t's Avro schema; name is the record
// name a ROW gets, path the column for errors.
func (a *Avro) schemaOf(t types.Type, name, path string) (any, error) {
	s, err := a.nonNullSchema(t, name, path)
	if err != nil || !t.Nullable {
		return s, err
	}
	return []any{"null", s}, nil
}

func (a *Avro) nonNullSchema(t types.Type, name, path string) (any, error) {
	logical := func(base, logical string) any { return avroLogical{Type: base, LogicalType: logical} }
	switch t.Kind {
	case types.Boolean:
		return "boolean", nil
	case types.TinyInt, types.SmallInt, types.Int:
		return "int", nil
	case types.BigInt:
		return "long", nil
	case types.Float:
		return "float", nil
	case types.Double:
		return "double", nil
	case types.Char, types.Varchar, types.String:
		return "string", nil
	case types.Bytes:
		return "bytes", nil
	case types.Decimal:
		scale := t.Scale
		return avroLogical{Type: "bytes", LogicalType: "decimal", Precision: t.Precision, Scale: &scale}, nil
	case types.Date:
		return logical("int", "date"), nil
	case types.Timestamp, types.TimestampLTZ:
		unit, err := avroTimestampUnit(t, path)
		if err != nil {
			return nil, err
		}
		prefix := "timestamp-"
		if t.Kind == types.Timestamp && !a.LegacyTimestamps {
			prefix = "local-timestamp-"
		}
		return logical("long", prefix+unit), nil
	case types.Array:
		items, err := a.schemaOf(*t.Elem, name, path+"[]")
		return avroArray{Type: "array", Items: items}, err
	case types.Map:
		if t.Key == nil || !t.Key.IsString() {
			return nil, fmt.Errorf("column %q: Avro maps have string keys; the key type %v has no Avro form", path, t.Key)
		}
		values, err := a.schemaOf(*t.Elem, name, path+"[]")
		return avroMap{Type: "map", Values: values}, err
	case types.Multiset:
		// Flink's AvroSchemaConverter: a map of element to int count.
		if t.Elem == nil || !t.Elem.IsString() {
			return nil, fmt.Errorf("column %q: Avro writes a MULTISET as a map of element to count, and Avro maps have string keys; the element type %v has no Avro form", path, t.Elem)
		}
		return avroMap{Type: "map", Values: "int"}, nil
	case types.Row:
		return a.recordSchema(t, name, path)
	}
	return nil, fmt.Errorf("column %q: type %s has no Avro form", path, t)
}

// avroTimestampUnit is millis for TIMESTAMP(p ≤ 3), micros for p ≤ 6;
// Avro has no finer unit (Flink refuses p > 6 too).
func avroTimestampUnit(t types.Type, path string) (string, error) {
	switch {
	case t.Precision <= 3:
		return "millis", nil
	case t.Precision <= 6:
		return "micros", nil
	}
	return "", fmt.Errorf("column %q: Avro does not support %s with precision %d, only up to 6: declare it %s(6) or less",
		path, t.Kind, t.Precision, t.Kind)
}

func (a *Avro) recordSchema(t types.Type, name, path string) (any, error) {
	fields := make([]avroField, len(t.Fields))
	for i, f := range t.Fields {
		p := f.Name
		if path != "" {
			p = path + "." + f.Name
		}
		if !avroName.MatchString(f.Name) {
			return nil, fmt.Errorf("column %q: not an Avro name (letters, digits and _, not starting with a digit)", p)
		}
		s, err := a.schemaOf(f.Type, name+"_"+f.Name, p)
		if err != nil {
			return nil, err
		}
		fields[i] = avroField{Name: f.Name, Type: s}
		if f.Type.Nullable {
			fields[i].Default = json.RawMessage("null")
		}
	}
	return avroRecord{Type: "record", Name: name, Fields: fields}, nil
}

// Decode implements Format. A message that is not a record of the schema
// (too short, a bad union index, bytes left over, a value that does not
// fit its column) is an *Error naming the column.
func (a *Avro) Decode(data []byte) ([]any, error) {
	r := avro.NewReader(nil, 0).Reset(data)
	row, err := a.readFields(r, a.Fields, "")
	if err != nil {
		return nil, err
	}
	if r.Peek(); r.Error == nil {
		return nil, &Error{Format: "avro", Err: fmt.Errorf("bytes are left after the record: the message was not written with the table's schema %s", a.Schema())}
	}
	return row, nil
}

func (a *Avro) readFields(r *avro.Reader, fields []types.Field, path string) ([]any, error) {
	out := make([]any, len(fields))
	for i, f := range fields {
		var err error
		if out[i], err = a.read(r, f.Type, path+f.Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// read reads one value of type t found at path.
func (a *Avro) read(r *avro.Reader, t types.Type, path string) (any, error) {
	if t.Nullable {
		switch idx := r.ReadLong(); {
		case r.Error != nil:
			return nil, avroError(path, t, r.Error)
		case idx == 0:
			return nil, nil
		case idx != 1:
			return nil, avroError(path, t, fmt.Errorf("union index %d: the schema's union is [\"null\", %s]", idx, t))
		}
	}
	v, err := a.readValue(r, t, path)
	if err == nil && r.Error != nil {
		err = r.Error
	}
	if err != nil {
		if _, ok := err.(*Error); ok {
			return nil, err
		}
		return nil, avroError(path, t, err)
	}
	return v, nil
}

func avroError(path string, t types.Type, err error) error {
	return &Error{Format: "avro", Column: path, Type: t.String(), Err: err}
}

func (a *Avro) readValue(r *avro.Reader, t types.Type, path string) (any, error) {
	switch t.Kind {
	case types.Boolean:
		return r.ReadBool(), nil
	case types.TinyInt, types.SmallInt, types.Int:
		return fitInteger(int64(r.ReadInt()), t.Kind)
	case types.BigInt:
		return r.ReadLong(), nil
	case types.Float:
		return float64(r.ReadFloat()), nil
	case types.Double:
		return r.ReadDouble(), nil
	case types.Char, types.Varchar, types.String:
		return r.ReadString(), nil
	case types.Bytes:
		return append([]byte(nil), r.ReadBytes()...), nil
	case types.Decimal:
		return avroDecimal(r.ReadBytes(), t)
	case types.Date:
		return time.Unix(int64(r.ReadInt())*86400, 0).UTC(), nil
	case types.Timestamp, types.TimestampLTZ:
		if t.Precision <= 3 {
			return time.UnixMilli(r.ReadLong()).UTC(), nil
		}
		return time.UnixMicro(r.ReadLong()).UTC(), nil
	case types.Array:
		return a.readArray(r, t, path)
	case types.Map:
		return a.readMap(r, t, path)
	case types.Multiset:
		return readMultiset(r)
	case types.Row:
		return a.readFields(r, t.Fields, path+".")
	}
	return nil, fmt.Errorf("type %s has no Avro form", t)
}

// fitInteger range-checks an Avro int read into a TINYINT or SMALLINT
// (Flink would truncate it; Weir refuses it).
func fitInteger(v int64, k types.Kind) (any, error) {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	switch k {
	case types.TinyInt:
		lo, hi = math.MinInt8, math.MaxInt8
	case types.SmallInt:
		lo, hi = math.MinInt16, math.MaxInt16
	}
	if v < lo || v > hi {
		return nil, fmt.Errorf("%d is out of range for %s (%d to %d)", v, k, lo, hi)
	}
	return v, nil
}

// avroDecimal reads the big-endian two's-complement unscaled value of a
// DECIMAL(p, s); NULL-free: a value with more than p digits is an error.
func avroDecimal(b []byte, t types.Type) (any, error) {
	d := decimal.NewFromBigInt(fromTwosComplement(b), -int32(t.Scale))
	if digits := len(new(big.Int).Abs(d.Coefficient()).String()); d.Coefficient().Sign() != 0 && digits > t.Precision {
		return nil, fmt.Errorf("%s has %d digits, more than the precision %d", FormatDecimal(d), digits, t.Precision)
	}
	return d, nil
}

// readBlocks reads an Avro array or map's blocks, calling item for each
// element; a corrupt count stops at the first read past the end.
func readBlocks(r *avro.Reader, item func() error) error {
	for {
		n, _ := r.ReadBlockHeader()
		if r.Error != nil || n == 0 {
			return r.Error
		}
		for ; n > 0; n-- {
			if err := item(); err != nil {
				return err
			}
			if r.Error != nil {
				return r.Error
			}
		}
	}
}

func (a *Avro) readArray(r *avro.Reader, t types.Type, path string) (any, error) {
	out := []any{}
	err := readBlocks(r, func() error {
		v, err := a.read(r, *t.Elem, fmt.Sprintf("%s[%d]", path, len(out)))
		out = append(out, v)
		return err
	})
	return out, err
}

func (a *Avro) readMap(r *avro.Reader, t types.Type, path string) (any, error) {
	out := map[any]any{}
	err := readBlocks(r, func() error {
		k := r.ReadString()
		v, err := a.read(r, *t.Elem, fmt.Sprintf("%s[%q]", path, k))
		out[k] = v
		return err
	})
	return out, err
}

// readMultiset reads a map of element to count as a MULTISET, elements
// in the order of their text.
func readMultiset(r *avro.Reader) (any, error) {
	var out types.MultisetValue
	err := readBlocks(r, func() error {
		k := r.ReadString()
		out = append(out, types.MultisetEntry{Elem: k, Count: int64(r.ReadInt())})
		return nil
	})
	slices.SortFunc(out, func(a, b types.MultisetEntry) int { return strings.Compare(a.Elem.(string), b.Elem.(string)) })
	return out, err
}

// writeMultiset writes a MULTISET of strings as a map of element to count.
func writeMultiset(w *avro.Writer, v any) error {
	m, ok := v.(types.MultisetValue)
	if !ok {
		return fmt.Errorf("want a MULTISET value, got %v", v)
	}
	if len(m) > 0 {
		w.WriteBlockHeader(int64(len(m)), 0)
		for _, e := range m {
			w.WriteString(FormatScalar(e.Elem))
			w.WriteInt(int32(e.Count))
		}
	}
	w.WriteBlockHeader(0, 0)
	return nil
}

// Encode implements Format: the row as the Avro binary of the schema.
func (a *Avro) Encode(fields []any) ([]byte, error) {
	w := avro.NewWriter(nil, 256)
	if err := a.writeFields(w, fields, a.Fields, ""); err != nil {
		return nil, err
	}
	if w.Error != nil {
		return nil, &Error{Format: "avro", Err: w.Error}
	}
	return append([]byte(nil), w.Buffer()...), nil
}

func (a *Avro) writeFields(w *avro.Writer, vals []any, fields []types.Field, path string) error {
	for i, f := range fields {
		var v any
		if i < len(vals) {
			v = vals[i]
		}
		if err := a.write(w, v, f.Type, path+f.Name); err != nil {
			return err
		}
	}
	return nil
}

// write writes v, of type t at path: through the union when t is
// nullable.
func (a *Avro) write(w *avro.Writer, v any, t types.Type, path string) error {
	if t.Nullable {
		if v == nil {
			w.WriteLong(0)
			return nil
		}
		w.WriteLong(1)
	} else if v == nil {
		return avroError(path, t, fmt.Errorf("NULL in a NOT NULL column"))
	}
	if err := a.writeValue(w, v, t, path); err != nil {
		if _, ok := err.(*Error); ok {
			return err
		}
		return avroError(path, t, err)
	}
	return nil
}

func (a *Avro) writeValue(w *avro.Writer, v any, t types.Type, path string) error {
	switch t.Kind {
	case types.Array:
		return a.writeArray(w, v, t, path)
	case types.Map:
		return a.writeMap(w, v, t, path)
	case types.Multiset:
		return writeMultiset(w, v)
	case types.Row:
		row, ok := v.([]any)
		if !ok {
			return fmt.Errorf("want a row, got %T", v)
		}
		return a.writeFields(w, row, t.Fields, path+".")
	}
	return writeScalar(w, v, t)
}

// writeScalar writes a value of a scalar type; v has the Go type
// sql/types gives t.
func writeScalar(w *avro.Writer, v any, t types.Type) (err error) {
	defer func() {
		if recover() != nil { // a value of another Go type than t's
			err = fmt.Errorf("a %T is not a value of %s", v, t)
		}
	}()
	switch t.Kind {
	case types.Boolean:
		w.WriteBool(v.(bool))
	case types.TinyInt, types.SmallInt, types.Int:
		w.WriteInt(int32(v.(int64)))
	case types.BigInt:
		w.WriteLong(v.(int64))
	case types.Float:
		w.WriteFloat(float32(v.(float64)))
	case types.Double:
		w.WriteDouble(v.(float64))
	case types.Char, types.Varchar, types.String:
		w.WriteString(v.(string))
	case types.Bytes:
		w.WriteBytes(v.([]byte))
	case types.Decimal:
		w.WriteBytes(twosComplement(v.(decimal.Decimal), t.Scale))
	case types.Date:
		w.WriteInt(int32(math.Floor(float64(v.(time.Time).Unix()) / 86400)))
	case types.Timestamp, types.TimestampLTZ:
		if t.Precision <= 3 {
			w.WriteLong(v.(time.Time).UnixMilli())
		} else {
			w.WriteLong(v.(time.Time).UnixMicro())
		}
	default:
		return fmt.Errorf("type %s has no Avro form", t)
	}
	return nil
}

func (a *Avro) writeArray(w *avro.Writer, v any, t types.Type, path string) error {
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("want an array, got %T", v)
	}
	if len(arr) > 0 {
		w.WriteBlockHeader(int64(len(arr)), 0)
		for i, e := range arr {
			if err := a.write(w, e, *t.Elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	w.WriteBlockHeader(0, 0)
	return nil
}

func (a *Avro) writeMap(w *avro.Writer, v any, t types.Type, path string) error {
	m, ok := v.(map[any]any)
	if !ok {
		return fmt.Errorf("want a map, got %T", v)
	}
	if len(m) > 0 {
		w.WriteBlockHeader(int64(len(m)), 0)
		for k, e := range m {
			key, ok := k.(string)
			if !ok {
				return fmt.Errorf("map key %v is a %T, not a string", k, k)
			}
			w.WriteString(key)
			if err := a.write(w, e, *t.Elem, fmt.Sprintf("%s[%q]", path, key)); err != nil {
				return err
			}
		}
	}
	w.WriteBlockHeader(0, 0)
	return nil
}

// twosComplement is Java's BigInteger.toByteArray of d's unscaled value at
// scale: big-endian two's complement in the fewest bytes, as Avro's
// decimal logical type (and Flink) writes it. d is rounded HALF_UP to the
// scale first.
func twosComplement(d decimal.Decimal, scale int) []byte {
	u := d.Round(int32(scale)).Shift(int32(scale)).BigInt()
	if u.Sign() >= 0 {
		b := u.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -u - 1 in bits, inverted: the two's complement of u.
	m := new(big.Int).Neg(u)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	for i := range b {
		b[i] = ^b[i]
	}
	return b
}

// fromTwosComplement reads a big-endian two's-complement integer.
func fromTwosComplement(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}
