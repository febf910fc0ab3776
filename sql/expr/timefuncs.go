package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

func init() {
	register("DATE_FORMAT", 2, 2, "TIMESTAMP or STRING, format", dateFormatFunc)
	register("TO_TIMESTAMP", 1, 2, "STRING[, format]", toTimestamp)
	register("TO_TIMESTAMP_LTZ", 1, 3, "NUMERIC, 0 or 3", toTimestampLTZ)
	register("TO_DATE", 1, 2, "STRING[, format]", toDate)
	register("FROM_UNIXTIME", 1, 2, "NUMERIC[, format]", fromUnixtime)
	register("UNIX_TIMESTAMP", 0, 2, "[STRING[, format]]", unixTimestamp)
	register("EXTRACT", 2, 2, "unit FROM time", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		return c.extract(call, keyword(call, 0), a[1:])
	})
	register("YEAR QUARTER MONTH WEEK DAYOFYEAR DAYOFMONTH DAYOFWEEK HOUR MINUTE SECOND", 1, 1, "DATE, TIME or TIMESTAMP",
		func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
			unit := map[string]string{"DAYOFYEAR": "DOY", "DAYOFMONTH": "DAY", "DAYOFWEEK": "DOW"}[call.Name]
			if unit == "" {
				unit = call.Name
			}
			return c.extract(call, unit, a)
		})
	register("TIMESTAMPADD", 3, 3, "unit, INT, time", timestampAdd)
	register("TIMESTAMPDIFF", 3, 3, "unit, time, time", timestampDiff)
	register("CURRENT_TIMESTAMP NOW CURRENT_ROW_TIMESTAMP LOCALTIMESTAMP CURRENT_DATE CURRENT_TIME LOCALTIME PROCTIME", 0, 0, "", clockFunc)
	register("CONVERT_TZ", 3, 3, "STRING, from zone, to zone", convertTZ)
}

// wallOf returns how to read the wall clock of a temporal argument: as
// carried for DATE and TIMESTAMP, in the session zone for TIMESTAMP_LTZ.
func (c *compiler) wallOf(t types.Type) func(time.Time) time.Time {
	if t.Kind == types.TimestampLTZ {
		loc := c.loc()
		return func(x time.Time) time.Time { return instantToWall(x, loc) }
	}
	return func(x time.Time) time.Time { return x.UTC() }
}

// timeArg converts a temporal or string argument to a time whose clock
// fields are its wall clock; a string that is not a timestamp gives ok
// false.
func (c *compiler) timeArg(t types.Type) func(v any) (time.Time, bool) {
	if t.IsString() {
		return func(v any) (time.Time, bool) {
			ts, _, ok := parseTimestamp(v.(string))
			return ts, ok
		}
	}
	if t.Kind == types.TimestampLTZ {
		// Keep the zone, so that patterns with z, Z and X print it.
		loc := c.loc()
		return func(v any) (time.Time, bool) { return v.(time.Time).In(loc), true }
	}
	return func(v any) (time.Time, bool) { return v.(time.Time).UTC(), true }
}

func dateFormatFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famTimeOrStr, famString); err != nil {
		return nil, err
	}
	fc, err := newFormatCache(a, 1, "")
	if err != nil {
		return nil, err
	}
	// Flink formats a TIMESTAMP with java.time's DateTimeFormatter, and a
	// string, read as 'yyyy-MM-dd HH:mm:ss' (a fraction is ignored), with
	// SimpleDateFormat: the two differ in S and u (see formatTime).
	arg, render := c.timeArg(a[0].Type), (*dateFormat).formatTime
	if a[0].Type.IsString() {
		arg, render = dateFormatString, func(f *dateFormat, t time.Time) any { return f.format(t) }
	}
	t := stringType(a[0].Type.IsString())
	if fc.konst != nil {
		// A constant format: no []any of arguments per row.
		overFirst := fnOverFirst(call, a, t, func([]any) func(x any) (any, error) {
			return func(x any) (any, error) {
				if tm, ok := arg(x); ok {
					return render(fc.konst, tm), nil
				}
				return nil, nil
			}
		})
		if overFirst != nil {
			return overFirst, nil
		}
	}
	return fn(call, a, t, func(v []any) (any, error) {
		t, ok := arg(v[0])
		if !ok {
			return nil, nil
		}
		f, err := fc.get(v[1].(string))
		if err != nil {
			return nil, fmt.Errorf("DATE_FORMAT: invalid format %s: %v", showValue(v[1]), err)
		}
		return render(f, t), nil
	}), nil
}

