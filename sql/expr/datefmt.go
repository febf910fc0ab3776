package expr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// dateFormat is a compiled Java SimpleDateFormat pattern, as DATE_FORMAT,
// TO_TIMESTAMP, UNIX_TIMESTAMP and FROM_UNIXTIME take them:
// 'yyyy-MM-dd HH:mm:ss.SSS', quoted literals 'T', and the letters
// G y Y M L w W D d F E u a H k K h m s S z Z X.
type dateFormat struct {
	toks []dfTok
	// unit is how coarse the pattern is, in ms: what it prints of a UTC
	// time is the same all through each day, hour, minute or second since
	// the epoch (UTC has no offset changes); 0 when it prints fractions.
	unit int64
	// memo is the last UTC time printed by formatTime: [lo, lo+unit) in
	// ms prints s. Rows mostly come in time order, so DATE_FORMAT(ts,
	// 'yyyy-MM-dd') renders once a day, not once a row.
	memo atomic.Pointer[formatMemo]
}

type formatMemo struct {
	lo int64
	s  any // the string, boxed once: a DATE_FORMAT result is an any
}

// letterUnits is the finest unit each pattern letter prints (ms); zones
// (z, Z, X) print the same all day in UTC, the only zone memoised.
var letterUnits = map[byte]int64{'a': 3_600_000, 'H': 3_600_000, 'k': 3_600_000, 'K': 3_600_000, 'h': 3_600_000,
	'm': 60_000, 's': 1000, 'S': 0}

// patternUnit is the unit of f's tokens (see dateFormat.unit).
func patternUnit(toks []dfTok) int64 {
	unit := int64(86_400_000)
	for _, tk := range toks {
		if u, ok := letterUnits[tk.letter]; ok {
			unit = min(unit, u)
		}
	}
	return unit
}

// dfTok is a run of one pattern letter, or literal text when letter is 0.
type dfTok struct {
	letter byte
	count  int
	lit    string
}

const dfLetters = "GyYMLwWDdFEuaHkKhmsSzZX"

