package expr

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// numberLit types a numeric literal as Flink does: digits are INT, or
// BIGINT, or DECIMAL(p, 0) when too large; a decimal point makes an exact
// DECIMAL(p, s) keeping the written scale; an exponent makes a DOUBLE.
func numberLit(n *parser.NumberLit) (*Compiled, error) {
	switch n.Kind {
	case parser.Integer:
		if v, err := strconv.ParseInt(n.Text, 10, 64); err == nil {
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return constant(n, intType(false), v), nil
			}
			return constant(n, bigintType(false), v), nil
		}
		return exactLit(n)
	case parser.Exact:
		return exactLit(n)
	}
	f, err := strconv.ParseFloat(n.Text, 64)
	if err != nil && !isRangeErr(err) {
		return nil, errAt(n, "malformed number %s", n.Text)
	}
	if math.IsInf(f, 0) {
		return nil, errAt(n, "numeric literal %s is out of the range of DOUBLE", n.Text)
	}
	return constant(n, doubleType(false), f), nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func exactLit(n *parser.NumberLit) (*Compiled, error) {
	d, err := decimal.NewFromString(n.Text)
	if err != nil {
		return nil, errAt(n, "malformed number %s", n.Text)
	}
	p, s := literalPrecision(n.Text)
	if p > MaxDecimalPrecision {
		return nil, hintAt(n, "write it with an exponent (1.5E40) to make it a DOUBLE",
			"numeric literal %s has %d digits; DECIMAL holds at most %d", n.Text, p, MaxDecimalPrecision)
	}
	return constant(n, decimalType(p, s, false), d), nil
}

// literalPrecision counts the significant digits and the scale of a
// number written without exponent: 0.908 is DECIMAL(3, 3), 1.50 is
// DECIMAL(3, 2), 007 is DECIMAL(1, 0).
func literalPrecision(text string) (p, s int) {
	text = strings.TrimLeft(text, "+-")
	intPart, frac, _ := strings.Cut(text, ".")
	intPart = strings.TrimLeft(intPart, "0")
	s = len(frac)
	p = len(intPart) + s
	if intPart == "" {
		p = max(len(strings.TrimLeft(frac, "0")), s)
	}
	return max(p, 1), s
}

// stringLit types 'abc' as CHAR(3) NOT NULL, as Flink does.
func stringLit(s *parser.StringLit) *Compiled {
	n := utf8.RuneCountInString(s.Value)
	t := types.Type{Kind: types.Char, Precision: n}
	if n == 0 {
		// Flink types '' as CHAR(0); our VARCHAR(0) avoids a zero-length
		// CHAR that the type printer cannot tell from an unsized one.
		t = types.Type{Kind: types.Varchar}
	}
	return constant(s, t, s.Value)
}

// typedLit compiles DATE '…', TIME '…' and TIMESTAMP '…'.
func typedLit(l *parser.TypedLit) (*Compiled, error) {
	switch l.Kind {
	case parser.DateLit:
		d, ok := parseDate(l.Value)
		if !ok {
			return nil, hintAt(l, "write DATE 'yyyy-MM-dd'", "malformed DATE literal '%s'", l.Value)
		}
		return constant(l, scalar(types.Date, false), d), nil
	case parser.TimestampLit:
		ts, prec, ok := parseTimestamp(l.Value)
		if !ok {
			return nil, hintAt(l, "write TIMESTAMP 'yyyy-MM-dd HH:mm:ss[.SSS]'", "malformed TIMESTAMP literal '%s'", l.Value)
		}
		return constant(l, timestampType(prec, false), ts), nil
	}
	t, prec, ok := parseTime(l.Value)
	if !ok {
		return nil, hintAt(l, "write TIME 'HH:mm:ss[.SSS]'", "malformed TIME literal '%s'", l.Value)
	}
	return constant(l, timeType(prec, false), t), nil
}

// intervalLit compiles INTERVAL 'v' unit [TO unit] to milliseconds or
// months.
func intervalLit(l *parser.IntervalLit) (*Compiled, error) {
	v, kind, err := IntervalValue(l)
	if err != nil {
		return nil, err
	}
	out := constant(l, bigintType(false), v)
	out.Interval = kind
	return out, nil
}

var unitMillis = map[parser.TimeUnit]int64{
	parser.Day: 86_400_000, parser.Hour: 3_600_000, parser.Minute: 60_000, parser.Second: 1000,
}