// sqlTimestampFormat is how DATE_FORMAT reads a string: Flink parses it
// with SimpleDateFormat('yyyy-MM-dd HH:mm:ss'), which stops after the
// seconds, so '… 08:05:03.120' formats with 0 milliseconds.
var sqlTimestampFormat = func() *dateFormat {
	f, err := compileDateFormat("yyyy-MM-dd HH:mm:ss")
	if err != nil {
		panic(err)
	}
	return f
}()

// dateFormatString reads DATE_FORMAT's string argument; text that is no
// timestamp gives ok false (NULL).
func dateFormatString(v any) (time.Time, bool) {
	t, _, err := sqlTimestampFormat.parsePrefix(v.(string))
	return t, err == nil
}

// parseWith parses s with an optional format argument; without one, s is
// read as a SQL timestamp.
func parseWith(fc *formatCache, v []any) (time.Time, *int, bool) {
	s := v[0].(string)
	if len(v) < 2 {
		t, _, ok := parseTimestamp(s)
		return t, nil, ok
	}
	f, err := fc.get(v[1].(string))
	if err != nil {
		return time.Time{}, nil, false
	}
	t, off, err := f.parse(s)
	return t, off, err == nil
}

// toTimestamp is TO_TIMESTAMP(s[, format]): TIMESTAMP(3), NULL when s does
// not match.
func toTimestamp(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	fc, err := newFormatCache(a, 1, "yyyy-MM-dd HH:mm:ss")
	if err != nil {
		return nil, err
	}
	return fn(call, a, timestampType(3, true), func(v []any) (any, error) {
		t, off, ok := parseWith(fc, v)
		if !ok {
			return nil, nil
		}
		if off != nil {
			t = t.Add(-time.Duration(*off) * time.Second)
		}
		return truncateTime(t, 3), nil
	}), nil
}

// toTimestampLTZ is TO_TIMESTAMP_LTZ(epoch, 0|3) for seconds or
// milliseconds, and TO_TIMESTAMP_LTZ(s[, format[, zone]]) for text.
func toTimestampLTZ(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if len(a) > 0 && a[0] != nil && a[0].Type.IsString() {
		if err := expect(call, a, famString); err != nil {
			return nil, err
		}
		fc, err := newFormatCache(a, 1, "yyyy-MM-dd HH:mm:ss.SSS")
		if err != nil {
			return nil, err
		}
		session := c.loc()
		return fn(call, a, ltzType(3, true), func(v []any) (any, error) {
			t, off, ok := parseWith(fc, v[:min(2, len(v))])
			if !ok {
				return nil, nil
			}
			if off != nil {
				return truncateTime(t.Add(-time.Duration(*off)*time.Second), 3), nil
			}
			loc := session
			if len(v) == 3 {
				if loc, ok = zoneByName(v[2].(string)); !ok {
					return nil, nil
				}
			}
			return truncateTime(wallToInstant(t, loc), 3), nil
		}), nil
	}
	if err := expect(call, a, famNumeric, famInteger); err != nil {
		return nil, err
	}
	if len(a) > 2 {
		return nil, errAt(call, "TO_TIMESTAMP_LTZ of a number takes 1 or 2 arguments")
	}
	prec := int64(3)
	if len(a) == 2 {
		v, ok := constArg(a, 1)
		if !ok || v == nil || (v.(int64) != 0 && v.(int64) != 3) {
			return nil, errAt(call.Args[1], "the precision of TO_TIMESTAMP_LTZ must be the constant 0 (epoch seconds) or 3 (epoch milliseconds)")
		}
		prec = v.(int64)
	}
	return fn(call, a[:1], ltzType(3, false), func(v []any) (any, error) {
		var ms float64
		switch x := v[0].(type) {
		case int64:
			if prec == 0 {
				return time.UnixMilli(x * 1000).UTC(), nil
			}
			return time.UnixMilli(x).UTC(), nil
		case decimal.Decimal:
			ms = x.InexactFloat64()
		case float64:
			ms = x
		}
		if prec == 0 {
			ms *= 1000
		}
		if math.IsNaN(ms) || math.IsInf(ms, 0) {
			return nil, nil
		}
		return time.UnixMilli(int64(ms)).UTC(), nil
	}), nil
}

