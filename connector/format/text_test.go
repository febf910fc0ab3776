package format

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

func decimalType(p, s int) types.Type {
	return types.Type{Kind: types.Decimal, Precision: p, Scale: s, Nullable: true}
}

// TestParseDecimalFitsTheType: csv and json read a DECIMAL(p, s) with
// DecimalData.fromBigDecimal(v, p, s): HALF_UP to scale s, NULL (not an
// error) when the rounded value has more than p digits.
func TestParseDecimalFitsTheType(t *testing.T) {
	for _, c := range []struct {
		in   string
		p, s int
		want string // "" is NULL
	}{
		{"80.4", 5, 2, "80.40"}, {"7", 5, 2, "7.00"}, {"1.005", 5, 2, "1.01"}, {"-1.005", 5, 2, "-1.01"},
		{"1.004", 5, 2, "1.00"}, {"1.999", 5, 2, "2.00"}, {"12345.678", 5, 2, ""}, {"999.994", 5, 2, "999.99"},
		{"999.995", 5, 2, ""}, {"0.5", 2, 2, "0.50"}, {"1", 2, 2, ""}, {"1e2", 5, 1, "100.0"}, {" 2.5 ", 3, 0, "3"},
	} {
		v, err := ParseScalar(c.in, decimalType(c.p, c.s))
		if err != nil {
			t.Fatalf("%q as DECIMAL(%d, %d): %v", c.in, c.p, c.s, err)
		}
		got := ""
		if v != nil {
			got = FormatDecimal(v.(decimal.Decimal))
		}
		if got != c.want {
			t.Errorf("%q as DECIMAL(%d, %d) = %q, want %q", c.in, c.p, c.s, got, c.want)
		}
	}
}

// TestFormatNumber: Flink's csv and json formats strip a DECIMAL's
// trailing zeros (Jackson's JsonNodeFactory.numberNode) and write
// BigDecimal.toString, or toPlainString with
// 'json.encode.decimal-as-plain-number' / 'csv.write-bigdecimal-in-
// scientific-notation' = 'false'. The last three cases are Flink's
// JsonRowDataSerDeSchemaTest.testSerializationDecimalEncode.
func TestFormatNumber(t *testing.T) {
	for _, c := range []struct{ in, sci, plain string }{
		{"80.40", "80.4", "80.4"}, {"7.00", "7", "7"}, {"100.00", "1E+2", "100"}, {"0.00", "0", "0"},
		{"-1.50", "-1.5", "-1.5"}, {"0.0010", "0.001", "0.001"}, {"-0.0000001", "-1E-7", "-0.0000001"},
		{"123.456789", "123.456789", "123.456789"}, {"454621864049246170", "4.5462186404924617E+17", "454621864049246170"},
		{"0.000000027", "2.7E-8", "0.000000027"},
	} {
		d := decimal.RequireFromString(c.in)
		if got := formatNumber(d, false); got != c.sci {
			t.Errorf("formatNumber(%s) = %q, want %q", c.in, got, c.sci)
		}
		if got := formatNumber(d, true); got != c.plain {
			t.Errorf("formatNumber(%s, plain) = %q, want %q", c.in, got, c.plain)
		}
	}
}

var typedSchema = []types.Field{
	{Name: "d", Type: types.Type{Kind: types.Date, Nullable: true}},
	{Name: "ts", Type: types.Type{Kind: types.Timestamp, Precision: 3, Nullable: true}},
	{Name: "ltz", Type: types.Type{Kind: types.TimestampLTZ, Precision: 3, Nullable: true}},
	{Name: "v", Type: decimalType(5, 2)},
}

