package parquet

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"
	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

func typ(k types.Kind, nullable bool, p, s int) types.Type {
	return types.Type{Kind: k, Nullable: nullable, Precision: p, Scale: s}
}

// allFields is a column of every supported type; id is NOT NULL.
var allFields = []types.Field{
	{Name: "id", Type: typ(types.BigInt, false, 0, 0)},
	{Name: "b", Type: typ(types.Boolean, true, 0, 0)},
	{Name: "t", Type: typ(types.TinyInt, true, 0, 0)},
	{Name: "s", Type: typ(types.SmallInt, true, 0, 0)},
	{Name: "i", Type: typ(types.Int, true, 0, 0)},
	{Name: "f", Type: typ(types.Float, true, 0, 0)},
	{Name: "d", Type: typ(types.Double, true, 0, 0)},
	{Name: "dec", Type: typ(types.Decimal, true, 10, 2)},
	{Name: "big", Type: typ(types.Decimal, true, 38, 18)},
	{Name: "name", Type: typ(types.String, true, 0, 0)},
	{Name: "raw", Type: typ(types.Bytes, true, 0, 0)},
	{Name: "day", Type: typ(types.Date, true, 0, 0)},
	{Name: "ts", Type: typ(types.Timestamp, true, 9, 0)},
	{Name: "ltz", Type: typ(types.TimestampLTZ, true, 3, 0)},
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func ts(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.999999999", s)
	if err != nil {
		panic(err)
	}
	return t
}

var allRows = [][]any{
	{int64(1), true, int64(-128), int64(32767), int64(-2147483648), 1.5, 0.1, dec("12345678.90"),
		dec("-12345678901234567890.123456789012345678"), "héllo", []byte{0, 1, 255}, ts("1969-12-31 00:00:00"),
		ts("1900-01-01 23:59:59.123456789"), ts("2024-03-05 10:00:00.123")},
	{int64(2), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
	{int64(3), false, int64(127), int64(-32768), int64(2147483647), -3.25, -1e300, dec("-0.01"),
		dec("99999999999999999999.999999999999999999"), "", []byte{}, ts("2262-04-11 00:00:00"),
		ts("1970-01-01 00:00:00"), ts("1969-12-31 23:59:59.999")},
}

func writeFile(t *testing.T, f *Format, rows [][]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(t *testing.T, f *Format, data []byte) ([][]any, error) {
	t.Helper()
	r, err := f.OpenReader("x.parquet", bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var out [][]any
	for {
		row, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, row)
	}
}

// TestRoundTrip writes every type (NULLs, extremes, negative decimals,
// timestamps before 1970 and with nanoseconds) in each timestamp mapping
// and compression and reads back exactly the rows written.
func TestRoundTrip(t *testing.T) {
	for _, opts := range []map[string]string{
		{},
		{"parquet.utc-timezone": "true", "parquet.compression": "snappy"},
		{"parquet.write.int64.timestamp": "true", "parquet.timestamp.time.unit": "nanos", "parquet.compression": "ZSTD"},
		{"parquet.enable.dictionary": "false", "parquet.compression": "GZIP"},
	} {
		f, err := FromOptions(allFields, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(t, f, writeFile(t, f, allRows))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normal(got), normal(allRows)) {
			t.Errorf("%v:\ngot  %v\nwant %v", opts, got, allRows)
		}
	}
}

// normal makes decimals comparable by their text.
func normal(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = make([]any, len(r))
		for j, v := range r {
			if d, ok := v.(decimal.Decimal); ok {
				v = d.StringFixed(d.Exponent() * -1)
			}
			out[i][j] = v
		}
	}
	return out
}

// TestSchema: the file schema is Flink's (table order, INT96 timestamps,
// FIXED_LEN_BYTE_ARRAY decimals of the fewest bytes, OPTIONAL unless NOT
// NULL).
func TestSchema(t *testing.T) {
	f, err := FromOptions(allFields, map[string]string{"parquet.enable.dictionary": "false"})
	if err != nil {
		t.Fatal(err)
	}
	want := `message flink_schema {
	required int64 id (INT(64,true));
	optional boolean b;
	optional int32 t (INT(8,true));
	optional int32 s (INT(16,true));
	optional int32 i (INT(32,true));
	optional float f;
	optional double d;
	optional fixed_len_byte_array(5) dec (DECIMAL(10,2));
	optional fixed_len_byte_array(16) big (DECIMAL(38,18));
	optional binary name (STRING);
	optional binary raw;
	optional int32 day (DATE);
	optional int96 ts;
	optional int96 ltz;
}`
	if got := f.Schema(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The file's own footer says the same.
	file, err := pq.OpenFile(bytes.NewReader(writeFile(t, f, allRows)), int64(len(writeFile(t, f, allRows))))
	if err != nil {
		t.Fatal(err)
	}
	if got := file.Schema().String(); got != want {
		t.Errorf("file schema\n%s\nwant\n%s", got, want)
	}
}

// TestRowGroupsAndSeek: a small 'parquet.block.size' gives several row
// groups; a reader positioned anywhere reads the rest exactly.
func TestRowGroupsAndSeek(t *testing.T) {
	fields := []types.Field{{Name: "n", Type: typ(types.BigInt, false, 0, 0)}, {Name: "s", Type: typ(types.String, true, 0, 0)}}
	f, err := FromOptions(fields, map[string]string{"parquet.block.size": "2000"})
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for i := range 1000 {
		rows = append(rows, []any{int64(i), strings.Repeat("x", i%7)})
	}
	data := writeFile(t, f, rows)
	file, err := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(file.RowGroups()); n < 3 {
		t.Fatalf("%d row groups, want several", n)
	}
	r, _ := f.OpenReader("x", bytes.NewReader(data), int64(len(data)))
	var positions [][2]int64
	for {
		g, row := r.Position()
		if _, err := r.Next(); err == io.EOF {
			break
		}
		positions = append(positions, [2]int64{g, row})
	}
	for i := 0; i < len(rows); i += 97 {
		r, _ := f.OpenReader("x", bytes.NewReader(data), int64(len(data)))
		if err := r.SeekTo(positions[i][0], positions[i][1]); err != nil {
			t.Fatal(err)
		}
		var got [][]any
		for {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, row)
		}
		if !reflect.DeepEqual(got, rows[i:]) {
			t.Fatalf("from row %d (%v): got %d rows, first %v", i, positions[i], len(got), got[0])
		}
	}
}

// TestBadFiles: a file that is not Parquet, a damaged row group, and a
// column of the wrong type are errors naming the file, the row group and
// the column.
func TestBadFiles(t *testing.T) {
	fields := []types.Field{{Name: "n", Type: typ(types.BigInt, false, 0, 0)}, {Name: "s", Type: typ(types.String, true, 0, 0)}}
	f, err := FromOptions(fields, map[string]string{"parquet.block.size": "2000", "parquet.compression": "SNAPPY"})
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for i := range 1000 {
		rows = append(rows, []any{int64(i), strings.Repeat("y", i%5)})
	}
	data := writeFile(t, f, rows)

	_, err = readAll(t, f, []byte("a,b\n1,2\n"))
	wantErr(t, err, "parquet: file x.parquet: not a readable Parquet file")

	// Damage row group 1: overwrite its first column chunk's pages.
	file, _ := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	md := file.Metadata().RowGroups[1].Columns[0].MetaData
	bad := append([]byte(nil), data...)
	for i := md.DataPageOffset; i < md.DataPageOffset+md.TotalCompressedSize; i++ {
		bad[i] = 0xff
	}
	got, err := readAll(t, f, bad)
	wantErr(t, err, "parquet: file x.parquet row group 1: damaged row group")
	if n := file.RowGroups()[0].NumRows(); int64(len(got)) != n {
		t.Errorf("read %d rows before the damage, want row group 0's %d", len(got), n)
	}
	var fe *FileError
	if !errors.As(err, &fe) || fe.Position() != "file x.parquet row group 1 row -1" {
		t.Errorf("position of %v", err)
	}

	// The table declares s as INT: the file's binary does not read as it.
	asInt, _ := FromOptions([]types.Field{fields[0], {Name: "s", Type: typ(types.Int, true, 0, 0)}}, nil)
	_, err = readAll(t, asInt, data)
	wantErr(t, err, `parquet: file x.parquet column "s": the file's type BYTE_ARRAY (STRING) cannot be read as INT`)

	// A NOT NULL column missing from the file.
	missing, _ := FromOptions([]types.Field{fields[0], {Name: "z", Type: typ(types.Int, false, 0, 0)}}, nil)
	_, err = readAll(t, missing, data)
	wantErr(t, err, `parquet: file x.parquet column "z": the file has no such column and the table's column is NOT NULL`)
}

func wantErr(t *testing.T, err error, prefix string) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("error %v, want %q…", err, prefix)
	}
}

