// Package format turns bytes into SQL rows and back, by a table's schema, in
// the formats Flink's connectors name: json, csv, raw, avro and
// avro-confluent (with a schema registry), and the
// changelog formats debezium-json, canal-json and maxwell-json (Changelog). Values follow
// sql/types' conventions; timestamps are read and written in SQL form
// ("yyyy-MM-dd HH:mm:ss[.SSS]"), decimals exactly (never through float).
// Reading and writing follow Flink's formats: a DECIMAL(p, s) is read
// rounded HALF_UP to scale s (NULL when it does not fit p) and written
// without trailing zeros, a DATE is yyyy-MM-dd and a TIMESTAMP has the
// fewest fractional digits that keep it.
package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

// Format decodes and encodes rows of one schema.
type Format interface {
	// Decode parses one message into the schema's fields, in order.
	Decode(data []byte) ([]any, error)
	// Encode writes fields (in schema order) as one message.
	Encode(fields []any) ([]byte, error)
}

// Appender is a Format that can write a message by appending it to a
// buffer (json, csv): a writer of many messages, such as a file sink's
// lines, reuses one buffer instead of a new slice per message.
type Appender interface {
	// AppendEncode appends the message of fields to dst, as Encode
	// writes it.
	AppendEncode(dst []byte, fields []any) ([]byte, error)
}

// New returns the format named name ("json", "csv", "raw") for fields,
// configured with Flink's format options (e.g. "csv.field-delimiter").
// A message that does not parse is the caller's to skip or fail on (see
// IgnoreParseErrors).
func New(name string, fields []types.Field, opts map[string]string) (Format, error) {
	switch strings.ToLower(name) {
	case "json":
		j := &JSON{Fields: fields}
		err := checkJSONTypes("json", fields, "")
		if err != nil {
			return nil, err
		}
		if j.FailOnMissingField, err = boolOption(opts, "json.fail-on-missing-field", false); err != nil {
			return nil, err
		}
		if j.PlainDecimals, err = boolOption(opts, "json.encode.decimal-as-plain-number", false); err != nil {
			return nil, err
		}
		if j.TimestampStandard, err = timestampStandardOption(opts, "json.timestamp-format.standard"); err != nil {
			return nil, fmt.Errorf("format json: %w", err)
		}
		return j, nil
	case "csv":
		if err := checkCSVTypes(fields); err != nil {
			return nil, err
		}
		c := &CSV{Fields: fields, Delimiter: ','}
		if d := opts["csv.field-delimiter"]; d != "" {
			if len(d) != 1 {
				return nil, fmt.Errorf("format csv: 'csv.field-delimiter' must be one character, got %q", d)
			}
			c.Delimiter = rune(d[0])
		}
		sci, err := boolOption(opts, "csv.write-bigdecimal-in-scientific-notation", true)
		if err != nil {
			return nil, err
		}
		c.PlainDecimals = !sci
		if c.IgnoreParseErrors, err = IgnoreParseErrors("csv", opts); err != nil {
			return nil, err
		}
		return c, nil
	case "raw":
		if len(fields) != 1 {
			return nil, fmt.Errorf("format raw: the table must have exactly one physical column, it has %d", len(fields))
		}
		return Raw{Name: fields[0].Name, Type: fields[0].Type}, nil
	}
	if strings.EqualFold(name, "avro") {
		return newAvroFormat(fields, opts)
	}
	if strings.EqualFold(name, "avro-confluent") {
		a, err := NewAvroConfluent(fields, opts)
		if err != nil {
			return nil, err
		}
		return a, nil
	}
	if IsChangelog(name) {
		return nil, fmt.Errorf("format %s is a changelog format (a message holds changes, not one row): read it with NewChangelog", name)
	}
	return nil, fmt.Errorf("unknown format %q: supported formats are json, csv, raw, avro, avro-confluent, %s, %s", name,
		strings.Join(changelogFormats, ", "), debeziumAvroName)
}

