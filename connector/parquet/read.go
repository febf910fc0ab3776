package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"time"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/connector/filesystem"
	"github.com/weirstream/weir/types"
)

// FileError is a Parquet file that cannot be read: not Parquet at all
// (RowGroup -1), a damaged row group, or a value that does not fit the
// table's column. A restart reads the same place again, so it is an
// operator.PositionedError: the same error twice fails the job.
type FileError struct {
	File     string
	RowGroup int   // -1: the file as a whole (its footer)
	Row      int64 // within the row group; -1 when not known
	Column   string
	Err      error
}

// Error implements error.
func (e *FileError) Error() string {
	msg := "parquet: file " + e.File
	if e.RowGroup >= 0 {
		msg += fmt.Sprintf(" row group %d", e.RowGroup)
	}
	if e.Row >= 0 {
		msg += fmt.Sprintf(" row %d", e.Row)
	}
	if e.Column != "" {
		msg += fmt.Sprintf(" column %q", e.Column)
	}
	return msg + ": " + e.Err.Error()
}

// Position implements operator.PositionedError.
func (e *FileError) Position() string {
	return fmt.Sprintf("file %s row group %d row %d", e.File, e.RowGroup, e.Row)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *FileError) Unwrap() error { return e.Err }

// reader reads one Parquet file's rows into the table's columns.
type reader struct {
	f      *Format
	name   string
	file   *pq.File
	conv   []converter // per table column; nil: not in the file (NULL)
	col    []int       // per table column, its leaf column in the file
	groups []pq.RowGroup

	group, row int64 // the position of the next row
	rows       pq.Rows
	buf        []pq.Row
	n, i       int // rows in buf, next one
}

// converter reads a file's value into a column's Go value.
type converter func(v pq.Value) (any, error)

// OpenReader implements filesystem.BulkFormat: it reads the footer and
// matches the table's columns to the file's by name.
func (f *Format) OpenReader(name string, r io.ReaderAt, size int64) (filesystem.BulkReader, error) {
	file, err := pq.OpenFile(r, size, pq.SkipBloomFilters(true))
	if err != nil {
		return nil, &FileError{File: name, RowGroup: -1, Row: -1,
			Err: fmt.Errorf("not a readable Parquet file (%w); is the file complete and in the parquet format?", err)}
	}
	rd := &reader{f: f, name: name, file: file, conv: make([]converter, len(f.Fields)), col: make([]int, len(f.Fields)),
		groups: file.RowGroups(), buf: make([]pq.Row, 64)}
	for i, fl := range f.Fields {
		leaf, ok := file.Schema().Lookup(fl.Name)
		if !ok {
			if !fl.Type.Nullable {
				return nil, &FileError{File: name, RowGroup: -1, Row: -1, Column: fl.Name,
					Err: errors.New("the file has no such column and the table's column is NOT NULL")}
			}
			continue
		}
		if leaf.MaxRepetitionLevel > 0 || len(leaf.Path) != 1 {
			return nil, &FileError{File: name, RowGroup: -1, Row: -1, Column: fl.Name, Err: errors.New("a nested or repeated column is not supported")}
		}
		c, err := f.converterFor(leaf.Node.Type(), fl.Type)
		if err != nil {
			return nil, &FileError{File: name, RowGroup: -1, Row: -1, Column: fl.Name, Err: err}
		}
		rd.conv[i], rd.col[i] = c, leaf.ColumnIndex
	}
	return rd, nil
}

// SeekTo implements filesystem.BulkReader.
func (r *reader) SeekTo(group, row int64) error {
	r.closeRows()
	r.group, r.row = group, row
	return nil
}

// Position implements filesystem.BulkReader.
func (r *reader) Position() (int64, int64) { return r.group, r.row }

