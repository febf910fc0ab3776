// Package parquet is Flink's parquet format for the filesystem connector:
// a table's rows written as Parquet files, with the file schema Flink's
// ParquetSchemaConverter derives from the table, and Parquet files read
// back into a table's columns by name. It implements
// filesystem.BulkFormat; github.com/parquet-go/parquet-go does the file
// layout, encodings and compression.
//
// Types, as Flink (Hive-compatible) maps them: CHAR/VARCHAR/STRING →
// BINARY (UTF8), BOOLEAN → BOOLEAN, BYTES/VARBINARY → BINARY, DECIMAL(p, s)
// → FIXED_LEN_BYTE_ARRAY of the fewest bytes that hold p digits (DECIMAL),
// TINYINT/SMALLINT → INT32 (INT_8/INT_16), INT → INT32, BIGINT → INT64,
// FLOAT/DOUBLE → FLOAT/DOUBLE, DATE → INT32 (DATE), TIMESTAMP and
// TIMESTAMP_LTZ → INT96 (Julian day + nanos of day; with
// 'parquet.write.int64.timestamp' INT64 TIMESTAMP in
// 'parquet.timestamp.time.unit'). A nullable column is OPTIONAL, NOT NULL
// REQUIRED. ARRAY, MAP and ROW are refused.
package parquet

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/weirstream/weir/types"
)

// Options are the parquet format's WITH options, with Flink's names.
type Options struct {
	// UTCTimezone is 'parquet.utc-timezone' (default false): an INT96
	// timestamp holds the TIMESTAMP's wall-clock time read in UTC, or —
	// false, as Hive 0.x–2.x and Flink's default — in the local time zone
	// (Weir's process zone, as Flink's JVM zone).
	UTCTimezone bool
	// Int64Timestamp is 'parquet.write.int64.timestamp' (default false):
	// TIMESTAMPs as INT64 TIMESTAMP(unit) instead of INT96, never
	// shifted by a zone.
	Int64Timestamp bool
	// TimeUnit is 'parquet.timestamp.time.unit': millis, micros (the
	// default) or nanos, for Int64Timestamp.
	TimeUnit string
	// Compression is 'parquet.compression' (parquet-mr's
	// ParquetOutputFormat; default UNCOMPRESSED): UNCOMPRESSED, SNAPPY,
	// GZIP, BROTLI, ZSTD or LZ4_RAW.
	Compression string
	// BlockSize is 'parquet.block.size' (default 128 MiB): a row group is
	// written once its rows take about this many bytes.
	BlockSize int64
	// PageSize is 'parquet.page.size' (default 1 MiB).
	PageSize int
	// Dictionary is 'parquet.enable.dictionary' (default true).
	Dictionary bool
}

// OptionNames are the WITH options the format reads.
var OptionNames = []string{"parquet.utc-timezone", "parquet.write.int64.timestamp", "parquet.timestamp.time.unit",
	"parquet.compression", "parquet.block.size", "parquet.page.size", "parquet.enable.dictionary"}

// Format writes and reads Parquet files of one table's columns.
type Format struct {
	Fields []types.Field
	Options
	schema *pq.Schema
	codec  compress.Codec
	zone   *time.Location // of INT96 timestamps
}

// OptionError is a WITH option of the format that Weir cannot use.
type OptionError struct {
	Option, Value string
	Msg, Hint     string
}

// Error implements error.
func (e *OptionError) Error() string {
	return fmt.Sprintf("format parquet: '%s' = '%s': %s (%s)", e.Option, e.Value, e.Msg, e.Hint)
}

// FromOptions returns the format for fields configured by opts (the
// table's WITH options).
func FromOptions(fields []types.Field, opts map[string]string) (*Format, error) {
	o := Options{TimeUnit: "micros", Compression: "UNCOMPRESSED", BlockSize: 128 << 20, PageSize: 1 << 20, Dictionary: true}
	var err error
	if o.UTCTimezone, err = boolOpt(opts, "parquet.utc-timezone", false); err != nil {
		return nil, err
	}
	if o.Int64Timestamp, err = boolOpt(opts, "parquet.write.int64.timestamp", false); err != nil {
		return nil, err
	}
	if o.Dictionary, err = boolOpt(opts, "parquet.enable.dictionary", true); err != nil {
		return nil, err
	}
	if v, ok := opts["parquet.timestamp.time.unit"]; ok {
		o.TimeUnit = strings.ToLower(v)
		if !slices.Contains([]string{"millis", "micros", "nanos"}, o.TimeUnit) {
			return nil, &OptionError{"parquet.timestamp.time.unit", v, "unknown unit", "use 'millis', 'micros' or 'nanos'"}
		}
	}
	if v, ok := opts["parquet.compression"]; ok {
		o.Compression = strings.ToUpper(v)
	}
	if o.BlockSize, err = sizeOpt(opts, "parquet.block.size", o.BlockSize); err != nil {
		return nil, err
	}
	page, err := sizeOpt(opts, "parquet.page.size", int64(o.PageSize))
	if err != nil {
		return nil, err
	}
	o.PageSize = int(page)
	return New(fields, o)
}

// New returns the format for fields with o (every field set).
func New(fields []types.Field, o Options) (*Format, error) {
	f := &Format{Fields: fields, Options: o, zone: time.Local}
	if o.UTCTimezone {
		f.zone = time.UTC
	}
	var ok bool
	if f.codec, ok = codecs[o.Compression]; !ok {
		return nil, &OptionError{"parquet.compression", o.Compression, "unknown or unsupported codec",
			"use UNCOMPRESSED, SNAPPY, GZIP, BROTLI, ZSTD or LZ4_RAW (LZO and Hadoop's LZ4 are not supported)"}
	}
	root, err := f.schemaNode()
	if err != nil {
		return nil, err
	}
	f.schema = pq.NewSchema("flink_schema", root)
	return f, nil
}

var codecs = map[string]compress.Codec{"UNCOMPRESSED": &pq.Uncompressed, "SNAPPY": &pq.Snappy, "GZIP": &pq.Gzip,
	"BROTLI": &pq.Brotli, "ZSTD": &pq.Zstd, "LZ4_RAW": &pq.Lz4Raw}

// Schema returns the Parquet schema the format writes, in Parquet's
// message syntax.
func (f *Format) Schema() string { return f.schema.String() }

func boolOpt(opts map[string]string, key string, def bool) (bool, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &OptionError{key, v, "want true or false", "e.g. 'true'"}
}

// sizeOpt reads a byte count (parquet-mr's options are plain numbers).
func sizeOpt(opts map[string]string, key string, def int64) (int64, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return 0, &OptionError{key, v, "want a positive number of bytes", "e.g. '134217728'"}
	}
	return n, nil
}