func compileDateFormat(p string) (*dateFormat, error) {
	f := &dateFormat{}
	lit := func(s string) {
		if n := len(f.toks); n > 0 && f.toks[n-1].letter == 0 {
			f.toks[n-1].lit += s
			return
		}
		f.toks = append(f.toks, dfTok{lit: s})
	}
	for i := 0; i < len(p); {
		ch := p[i]
		switch {
		case ch == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit("'")
				i += 2
				continue
			}
			end := strings.IndexByte(p[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated quote in date format")
			}
			// '' inside quotes is a quote
			text := p[i+1 : i+1+end]
			lit(text)
			i += end + 2
			for i < len(p) && p[i] == '\'' && i+1 < len(p) {
				end = strings.IndexByte(p[i+1:], '\'')
				if end < 0 {
					return nil, errors.New("unterminated quote in date format")
				}
				lit("'" + p[i+1:i+1+end])
				i += end + 2
			}
		case (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'):
			if !strings.ContainsRune(dfLetters, rune(ch)) {
				return nil, fmt.Errorf("illegal pattern character '%c'", ch)
			}
			j := i
			for j < len(p) && p[j] == ch {
				j++
			}
			f.toks = append(f.toks, dfTok{letter: ch, count: j - i})
			i = j
		default:
			lit(string(ch))
			i++
		}
	}
	f.unit = patternUnit(f.toks)
	return f, nil
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August",
		"September", "October", "November", "December"}
	dayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

func pad(n, width int) string {
	s := strconv.Itoa(abs(n))
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	if n < 0 {
		return "-" + s
	}
	return s
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// format prints t's wall clock (in t's location) as the pattern says, in
// the US English locale, as java.text.SimpleDateFormat does: S is the
// millisecond of the second, zero-padded to the letter count (FROM_UNIXTIME
// and DATE_FORMAT of a string).
func (f *dateFormat) format(t time.Time) string { return f.render(t, false) }

// formatTime prints t as java.time.format.DateTimeFormatter.ofPattern
// does, which Flink's DATE_FORMAT of a TIMESTAMP uses: there each S is one
// more digit of the fraction of the second (truncated: SSSSSS of .123456
// is 123456, SSS of it is 123), and u is the year. The other letters print
// as in format.
func (f *dateFormat) formatTime(t time.Time) any {
	if f.unit == 0 || t.Location() != time.UTC {
		return f.render(t, true)
	}
	ms := t.UnixMilli()
	lo := ms - ((ms%f.unit)+f.unit)%f.unit
	if m := f.memo.Load(); m != nil && m.lo == lo {
		return m.s
	}
	m := &formatMemo{lo, f.render(t, true)}
	f.memo.Store(m)
	return m.s
}

// fraction is the first n digits of the nanosecond ns (after 9, zeros).
func fraction(ns, n int) string {
	s := pad(ns, 9)
	if n <= 9 {
		return s[:n]
	}
	return s + strings.Repeat("0", n-9)
}

func (f *dateFormat) render(t time.Time, javaTime bool) string {
	var b strings.Builder
	for _, tk := range f.toks {
		if tk.letter == 0 {
			b.WriteString(tk.lit)
			continue
		}
		n := tk.count
		switch tk.letter {
		case 'G':
			if t.Year() > 0 {
				b.WriteString("AD")
			} else {
				b.WriteString("BC")
			}
		case 'y', 'Y':
			if n == 2 {
				b.WriteString(pad(t.Year()%100, 2))
			} else {
				b.WriteString(pad(t.Year(), n))
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				b.WriteString(monthNames[t.Month()-1])
			case n == 3:
				b.WriteString(monthNames[t.Month()-1][:3])
			default:
				b.WriteString(pad(int(t.Month()), n))
			}
		case 'w':
			b.WriteString(pad(usWeekOfYear(t), n))
		case 'W':
			first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
			b.WriteString(pad((t.Day()-1+int(first.Weekday()))/7+1, n))
		case 'D':
			b.WriteString(pad(t.YearDay(), n))
		case 'd':
			b.WriteString(pad(t.Day(), n))
		case 'F':
			b.WriteString(pad((t.Day()-1)/7+1, n))
		case 'E':
			if n >= 4 {
				b.WriteString(dayNames[t.Weekday()])
			} else {
				b.WriteString(dayNames[t.Weekday()][:3])
			}
		case 'u':
			if javaTime && n == 2 {
				b.WriteString(pad(t.Year()%100, 2))
			} else if javaTime {
				b.WriteString(pad(t.Year(), n))
			} else {
				b.WriteString(pad((int(t.Weekday())+6)%7+1, n))
			}
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'H':
			b.WriteString(pad(t.Hour(), n))
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			b.WriteString(pad(h, n))
		case 'K':
			b.WriteString(pad(t.Hour()%12, n))
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b.WriteString(pad(h, n))
		case 'm':
			b.WriteString(pad(t.Minute(), n))
		case 's':
			b.WriteString(pad(t.Second(), n))
		case 'S':
			if javaTime {
				b.WriteString(fraction(t.Nanosecond(), n))
			} else {
				b.WriteString(pad(t.Nanosecond()/1e6, n))
			}
		case 'z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'Z':
			b.WriteString(offsetString(t, false, false))
		case 'X':
			_, off := t.Zone()
			if off == 0 {
				b.WriteString("Z")
			} else {
				b.WriteString(offsetString(t, n == 3, n == 1))
			}
		}
	}
	return b.String()
}

func offsetString(t time.Time, colon, hoursOnly bool) string {
	_, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	s := sign + pad(off/3600, 2)
	if hoursOnly {
		return s
	}
	if colon {
		s += ":"
	}
	return s + pad(off%3600/60, 2)
}

// usWeekOfYear is SimpleDateFormat's week of year in the US locale: weeks
// start on Sunday and week 1 is the one holding January 1.
func usWeekOfYear(t time.Time) int {
	y, m, d := t.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if saturday := day.AddDate(0, 0, 6-int(day.Weekday())); saturday.Year() > y {
		return 1
	}
	jan1 := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	return (day.YearDay()-1+int(jan1.Weekday()))/7 + 1
}

// parse reads s as the pattern says. Fields not in the pattern default to
// 1970-01-01 00:00:00. It returns the wall clock in UTC and, when the
// text carried a zone offset (Z, X), that offset.
func (f *dateFormat) parse(s string) (wall time.Time, offset *int, err error) {
	return f.parseText(s, false)
}

// parsePrefix is parse that ignores text after the pattern's last field,
// as java.text.SimpleDateFormat.parse(String) does — UNIX_TIMESTAMP reads
// '2024-01-01 00:00:00.234' with 'yyyy-MM-dd HH:mm:ss' as Flink does.
func (f *dateFormat) parsePrefix(s string) (wall time.Time, offset *int, err error) {
	return f.parseText(s, true)
}

func (f *dateFormat) parseText(s string, prefix bool) (wall time.Time, offset *int, err error) {
	year, month, day := 1970, 1, 1
	hour, minute, sec, nanos := 0, 0, 0, 0
	pm, hour12 := -1, false
	yday := 0
	pos := 0
	bad := errors.New("text does not match the format")
	for i, tk := range f.toks {
		if tk.letter == 0 {
			if !strings.HasPrefix(s[pos:], tk.lit) {
				return time.Time{}, nil, bad
			}
			pos += len(tk.lit)
			continue
		}
		// A numeric field followed directly by another numeric field
		// (yyyyMMdd) takes exactly its width; otherwise all its digits.
		width := 0
		if i+1 < len(f.toks) && f.toks[i+1].letter != 0 && numericField(f.toks[i+1]) {
			width = tk.count
		}
		switch tk.letter {
		case 'M', 'L':
			if tk.count >= 3 {
				m, n := matchName(s[pos:], monthNames)
				if m < 0 {
					return time.Time{}, nil, bad
				}
				month, pos = m+1, pos+n
				continue
			}
		case 'E':
			d, n := matchName(s[pos:], dayNames)
			if d < 0 {
				return time.Time{}, nil, bad
			}
			pos += n
			continue
		case 'a':
			switch {
			case strings.HasPrefix(strings.ToUpper(s[pos:]), "AM"):
				pm = 0
			case strings.HasPrefix(strings.ToUpper(s[pos:]), "PM"):
				pm = 1
			default:
				return time.Time{}, nil, bad
			}
			pos += 2
			continue
		case 'G':
			if strings.HasPrefix(s[pos:], "AD") || strings.HasPrefix(s[pos:], "BC") {
				pos += 2
				continue
			}
			return time.Time{}, nil, bad
		case 'z', 'Z', 'X':
			off, n, ok := parseOffset(s[pos:])
			if !ok {
				return time.Time{}, nil, bad
			}
			offset = &off
			pos += n
			continue
		}
		sign := 1
		if tk.letter == 'y' && pos < len(s) && s[pos] == '-' {
			sign, pos = -1, pos+1
		}
		v, n := readDigits(s[pos:], width)
		if n == 0 {
			return time.Time{}, nil, bad
		}
		digits := s[pos : pos+n]
		pos += n
		switch tk.letter {
		case 'y', 'Y':
			year = sign * v
			if tk.count == 2 && n == 2 {
				year = 2000 + v // java.time's base year for yy
			}
		case 'M', 'L':
			month = v
		case 'd':
			day = v
		case 'D':
			yday = v
		case 'H', 'k':
			hour = v % 24
		case 'K', 'h':
			hour, hour12 = v%12, true
		case 'm':
			minute = v
		case 's':
			sec = v
		case 'S':
			frac := (digits + "000000000")[:9]
			nanos, _ = strconv.Atoi(frac)
		}
	}
	if pos != len(s) && !prefix {
		return time.Time{}, nil, bad
	}
	if hour12 && pm == 1 {
		hour += 12
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, nil, errors.New("field out of range")
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nanos, time.UTC)
	if yday > 0 {
		t = time.Date(year, 1, yday, hour, minute, sec, nanos, time.UTC)
	}
	return t, offset, nil
}

func numericField(t dfTok) bool {
	switch t.letter {
	case 'M', 'L':
		return t.count < 3
	case 'E', 'a', 'G', 'z', 'Z', 'X':
		return false
	}
	return true
}

func readDigits(s string, width int) (int, int) {
	n := 0
	limit := 9
	if width > 0 {
		limit = width
	}
	for n < len(s) && n < limit && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 || (width > 0 && n != width) {
		return 0, 0
	}
	v, _ := strconv.Atoi(s[:n])
	return v, n
}

// matchName matches a full or three-letter English name, ignoring case.
func matchName(s string, names []string) (int, int) {
	u := strings.ToLower(s)
	for i, name := range names {
		if strings.HasPrefix(u, strings.ToLower(name)) {
			return i, len(name)
		}
	}
	for i, name := range names {
		if strings.HasPrefix(u, strings.ToLower(name[:3])) {
			return i, 3
		}
	}
	return -1, 0
}

// parseOffset reads Z, UTC, GMT, or ±hh[[:]mm], returning seconds east.
func parseOffset(s string) (int, int, bool) {
	for _, z := range []string{"UTC", "GMT", "Z"} {
		if strings.HasPrefix(s, z) && !(len(s) > len(z) && (s[len(z)] == '+' || s[len(z)] == '-')) {
			return 0, len(z), true
		}
	}
	n := 0
	if strings.HasPrefix(s, "UTC") || strings.HasPrefix(s, "GMT") {
		n = 3
	}
	if n >= len(s) || (s[n] != '+' && s[n] != '-') {
		return 0, 0, false
	}
	sign := 1
	if s[n] == '-' {
		sign = -1
	}
	n++
	h, hn := readDigits(s[n:], 2)
	if hn == 0 {
		return 0, 0, false
	}
	n += hn
	m := 0
	if n < len(s) && s[n] == ':' {
		n++
	}
	if mv, mn := readDigits(s[n:], 2); mn == 2 {
		m, n = mv, n+2
	}
	return sign * (h*3600 + m*60), n, true
}

// formatCache compiles date formats that are not constants, remembering
// the last one.
type formatCache struct {
	konst *dateFormat
	last  atomic.Pointer[cachedFormat]
}

type cachedFormat struct {
	src string
	f   *dateFormat
	err error
}

func (fc *formatCache) get(p string) (*dateFormat, error) {
	if fc.konst != nil {
		return fc.konst, nil
	}
	if c := fc.last.Load(); c != nil && c.src == p {
		return c.f, c.err
	}
	f, err := compileDateFormat(p)
	fc.last.Store(&cachedFormat{src: p, f: f, err: err})
	return f, err
}

// newFormatCache prepares the format argument i; a constant format that
// does not compile is a compile error. A missing argument uses def.
func newFormatCache(args []*Compiled, i int, def string) (*formatCache, error) {
	fc := &formatCache{}
	if i >= len(args) {
		f, err := compileDateFormat(def)
		fc.konst = f
		return fc, err
	}
	if v, ok := constArg(args, i); ok && v != nil {
		f, err := compileDateFormat(v.(string))
		if err != nil {
			return nil, errAt(args[i].Src, "invalid date format %s: %v", showValue(v), err)
		}
		fc.konst = f
	}
	return fc, nil
}