// Next implements filesystem.BulkReader.
func (r *reader) Next() ([]any, error) {
	for r.i == r.n {
		if r.group >= int64(len(r.groups)) {
			return nil, io.EOF
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
	row := r.buf[r.i]
	r.i++
	out := make([]any, len(r.f.Fields))
	for i, c := range r.conv {
		if c == nil {
			continue
		}
		v, err := c(row[r.col[i]])
		if err != nil {
			return nil, &FileError{File: r.name, RowGroup: int(r.group), Row: r.row, Column: r.f.Fields[i].Name, Err: err}
		}
		out[i] = v
	}
	r.row++
	return out, nil
}

// fill reads the next rows of the current row group into buf, moving to
// the next group at the end of one.
func (r *reader) fill() error {
	if r.rows == nil {
		r.rows = r.groups[r.group].Rows()
		if r.row > 0 {
			if err := r.rows.SeekToRow(r.row); err != nil {
				return r.groupErr(err)
			}
		}
	}
	n, err := r.rows.ReadRows(r.buf)
	r.n, r.i = n, 0
	if err != nil && err != io.EOF {
		return r.groupErr(err)
	}
	if n == 0 {
		if want := r.groups[r.group].NumRows(); r.row < want {
			return r.groupErr(fmt.Errorf("%d rows read of %d", r.row, want))
		}
		r.closeRows()
		r.group, r.row = r.group+1, 0
	}
	return nil
}

func (r *reader) groupErr(err error) error {
	return &FileError{File: r.name, RowGroup: int(r.group), Row: -1, Err: fmt.Errorf("damaged row group: %w", err)}
}

func (r *reader) closeRows() {
	if r.rows != nil {
		r.rows.Close()
		r.rows = nil
	}
	r.n, r.i = 0, 0
}

// Close implements filesystem.BulkReader.
func (r *reader) Close() error {
	r.closeRows()
	return nil
}

// converterFor returns how to read a file column of type ft into SQL type
// t, or an error naming both when they do not match.
func (f *Format) converterFor(ft pq.Type, t types.Type) (converter, error) {
	c := f.converterOf(ft, t)
	if c == nil {
		return nil, fmt.Errorf("the file's type %s (%s) cannot be read as %s", ft.Kind(), logical(ft), t)
	}
	return func(v pq.Value) (any, error) {
		if v.IsNull() {
			if !t.Nullable {
				return nil, errors.New("NULL in a NOT NULL column")
			}
			return nil, nil
		}
		return c(v)
	}, nil
}

func logical(ft pq.Type) string {
	if lt := ft.LogicalType(); lt != nil && lt.Value != nil {
		return lt.String()
	}
	return "no logical type"
}

// converterOf is converterFor without NULLs; nil when ft does not read as t.
func (f *Format) converterOf(ft pq.Type, t types.Type) converter {
	kind := ft.Kind()
	var lt format.LogicalTypeValue
	if l := ft.LogicalType(); l != nil {
		lt = l.Value
	}
	switch t.Kind {
	case types.Boolean:
		if kind == pq.Boolean {
			return func(v pq.Value) (any, error) { return v.Boolean(), nil }
		}
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return intConverter(kind, t)
	case types.Float, types.Double:
		switch kind {
		case pq.Float:
			return func(v pq.Value) (any, error) { return float64(v.Float()), nil }
		case pq.Double:
			if t.Kind == types.Double {
				return func(v pq.Value) (any, error) { return v.Double(), nil }
			}
		}
	case types.Decimal:
		if d, ok := lt.(*format.DecimalType); ok {
			return decimalConverter(kind, int(d.Scale), t)
		}
	case types.Char, types.Varchar, types.String:
		if kind == pq.ByteArray {
			return func(v pq.Value) (any, error) { return string(v.ByteArray()), nil }
		}
	case types.Bytes:
		if kind == pq.ByteArray || kind == pq.FixedLenByteArray {
			return func(v pq.Value) (any, error) { return bytes.Clone(v.ByteArray()), nil }
		}
	case types.Date:
		if _, ok := lt.(*format.DateType); ok && kind == pq.Int32 {
			return func(v pq.Value) (any, error) { return time.Unix(int64(v.Int32())*86400, 0).UTC(), nil }
		}
	case types.Timestamp, types.TimestampLTZ:
		return f.timestampConverter(kind, lt)
	}
	return nil
}

var intRanges = map[types.Kind][2]int64{types.TinyInt: {math.MinInt8, math.MaxInt8},
	types.SmallInt: {math.MinInt16, math.MaxInt16}, types.Int: {math.MinInt32, math.MaxInt32}, types.BigInt: {math.MinInt64, math.MaxInt64}}

// intConverter reads INT32 into any integer column and INT64 into BIGINT,
// range-checked.
func intConverter(kind pq.Kind, t types.Type) converter {
	if kind != pq.Int32 && (kind != pq.Int64 || t.Kind != types.BigInt) {
		return nil
	}
	r := intRanges[t.Kind]
	return func(v pq.Value) (any, error) {
		x := v.Int64()
		if kind == pq.Int32 {
			x = int64(v.Int32())
		}
		if x < r[0] || x > r[1] {
			return nil, fmt.Errorf("%d is out of range of %s", x, t)
		}
		return x, nil
	}
}

// decimalConverter reads a DECIMAL of the file's scale held in kind into
// DECIMAL(p, s), which must hold it exactly.
func decimalConverter(kind pq.Kind, scale int, t types.Type) converter {
	var unscaled func(v pq.Value) *big.Int
	switch kind {
	case pq.Int32:
		unscaled = func(v pq.Value) *big.Int { return big.NewInt(int64(v.Int32())) }
	case pq.Int64:
		unscaled = func(v pq.Value) *big.Int { return big.NewInt(v.Int64()) }
	case pq.ByteArray, pq.FixedLenByteArray:
		unscaled = func(v pq.Value) *big.Int { return twosComplement(v.ByteArray()) }
	default:
		return nil
	}
	return func(v pq.Value) (any, error) {
		d := decimal.NewFromBigInt(unscaled(v), int32(-scale))
		fit, ok := types.FitDecimal(d, t.Precision, t.Scale)
		if !ok || !fit.Equal(d) {
			return nil, fmt.Errorf("%s does not fit %s", d, t)
		}
		return fit, nil
	}
}

// twosComplement reads big-endian two's complement bytes.
func twosComplement(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

// timestampConverter reads INT96 (the wall clock in the format's zone) or
// an INT64 TIMESTAMP of any unit.
func (f *Format) timestampConverter(kind pq.Kind, lt format.LogicalTypeValue) converter {
	if kind == pq.Int96 {
		return func(v pq.Value) (any, error) {
			i := v.Int96()
			nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
			inst := time.Unix((int64(i[2])-julianEpoch)*86400, nanos).In(f.zone)
			return time.Date(inst.Year(), inst.Month(), inst.Day(), inst.Hour(), inst.Minute(), inst.Second(),
				inst.Nanosecond(), time.UTC), nil
		}
	}
	ts, ok := lt.(*format.TimestampType)
	if kind != pq.Int64 || !ok {
		return nil
	}
	unit := time.Microsecond
	switch ts.Unit.Value.(type) {
	case *format.MilliSeconds:
		unit = time.Millisecond
	case *format.NanoSeconds:
		unit = time.Nanosecond
	}
	return func(v pq.Value) (any, error) {
		n := v.Int64()
		per := int64(time.Second / unit)
		return time.Unix(floorDiv(n, per), (n-floorDiv(n, per)*per)*int64(unit)).UTC(), nil
	}
}
