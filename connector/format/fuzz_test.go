package format

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

// The fuzz targets decode arbitrary messages and check that decoding
// never panics, that every error is a *Error (ErrBadValue), and that what
// decodes is stable: decode → encode → decode gives the same row, and
// encoding it again gives the same bytes. Seeds are in
// testdata/fuzz/<target>. Run one with
//
//	go test -run '^$' -fuzz '^FuzzJSONDecode$' -fuzztime 10m -parallel 1 ./connector/format/

// fuzzScalars is a column of every scalar type.
var fuzzScalars = []types.Field{
	{Name: "ti", Type: tTinyInt}, {Name: "si", Type: tSmallInt}, {Name: "i", Type: tInt}, {Name: "bi", Type: tBigInt},
	{Name: "f", Type: tFloat}, {Name: "d", Type: tDouble}, {Name: "dec", Type: tDecimal}, {Name: "b", Type: tBoolean},
	{Name: "dt", Type: tDate}, {Name: "ts", Type: tTimestamp},
	{Name: "ltz", Type: types.Type{Kind: types.TimestampLTZ, Precision: 3, Nullable: true}},
	{Name: "by", Type: tBytes}, {Name: "s", Type: tString},
}

// fuzzJSONSchema adds nested types to the scalars.
var fuzzJSONSchema = append(append([]types.Field(nil), fuzzScalars...),
	types.Field{Name: "arr", Type: types.Type{Kind: types.Array, Elem: &tInt, Nullable: true}},
	types.Field{Name: "row", Type: types.Type{Kind: types.Row, Nullable: true,
		Fields: []types.Field{{Name: "x", Type: tDouble}, {Name: "y", Type: tString}}}},
	types.Field{Name: "m", Type: types.Type{Kind: types.Map, Key: &tString, Elem: &tDecimal, Nullable: true}},
)

func FuzzJSONDecode(f *testing.F) {
	f.Add([]byte(`{"ti":1,"si":-2,"i":1e3,"bi":"9007199254740993","f":0.1,"d":"NaN","dec":"1.005","b":true,` +
		`"dt":"2026-02-28","ts":"2026-11-30 08:00:00.5","ltz":"2026-11-30 08:00:00Z","by":"AAEC/w==","s":"x",` +
		`"arr":[1,null,3],"row":{"x":1.5,"y":"z"},"m":{"k":12.5}}`))
	f.Add([]byte(`{"i":1.9,"d":"-Infinity","ts":"2026-11-30T08:00:00+02:00","dec":1e999999999}`))
	f.Add([]byte(`{"ti":300}`))
	f.Add([]byte(`null`))
	checkStable(f, &JSON{Fields: fuzzJSONSchema})
}

func FuzzCSVDecode(f *testing.F) {
	f.Add([]byte(`1,-2,3,9007199254740993,0.1,NaN,1.005,true,2026-02-28,2026-11-30 08:00:00.5,2026-11-30 08:00:00Z,AAEC/w==,"a,""b"""`))
	f.Add([]byte(`,,,,,,,,,,,,`))
	f.Add([]byte(`1.9,0x10,12abc,1e3,Infinity,-1.5e3,1e999999999,TRUE,2026-1-3,x,y,AAEC/w,`))
	checkStable(f, &CSV{Fields: fuzzScalars, Delimiter: ','})
}

// FuzzRawDecode decodes data as a raw message of the type fuzzScalars[k].
func FuzzRawDecode(f *testing.F) {
	for i, s := range []string{"12", "-128", "40000", "2147483648", "0.1", "NaN", "1.005", "TRUE",
		"2026-02-28", "2026-11-30 08:00:00.123456789", "2026-11-30T08:00:00Z", "\x00\xff", "héllo"} {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, k uint8, data []byte) {
		fd := fuzzScalars[int(k)%len(fuzzScalars)]
		stable(t, Raw{Name: fd.Name, Type: fd.Type}, data, true)
	})
}

func checkStable(f *testing.F, format Format) {
	f.Fuzz(func(t *testing.T, data []byte) { stable(t, format, data, false) })
}

// stable checks one message: an error is a *Error; a row survives
// encode → decode unchanged, and encodes to the same bytes again. With
// skipNull, a row holding NULL is not encoded (the raw format has no text
// for NULL: Flink writes a null message).
func stable(t *testing.T, f Format, data []byte, skipNull bool) {
	row, err := f.Decode(data)
	if err != nil {
		var ferr *Error
		if !errors.As(err, &ferr) || !errors.Is(err, ErrBadValue) {
			t.Fatalf("decode %q: error %v is a %T, not a *format.Error", data, err, err)
		}
		return
	}
	if skipNull && row[0] == nil {
		return
	}
	enc, err := f.Encode(row)
	if err != nil {
		t.Fatalf("decode %q gave %v, which does not encode: %v", data, row, err)
	}
	again, err := f.Decode(enc)
	if err != nil {
		t.Fatalf("decode %q gave %v, encoded as %q, which does not decode: %v", data, row, enc, err)
	}
	if !sameValue(row, again) {
		t.Fatalf("decode %q gave %v, encoded as %q, decoded as %v", data, row, enc, again)
	}
	if enc2, err := f.Encode(again); err != nil || (!bytes.Equal(enc, enc2) && !hasMap(row)) {
		t.Fatalf("%v encodes as %q, then as %q (%v)", row, enc, enc2, err)
	}
}

// hasMap tells whether a row holds a MAP, whose keys encode in Go's map
// order, which varies.
func hasMap(v any) bool {
	switch x := v.(type) {
	case map[any]any:
		return true
	case []any:
		for _, e := range x {
			if hasMap(e) {
				return true
			}
		}
	}
	return false
}