// toDate is TO_DATE(s[, format]), NULL when s does not match.
func toDate(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	fc, err := newFormatCache(a, 1, "yyyy-MM-dd")
	if err != nil {
		return nil, err
	}
	return fn(call, a, types.Type{Kind: types.Date, Nullable: true}, func(v []any) (any, error) {
		if len(v) == 1 {
			d, ok := parseDate(v[0].(string))
			if !ok {
				return nil, nil
			}
			return d, nil
		}
		t, _, ok := parseWith(fc, v)
		if !ok {
			return nil, nil
		}
		return startOfDay(t), nil
	}), nil
}

// fromUnixtime is FROM_UNIXTIME(seconds[, format]) in the session zone.
func fromUnixtime(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famNumeric, famString); err != nil {
		return nil, err
	}
	fc, err := newFormatCache(a, 1, "yyyy-MM-dd HH:mm:ss")
	if err != nil {
		return nil, err
	}
	loc := c.loc()
	return fn(call, a, stringType(false), func(v []any) (any, error) {
		var sec int64
		switch x := v[0].(type) {
		case int64:
			sec = x
		default:
			sec = int64(toFloat(x))
		}
		f, err := fc.get(fmtArg(v, 1))
		if err != nil {
			return nil, fmt.Errorf("FROM_UNIXTIME: invalid format: %v", err)
		}
		return f.format(time.Unix(sec, 0).In(loc)), nil
	}), nil
}

func fmtArg(v []any, i int) string {
	if i < len(v) {
		return v[i].(string)
	}
	return ""
}

// unixTimestamp is UNIX_TIMESTAMP() (now, in seconds) or
// UNIX_TIMESTAMP(s[, format]) read in the session zone, or in the zone the
// text gives. As in Flink (SimpleDateFormat.parse), text after the
// format's last field is ignored, and text that does not match gives
// Long.MIN_VALUE.
func unixTimestamp(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if len(a) == 0 {
		now := c.clock()
		return &Compiled{Type: bigintType(false), Eval: func([]any) (any, error) { return now().Unix(), nil }}, nil
	}
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	fc, err := newFormatCache(a, 1, "yyyy-MM-dd HH:mm:ss")
	if err != nil {
		return nil, err
	}
	loc := c.loc()
	return fn(call, a, bigintType(false), func(v []any) (any, error) {
		pattern := ""
		if len(v) == 2 {
			pattern = v[1].(string)
		}
		f, err := fc.get(pattern)
		if err != nil {
			return int64(math.MinInt64), nil
		}
		t, off, err := f.parsePrefix(v[0].(string))
		if err != nil {
			return int64(math.MinInt64), nil
		}
		return instantOf(t, off, loc).Unix(), nil
	}), nil
}

func instantOf(wall time.Time, off *int, loc *time.Location) time.Time {
	if off != nil {
		return wall.Add(-time.Duration(*off) * time.Second)
	}
	return wallToInstant(wall, loc)
}

// extract is EXTRACT(unit FROM t) and YEAR(t), HOUR(t), …: BIGINT.
func (c *compiler) extract(call *parser.FuncCall, unit string, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famClock); err != nil {
		return nil, err
	}
	get, ok := extractors[unit]
	if !ok {
		return nil, errAt(call, "cannot extract %s; units are YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, NANOSECOND, DOW, DOY, ISODOW, ISOYEAR, EPOCH, DECADE, CENTURY, MILLENNIUM", unit)
	}
	if a[0].Type.Kind == types.Date && (unit == "HOUR" || unit == "MINUTE" || unit == "SECOND") {
		return nil, errAt(call, "cannot extract %s from a DATE", unit)
	}
	if a[0].Type.Kind == types.Time && !timeOfDayUnits[unit] {
		return nil, errAt(call, "cannot extract %s from a TIME; units are HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, NANOSECOND", unit)
	}
	wall := c.wallOf(a[0].Type)
	return fn(call, a, bigintType(false), func(v []any) (any, error) {
		return get(wall(v[0].(time.Time))), nil
	}), nil
}

// timeOfDayUnits are the units EXTRACT reads from a TIME.
var timeOfDayUnits = map[string]bool{"HOUR": true, "MINUTE": true, "SECOND": true, "MILLISECOND": true,
	"MICROSECOND": true, "NANOSECOND": true}

