package format

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

var (
	tTinyInt   = types.Type{Kind: types.TinyInt, Nullable: true}
	tSmallInt  = types.Type{Kind: types.SmallInt, Nullable: true}
	tInt       = types.Type{Kind: types.Int, Nullable: true}
	tBigInt    = types.Type{Kind: types.BigInt, Nullable: true}
	tFloat     = types.Type{Kind: types.Float, Nullable: true}
	tDouble    = types.Type{Kind: types.Double, Nullable: true}
	tDecimal   = types.Type{Kind: types.Decimal, Precision: 5, Scale: 2, Nullable: true}
	tBoolean   = types.Type{Kind: types.Boolean, Nullable: true}
	tDate      = types.Type{Kind: types.Date, Nullable: true}
	tTimestamp = types.Type{Kind: types.Timestamp, Precision: 3, Nullable: true}
	tBytes     = types.Type{Kind: types.Bytes, Nullable: true}
	tString    = types.Type{Kind: types.String, Nullable: true}
)

// show prints a decoded value with its Go type, "NULL", or "error: " and
// the error.
func show(v any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	switch x := v.(type) {
	case nil:
		return "NULL"
	case decimal.Decimal:
		return "decimal " + x.String()
	case time.Time:
		return "time " + x.Format(time.RFC3339Nano)
	case []byte:
		return fmt.Sprintf("bytes %q", x)
	}
	return fmt.Sprintf("%T %v", v, v)
}

// decodeCase is one value read by one format into a column of one type:
// want is what show prints (an error is matched by its prefix).
type decodeCase struct {
	typ  types.Type
	in   string
	want string
}

// TestJSONValues reads one JSON value ({"v": in}) into each type, as
// Flink's JsonToRowDataConverters do: numbers range-checked over the
// whole token, INT and BIGINT through Jackson's intValue/longValue for
// number nodes (exponent form accepted, fraction truncated) and
// Integer.parseInt for strings, TINYINT and SMALLINT through
// Byte/Short.parseXxx, BYTES as base64.
func TestJSONValues(t *testing.T) {
	for _, c := range []decodeCase{
		{tInt, `1e3`, "int64 1000"},
		{tInt, `1.9`, "int64 1"},
		{tInt, `-1.9`, "int64 -1"},
		{tInt, `2147483647`, "int64 2147483647"},
		{tInt, `2147483648`, `error: json: field "v" (INT): 2147483648 is out of range for INT`},
		{tInt, `2.147483648e9`, `error: json: field "v" (INT): 2.147483648e9 is out of range for INT`},
		{tInt, `1e999999999`, `error: json: field "v" (INT): 1e999999999 is out of range for INT`},
		{tInt, `1e-999999999`, "int64 0"},
		{tInt, `"12abc"`, `error: json: field "v" (INT): "12abc" is not an integer`},
		{tInt, `"1e3"`, `error: json: field "v" (INT): "1e3" is not an integer`},
		{tInt, `" 12 "`, "int64 12"},
		{tInt, `"0x10"`, `error: json: field "v" (INT): "0x10" is not an integer`},
		{tInt, `true`, `error: json: field "v" (INT): got a boolean`},
		{tInt, `[1]`, `error: json: field "v" (INT): got an array`},
		{tTinyInt, `127`, "int64 127"},
		{tTinyInt, `-128`, "int64 -128"},
		{tTinyInt, `300`, `error: json: field "v" (TINYINT): 300 is out of range for TINYINT (-128 to 127)`},
		{tTinyInt, `1e1`, `error: json: field "v" (TINYINT): "1e1" is not an integer`},
		{tTinyInt, `"-129"`, `error: json: field "v" (TINYINT): -129 is out of range for TINYINT`},
		{tSmallInt, `32768`, `error: json: field "v" (SMALLINT): 32768 is out of range for SMALLINT (-32768 to 32767)`},
		{tSmallInt, `-32768`, "int64 -32768"},
		{tBigInt, `9223372036854775807`, "int64 9223372036854775807"},
		{tBigInt, `9223372036854775808`, `error: json: field "v" (BIGINT): 9223372036854775808 is out of range for BIGINT`},
		{tBigInt, `1.5e18`, "int64 1500000000000000000"},
		{tBigInt, `"9007199254740993"`, "int64 9007199254740993"},
		{tDouble, `1e3`, "float64 1000"},
		{tDouble, `1e400`, `error: json: field "v" (DOUBLE): 1e400 is out of range for DOUBLE`},
		{tDouble, `"NaN"`, "float64 NaN"},
		{tDouble, `"-Infinity"`, "float64 -Inf"},
		{tDouble, `"1.5d"`, "float64 1.5"},
		{tDouble, `"1.5abc"`, `error: json: field "v" (DOUBLE): "1.5abc" is not a number`},
		{tDouble, `"0x1p3"`, `error: json: field "v" (DOUBLE): "0x1p3" is not a number`},
		{tDouble, `"inf"`, `error: json: field "v" (DOUBLE): "inf" is not a number`},
		{tFloat, `1e39`, `error: json: field "v" (FLOAT): 1e39 is out of range for FLOAT`},
		{tFloat, `0.5`, "float64 0.5"},
		{tDecimal, `1e2`, "decimal 100"},
		{tDecimal, `"1.005"`, "decimal 1.01"},
		{tDecimal, `1e999999999`, "NULL"}, // does not fit DECIMAL(5, 2): NULL, as in Flink
		{tDecimal, `1e-999999999`, "decimal 0"},
		{tDecimal, `"12abc"`, `error: json: field "v" (DECIMAL(5, 2)): "12abc" is not a decimal`},
		{tBoolean, `"yes"`, `error: json: field "v" (BOOLEAN): "yes" is not a boolean`},
		{tBoolean, `1`, `error: json: field "v" (BOOLEAN): got the number 1`},
		{tDate, `"2026-02-30"`, `error: json: field "v" (DATE): "2026-02-30" is not a date`},
		{tDate, `20260101`, `error: json: field "v" (DATE): got the number 20260101`},
		{tTimestamp, `"2026-11-30 8:00:00"`, `error: json: field "v" (TIMESTAMP(3)): "2026-11-30 8:00:00" is not a timestamp`},
		{tTimestamp, `"2026-11-30 08:00:00.1234567891"`, `error: json: field "v" (TIMESTAMP(3)): "2026-11-30 08:00:00.1234567891" is not a timestamp`},
		{tTimestamp, `"2026-11-30 08:00:00.5"`, "time 2026-11-30T08:00:00.5Z"},
		{tTimestamp, `"2026-12-01T10:00:00.5+02:00"`, `error: json: field "v" (TIMESTAMP(3)): "2026-12-01T10:00:00.5+02:00" is not a timestamp yyyy-MM-dd HH:mm:ss[.fffffffff] ('json.timestamp-format.standard' = 'SQL'): a UTC offset is not taken`},
		{types.Type{Kind: types.TimestampLTZ, Precision: 3, Nullable: true}, `"2026-12-01 10:00:00-05:30"`, `error: json: field "v" (TIMESTAMP_LTZ(3)): "2026-12-01 10:00:00-05:30" is not a timestamp yyyy-MM-dd HH:mm:ss[.fffffffff]Z ('json.timestamp-format.standard' = 'SQL'): a UTC offset is not taken`},
		{tBytes, `"AAEC/w=="`, `bytes "\x00\x01\x02\xff"`},
		{tBytes, `"not base64!"`, `error: json: field "v" (BYTES): not base64`},
		{tString, `12.50`, "string 12.50"},
		{tString, `true`, "string true"},
	} {
		v, err := decodeOne(&JSON{Fields: []types.Field{{Name: "v", Type: c.typ}}}, `{"v": `+c.in+`}`)
		check(t, "json", c, show(v, err), err)
	}
}

