package jdbc

import (
	"bytes"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/types"
)

// lookupValue converts a value the driver returned (go-sql-driver: []byte
// text, int64, float64, time.Time; pgx: Go numbers, strings, time.Time,
// pgtype values) to a value of type t (see package types).
func lookupValue(v any, t types.Type) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		if t.Kind == types.Bytes {
			return bytes.Clone(x), nil
		}
		return textValue(string(x), t)
	case string:
		return textValue(x, t)
	case time.Time:
		return timeValue(x, t)
	case bool:
		if t.Kind == types.Boolean {
			return x, nil
		}
		return textValue(fmt.Sprint(x), t)
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, float32, float64:
		return textValue(fmt.Sprint(x), t)
	case driver.Valuer: // pgtype.Numeric and friends
		dv, err := x.Value()
		if err != nil {
			return nil, err
		}
		if _, again := dv.(driver.Valuer); again {
			return nil, fmt.Errorf("cannot read a %T as %s", v, t)
		}
		return lookupValue(dv, t)
	}
	return nil, fmt.Errorf("cannot read a %T as %s", v, t)
}

// textValue reads a column's text (MySQL's text protocol) as type t.
func textValue(s string, t types.Type) (any, error) {
	if t.Kind == types.Boolean { // MySQL BOOL is TINYINT(1); PostgreSQL's text is t/f
		switch strings.ToLower(s) {
		case "1", "t":
			return true, nil
		case "0", "f":
			return false, nil
		}
	}
	return format.ParseScalar(s, t)
}

// timeValue reads a driver's time as type t: DATE and TIMESTAMP keep the
// wall clock the driver shows, TIMESTAMP_LTZ the instant.
func timeValue(x time.Time, t types.Type) (any, error) {
	switch t.Kind {
	case types.Date:
		return time.Date(x.Year(), x.Month(), x.Day(), 0, 0, 0, 0, time.UTC), nil
	case types.Timestamp:
		return time.Date(x.Year(), x.Month(), x.Day(), x.Hour(), x.Minute(), x.Second(), x.Nanosecond(), time.UTC), nil
	case types.TimestampLTZ:
		return x.UTC(), nil
	case types.Time:
		ms := x.Nanosecond() / int(time.Millisecond) * int(time.Millisecond)
		return time.Date(1970, 1, 1, x.Hour(), x.Minute(), x.Second(), ms, time.UTC), nil
	case types.Char, types.Varchar, types.String:
		return x.Format("2006-01-02 15:04:05.999999999"), nil
	}
	return nil, fmt.Errorf("cannot read a time as %s", t)
}
