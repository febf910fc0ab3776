package format

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
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
	// TimestampStandard is how TIMESTAMP and TIMESTAMP_LTZ values read and
	// write (Flink's 'json.timestamp-format.standard'); default: SQL.
	TimestampStandard TimestampStandard

	names nameIndex
}

// Decode implements Format. A value that is not of its column's type is
// an *Error naming the column, as Flink's JsonToRowDataConverters fail
// (see ParseScalar and jsonInteger for what each type accepts); BYTES are
// base64, as Flink writes and reads them.
func (j *JSON) Decode(data []byte) ([]any, error) {
	var buf [16]span
	spans := spansFor(buf[:], len(j.Fields))
	if fieldSpans(data, span{}, j.names.of(j.Fields), spans) && j.hasFields(spans) {
		if row, err := j.TimestampStandard.rowFromSpans(data, spans, j.Fields, ""); err == nil {
			return row, nil
		}
	}
	return j.decodeSlow(data) // writes the error as encoding/json reads the message
}

// hasFields is false when FailOnMissingField and a field is missing.
func (j *JSON) hasFields(spans []span) bool {
	if j.FailOnMissingField {
		for _, sp := range spans {
			if sp.missing() {
				return false
			}
		}
	}
	return true
}

// decodeSlow decodes through encoding/json: the messages the fast path
// leaves, and the errors.
func (j *JSON) decodeSlow(data []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, &Error{Format: "json", Err: err}
	}
	if j.FailOnMissingField {
		for _, f := range j.Fields {
			if _, ok := obj[f.Name]; !ok {
				return nil, &Error{Format: "json", Err: fmt.Errorf("field %q is missing", f.Name)}
			}
		}
	}
	return j.TimestampStandard.decodeFields(obj, j.Fields, "")
}

// decodeFields reads the fields of an object; path is where the object
// lies ("" at the top, "address." inside a ROW column).
func (std TimestampStandard) decodeFields(obj map[string]any, fields []types.Field, path string) ([]any, error) {
	out := make([]any, len(fields))
	for i, f := range fields {
		v, err := std.fromJSON(obj[f.Name], f.Type, path+f.Name)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// fromJSON reads v, found at path, as type t.
func (std TimestampStandard) fromJSON(v any, t types.Type, path string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case types.Row:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fieldError(path, t, fmt.Errorf("want an object, got %s", jsonKind(v)))
		}
		return std.decodeFields(obj, t.Fields, path+".")
	case types.Array:
		return std.arrayFromJSON(v, t, path)
	case types.Map:
		return std.mapFromJSON(v, t, path)
	case types.Multiset:
		return std.multisetFromJSON(v, t, path)
	}
	out, err := std.scalarFromJSON(v, t)
	if err != nil {
		return nil, fieldError(path, t, err)
	}
	return out, nil
}

func fieldError(path string, t types.Type, err error) error {
	return &Error{Format: "json", Column: path, Type: t.String(), Err: err}
}

func (std TimestampStandard) arrayFromJSON(v any, t types.Type, path string) (any, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fieldError(path, t, fmt.Errorf("want an array, got %s", jsonKind(v)))
	}
	out := make([]any, len(arr))
	for i, e := range arr {
		var err error
		if out[i], err = std.fromJSON(e, *t.Elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mapFromJSON reads an object as a MAP; its keys are read as the key
// type, as Flink reads them (from their text).
func (std TimestampStandard) mapFromJSON(v any, t types.Type, path string) (any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fieldError(path, t, fmt.Errorf("want an object, got %s", jsonKind(v)))
	}
	out := make(map[any]any, len(obj))
	for k, e := range obj {
		var key any = k
		if t.Key != nil {
			var err error
			if key, err = ParseScalar(k, *t.Key); err == nil && key == nil {
				err = fmt.Errorf("%q does not fit", k)
			}
			if err != nil {
				return nil, fieldError(fmt.Sprintf("%s[%q]", path, k), *t.Key, fmt.Errorf("key: %w", err))
			}
		}
		val, err := std.fromJSON(e, *t.Elem, fmt.Sprintf("%s[%q]", path, k))
		if err != nil {
			return nil, err
		}
		out[key] = val
	}
	return out, nil
}

// multisetFromJSON reads an object of element to count as a MULTISET,
// as Flink's json format reads it (a MAP of the element type to INT);
// elements in the order of their text, as appendJSONMultiset writes them.
func (std TimestampStandard) multisetFromJSON(v any, t types.Type, path string) (any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fieldError(path, t, fmt.Errorf("want an object of element to count, got %s", jsonKind(v)))
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(types.MultisetValue, 0, len(obj))
	for _, k := range keys {
		elem, err := std.fromJSON(k, *t.Elem, fmt.Sprintf("%s[%q]", path, k))
		if err != nil {
			return nil, err
		}
		n, err := std.fromJSON(obj[k], types.Type{Kind: types.Int, Nullable: true}, fmt.Sprintf("%s[%q]", path, k))
		if err != nil {
			return nil, err
		}
		if n == nil {
			return nil, fieldError(fmt.Sprintf("%s[%q]", path, k), t, fmt.Errorf("the count of %q is null", k))
		}
		out = append(out, types.MultisetEntry{Elem: elem, Count: n.(int64)})
	}
	return out, nil
}

// checkJSONTypes refuses the types Flink's json format refuses when it is
// created: a MULTISET (read and written as a MAP of element to count)
// whose elements are not strings.
func checkJSONTypes(format string, fields []types.Field, path string) error {
	for _, f := range fields {
		if err := checkJSONType(format, f.Type, path+f.Name); err != nil {
			return err
		}
	}
	return nil
}

func checkJSONType(format string, t types.Type, path string) error {
	switch t.Kind {
	case types.Row:
		return checkJSONTypes(format, t.Fields, path+".")
	case types.Array, types.Map:
		if t.Elem != nil {
			return checkJSONType(format, *t.Elem, path+"[]")
		}
	case types.Multiset:
		if t.Elem != nil && !t.Elem.IsString() {
			return fmt.Errorf("format %s: column %q is %s: the %s format writes a MULTISET as an object of element to count, so its elements must be strings (STRING, VARCHAR or CHAR)",
				format, path, t, format)
		}
	}
	return nil
}

// jsonKind names the JSON kind of a decoded value, for errors.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// utcOffset ends a timestamp with an offset such as +02:00, which Flink's
// json format takes for no timestamp (see TimestampStandard).
var utcOffset = regexp.MustCompile(`[ T]\d{2}:\d{2}(:\d{2}(\.\d*)?)?[+-]\d{2}:\d{2}$`)

// scalarFromJSON reads a JSON number, string or boolean as type t, as
// Flink's JsonToRowDataConverters do.
func (std TimestampStandard) scalarFromJSON(v any, t types.Type) (any, error) {
	switch x := v.(type) {
	case json.Number:
		switch t.Kind {
		case types.Int, types.BigInt, types.TinyInt, types.SmallInt:
			return jsonInteger(x.String(), t.Kind)
		case types.Boolean, types.Date, types.Time, types.Timestamp, types.TimestampLTZ, types.Bytes:
			return nil, fmt.Errorf("got the number %s", x)
		}
		return ParseScalar(x.String(), t)
	case string:
		if t.Kind == types.Bytes {
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("not base64 (BYTES are written and read as base64): %v", err)
			}
			return b, nil
		}
		if t.Kind == types.Timestamp || t.Kind == types.TimestampLTZ {
			return std.readTimestamp([]byte(x), t)
		}
		return ParseScalar(x, t)
	case bool:
		if t.IsString() {
			return strconv.FormatBool(x), nil // Flink's asText
		}
		if t.Kind != types.Boolean {
			return nil, fmt.Errorf("got a boolean")
		}
		return x, nil
	}
	return nil, fmt.Errorf("got %s", jsonKind(v))
}

