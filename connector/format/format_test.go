package format

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

var billSchema = []types.Field{
	{Name: "bill_id", Type: types.Type{Kind: types.String, Nullable: true}},
	{Name: "amount", Type: types.Type{Kind: types.Decimal, Precision: 18, Scale: 2, Nullable: true}},
	{Name: "n", Type: types.Type{Kind: types.BigInt, Nullable: true}},
	{Name: "ts", Type: types.Type{Kind: types.Timestamp, Precision: 3, Nullable: true}},
	{Name: "ok", Type: types.Type{Kind: types.Boolean, Nullable: true}},
}

func TestJSONDecodeExact(t *testing.T) {
	j := &JSON{Fields: billSchema}
	got, err := j.Decode([]byte(`{"bill_id":"b1","amount":12345678901234.05,"n":9007199254740993,"ts":"2026-11-30 08:00:01.250","ok":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if !got[1].(decimal.Decimal).Equal(decimal.RequireFromString("12345678901234.05")) {
		t.Fatalf("amount %v read inexactly", got[1])
	}
	if got[2].(int64) != 9007199254740993 {
		t.Fatalf("bigint %v read through float", got[2])
	}
	if !got[3].(time.Time).Equal(time.Date(2026, 11, 30, 8, 0, 1, 250e6, time.UTC)) {
		t.Fatalf("ts %v", got[3])
	}
	got, err = j.Decode([]byte(`{"bill_id":"b2","amount":"0.10"}`))
	if err != nil || got[2] != nil || got[3] != nil || !got[1].(decimal.Decimal).Equal(decimal.RequireFromString("0.1")) {
		t.Fatalf("missing fields / string decimal: %v %v", got, err)
	}
	_, err = j.Decode([]byte(`{"bill_id":"b3","ts":"yesterday"}`))
	if err == nil || !strings.Contains(err.Error(), `field "ts"`) {
		t.Fatalf("bad timestamp error %v does not name the field", err)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	j := &JSON{Fields: billSchema}
	row := []any{"b1", decimal.RequireFromString("1.50"), int64(7), time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), false}
	data, err := j.Encode(row)
	if err != nil {
		t.Fatal(err)
	}
	// Flink's json format writes a DECIMAL through Jackson's default node
	// factory, which strips trailing zeros: DECIMAL(18, 2) 1.50 is 1.5.
	if want := `{"bill_id":"b1","amount":1.5,"n":7,"ts":"2026-01-02 03:04:05.006","ok":false}`; string(data) != want {
		t.Fatalf("encoded %s, want %s", data, want)
	}
	back, err := j.Decode(data)
	if err != nil || fmt.Sprint(back) != fmt.Sprint([]any{"b1", decimal.RequireFromString("1.5"), int64(7), row[3], false}) {
		t.Fatalf("round trip %v %v", back, err)
	}
}

func TestCSV(t *testing.T) {
	c := &CSV{Fields: billSchema, Delimiter: ','}
	got, err := c.Decode([]byte(`"b,1",3.25,,2026-11-30 08:00:00,true`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "b,1" || got[2] != nil || !got[1].(decimal.Decimal).Equal(decimal.RequireFromString("3.25")) {
		t.Fatalf("decoded %v", got)
	}
	out, err := c.Encode(got)
	// Flink's csv format writes a TIMESTAMP as ISO_LOCAL_DATE ' '
	// ISO_LOCAL_TIME: no fraction when it is zero.
	if err != nil || string(out) != `"b,1",3.25,,2026-11-30 08:00:00,true` {
		t.Fatalf("encoded %s %v", out, err)
	}
	if _, err := c.Decode([]byte(`b1,abc,1,2026-11-30 08:00:00,true`)); err == nil || !strings.Contains(err.Error(), `column "amount"`) {
		t.Fatalf("bad decimal error: %v", err)
	}
}

func TestJSONFailOnMissingField(t *testing.T) {
	f, err := New("json", billSchema, map[string]string{"json.fail-on-missing-field": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Decode([]byte(`{"bill_id":"b1","n":1,"ts":"2026-01-01 00:00:00","ok":true}`)); err == nil || !strings.Contains(err.Error(), `"amount" is missing`) {
		t.Fatalf("missing amount: %v", err)
	}
	if _, err := New("json", billSchema, map[string]string{"json.fail-on-missing-field": "yes"}); err == nil {
		t.Fatal("bad option value accepted")
	}
}

func TestJavaDouble(t *testing.T) {
	for x, want := range map[float64]string{2: "2.0", 0.5: "0.5", 1e7: "1.0E7", 1.25e-4: "1.25E-4", -3.5: "-3.5", 0: "0.0", 123456.789: "123456.789"} {
		if got := JavaDouble(x); got != want {
			t.Errorf("JavaDouble(%v) = %q, want %q", x, got, want)
		}
	}
}
