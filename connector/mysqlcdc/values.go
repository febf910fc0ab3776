package mysqlcdc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/connector/cdc"
	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/types"
)

// column is a declared column as the database has it.
type column struct {
	name     string
	t        types.Type
	ordinal  int    // position in the table's rows (binlog images)
	dataType string // MySQL's DATA_TYPE: int, varchar, timestamp, …
	unsigned bool
}

// converter makes Weir values of the declared types from what the
// snapshot query and the binlog give.
type converter struct {
	cols []column
	tz   *time.Location
}

// fromText reads a column's value from its text form (the snapshot's
// text protocol; the binlog's strings). A MySQL TIMESTAMP is UTC text
// (both sessions run in UTC): an instant, shown in 'server-time-zone'
// when declared TIMESTAMP.
func (c *converter) fromText(i int, s string) (any, error) {
	col := c.cols[i]
	switch col.t.Kind {
	case types.Boolean:
		switch s {
		case "1", "true":
			return true, nil
		case "0", "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean", s)
	case types.Timestamp, types.TimestampLTZ:
		if strings.HasPrefix(s, "0000-00-00") {
			return nil, nil // MySQL's zero date: no time (Flink CDC gives null as well)
		}
		ts, err := format.ParseTimestamp(s)
		if err != nil || col.dataType != "timestamp" || col.t.Kind == types.TimestampLTZ {
			return ts, err
		}
		w := ts.In(c.tz)
		return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC), nil
	case types.Date:
		if s == "0000-00-00" {
			return nil, nil
		}
	}
	return format.ParseScalar(s, col.t)
}

// fromBinlog reads a value of a binlog row image (go-mysql's decoding:
// signed integers, floats, decimal.Decimal, strings, []byte).
func (c *converter) fromBinlog(i int, v any) (any, error) {
	col := c.cols[i]
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int8:
		return c.integer(i, int64(x))
	case int16:
		return c.integer(i, int64(x))
	case int32:
		return c.integer(i, int64(x))
	case int64:
		return c.integer(i, x)
	case float32:
		if col.t.Kind == types.Float {
			return x, nil
		}
		return c.fromText(i, fmt.Sprint(x))
	case float64:
		if col.t.Kind == types.Double {
			return x, nil
		}
		return c.fromText(i, fmt.Sprint(x))
	case decimal.Decimal:
		return c.fromText(i, x.String())
	case string:
		if col.t.Kind == types.Bytes {
			return []byte(x), nil
		}
		return c.fromText(i, x)
	case []byte:
		if col.t.Kind == types.Bytes {
			return append([]byte(nil), x...), nil
		}
		return c.fromText(i, string(x))
	}
	return c.fromText(i, fmt.Sprint(v))
}

// integer reads a binlog integer: go-mysql reads them signed (the binlog
// has no signedness without binlog_row_metadata), so an UNSIGNED column's
// value past the signed range comes negative and wraps back here by the
// column's MySQL width (a MEDIUMINT arrives as an int32, so the Go type
// does not tell the width).
func (c *converter) integer(i int, v int64) (any, error) {
	col := c.cols[i]
	if col.unsigned && v < 0 {
		bits, ok := intBits[col.dataType]
		if !ok || bits == 64 {
			return c.unsigned64(i, uint64(v))
		}
		v += 1 << bits
	}
	if col.t.IsInteger() {
		if r := intRanges[col.t.Kind]; v < r[0] || v > r[1] {
			return nil, fmt.Errorf("%d is out of range for %s", v, col.t)
		}
		return v, nil
	}
	return c.fromText(i, strconv.FormatInt(v, 10))
}

// unsigned64 reads a BIGINT UNSIGNED value past BIGINT's range: it fits
// only a DECIMAL (Flink CDC declares the column DECIMAL(20, 0)) or a
// floating point column.
func (c *converter) unsigned64(i int, u uint64) (any, error) {
	if col := c.cols[i]; col.t.IsInteger() {
		return nil, fmt.Errorf("%d is out of range for %s (declare a BIGINT UNSIGNED column DECIMAL(20, 0))", u, col.t)
	}
	return c.fromText(i, strconv.FormatUint(u, 10))
}

// intBits is the width of MySQL's integer types (DATA_TYPE).
var intBits = map[string]uint{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}

var intRanges = map[types.Kind][2]int64{types.TinyInt: {math.MinInt8, math.MaxInt8},
	types.SmallInt: {math.MinInt16, math.MaxInt16}, types.Int: {math.MinInt32, math.MaxInt32},
	types.BigInt: {math.MinInt64, math.MaxInt64}}

// compareKeys orders two primary keys as the snapshot queries do (strings
// compared as BINARY: by bytes).
var compareKeys = cdc.CompareKeys

// keyParser makes checkpointed key values typed again.
func keyParser(kt []types.Type) func([]any) ([]any, error) { return cdc.KeyParser("mysql-cdc", kt) }
