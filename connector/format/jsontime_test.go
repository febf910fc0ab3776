package format

import (
	"testing"
	"time"

	"github.com/weirstream/weir/types"
)

// TestJSONTimestampStandards reads TIMESTAMP(3) and TIMESTAMP_LTZ(3)
// values in both of 'json.timestamp-format.standard”s forms, as Flink's
// JsonToRowDataConverters parse them with TimeFormats: the SQL form
// (ISO_LOCAL_DATE ' ' HH:mm:ss[.f…], SMART resolving) and ISO-8601
// (ISO_LOCAL_DATE_TIME, STRICT), a TIMESTAMP_LTZ with a literal 'Z' in
// both, anything else an error naming the column.
func TestJSONTimestampStandards(t *testing.T) {
	ts := types.Type{Kind: types.Timestamp, Precision: 3, Nullable: true}
	ltz := types.Type{Kind: types.TimestampLTZ, Precision: 3, Nullable: true}
	const notSQL = `error: json: field "v" (TIMESTAMP(3)): `
	for _, c := range []struct {
		std TimestampStandard
		decodeCase
	}{
		{TimestampSQL, decodeCase{ts, `"2026-12-01 10:00:00"`, "time 2026-12-01T10:00:00Z"}},
		{TimestampSQL, decodeCase{ts, `"2026-12-01 10:00:00.123456789"`, "time 2026-12-01T10:00:00.123456789Z"}},
		{TimestampSQL, decodeCase{ts, `"2026-12-01 10:00:00."`, "time 2026-12-01T10:00:00Z"}}, // appendFraction(0, 9): the point alone
		{TimestampSQL, decodeCase{ts, `"2026-02-30 10:00:00"`, "time 2026-02-28T10:00:00Z"}},  // SMART: the month's last day
		{TimestampSQL, decodeCase{ts, `"2026-02-32 10:00:00"`, notSQL + `"2026-02-32 10:00:00" is not a timestamp yyyy-MM-dd HH:mm:ss[.fffffffff] ('json.timestamp-format.standard' = 'SQL')`}},
		{TimestampSQL, decodeCase{ts, `"2026-12-01 10:00:00Z"`, notSQL + `"2026-12-01 10:00:00Z" is not a timestamp yyyy-MM-dd HH:mm:ss[.fffffffff] ('json.timestamp-format.standard' = 'SQL'): a TIMESTAMP has no 'Z' (a TIMESTAMP_LTZ column takes one)`}},
		{TimestampSQL, decodeCase{ts, `"2026-12-01T10:00:00"`, notSQL + `"2026-12-01T10:00:00" is not a timestamp`}},
		{TimestampSQL, decodeCase{ts, `"2026-12-01 10:00"`, notSQL + `"2026-12-01 10:00" is not a timestamp`}},
		{TimestampSQL, decodeCase{ts, `"2026-12-01 24:00:00"`, notSQL + `"2026-12-01 24:00:00" is not a timestamp`}},
		{TimestampSQL, decodeCase{ltz, `"2026-12-01 10:00:00.5Z"`, "time 2026-12-01T10:00:00.5Z"}},
		{TimestampSQL, decodeCase{ltz, `"2026-12-01 10:00:00.5"`, `error: json: field "v" (TIMESTAMP_LTZ(3)): "2026-12-01 10:00:00.5" is not a timestamp yyyy-MM-dd HH:mm:ss[.fffffffff]Z ('json.timestamp-format.standard' = 'SQL')`}},
		{TimestampSQL, decodeCase{ltz, `"2026-12-01T10:00:00.5Z"`, `error: json: field "v" (TIMESTAMP_LTZ(3)): "2026-12-01T10:00:00.5Z" is not a timestamp`}},
		{TimestampISO8601, decodeCase{ts, `"2026-12-01T10:00:00.5"`, "time 2026-12-01T10:00:00.5Z"}},
		{TimestampISO8601, decodeCase{ts, `"2026-12-01T10:00"`, "time 2026-12-01T10:00:00Z"}}, // ISO_LOCAL_TIME: seconds optional
		{TimestampISO8601, decodeCase{ts, `"2026-02-30T10:00:00"`, `error: json: field "v" (TIMESTAMP(3)): "2026-02-30T10:00:00" is not a timestamp yyyy-MM-ddTHH:mm[:ss[.fffffffff]] ('json.timestamp-format.standard' = 'ISO-8601')`}},
		{TimestampISO8601, decodeCase{ts, `"2026-12-01 10:00:00"`, `error: json: field "v" (TIMESTAMP(3)): "2026-12-01 10:00:00" is not a timestamp`}},
		{TimestampISO8601, decodeCase{ts, `"2026-12-01T10:00:00Z"`, `error: json: field "v" (TIMESTAMP(3)): "2026-12-01T10:00:00Z" is not a timestamp yyyy-MM-ddTHH:mm[:ss[.fffffffff]] ('json.timestamp-format.standard' = 'ISO-8601'): a TIMESTAMP has no 'Z'`}},
		{TimestampISO8601, decodeCase{ts, `"2026-12-01T10:00:00+01:00"`, `error: json: field "v" (TIMESTAMP(3)): "2026-12-01T10:00:00+01:00" is not a timestamp yyyy-MM-ddTHH:mm[:ss[.fffffffff]] ('json.timestamp-format.standard' = 'ISO-8601'): a UTC offset is not taken`}},
		{TimestampISO8601, decodeCase{ltz, `"2026-12-01T10:00:00.5Z"`, "time 2026-12-01T10:00:00.5Z"}},
		{TimestampISO8601, decodeCase{ltz, `"2026-12-01T10:00:00.5"`, `error: json: field "v" (TIMESTAMP_LTZ(3)): "2026-12-01T10:00:00.5" is not a timestamp yyyy-MM-ddTHH:mm[:ss[.fffffffff]]Z`}},
	} {
		j := &JSON{Fields: []types.Field{{Name: "v", Type: c.typ}}, TimestampStandard: c.std}
		v, err := decodeOne(j, `{"v": `+c.in+`}`)
		check(t, "json "+c.std.String(), c.decodeCase, show(v, err), err)
	}
}

