package parquet

import (
	"fmt"
	"io"
	"math/big"
	"time"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/connector/filesystem"
	"github.com/weirstream/weir/types"
)

// julianEpoch is the Julian day of 1970-01-01, the day count of an INT96
// timestamp.
const julianEpoch = 2440588

const nanosPerDay = int64(24 * time.Hour)

// writer writes one Parquet file.
type writer struct {
	f       *Format
	w       *pq.Writer
	row     pq.Row
	flushed int64 // Size() after the last row group
}

// NewWriter implements filesystem.BulkWriter's factory.
func (f *Format) NewWriter(out io.Writer) (filesystem.BulkWriter, error) {
	w := pq.NewWriter(out, f.schema, pq.Compression(f.codec), pq.PageBufferSize(f.PageSize),
		pq.CreatedBy("weir", "", ""))
	return &writer{f: f, w: w, row: make(pq.Row, len(f.Fields))}, nil
}

// Write adds a row; a row group is flushed once it reaches the block size.
func (w *writer) Write(fields []any) error {
	for i, fl := range w.f.Fields {
		v, err := w.f.value(fields[i], fl.Type)
		if err != nil {
			return fmt.Errorf("parquet: column %q (%s): %w", fl.Name, fl.Type, err)
		}
		def := 0
		if !v.IsNull() && fl.Type.Nullable {
			def = 1
		}
		w.row[i] = v.Level(0, def, i)
	}
	if _, err := w.w.WriteRows([]pq.Row{w.row}); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	if w.w.Size()-w.flushed >= w.f.BlockSize {
		if err := w.w.Flush(); err != nil {
			return fmt.Errorf("parquet: %w", err)
		}
		w.flushed = w.w.Size()
	}
	return nil
}

func (w *writer) Size() int64 { return w.w.Size() }

func (w *writer) Close() error { return w.w.Close() }

// value is the Parquet value of v, a value of SQL type t.
func (f *Format) value(v any, t types.Type) (pq.Value, error) {
	if v == nil {
		if !t.Nullable {
			return pq.Value{}, fmt.Errorf("NULL in a NOT NULL column")
		}
		return pq.NullValue(), nil
	}
	switch t.Kind {
	case types.Boolean:
		return pq.BooleanValue(v.(bool)), nil
	case types.TinyInt, types.SmallInt, types.Int, types.Date:
		if t.Kind == types.Date {
			return pq.Int32Value(int32(floorDiv(v.(time.Time).Unix(), 86400))), nil
		}
		return pq.Int32Value(int32(v.(int64))), nil
	case types.BigInt:
		return pq.Int64Value(v.(int64)), nil
	case types.Float:
		return pq.FloatValue(float32(v.(float64))), nil
	case types.Double:
		return pq.DoubleValue(v.(float64)), nil
	case types.Decimal:
		b, err := decimalFixed(v.(decimal.Decimal), t)
		return pq.FixedLenByteArrayValue(b), err
	case types.Char, types.Varchar, types.String:
		return pq.ByteArrayValue([]byte(v.(string))), nil
	case types.Bytes:
		return pq.ByteArrayValue(v.([]byte)), nil
	case types.Timestamp, types.TimestampLTZ:
		return f.timestamp(v.(time.Time)), nil
	}
	return pq.Value{}, fmt.Errorf("type %s is not supported", t)
}

// timestamp writes t (a TIMESTAMP's wall clock in UTC, or a TIMESTAMP_LTZ's
// instant) as INT96 — the wall clock read in the format's zone — or as
// INT64 in the time unit.
func (f *Format) timestamp(t time.Time) pq.Value {
	t = t.UTC()
	if f.Int64Timestamp {
		switch f.TimeUnit {
		case "millis":
			return pq.Int64Value(t.UnixMilli())
		case "nanos":
			return pq.Int64Value(t.UnixNano())
		}
		return pq.Int64Value(t.UnixMicro())
	}
	inst := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), f.zone).UTC()
	days := floorDiv(inst.Unix(), 86400)
	nanos := (inst.Unix()-days*86400)*int64(time.Second) + int64(inst.Nanosecond())
	return pq.Int96Value(deprecated.Int96{uint32(nanos), uint32(uint64(nanos) >> 32), uint32(days + julianEpoch)})
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// decimalFixed is d's unscaled value at t's scale as a big-endian two's
// complement of decimalBytes(t.Precision) bytes.
func decimalFixed(d decimal.Decimal, t types.Type) ([]byte, error) {
	fit, ok := types.FitDecimal(d, t.Precision, t.Scale)
	if !ok {
		return nil, fmt.Errorf("%s does not fit", d)
	}
	unscaled := fit.Shift(int32(t.Scale)).BigInt()
	n := decimalBytes(t.Precision)
	out := make([]byte, n)
	if unscaled.Sign() >= 0 {
		unscaled.FillBytes(out)
		return out, nil
	}
	// Two's complement: 2^(8n) + x.
	twos := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*n)), unscaled)
	twos.FillBytes(out)
	return out, nil
}