// newAvroFormat reads the avro format's options: 'avro.encoding' (binary,
// the default; Flink's json encoding is not supported) and
// 'avro.timestamp_mapping.legacy' (default true).
func newAvroFormat(fields []types.Field, opts map[string]string) (Format, error) {
	if e := strings.ToLower(opts["avro.encoding"]); e != "" && e != "binary" {
		return nil, fmt.Errorf("format avro: 'avro.encoding' = '%s' is not supported: only 'binary' (the default)", opts["avro.encoding"])
	}
	legacy, err := boolOption(opts, "avro.timestamp_mapping.legacy", true)
	if err != nil {
		return nil, err
	}
	a, err := NewAvro(fields, legacy)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// IgnoreParseErrors reads the format's '<format>.ignore-parse-errors'
// ('json.ignore-parse-errors', 'debezium-json.ignore-parse-errors', …;
// default false): whether the connector skips a message that does not
// parse instead of failing (Flink's json and changelog formats skip the
// message; its csv format reads a field that does not parse as NULL,
// which CSV does itself, and skips a malformed line). ok is false for a
// format without the option (raw).
func IgnoreParseErrors(name string, opts map[string]string) (bool, error) {
	if f := strings.ToLower(name); HasIgnoreParseErrors(f) {
		return boolOption(opts, f+".ignore-parse-errors", false)
	}
	return false, nil
}

// HasIgnoreParseErrors tells whether the format name has the option
// '<name>.ignore-parse-errors'.
func HasIgnoreParseErrors(name string) bool {
	name = strings.ToLower(name)
	return name == "json" || name == "csv" || (IsChangelog(name) && name != debeziumAvroName)
}

// boolOption reads a true/false format option, def when it is not set.
func boolOption(opts map[string]string, key string, def bool) (bool, error) {
	switch strings.ToLower(opts[key]) {
	case "":
		return def, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("format %s: '%s' must be true or false, got %q", strings.SplitN(key, ".", 2)[0], key, opts[key])
}

// SQL timestamp layouts accepted on input; output uses TimestampLayout.
const TimestampLayout = "2006-01-02 15:04:05.000"

var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05",
	"2006-01-02T15:04:05", time.RFC3339Nano, "2006-01-02 15:04", "2006-01-02 15:04:05.999999999Z07:00",
}

// FormatTimestamp writes t in SQL form with millisecond precision.
func FormatTimestamp(t time.Time) string { return t.UTC().Format(TimestampLayout) }

// FormatScalar writes a value as text, as Flink prints it.
func FormatScalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case time.Time:
		return FormatTimestamp(x)
	case decimal.Decimal:
		return FormatDecimal(x)
	case []byte:
		return string(x)
	case float64:
		return JavaDouble(x)
	}
	return fmt.Sprint(v)
}

// JavaDouble prints a DOUBLE as Flink (Java's Double.toString) does: 2.0,
// 0.5, 1.0E7, 1.0E-4.
func JavaDouble(x float64) string { return javaFloating(x, 64) }

// JavaFloat prints a FLOAT (held as a float64) as Flink (Java's
// Float.toString) does: with the digits of a float, so 0.1 prints as 0.1,
// not as the double 0.10000000149011612 it widens to.
func JavaFloat(x float64) string { return javaFloating(float64(float32(x)), 32) }

// javaFloating is Java's Float.toString (bits 32) or Double.toString
// (bits 64): the shortest digits that give back the value, plain from
// 10^-3 up to 10^7, else in computerized scientific notation.
func javaFloating(x float64, bits int) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	if a := math.Abs(x); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(x, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(x, 'E', -1, bits), "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// FormatDecimal writes d with its own scale kept: DECIMAL(10, 2) 10.50
// prints as "10.50", as Flink does, not "10.5".
func FormatDecimal(d decimal.Decimal) string {
	if e := d.Exponent(); e < 0 {
		return d.StringFixed(-e)
	}
	return d.String()
}

// Raw is the raw format: the whole message is the single column's value.
// Unlike Flink's raw format, which holds numbers in binary, a non-string
// column is read from its text, as ParseScalar says.
type Raw struct {
	Name string // the column, for errors
	Type types.Type
}

// Decode implements Format.
func (r Raw) Decode(data []byte) ([]any, error) {
	if r.Type.Kind == types.Bytes {
		return []any{append([]byte(nil), data...)}, nil
	}
	v, err := ParseScalar(string(data), r.Type)
	if err != nil {
		return nil, &Error{Format: "raw", Column: r.Name, Type: r.Type.String(), Err: err}
	}
	return []any{v}, nil
}

// Encode implements Format.
func (r Raw) Encode(fields []any) ([]byte, error) {
	if b, ok := fields[0].([]byte); ok {
		return b, nil
	}
	return []byte(Text(fields[0], r.Type)), nil
}