// TestJSONWritesTimestampStandards writes what TestJSONTimestampStandards
// reads, as Flink's RowDataToJsonConverters format it: the fewest
// fraction digits, 'T' in ISO-8601, 'Z' after a TIMESTAMP_LTZ.
func TestJSONWritesTimestampStandards(t *testing.T) {
	fields := []types.Field{{Name: "ts", Type: types.Type{Kind: types.Timestamp, Precision: 3}},
		{Name: "ltz", Type: types.Type{Kind: types.TimestampLTZ, Precision: 3}}}
	row, err := (&JSON{Fields: fields}).Decode([]byte(`{"ts": "2026-12-01 10:00:00.5", "ltz": "2026-12-01 10:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt, want string
	}{
		{"SQL", `{"ts":"2026-12-01 10:00:00.5","ltz":"2026-12-01 10:00:00Z"}`},
		{"ISO-8601", `{"ts":"2026-12-01T10:00:00.5","ltz":"2026-12-01T10:00:00Z"}`},
	} {
		f, err := New("json", fields, map[string]string{"json.timestamp-format.standard": c.opt})
		if err != nil {
			t.Fatal(err)
		}
		out, err := f.Encode(row)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != c.want {
			t.Errorf("%s: wrote %s, want %s", c.opt, out, c.want)
		}
		back, err := f.Decode(out)
		if err != nil || !back[0].(time.Time).Equal(row[0].(time.Time)) || !back[1].(time.Time).Equal(row[1].(time.Time)) {
			t.Errorf("%s: %s reads back as %v, %v", c.opt, out, back, err)
		}
	}
	if _, err := New("json", fields, map[string]string{"json.timestamp-format.standard": "RFC3339"}); err == nil ||
		err.Error() != "format json: 'json.timestamp-format.standard' = 'RFC3339' is not supported: use 'SQL' (the default) or 'ISO-8601'" {
		t.Errorf("an unknown standard: %v", err)
	}
}