// TestOptionErrors: bad option values name the option.
func TestOptionErrors(t *testing.T) {
	for opts, want := range map[string]string{
		"parquet.compression=LZO":             "format parquet: 'parquet.compression' = 'LZO': unknown or unsupported codec",
		"parquet.timestamp.time.unit=seconds": "format parquet: 'parquet.timestamp.time.unit' = 'seconds': unknown unit",
		"parquet.utc-timezone=yes":            "format parquet: 'parquet.utc-timezone' = 'yes': want true or false",
		"parquet.block.size=128MB":            "format parquet: 'parquet.block.size' = '128MB': want a positive number of bytes",
	} {
		k, v, _ := strings.Cut(opts, "=")
		_, err := FromOptions(allFields, map[string]string{k: v})
		wantErr(t, err, want)
	}
	arr := types.Type{Kind: types.Array, Nullable: true, Elem: &types.Type{Kind: types.Int, Nullable: true}}
	_, err := FromOptions([]types.Field{{Name: "xs", Type: arr}}, nil)
	wantErr(t, err, `format parquet: column "xs": type ARRAY<INT> is not supported by the parquet format yet`)
}

// TestReadsOtherWriters: a file written by parquet-go's own struct
// writer (INT64 decimals, microsecond timestamps, other column order, an
// extra column) reads into the table by name.
func TestReadsOtherWriters(t *testing.T) {
	type rec struct {
		Extra string    `parquet:"extra"`
		Ts    time.Time `parquet:"ts,timestamp(microsecond)"`
		Amt   int64     `parquet:"amt,decimal(2:12)"`
		ID    int32     `parquet:"id"`
	}
	path := filepath.Join(t.TempDir(), "o.parquet")
	out, _ := os.Create(path)
	w := pq.NewGenericWriter[rec](out)
	w.Write([]rec{{"e", ts("2020-01-02 03:04:05.123456"), -1234, 7}})
	w.Close()
	out.Close()
	data, _ := os.ReadFile(path)
	f, _ := FromOptions([]types.Field{{Name: "id", Type: typ(types.BigInt, true, 0, 0)}, {Name: "amt", Type: typ(types.Decimal, true, 12, 2)},
		{Name: "ts", Type: typ(types.Timestamp, true, 6, 0)}, {Name: "none", Type: typ(types.String, true, 0, 0)}}, nil)
	got, err := readAll(t, f, data)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{int64(7), "-12.34", ts("2020-01-02 03:04:05.123456"), nil}}
	if !reflect.DeepEqual(normal(got), want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
