package format

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/types"
)

// TimestampStandard is how the json family reads and writes TIMESTAMP and
// TIMESTAMP_LTZ values (Flink's 'json.timestamp-format.standard'):
//
//	SQL       2026-12-01 10:00:00.5    a TIMESTAMP_LTZ: 2026-12-01 10:00:00.5Z
//	ISO-8601  2026-12-01T10:00:00.5    a TIMESTAMP_LTZ: 2026-12-01T10:00:00.5Z
//
// Reading is as strict as Flink's TimeFormats: the other standard's
// separator, a 'Z' on a TIMESTAMP, a missing 'Z' on a TIMESTAMP_LTZ and
// a UTC offset all fail. SQL takes HH:mm:ss and a day past the month's
// end up to 31 as that month's last day (java.time's SMART resolver);
// ISO-8601 takes HH:mm without seconds and no such day.
type TimestampStandard uint8

const (
	// TimestampSQL is 'SQL', the default.
	TimestampSQL TimestampStandard = iota
	// TimestampISO8601 is 'ISO-8601'.
	TimestampISO8601
)

func (s TimestampStandard) String() string {
	if s == TimestampISO8601 {
		return "ISO-8601"
	}
	return "SQL"
}

// timestampStandardOption reads key ('json.timestamp-format.standard',
// 'debezium-json.timestamp-format.standard', …), default SQL.
func timestampStandardOption(opts map[string]string, key string) (TimestampStandard, error) {
	switch v, ok := opts[key]; {
	case !ok || v == "SQL":
		return TimestampSQL, nil
	case v == "ISO-8601":
		return TimestampISO8601, nil
	default:
		return 0, fmt.Errorf("'%s' = '%s' is not supported: use 'SQL' (the default) or 'ISO-8601'", key, v)
	}
}

// layout is the standard's form of type t, for errors.
func (s TimestampStandard) layout(t types.Type) string {
	l := "yyyy-MM-dd HH:mm:ss[.fffffffff]"
	if s == TimestampISO8601 {
		l = "yyyy-MM-ddTHH:mm[:ss[.fffffffff]]"
	}
	if t.Kind == types.TimestampLTZ {
		l += "Z"
	}
	return l
}

// parseTimestamp reads text as a TIMESTAMP (ltz false) or TIMESTAMP_LTZ
// in this standard; ok is false when it is not of that form.
func (s TimestampStandard) parseTimestamp(b []byte, ltz bool) (time.Time, bool) {
	if ltz {
		if len(b) == 0 || b[len(b)-1] != 'Z' {
			return time.Time{}, false
		}
		b = b[:len(b)-1]
	}
	sep := byte(' ')
	if s == TimestampISO8601 {
		sep = 'T'
	}
	if len(b) < 16 || b[4] != '-' || b[7] != '-' || b[10] != sep || b[13] != ':' {
		return time.Time{}, false
	}
	y, ok1 := digitsAt(b, 0, 4)
	mo, ok2 := digitsAt(b, 5, 2)
	d, ok3 := digitsAt(b, 8, 2)
	h, ok4 := digitsAt(b, 11, 2)
	mi, ok5 := digitsAt(b, 14, 2)
	sec, ns, ok6 := s.secondsAt(b, 16)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 {
		return time.Time{}, false
	}
	if last := daysIn(y, mo); d > last {
		if s == TimestampISO8601 {
			return time.Time{}, false // ISO_LOCAL_DATE_TIME resolves STRICT
		}
		d = last // SQL_TIMESTAMP_FORMAT resolves SMART
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC), true
}

// secondsAt reads ":ss" and an optional fraction of 0 to 9 digits after
// a '.' (java.time's appendFraction(NANO_OF_SECOND, 0, 9, true)) at
// b[at:], which must end there; ISO-8601 may leave out all of it.
func (s TimestampStandard) secondsAt(b []byte, at int) (sec, ns int, ok bool) {
	if at == len(b) {
		return 0, 0, s == TimestampISO8601
	}
	if len(b) < at+3 || b[at] != ':' {
		return 0, 0, false
	}
	if sec, ok = digitsAt(b, at+1, 2); !ok || sec > 59 {
		return 0, 0, false
	}
	i := at + 3
	if i == len(b) {
		return sec, 0, true
	}
	if b[i] != '.' || len(b)-i-1 > 9 {
		return 0, 0, false
	}
	scale := 100_000_000
	for _, c := range b[i+1:] {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		ns += int(c-'0') * scale
		scale /= 10
	}
	return sec, ns, true
}

// daysIn is the number of days of month mo of year y.
func daysIn(y, mo int) int {
	return time.Date(y, time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// readTimestamp reads a json string as a TIMESTAMP or TIMESTAMP_LTZ
// column of type t, failing as Flink's JsonToRowDataConverters do.
func (s TimestampStandard) readTimestamp(b []byte, t types.Type) (time.Time, error) {
	if ts, ok := s.parseTimestamp(b, t.Kind == types.TimestampLTZ); ok {
		return ts, nil
	}
	why := ""
	switch {
	case utcOffset.Match(b):
		why = ": a UTC offset is not taken"
	case t.Kind == types.Timestamp && len(b) > 0 && b[len(b)-1] == 'Z':
		why = ": a TIMESTAMP has no 'Z' (a TIMESTAMP_LTZ column takes one)"
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp %s ('json.timestamp-format.standard' = '%s')%s", b, s.layout(t), s, why)
}

// appendTime writes a DATE, TIME or TIMESTAMP as formatTime says, a
// TIMESTAMP with 'T' in ISO-8601, a TIMESTAMP_LTZ with a 'Z' (Flink's
// RowDataToJsonConverters), in quotes.
func (s TimestampStandard) appendTime(buf []byte, x time.Time, t types.Type) []byte {
	buf = append(buf, '"')
	at := len(buf)
	buf, ok := appendTimeText(buf, x, t)
	switch {
	case !ok:
		buf = append(buf, FormatTimestamp(x)...)
	case t.Kind != types.Timestamp && t.Kind != types.TimestampLTZ:
	default:
		if s == TimestampISO8601 && len(buf) > at+10 && buf[at+10] == ' ' {
			buf[at+10] = 'T'
		}
		if t.Kind == types.TimestampLTZ {
			buf = append(buf, 'Z')
		}
	}
	return append(buf, '"')
}