// sameValue compares decoded values: decimals by value, times by
// instant, NaN equal to NaN, and nested values element by element.
func sameValue(a, b any) bool { return equalValues(a, b, false) }

// identical is sameValue, except that decimals must also have the same
// exponent and times the same location.
func identical(a, b any) bool { return equalValues(a, b, true) }

func equalValues(a, b any, strict bool) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i], strict) {
				return false
			}
		}
		return true
	case map[any]any:
		y, ok := b.(map[any]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !equalValues(v, w, strict) {
				return false
			}
		}
		return true
	case decimal.Decimal:
		y, ok := b.(decimal.Decimal)
		return ok && x.Equal(y) && (!strict || x.Exponent() == y.Exponent())
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y) && (!strict || x == y)
	case float64:
		y, ok := b.(float64)
		return ok && (x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y))
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	return fmt.Sprintf("%T %v", a, a) == fmt.Sprintf("%T %v", b, b)
}

// FuzzChangelogDecode decodes data in changelogFormats[k]: an error is a
// *Error; every row decoded encodes into a message that decodes back into
// the same fields (as an insert for +I/+U, a delete for -U/-D).
func FuzzChangelogDecode(f *testing.F) {
	f.Add(uint8(0), []byte(`{"before":{"i":1,"s":"a"},"after":{"i":2,"s":"b","dec":"1.50"},"op":"u"}`))
	f.Add(uint8(0), []byte(`{"schema":{},"payload":{"op":"c"}}`))
	f.Add(uint8(1), []byte(`{"data":[{"i":"1","ts":"2026-11-30 08:00:00"}],"old":[{"i":"0"}],"type":"UPDATE"}`))
	f.Add(uint8(2), []byte(`{"data":{"i":1,"arr":[1,2]},"old":{"arr":null},"type":"update"}`))
	f.Add(uint8(2), []byte(``))
	f.Fuzz(func(t *testing.T, k uint8, data []byte) {
		c, err := NewChangelog(changelogFormats[int(k)%len(changelogFormats)], fuzzJSONSchema, nil)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := c.DecodeChanges(data)
		if err != nil {
			var ferr *Error
			if !errors.As(err, &ferr) || !errors.Is(err, ErrBadValue) {
				t.Fatalf("decode %q: error %v is a %T, not a *format.Error", data, err, err)
			}
			return
		}
		for _, r := range rows {
			enc, err := c.EncodeChange(r)
			if err != nil {
				t.Fatalf("decode %q gave %v, which does not encode: %v", data, r, err)
			}
			back, err := c.DecodeChanges(enc)
			if err != nil || len(back) != 1 || back[0].Kind.IsAccumulate() != r.Kind.IsAccumulate() || !sameValue(r.Fields, back[0].Fields) {
				t.Fatalf("decode %q gave %v, encoded as %q, decoded as %v %v", data, r, enc, back, err)
			}
		}
	})
}

// FuzzAvroDecode: arbitrary bytes read as the Avro record of the fuzz
// schema never panic, fail with a *format.Error, or give a row that
// encodes back to the same row.
func FuzzAvroDecode(f *testing.F) {
	a, err := NewAvro(fuzzJSONSchema, true)
	if err != nil {
		f.Fatal(err)
	}
	row := []any{int64(1), int64(-2), int64(3), int64(4), 0.5, 1e300, decimal.RequireFromString("1.23"), true,
		time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC), time.UnixMilli(1), time.UnixMilli(-1), []byte{1}, "s",
		[]any{int64(1), nil}, []any{1.5, "y"}, map[any]any{"k": decimal.RequireFromString("0.5")}}
	seed, err := a.Encode(row)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(make([]byte, len(fuzzJSONSchema)))
	f.Add([]byte{2, 0xff, 0xff, 0xff, 0xff, 0x0f})
	checkStable(f, a)
}

// FuzzAvroResolve: arbitrary bytes read through a resolved writer's schema
// (fields reordered, one the table lacks, a union, an enum, an int widened
// to BIGINT, a column the writer lacks) never panic and fail with a
// *format.Error or give a row of the table's width.
func FuzzAvroResolve(f *testing.F) {
	writer := avro.MustParse(`{"type":"record","name":"w","fields":[
	{"name":"n","type":"int"},{"name":"gone","type":{"type":"array","items":["null","string",{"type":"map","values":"long"}]}},
	{"name":"s","type":["null","string","int"]},{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
	{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":3}}]}`).(*avro.RecordSchema)
	fields := []types.Field{{Name: "s", Type: types.Type{Kind: types.String, Nullable: true}},
		{Name: "n", Type: types.Type{Kind: types.BigInt}}, {Name: "e", Type: types.Type{Kind: types.String}},
		{Name: "d", Type: types.Type{Kind: types.Decimal, Precision: 8, Scale: 2}},
		{Name: "new", Type: types.Type{Kind: types.Int, Nullable: true}}}
	reader, err := NewAvro(fields, true)
	if err != nil {
		f.Fatal(err)
	}
	dec, err := resolveRecord(writer, reader.schema.(*avro.RecordSchema), fields, "")
	if err != nil {
		f.Fatal(err)
	}
	seed, err := avro.Marshal(writer, map[string]any{"n": 7, "gone": []any{nil, map[string]any{"string": "x"}, map[string]any{"map": map[string]any{"k": int64(1)}}},
		"s": map[string]any{"int": 3}, "e": "B", "d": big.NewRat(12345, 1000)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{0x0e, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := dec(avro.NewReader(nil, 0).Reset(data))
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("%x: untyped error %T %v", data, err, err)
			}
			return
		}
		if row := v.([]any); len(row) != len(fields) {
			t.Fatalf("%x: row %v", data, row)
		}
	})
}