// Encode implements Format.
func (j *JSON) Encode(fields []any) ([]byte, error) {
	return j.AppendEncode(make([]byte, 0, 32*len(fields)), fields)
}

// AppendEncode implements Appender.
func (j *JSON) AppendEncode(dst []byte, fields []any) ([]byte, error) {
	return j.appendObject(dst, fields, j.Fields)
}

func (j *JSON) appendObject(buf []byte, vals []any, fields []types.Field) ([]byte, error) {
	buf = append(buf, '{')
	for i, f := range fields {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendQuote(buf, f.Name)
		buf = append(buf, ':')
		var v any
		if i < len(vals) {
			v = vals[i]
		}
		var err error
		if buf, err = j.appendValue(buf, v, f.Type); err != nil {
			return nil, fmt.Errorf("json: field %q: %w", f.Name, err)
		}
	}
	return append(buf, '}'), nil
}

func (j *JSON) appendValue(buf []byte, v any, t types.Type) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case string:
		return appendJSONString(buf, x), nil
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case decimal.Decimal:
		return appendNumber(buf, x, j.PlainDecimals), nil
	case time.Time:
		return j.TimestampStandard.appendTime(buf, x, t), nil
	case []any:
		return j.appendList(buf, x, t)
	case map[any]any:
		return j.appendMap(buf, x, t)
	case types.MultisetValue:
		return appendJSONMultiset(buf, x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			// Jackson's WRITE_NAN_AS_STRINGS: "NaN", "Infinity".
			return strconv.AppendQuote(buf, JavaDouble(x)), nil
		}
	}
	b, err := json.Marshal(v) // BYTES as base64, as Flink writes them
	if err != nil {
		return nil, err
	}
	return append(buf, b...), nil
}

func (j *JSON) appendList(buf []byte, x []any, t types.Type) ([]byte, error) {
	if t.Kind == types.Row {
		return j.appendObject(buf, x, t.Fields)
	}
	var et types.Type
	if t.Elem != nil {
		et = *t.Elem
	}
	buf = append(buf, '[')
	for i, e := range x {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = j.appendValue(buf, e, et); err != nil {
			return nil, err
		}
	}
	return append(buf, ']'), nil
}

// appendJSONMultiset writes a MULTISET as Flink's json format does, an
// object of element to count, the element as its text (Flink takes only
// string elements there); entries in the order of their text.
func appendJSONMultiset(buf []byte, m types.MultisetValue) []byte {
	keys := make([]string, len(m))
	counts := make(map[string]int64, len(m))
	for i, e := range m {
		keys[i] = FormatScalar(e.Elem)
		counts[keys[i]] += e.Count
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(append(appendJSONString(buf, k), ':'), counts[k], 10)
	}
	return append(buf, '}')
}

func (j *JSON) appendMap(buf []byte, x map[any]any, t types.Type) ([]byte, error) {
	var et types.Type
	if t.Elem != nil {
		et = *t.Elem
	}
	buf = append(buf, '{')
	first := true
	for k, e := range x {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = strconv.AppendQuote(buf, FormatScalar(k))
		buf = append(buf, ':')
		var err error
		if buf, err = j.appendValue(buf, e, et); err != nil {
			return nil, err
		}
	}
	return append(buf, '}'), nil
}
