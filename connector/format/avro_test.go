package format

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

func notNull(t types.Type) types.Type { t.Nullable = false; return t }

// avroBills has a column of each type family, nullable and not.
var avroBills = []types.Field{
	{Name: "id", Type: notNull(tBigInt)},
	{Name: "name", Type: tString},
	{Name: "amount", Type: types.Type{Kind: types.Decimal, Precision: 10, Scale: 2, Nullable: true}},
	{Name: "ts", Type: tTimestamp},
	{Name: "ts6", Type: types.Type{Kind: types.Timestamp, Precision: 6, Nullable: true}},
	{Name: "day", Type: tDate},
	{Name: "small", Type: tSmallInt},
	{Name: "f", Type: tFloat},
	{Name: "d", Type: tDouble},
	{Name: "ok", Type: tBoolean},
	{Name: "raw", Type: tBytes},
	{Name: "tags", Type: types.Type{Kind: types.Array, Elem: &tString, Nullable: true}},
	{Name: "attrs", Type: types.Type{Kind: types.Map, Key: &tString, Elem: &tInt, Nullable: true}},
	{Name: "address", Type: types.Type{Kind: types.Row, Nullable: true,
		Fields: []types.Field{{Name: "city", Type: tString}, {Name: "zip", Type: notNull(tInt)}}}},
}