// IntervalValue evaluates an INTERVAL literal: milliseconds for a
// day-time interval (INTERVAL '10' SECOND is 10000), months for a
// year-month interval (INTERVAL '1-2' YEAR TO MONTH is 14). Window table
// functions and watermark delays read their sizes with it.
func IntervalValue(l *parser.IntervalLit) (int64, IntervalKind, error) {
	s := strings.TrimSpace(l.Value)
	neg := false
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		neg = s[0] == '-'
		s = strings.TrimSpace(s[1:])
	}
	to := l.To
	if to == parser.NoUnit {
		to = l.From
	}
	var v int64
	var kind IntervalKind
	var ok bool
	if l.From == parser.Year || l.From == parser.Month {
		kind = YearMonthInterval
		v, ok = yearMonth(s, l.From, to)
	} else {
		kind = DayTimeInterval
		v, ok = dayTime(s, l.From, to)
	}
	if !ok || to < l.From {
		return 0, 0, hintAt(l, intervalHint(l.From, to), "malformed interval '%s' for %s", l.Value, unitRange(l.From, l.To))
	}
	if neg {
		v = -v
	}
	return v, kind, nil
}

func unitRange(from, to parser.TimeUnit) string {
	if to == parser.NoUnit || to == from {
		return from.String()
	}
	return from.String() + " TO " + to.String()
}

func intervalHint(from, to parser.TimeUnit) string {
	formats := map[[2]parser.TimeUnit]string{
		{parser.Year, parser.Month}:    "'y-m'",
		{parser.Day, parser.Hour}:      "'d h'",
		{parser.Day, parser.Minute}:    "'d h:m'",
		{parser.Day, parser.Second}:    "'d h:m:s.fff'",
		{parser.Hour, parser.Minute}:   "'h:m'",
		{parser.Hour, parser.Second}:   "'h:m:s.fff'",
		{parser.Minute, parser.Second}: "'m:s.fff'",
		{parser.Second, parser.Second}: "'s' or 's.fff'",
		{parser.Year, parser.Year}:     "'n'",
		{parser.Month, parser.Month}:   "'n'",
		{parser.Day, parser.Day}:       "'n'",
		{parser.Hour, parser.Hour}:     "'n'",
		{parser.Minute, parser.Minute}: "'n'",
	}
	if f, ok := formats[[2]parser.TimeUnit{from, to}]; ok {
		return "write the value as " + f
	}
	return "the units must go from larger to smaller, e.g. DAY TO SECOND"
}

func yearMonth(s string, from, to parser.TimeUnit) (int64, bool) {
	if from == to {
		n, ok := parseDigits(s)
		if from == parser.Year {
			n *= 12
		}
		return n, ok
	}
	y, m, found := strings.Cut(s, "-")
	yv, ok1 := parseDigits(y)
	mv, ok2 := parseDigits(m)
	return yv*12 + mv, found && ok1 && ok2 && mv < 12
}

// dayTime parses the fields from..to of a day-time interval value: the day
// is separated by a space, hours, minutes and seconds by colons, and the
// seconds may have a fraction.
func dayTime(s string, from, to parser.TimeUnit) (int64, bool) {
	var fields []string
	rest := s
	if from == parser.Day && to != parser.Day {
		d, r, ok := strings.Cut(rest, " ")
		if !ok {
			return 0, false
		}
		fields = append(fields, d)
		rest = strings.TrimSpace(r)
	}
	if rest != "" && !(from == parser.Day && to == parser.Day) {
		fields = append(fields, strings.Split(rest, ":")...)
	} else if from == parser.Day && to == parser.Day {
		fields = []string{rest}
	}
	if len(fields) != int(to-from)+1 {
		return 0, false
	}
	var total int64
	for i, f := range fields {
		unit := from + parser.TimeUnit(i)
		if unit == parser.Second {
			ms, ok := secondsMillis(f)
			if !ok {
				return 0, false
			}
			total += ms
			continue
		}
		n, ok := parseDigits(f)
		if !ok || (i > 0 && ((unit == parser.Hour && n > 23) || (unit == parser.Minute && n > 59))) {
			return 0, false
		}
		total += n * unitMillis[unit]
	}
	return total, true
}

// secondsMillis parses "s" or "s.fff" into milliseconds; digits past the
// millisecond are dropped.
func secondsMillis(f string) (int64, bool) {
	sec, frac, hasFrac := strings.Cut(f, ".")
	n, ok := parseDigits(sec)
	if !ok {
		return 0, false
	}
	ms := n * 1000
	if hasFrac {
		if frac == "" || strings.Trim(frac, "0123456789") != "" {
			return 0, false
		}
		frac = (frac + "000")[:3]
		m, _ := strconv.ParseInt(frac, 10, 64)
		ms += m
	}
	return ms, true
}

// parseDigits parses an unsigned decimal that fits comfortably in an int64.
func parseDigits(s string) (int64, bool) {
	if s == "" || len(s) > 15 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