var extractors = map[string]func(time.Time) int64{
	"YEAR":        func(t time.Time) int64 { return int64(t.Year()) },
	"QUARTER":     func(t time.Time) int64 { return int64(t.Month()-1)/3 + 1 },
	"MONTH":       func(t time.Time) int64 { return int64(t.Month()) },
	"WEEK":        func(t time.Time) int64 { _, w := t.ISOWeek(); return int64(w) },
	"DAY":         func(t time.Time) int64 { return int64(t.Day()) },
	"HOUR":        func(t time.Time) int64 { return int64(t.Hour()) },
	"MINUTE":      func(t time.Time) int64 { return int64(t.Minute()) },
	"SECOND":      func(t time.Time) int64 { return int64(t.Second()) },
	"MILLISECOND": func(t time.Time) int64 { return int64(t.Second())*1000 + int64(t.Nanosecond()/1e6) },
	"MICROSECOND": func(t time.Time) int64 { return int64(t.Second())*1e6 + int64(t.Nanosecond()/1e3) },
	"NANOSECOND":  func(t time.Time) int64 { return int64(t.Second())*1e9 + int64(t.Nanosecond()) },
	"DOW":         func(t time.Time) int64 { return int64(t.Weekday()) + 1 },
	"ISODOW":      func(t time.Time) int64 { return int64((t.Weekday()+6)%7) + 1 },
	"DOY":         func(t time.Time) int64 { return int64(t.YearDay()) },
	"ISOYEAR":     func(t time.Time) int64 { y, _ := t.ISOWeek(); return int64(y) },
	"EPOCH":       func(t time.Time) int64 { return t.Unix() },
	"DECADE":      func(t time.Time) int64 { return floorDiv(int64(t.Year()), 10) },
	"CENTURY":     func(t time.Time) int64 { return centuries(int64(t.Year()), 100) },
	"MILLENNIUM":  func(t time.Time) int64 { return centuries(int64(t.Year()), 1000) },
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func centuries(y, n int64) int64 {
	if y > 0 {
		return (y + n - 1) / n
	}
	return -((-y + n) / n)
}

// floorYears is the first year of the decade, century or millennium of
// year y (ceil: of the next one), as Calcite's DateTimeUtils.julianDateFloor,
// which Flink's FLOOR/CEIL(t TO unit) use: centuries and millennia start
// in a year ending in 1 (2001), decades in one ending in 0; a ceiling
// always moves to the next one.
func floorYears(y int64, unit string, ceil bool) int64 {
	n := map[string]int64{"DECADE": 10, "CENTURY": 100, "MILLENNIUM": 1000}[unit]
	if unit == "DECADE" {
		if ceil {
			return n * (1 + y/n)
		}
		return n * (y / n)
	}
	if ceil {
		return n*((y+n-1)/n) + 1
	}
	return n*((y+n-1)/n) - n + 1
}

// truncUnit floors a wall clock to a unit.
func truncUnit(t time.Time, unit string) (time.Time, bool) {
	y, m, d := t.Date()
	switch unit {
	case "MILLENNIUM", "CENTURY", "DECADE":
		return time.Date(int(floorYears(int64(y), unit, false)), 1, 1, 0, 0, 0, 0, time.UTC), true
	case "YEAR":
		return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), true
	case "QUARTER":
		return time.Date(y, (m-1)/3*3+1, 1, 0, 0, 0, 0, time.UTC), true
	case "MONTH":
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC), true
	case "WEEK":
		return time.Date(y, m, d-int(t.Weekday()), 0, 0, 0, 0, time.UTC), true
	case "DAY":
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), true
	case "HOUR":
		return t.Truncate(time.Hour), true
	case "MINUTE":
		return t.Truncate(time.Minute), true
	case "SECOND":
		return t.Truncate(time.Second), true
	case "MILLISECOND":
		return t.Truncate(time.Millisecond), true
	}
	return time.Time{}, false
}

// addUnit adds n units to a wall clock.
func addUnit(t time.Time, unit string, n int64) (time.Time, bool) {
	switch unit {
	case "YEAR":
		return addMonths(t, 12*n), true
	case "QUARTER":
		return addMonths(t, 3*n), true
	case "MONTH":
		return addMonths(t, n), true
	case "WEEK":
		return t.AddDate(0, 0, int(7*n)), true
	case "DAY":
		return t.AddDate(0, 0, int(n)), true
	}
	if d, ok := unitDuration[unit]; ok {
		return t.Add(time.Duration(n) * d), true
	}
	return time.Time{}, false
}

