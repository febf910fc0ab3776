package expr

import (
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/types"
)

// parseDate reads yyyy-M-d, ignoring a time part after a space or 'T', as
// Flink's DateTimeUtils.parseDate.
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " T"); i >= 0 {
		s = s[:i]
	}
	y, m, d, ok := ymd(s)
	if !ok {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC), true
}

func ymd(s string) (y, m, d int, ok bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	parts := strings.Split(s, "-")
	if len(parts) != 3 || len(parts[0]) < 1 || len(parts[0]) > 9 || len(parts[1]) < 1 || len(parts[1]) > 2 ||
		len(parts[2]) < 1 || len(parts[2]) > 2 {
		return 0, 0, 0, false
	}
	var err error
	if y, err = strconv.Atoi(parts[0]); err != nil || !allDigits(parts[0]) {
		return 0, 0, 0, false
	}
	if neg {
		y = -y
	}
	m, err1 := strconv.Atoi(parts[1])
	d, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || !allDigits(parts[1]) || !allDigits(parts[2]) || m < 1 || m > 12 || d < 1 ||
		d > daysIn(y, m) {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// parseTimestamp reads 'yyyy-MM-dd[( |T)HH:mm[:ss[.fffffffff]]]', Flink's
// SQL timestamp form and the ISO one, as a wall-clock time in UTC. prec is
// the number of fractional digits written.
func parseTimestamp(s string) (t time.Time, prec int, ok bool) {
	s = strings.TrimSpace(s)
	datePart, timePart := s, ""
	if i := strings.IndexAny(s, " T"); i >= 0 {
		datePart, timePart = s[:i], strings.TrimSpace(s[i+1:])
	}
	y, m, d, ok := ymd(datePart)
	if !ok {
		return time.Time{}, 0, false
	}
	var hh, mm, ss, ns int
	if timePart != "" {
		if hh, mm, ss, ns, prec, ok = hms(timePart); !ok {
			return time.Time{}, 0, false
		}
	}
	return time.Date(y, time.Month(m), d, hh, mm, ss, ns, time.UTC), prec, true
}

// hms reads H:m[:s[.fffffffff]].
func hms(s string) (h, m, sec, ns, prec int, ok bool) {
	main, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(main, ":")
	if len(parts) < 2 || len(parts) > 3 || (hasFrac && len(parts) != 3) {
		return 0, 0, 0, 0, 0, false
	}
	vals := make([]int, 3)
	for i, p := range parts {
		if len(p) < 1 || len(p) > 2 || !allDigits(p) {
			return 0, 0, 0, 0, 0, false
		}
		vals[i], _ = strconv.Atoi(p)
	}
	if vals[0] > 23 || vals[1] > 59 || vals[2] > 59 {
		return 0, 0, 0, 0, 0, false
	}
	if hasFrac {
		if len(frac) < 1 || len(frac) > 9 || !allDigits(frac) {
			return 0, 0, 0, 0, 0, false
		}
		prec = len(frac)
		ns, _ = strconv.Atoi((frac + "000000000")[:9])
	}
	return vals[0], vals[1], vals[2], ns, prec, true
}

// parseTime reads H:m[:s[.fffffffff]] as a TIME value (types.TimeOfDay:
// digits past the milliseconds dropped, as Flink's runtime). prec is the
// number of fractional digits written, at most 9.
func parseTime(s string) (t time.Time, prec int, ok bool) {
	h, m, sec, ns, prec, ok := hms(strings.TrimSpace(s))
	if !ok {
		return time.Time{}, 0, false
	}
	return types.TimeOfDay(time.Date(1970, 1, 1, h, m, sec, ns, time.UTC)), prec, true
}

// truncateTime drops the fractional seconds beyond precision p.
func truncateTime(t time.Time, p int) time.Time {
	if p >= 9 || p < 0 {
		return t
	}
	unit := int(pow10i(9 - p))
	return t.Add(-time.Duration(t.Nanosecond() % unit))
}

func pow10i(n int) int64 {
	r := int64(1)
	for ; n > 0; n-- {
		r *= 10
	}
	return r
}

// wallToInstant reads a TIMESTAMP's wall clock (carried in UTC) as a time
// in loc: TIMESTAMP → TIMESTAMP_LTZ.
func wallToInstant(t time.Time, loc *time.Location) time.Time {
	y, mo, d := t.Date()
	return time.Date(y, mo, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).UTC()
}

// instantToWall gives the wall clock of an instant in loc, carried in UTC:
// TIMESTAMP_LTZ → TIMESTAMP.
func instantToWall(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	y, mo, d := l.Date()
	return time.Date(y, mo, d, l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// startOfDay truncates a wall clock to midnight.
func startOfDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
