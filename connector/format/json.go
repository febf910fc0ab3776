package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/sql/types"
)

// JSON is Flink's json format: an object whose keys are the column names.
// A missing key or JSON null is NULL. Numbers are read exactly: a DECIMAL
// column takes the number's text (or a string) without float rounding.
type JSON struct {
	Fields []types.Field
	// FailOnMissingField makes a message without one of the columns an
	// error (Flink's 'json.fail-on-missing-field'); default: NULL.
	FailOnMissingField bool
	// PlainDecimals writes DECIMALs without scientific notation (Flink's
	// 'json.encode.decimal-as-plain-number'); default: as
	// BigDecimal.toString ("1E+2").
	PlainDecimals bool
}

// Decode implements Format.
func (j *JSON) Decode(data []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	if j.FailOnMissingField {
		for _, f := range j.Fields {
			if _, ok := obj[f.Name]; !ok {
				return nil, fmt.Errorf("json: field %q is missing", f.Name)
			}
		}
	}
	return decodeFields(obj, j.Fields)
}

func decodeFields(obj map[string]any, fields []types.Field) ([]any, error) {
	out := make([]any, len(fields))
	for i, f := range fields {
		v, err := fromJSON(obj[f.Name], f.Type)
		if err != nil {
			return nil, fmt.Errorf("json: field %q (%s): %w", f.Name, f.Type, err)
		}
		out[i] = v
	}
	return out, nil
}

func fromJSON(v any, t types.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case types.Row:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("want an object, got %T", v)
		}
		return decodeFields(obj, t.Fields)
	case types.Array:
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("want an array, got %T", v)
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			var err error
			if out[i], err = fromJSON(e, *t.Elem); err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
		}
		return out, nil
	case types.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("want an object, got %T", v)
		}
		out := make(map[any]any, len(obj))
		for k, e := range obj {
			val, err := fromJSON(e, *t.Elem)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k, err)
			}
			out[k] = val
		}
		return out, nil
	}
	return scalarFromJSON(v, t)
}

func scalarFromJSON(v any, t types.Type) (any, error) {
	switch x := v.(type) {
	case json.Number:
		return ParseScalar(x.String(), t)
	case string:
		if t.IsString() || t.Kind == types.Bytes {
			return ParseScalar(x, t)
		}
		return ParseScalar(x, t)
	case bool:
		if t.Kind != types.Boolean {
			return nil, fmt.Errorf("got a boolean")
		}
		return x, nil
	}
	return nil, fmt.Errorf("cannot read %T as %s", v, t)
}

// Encode implements Format.
func (j *JSON) Encode(fields []any) ([]byte, error) {
	var buf bytes.Buffer
	if err := j.encodeObject(&buf, fields, j.Fields); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (j *JSON) encodeObject(buf *bytes.Buffer, vals []any, fields []types.Field) error {
	buf.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(strconv.Quote(f.Name))
		buf.WriteByte(':')
		var v any
		if i < len(vals) {
			v = vals[i]
		}
		if err := j.encodeValue(buf, v, f.Type); err != nil {
			return fmt.Errorf("json: field %q: %w", f.Name, err)
		}
	}
	buf.WriteByte('}')
	return nil
}

func (j *JSON) encodeValue(buf *bytes.Buffer, v any, t types.Type) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case decimal.Decimal:
		buf.WriteString(formatNumber(x, j.PlainDecimals))
	case time.Time:
		s, ok := formatTime(x, t)
		if !ok {
			s = FormatTimestamp(x)
		} else if t.Kind == types.TimestampLTZ {
			s += "Z" // TimeFormats.SQL_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT
		}
		buf.WriteString(strconv.Quote(s))
	case []any:
		return j.encodeList(buf, x, t)
	case map[any]any:
		return j.encodeMap(buf, x, t)
	case []byte:
		b, _ := json.Marshal(x)
		buf.Write(b)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

func (j *JSON) encodeList(buf *bytes.Buffer, x []any, t types.Type) error {
	if t.Kind == types.Row {
		return j.encodeObject(buf, x, t.Fields)
	}
	buf.WriteByte('[')
	for i, e := range x {
		if i > 0 {
			buf.WriteByte(',')
		}
		var et types.Type
		if t.Elem != nil {
			et = *t.Elem
		}
		if err := j.encodeValue(buf, e, et); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

func (j *JSON) encodeMap(buf *bytes.Buffer, x map[any]any, t types.Type) error {
	buf.WriteByte('{')
	first := true
	for k, e := range x {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		buf.WriteString(strconv.Quote(FormatScalar(k)))
		buf.WriteByte(':')
		var et types.Type
		if t.Elem != nil {
			et = *t.Elem
		}
		if err := j.encodeValue(buf, e, et); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}