// TestCSVValues reads one CSV field into each type, as Flink's
// CsvToRowDataConverters do: the whole trimmed text, by Java's
// Byte/Short/Integer/Long.parseXxx and Float/Double.parseXxx, range
// checked; BYTES as base64.
func TestCSVValues(t *testing.T) {
	for _, c := range []decodeCase{
		{tInt, `1.9`, `error: csv: column "v" (INT): "1.9" is not an integer`},
		{tInt, `0x10`, `error: csv: column "v" (INT): "0x10" is not an integer`},
		{tInt, `12abc`, `error: csv: column "v" (INT): "12abc" is not an integer`},
		{tInt, `1e3`, `error: csv: column "v" (INT): "1e3" is not an integer`},
		{tInt, `1_000`, `error: csv: column "v" (INT): "1_000" is not an integer`},
		{tInt, ` +12 `, "int64 12"},
		{tInt, `-2147483649`, `error: csv: column "v" (INT): -2147483649 is out of range for INT`},
		{tTinyInt, `300`, `error: csv: column "v" (TINYINT): 300 is out of range for TINYINT`},
		{tSmallInt, `-32769`, `error: csv: column "v" (SMALLINT): -32769 is out of range for SMALLINT`},
		{tBigInt, `99999999999999999999`, `error: csv: column "v" (BIGINT): 99999999999999999999 is out of range for BIGINT`},
		{tBigInt, `-9223372036854775808`, "int64 -9223372036854775808"},
		{tDouble, `1.5e3`, "float64 1500"},
		{tDouble, `1.9abc`, `error: csv: column "v" (DOUBLE): "1.9abc" is not a number`},
		{tDouble, `Infinity`, "float64 +Inf"},
		{tFloat, `3.4e38`, "float64 3.3999999521443642e+38"},
		{tFloat, `3.5e38`, `error: csv: column "v" (FLOAT): 3.5e38 is out of range for FLOAT`},
		{tDecimal, `1.5e1`, "decimal 15"},
		{tDecimal, `1e999999999`, "NULL"},
		{tDecimal, `1.2.3`, `error: csv: column "v" (DECIMAL(5, 2)): "1.2.3" is not a decimal`},
		{tBoolean, `TRUE`, "bool true"},
		{tBoolean, `1`, `error: csv: column "v" (BOOLEAN): "1" is not a boolean`},
		{tDate, `2026-1-3`, `error: csv: column "v" (DATE): "2026-1-3" is not a date`},
		{tTimestamp, `2026-11-30 08:00:00x`, `error: csv: column "v" (TIMESTAMP(3)): "2026-11-30 08:00:00x" is not a timestamp`},
		{tBytes, `AAEC/w==`, `bytes "\x00\x01\x02\xff"`},
		{tBytes, `AAEC/w`, `error: csv: column "v" (BYTES): not base64`},
		{tBytes, `""`, `bytes ""`}, // zero bytes, not NULL
		{tInt, `""`, "NULL"},       // an empty field is NULL
	} {
		v, err := decodeOne(&CSV{Fields: []types.Field{{Name: "v", Type: c.typ}}, Delimiter: ','}, c.in)
		check(t, "csv", c, show(v, err), err)
	}
}