var unitDuration = map[string]time.Duration{
	"HOUR": time.Hour, "MINUTE": time.Minute, "SECOND": time.Second, "MILLISECOND": time.Millisecond,
	"MICROSECOND": time.Microsecond, "NANOSECOND": time.Nanosecond,
}

// timeFloorCeil is FLOOR(t TO unit) and CEIL(t TO unit).
func timeFloorCeil(c *compiler, call *parser.FuncCall, a []*Compiled, up bool) (*Compiled, error) {
	unit := keyword(call, 1)
	x := a[:1]
	if err := expect(call, x, famClock); err != nil {
		return nil, err
	}
	if _, ok := truncUnit(time.Time{}, unit); !ok {
		return nil, errAt(call, "%s cannot round to %q; units are MILLENNIUM, CENTURY, DECADE, YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND", call.Name, unit)
	}
	isTime := a[0].Type.Kind == types.Time
	if isTime && !timeOfDayUnits[unit] {
		return nil, errAt(call, "%s cannot round a TIME to %s; units are HOUR, MINUTE, SECOND, MILLISECOND", call.Name, unit)
	}
	ltz := a[0].Type.Kind == types.TimestampLTZ
	loc := c.loc()
	return fn(call, x, plain(a[0].Type), func(v []any) (any, error) {
		t := v[0].(time.Time).UTC()
		if ltz {
			t = instantToWall(t, loc)
		}
		f, _ := truncUnit(t, unit)
		switch {
		case up && (unit == "DECADE" || unit == "CENTURY" || unit == "MILLENNIUM"):
			f = time.Date(int(floorYears(int64(t.Year()), unit, true)), 1, 1, 0, 0, 0, 0, time.UTC)
		case up && !f.Equal(t):
			f, _ = addUnit(f, unit, 1)
		}
		if ltz {
			f = wallToInstant(f, loc)
		}
		if isTime {
			f = types.TimeOfDay(f) // CEIL(TIME '23:59:31' TO MINUTE) wraps to 00:00
		}
		return f, nil
	}), nil
}

// timestampAdd is TIMESTAMPADD(unit, n, t), typed like t.
func timestampAdd(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	unit := keyword(call, 0)
	if unit == "" {
		return nil, errAt(call, "TIMESTAMPADD takes a unit first, e.g. TIMESTAMPADD(HOUR, 1, ts)")
	}
	x := a[1:]
	if err := expect(call, x, famInteger, famTemporal); err != nil {
		return nil, err
	}
	if _, ok := addUnit(time.Time{}, unit, 0); !ok {
		return nil, errAt(call, "TIMESTAMPADD cannot add %s", unit)
	}
	ltz := x[1].Type.Kind == types.TimestampLTZ
	isDate := x[1].Type.Kind == types.Date
	loc := c.loc()
	return fn(call, x, plain(x[1].Type), func(v []any) (any, error) {
		t := v[1].(time.Time).UTC()
		if ltz {
			t = instantToWall(t, loc)
		}
		r, _ := addUnit(t, unit, v[0].(int64))
		if ltz {
			r = wallToInstant(r, loc)
		}
		if isDate {
			r = startOfDay(r)
		}
		return r, nil
	}), nil
}

// timestampDiff is TIMESTAMPDIFF(unit, t1, t2): whole units from t1 to t2,
// truncated toward zero, as INT.
func timestampDiff(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	unit := keyword(call, 0)
	x := a[1:]
	if err := expect(call, x, famTemporal); err != nil {
		return nil, err
	}
	months := map[string]int64{"YEAR": 12, "QUARTER": 3, "MONTH": 1}[unit]
	per := map[string]time.Duration{"WEEK": 7 * 24 * time.Hour, "DAY": 24 * time.Hour}[unit]
	if per == 0 {
		per = unitDuration[unit]
	}
	if months == 0 && per == 0 {
		return nil, errAt(call, "TIMESTAMPDIFF cannot count %q; units are YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND", unit)
	}
	w1, w2 := c.wallOf(x[0].Type), c.wallOf(x[1].Type)
	return fn(call, x, intType(false), func(v []any) (any, error) {
		t1, t2 := w1(v[0].(time.Time)), w2(v[1].(time.Time))
		var n int64
		if months > 0 {
			n = monthsBetween(t1, t2) / months
		} else {
			n = int64(t2.Sub(t1) / per)
		}
		return wrapInt(n, types.Int), nil
	}), nil
}