// TestEncodeTimes: Flink's formats write a DATE as ISO_LOCAL_DATE and a
// TIMESTAMP with the fewest fractional digits (json: TimeFormats.
// SQL_TIMESTAMP_FORMAT, and SQL_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT, in
// UTC with a 'Z', for TIMESTAMP_LTZ; csv: ISO_LOCAL_DATE ' '
// ISO_LOCAL_TIME). What json writes reads back.
func TestEncodeTimes(t *testing.T) {
	day := time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)
	ts := time.Date(2024, 3, 5, 10, 11, 12, 500e6, time.UTC)
	row := []any{day, ts, ts.Add(-500 * time.Millisecond), decimal.RequireFromString("80.40")}

	j := &JSON{Fields: typedSchema}
	out, err := j.Encode(row)
	if want := `{"d":"2024-03-05","ts":"2024-03-05 10:11:12.5","ltz":"2024-03-05 10:11:12Z","v":80.4}`; err != nil || string(out) != want {
		t.Fatalf("json %s %v, want %s", out, err, want)
	}
	back, err := j.Decode(out)
	if err != nil || !back[0].(time.Time).Equal(day) || !back[1].(time.Time).Equal(ts) || !back[2].(time.Time).Equal(row[2].(time.Time)) ||
		FormatDecimal(back[3].(decimal.Decimal)) != "80.40" {
		t.Fatalf("json read back %v %v", back, err)
	}

	c := &CSV{Fields: typedSchema, Delimiter: ','}
	if out, err := c.Encode(row); err != nil || string(out) != `2024-03-05,2024-03-05 10:11:12.5,2024-03-05 10:11:12,80.4` {
		t.Fatalf("csv %s %v", out, err)
	}
	if out, err := (Raw{Type: typedSchema[0].Type}).Encode(row[:1]); err != nil || string(out) != "2024-03-05" {
		t.Fatalf("raw date %s %v", out, err)
	}
}

func TestDecimalOptions(t *testing.T) {
	row := []any{nil, nil, nil, decimal.RequireFromString("100.00")}
	for _, c := range []struct {
		format string
		opts   map[string]string
		want   string
	}{
		{"json", nil, `{"d":null,"ts":null,"ltz":null,"v":1E+2}`},
		{"json", map[string]string{"json.encode.decimal-as-plain-number": "true"}, `{"d":null,"ts":null,"ltz":null,"v":100}`},
		{"csv", nil, `,,,1E+2`},
		{"csv", map[string]string{"csv.write-bigdecimal-in-scientific-notation": "false"}, `,,,100`},
	} {
		f, err := New(c.format, typedSchema, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := f.Encode(row); err != nil || string(out) != c.want {
			t.Errorf("%s %v: %s %v, want %s", c.format, c.opts, out, err, c.want)
		}
	}
	if _, err := New("csv", typedSchema, map[string]string{"csv.write-bigdecimal-in-scientific-notation": "no"}); err == nil {
		t.Fatal("bad option value accepted")
	}
}

// TestText: print shows values as Flink's SQL client does: DECIMAL(p, s)
// with s digits, DATE as yyyy-MM-dd, TIMESTAMP(p) with p fractional
// digits (TimestampStringUtils).
func TestText(t *testing.T) {
	ts := time.Date(2024, 3, 5, 10, 11, 12, 500e6, time.UTC)
	for _, c := range []struct {
		v    any
		t    types.Type
		want string
	}{
		{decimal.RequireFromString("80.4"), decimalType(5, 2), "80.40"},
		{decimal.NewFromInt(7), decimalType(5, 2), "7.00"},
		{ts, types.Type{Kind: types.Date}, "2024-03-05"},
		{ts, types.Type{Kind: types.Timestamp, Precision: 3}, "2024-03-05 10:11:12.500"},
		{ts, types.Type{Kind: types.Timestamp, Precision: 0}, "2024-03-05 10:11:12.5"},
		{ts, types.Type{Kind: types.Timestamp, Precision: 6}, "2024-03-05 10:11:12.500000"},
		{ts.In(time.FixedZone("X", 3600)), types.Type{Kind: types.TimestampLTZ, Precision: 3}, "2024-03-05 10:11:12.500"},
		{int64(3), types.Type{Kind: types.Int}, "3"},
	} {
		if got := Text(c.v, c.t); got != c.want {
			t.Errorf("Text(%v, %s) = %q, want %q", c.v, c.t, got, c.want)
		}
	}
}