// TestRawValues: the raw format reads a non-BYTES column from the whole
// message's text, as ParseScalar does.
func TestRawValues(t *testing.T) {
	for _, c := range []decodeCase{
		{tInt, `12abc`, `error: raw: column "v" (INT): "12abc" is not an integer`},
		{tSmallInt, `40000`, `error: raw: column "v" (SMALLINT): 40000 is out of range for SMALLINT`},
		{tBigInt, `42`, "int64 42"},
		{tBytes, `12abc`, `bytes "12abc"`},
	} {
		v, err := decodeOne(Raw{Name: "v", Type: c.typ}, c.in)
		check(t, "raw", c, show(v, err), err)
	}
}

// decodeOne decodes a message of one column.
func decodeOne(f Format, data string) (any, error) {
	row, err := f.Decode([]byte(data))
	if err != nil {
		return nil, err
	}
	return row[0], nil
}

func check(t *testing.T, format string, c decodeCase, got string, err error) {
	t.Helper()
	if got != c.want && !(strings.HasPrefix(c.want, "error: ") && strings.HasPrefix(got, c.want)) {
		t.Errorf("%s %s %s: got %s, want %s", format, c.typ, c.in, got, c.want)
	}
	var ferr *Error
	if err != nil && (!errors.As(err, &ferr) || !errors.Is(err, ErrBadValue)) {
		t.Errorf("%s %s %s: error %v is a %T, not a *format.Error", format, c.typ, c.in, err, err)
	}
}

// TestBytesRoundTrip: BYTES go json → json and csv → csv unchanged (Flink
// writes and reads them as base64; reading took the base64 text as the
// bytes, so every hop re-encoded them).
func TestBytesRoundTrip(t *testing.T) {
	fields := []types.Field{{Name: "b", Type: tBytes}}
	want := []byte{0, 1, 2, 0xff, '"', ','}
	for _, f := range []Format{&JSON{Fields: fields}, &CSV{Fields: fields, Delimiter: ','}} {
		data, err := f.Encode([]any{want})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), base64.StdEncoding.EncodeToString(want)) {
			t.Errorf("%T wrote %s, not base64", f, data)
		}
		for hop := 0; hop < 3; hop++ {
			row, err := f.Decode(data)
			if err != nil {
				t.Fatalf("%T hop %d: %v", f, hop, err)
			}
			if string(row[0].([]byte)) != string(want) {
				t.Fatalf("%T hop %d: read %q, want %q", f, hop, row[0], want)
			}
			if data, err = f.Encode(row); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestJSONNestedErrorPath: an error inside a ROW, ARRAY or MAP names the
// nested column.
func TestJSONNestedErrorPath(t *testing.T) {
	row := types.Type{Kind: types.Row, Fields: []types.Field{{Name: "tags", Type: types.Type{Kind: types.Array, Elem: &tTinyInt}}}}
	m := types.Type{Kind: types.Map, Key: &tInt, Elem: &tString}
	j := &JSON{Fields: []types.Field{{Name: "a", Type: row}, {Name: "m", Type: m}}}
	_, err := j.Decode([]byte(`{"a": {"tags": [1, 2, 300]}}`))
	if want := `json: field "a.tags[2]" (TINYINT): 300 is out of range`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s", err, want)
	}
	got, err := j.Decode([]byte(`{"m": {"7": "x"}}`))
	if err != nil || fmt.Sprint(got[1]) != "map[7:x]" || got[1].(map[any]any)[int64(7)] != "x" {
		t.Errorf("MAP<INT, STRING> key: got %#v %v", got, err)
	}
	if _, err := j.Decode([]byte(`{"m": {"x": "y"}}`)); err == nil || !strings.HasPrefix(err.Error(), `json: field "m[\"x\"]" (INT): key: "x" is not an integer`) {
		t.Errorf("bad MAP key: %v", err)
	}
}

// TestJSONWritesNaN: NaN and ±Infinity are written as strings, as
// Jackson does (Go's encoder refuses them, which failed the job).
func TestJSONWritesNaN(t *testing.T) {
	j := &JSON{Fields: []types.Field{{Name: "d", Type: tDouble}}}
	row, err := j.Decode([]byte(`{"d": "-Infinity"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := j.Encode(row)
	if err != nil || string(out) != `{"d":"-Infinity"}` {
		t.Fatalf("encoded %s %v", out, err)
	}
}