// TestAvroSchemaAsFlink: the schema derived from a table is Flink's
// (AvroSchemaConverter.convertToSchema): names, nullable unions with
// default null, logical types.
func TestAvroSchemaAsFlink(t *testing.T) {
	a, err := NewAvro(avroBills, true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"record","name":"org.apache.flink.avro.generated.record","fields":[` +
		`{"name":"id","type":"long"},` +
		`{"name":"name","type":["null","string"],"default":null},` +
		`{"name":"amount","type":["null",{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}],"default":null},` +
		`{"name":"ts","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},` +
		`{"name":"ts6","type":["null",{"type":"long","logicalType":"timestamp-micros"}],"default":null},` +
		`{"name":"day","type":["null",{"type":"int","logicalType":"date"}],"default":null},` +
		`{"name":"small","type":["null","int"],"default":null},` +
		`{"name":"f","type":["null","float"],"default":null},` +
		`{"name":"d","type":["null","double"],"default":null},` +
		`{"name":"ok","type":["null","boolean"],"default":null},` +
		`{"name":"raw","type":["null","bytes"],"default":null},` +
		`{"name":"tags","type":["null",{"type":"array","items":["null","string"]}],"default":null},` +
		`{"name":"attrs","type":["null",{"type":"map","values":["null","int"]}],"default":null},` +
		`{"name":"address","type":["null",{"type":"record","name":"org.apache.flink.avro.generated.record_address","fields":[` +
		`{"name":"city","type":["null","string"],"default":null},{"name":"zip","type":"int"}]}],"default":null}]}`
	if got := a.Schema(); got != want {
		t.Fatalf("schema\n got %s\nwant %s", got, want)
	}
	b, _ := NewAvro(avroBills[3:4], false)
	if got := b.Schema(); !strings.Contains(got, `"logicalType":"local-timestamp-millis"`) {
		t.Fatalf("'avro.timestamp_mapping.legacy' = 'false': %s", got)
	}
}

// TestAvroWireFormat pins the bytes of a small row, worked out by hand
// from the Avro specification: zigzag varints, union index, length-prefixed
// strings and bytes, a decimal's two's-complement unscaled value.
func TestAvroWireFormat(t *testing.T) {
	a, err := NewAvro(avroBills[:4], true)
	if err != nil {
		t.Fatal(err)
	}
	row := []any{int64(1), "a", decimal.RequireFromString("1.50"), time.UnixMilli(1).UTC()}
	got, err := a.Encode(row)
	// id 1 → 02; name: union 1 → 02, length 1 → 02, 'a' → 61; amount:
	// union 02, 150 = 0x0096 (a leading 00 keeps it positive), length 2 →
	// 04; ts: union 02, 1 ms → 02.
	if want := "02020261020400960202"; err != nil || hex.EncodeToString(got) != want {
		t.Fatalf("encoded %x %v, want %s", got, err, want)
	}
	got, _ = a.Encode([]any{int64(-1), nil, decimal.RequireFromString("-1.28"), nil})
	// -1 → 01; NULL → union 0; -128 = 0x80 in one byte.
	if want := "0100020280" + "00"; hex.EncodeToString(got) != want {
		t.Fatalf("encoded %x, want %s", got, want)
	}
}

// avroRow is a row of avroBills.
func avroRow() []any {
	return []any{int64(7), "bill", decimal.RequireFromString("-12345678.90"), time.Date(2026, 11, 30, 8, 0, 1, 250e6, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999e3, time.UTC), time.Date(1960, 2, 29, 0, 0, 0, 0, time.UTC), int64(-32768),
		float64(float32(0.1)), 1e300, true, []byte{0, 0xff}, []any{"a", nil, ""}, map[any]any{"k": int64(1), "n": nil},
		[]any{"Zürich", int64(8000)}}
}

// TestAvroRoundTrip: a row survives encode → decode exactly, and
// hamba/avro's own codec reads Weir's bytes as the same values
// (an independent decoder of the derived schema).
func TestAvroRoundTrip(t *testing.T) {
	a, err := NewAvro(avroBills, true)
	if err != nil {
		t.Fatal(err)
	}
	row := avroRow()
	data, err := a.Encode(row)
	if err != nil {
		t.Fatal(err)
	}
	back, err := a.Decode(data)
	if err != nil || !sameValue(row, back) {
		t.Fatalf("round trip:\n got %v %v\nwant %v", back, err, row)
	}
	var generic map[string]any
	if err := avro.Unmarshal(avro.MustParse(a.Schema()), data, &generic); err != nil {
		t.Fatalf("hamba/avro reads %x: %v", data, err)
	}
	for k, want := range map[string]string{"id": "7", "name": "bill", "amount": "-123456789/10",
		"ts": "2026-11-30 08:00:01.25 +0000 UTC", "day": "1960-02-29 00:00:00 +0000 UTC",
		"tags": "map[array:[a <nil> ]]", "address": "map[org.apache.flink.avro.generated.record_address:map[city:Zürich zip:8000]]"} {
		if got := fmt.Sprint(generic[k]); got != want {
			t.Errorf("hamba/avro read %s as %s, want %s", k, got, want)
		}
	}
	nulls := make([]any, len(row))
	nulls[0] = int64(0)
	if data, err = a.Encode(nulls); err != nil {
		t.Fatal(err)
	}
	if back, err = a.Decode(data); err != nil || !sameValue(nulls, back) {
		t.Fatalf("NULLs: %v %v", back, err)
	}
}

// TestAvroBadMessages: what does not read as the schema's record is a
// *format.Error naming the column.
func TestAvroBadMessages(t *testing.T) {
	a, err := NewAvro(avroBills[:4], true)
	if err != nil {
		t.Fatal(err)
	}
	big1 := new(big.Int).Exp(big.NewInt(10), big.NewInt(12), nil).Bytes() // 10^12: 13 digits > 10
	for msg, want := range map[string]string{
		"02020261":       `avro: column "amount" (DECIMAL(10, 2)): reading long: EOF`,
		"0204":           `avro: column "name" (STRING): union index 2: the schema's union is ["null", STRING]`,
		"02020261000000": `avro: bytes are left after the record`,
		"02020261020a00": `avro: column "amount" (DECIMAL(10, 2)): unexpected EOF`,
		"0202026102" + fmt.Sprintf("%02x", 2*(len(big1)+1)) + "00" + hex.EncodeToString(big1) + "00": `column "amount" (DECIMAL(10, 2)): 10000000000.00 has 13 digits, more than the precision 10`,
	} {
		b, _ := hex.DecodeString(msg)
		_, err := a.Decode(b)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", msg, err, want)
		}
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("%s: %T is not a *format.Error", msg, err)
		}
	}
	small, _ := NewAvro([]types.Field{{Name: "s", Type: notNull(tSmallInt)}}, true)
	if _, err := small.Decode([]byte{0x80, 0x80, 0x04}); err == nil || !strings.Contains(err.Error(), "32768 is out of range for SMALLINT") {
		t.Errorf("SMALLINT out of range: %v", err)
	}
	for _, c := range []struct {
		f    types.Field
		want string
	}{
		{types.Field{Name: "ts", Type: types.Type{Kind: types.Timestamp, Precision: 9}}, `Avro does not support TIMESTAMP with precision 9, only up to 6`},
		{types.Field{Name: "m", Type: types.Type{Kind: types.Map, Key: &tInt, Elem: &tInt}}, `Avro maps have string keys`},
		{types.Field{Name: "bad-name", Type: tInt}, `column "bad-name": not an Avro name`},
	} {
		if _, err := NewAvro([]types.Field{c.f}, true); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.f, err, c.want)
		}
	}
}