// monthsBetween counts whole months from a to b.
func monthsBetween(a, b time.Time) int64 {
	ya, ma, _ := a.Date()
	yb, mb, _ := b.Date()
	n := int64(yb-ya)*12 + int64(mb-ma)
	rest := func(t time.Time) time.Duration {
		return time.Duration(t.Day())*24*time.Hour + time.Duration(t.Hour())*time.Hour +
			time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond())
	}
	if n > 0 && rest(b) < rest(a) {
		n--
	} else if n < 0 && rest(b) > rest(a) {
		n++
	}
	return n
}

// clock returns the scope's clock.
func (c *compiler) clock() func() time.Time {
	if c.s.Now != nil {
		return c.s.Now
	}
	return time.Now
}

// clockFunc is CURRENT_TIMESTAMP, NOW(), CURRENT_ROW_TIMESTAMP() and
// PROCTIME() (TIMESTAMP_LTZ(3)), LOCALTIMESTAMP (TIMESTAMP(3)) and
// CURRENT_DATE, CURRENT_TIME and LOCALTIME (TIME(0), the wall clock in
// the session zone, as Flink), read from the scope's clock on every
// evaluation. A projection's column that is one of the first four as it
// is, on the default clock, is filled from the subtask's processing time
// instead (Compiled.IsCurrentTimestamp).
func clockFunc(c *compiler, call *parser.FuncCall, _ []*Compiled) (*Compiled, error) {
	now, loc := c.clock(), c.loc()
	out := &Compiled{}
	switch call.Name {
	case "LOCALTIMESTAMP":
		out.Type = timestampType(3, false)
		out.Eval = func([]any) (any, error) { return truncateTime(instantToWall(now(), loc), 3), nil }
	case "CURRENT_DATE":
		out.Type = scalar(types.Date, false)
		out.Eval = func([]any) (any, error) { return startOfDay(instantToWall(now(), loc)), nil }
	case "CURRENT_TIME", "LOCALTIME":
		out.Type = timeType(0, false)
		out.Eval = func([]any) (any, error) { return truncateTime(types.TimeOfDay(instantToWall(now(), loc)), 0), nil }
	default:
		out.Type = ltzType(3, false)
		if call.Name == "PROCTIME" {
			out.Type.TimeAttr = "proctime"
		}
		out.Eval = func([]any) (any, error) { return truncateTime(now().UTC(), 3), nil }
		if c.s.Now == nil {
			out.now = &nowMark{self: out}
		}
	}
	return out, nil
}

// convertTZ is CONVERT_TZ(s, from, to): the wall clock s in zone from,
// shown in zone to.
func convertTZ(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	return fn(call, a, stringType(true), func(v []any) (any, error) {
		t, _, ok := parseTimestamp(v[0].(string))
		from, ok1 := zoneByName(v[1].(string))
		to, ok2 := zoneByName(v[2].(string))
		if !ok || !ok1 || !ok2 {
			return nil, nil
		}
		return types.FormatTimestamp(wallToInstant(t, from).In(to), 0), nil
	}), nil
}

// ZoneByName finds a zone as Flink's table.local-time-zone names it: an
// IANA name (Europe/Berlin), UTC, or a custom ID (GMT+08:00, UTC-5).
func ZoneByName(name string) (*time.Location, bool) { return zoneByName(name) }

// zoneByName finds a zone by IANA name (Europe/Berlin), UTC, or a custom
// ID (GMT+08:00, UTC-5).
func zoneByName(name string) (*time.Location, bool) {
	if name == "UTC" || name == "GMT" || name == "Z" {
		return time.UTC, true
	}
	for _, p := range []string{"GMT", "UTC"} {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			off, n, ok := parseOffset(name)
			if ok && n == len(name) {
				return time.FixedZone(name, off), true
			}
			if h, err := strconv.Atoi(name[len(p):]); err == nil && h >= -18 && h <= 18 {
				return time.FixedZone(name, h*3600), true
			}
		}
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, false
	}
	return loc, true
}
