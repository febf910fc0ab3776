package expr

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// caster converts one non-NULL value; a nil result with a nil error is
// NULL (a DECIMAL that overflows its precision).
type caster func(v any) (any, error)

// errCast reports a cast that is not allowed between two types.
var errCast = errors.New("cast not supported")

func (c *compiler) cast(x *parser.Cast) (*Compiled, error) {
	in, err := c.expr(x.X)
	if err != nil {
		return nil, err
	}
	if in.Interval != NotInterval {
		return nil, errAt(x, "cannot cast an interval to %s", typeName(x.Type))
	}
	to := x.Type
	fn, err := castFn(in.Type, to, c.loc())
	if err != nil {
		return nil, hintAt(x, castHint(in.Type, to), "cannot cast %s to %s", typeName(in.Type), typeName(to))
	}
	to.Nullable = in.Type.Nullable || x.Try || castMayNull(in.Type, to)
	to.TimeAttr = ""
	pos, try := x.Pos, x.Try
	inner := in.Eval
	return &Compiled{Type: to, Const: in.Const, Eval: func(row []any) (any, error) {
		v, err := inner(row)
		if err != nil || v == nil {
			return nil, err
		}
		r, err := fn(v)
		if err != nil {
			if try {
				return nil, nil
			}
			return nil, &Error{Pos: pos, Class: ErrEval, Msg: fmt.Sprintf("cannot cast %s to %s: %v", showValue(v), typeName(to), err),
				Hint: "use TRY_CAST to get NULL for values that do not convert"}
		}
		return r, nil
	}}, nil
}

func castHint(from, to types.Type) string {
	switch {
	case from.IsNumeric() && to.Kind == types.Timestamp:
		return "use TO_TIMESTAMP_LTZ(n, 0) for epoch seconds or TO_TIMESTAMP_LTZ(n, 3) for epoch milliseconds"
	case from.Kind == types.Timestamp && to.IsNumeric():
		return "use UNIX_TIMESTAMP(CAST(ts AS STRING)) for epoch seconds"
	}
	return ""
}

// castMayNull reports casts that give NULL for some non-NULL inputs:
// numbers to a DECIMAL too small for them.
func castMayNull(from, to types.Type) bool {
	if to.Kind != types.Decimal || !from.IsNumeric() {
		return false
	}
	if from.Kind == types.Decimal || from.IsInteger() {
		p, s := asDecimal(from)
		return p-s > to.Precision-to.Scale
	}
	return true
}

// CastTo converts x to type to with CAST's rules: the planner uses it to
// fit a query's columns to a sink's declared types (DECIMAL(22, 3) into
// DECIMAL(23, 3), INT into BIGINT). It returns x itself when no conversion
// is needed.
func CastTo(x *Compiled, to types.Type, s *Scope) (*Compiled, error) {
	if s == nil {
		s = &Scope{}
	}
	c := &compiler{s: s}
	pos := parser.Pos{}
	if x.Src != nil {
		pos = x.Src.Position()
	}
	return c.coerce(x, to, pos)
}

// coerce converts x implicitly to type to (keeping x's nullability),
// skipping the work when every value of x already is a value of to.
func (c *compiler) coerce(x *Compiled, to types.Type, pos parser.Pos) (*Compiled, error) {
	to = withNull(to, x.Type.Nullable || castMayNull(x.Type, to))
	if x.Interval != NotInterval {
		if to.Kind == types.BigInt {
			return x, nil
		}
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("cannot convert an interval to %s", typeName(to)), Class: ErrInvalid}
	}
	if noopCast(x.Type, to) {
		if sameType(x.Type, to) && x.Type.TimeAttr == "" {
			return x, nil
		}
		out := &Compiled{Type: to, Eval: x.Eval, Src: x.Src, Const: x.Const}
		if i, ok := x.Column(); ok {
			out.column = &columnRef{self: out, index: i}
		}
		return out, nil
	}
	fn, err := castFn(x.Type, to, c.loc())
	if err != nil {
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("cannot convert %s to %s", typeName(x.Type), typeName(to)), Class: ErrInvalid}
	}
	inner := x.Eval
	out := &Compiled{Type: to, Src: x.Src, Const: x.Const, Eval: func(row []any) (any, error) {
		v, err := inner(row)
		if err != nil || v == nil {
			return nil, err
		}
		r, err := fn(v)
		if err != nil {
			return nil, evalErr(pos, "cannot convert %s to %s: %v", showValue(v), typeName(to), err)
		}
		return r, nil
	}}
	// A constant converted once, not per row (q14's 0.908 * price >
	// 1000000 made a DECIMAL of 1000000 for every bid). One that fails to
	// convert keeps failing where it is evaluated.
	if out.Const {
		if v, err := out.Eval(nil); err == nil {
			return constant(x.Src, to, v), nil
		}
	}
	return out, nil
}

// noopCast reports conversions that leave every value unchanged.
func noopCast(from, to types.Type) bool {
	switch {
	case from.Kind == types.Null:
		return true
	case from.IsInteger() && to.IsInteger():
		return to.Kind >= from.Kind
	case from.Kind == types.Decimal && to.Kind == types.Decimal:
		// A wider scale is a conversion: a DECIMAL(p, s) value has exactly
		// s fractional digits (types.FitDecimal), which formats write.
		return to.Scale == from.Scale && to.Precision >= from.Precision
	case from.Kind == types.Double && to.Kind == types.Double, from.Kind == types.Float && to.IsNumeric() && isApprox(to):
		return true
	case from.IsString() && to.IsString():
		return to.Kind != types.Char && strLen(to) >= strLen(from)
	case from.Kind == types.Timestamp && to.Kind == types.Timestamp,
		from.Kind == types.TimestampLTZ && to.Kind == types.TimestampLTZ:
		return to.Precision >= from.Precision
	case from.Kind == types.Date && to.Kind == types.Timestamp:
		return true
	case from.Kind == types.Time && to.Kind == types.Time:
		return to.Precision >= min(from.Precision, types.MaxTimePrecision)
	case from.Kind == to.Kind && (from.Kind == types.Boolean || from.Kind == types.Date || from.Kind == types.Bytes):
		return from.Kind != types.Bytes || to.Precision <= 0 || to.Precision >= from.Precision && from.Precision > 0
	case from.Kind == to.Kind && (from.Kind == types.Array || from.Kind == types.Multiset):
		return noopCast(*from.Elem, *to.Elem)
	case from.Kind == to.Kind && from.Kind == types.Map:
		return noopCast(*from.Key, *to.Key) && noopCast(*from.Elem, *to.Elem)
	case from.Kind == to.Kind && from.Kind == types.Row:
		if len(from.Fields) != len(to.Fields) {
			return false
		}
		for i := range from.Fields {
			if !noopCast(from.Fields[i].Type, to.Fields[i].Type) {
				return false
			}
		}
		return true
	}
	return false
}

// castFn returns the conversion of values of type from to type to, or
// errCast when CAST does not allow it.
func castFn(from, to types.Type, loc *time.Location) (caster, error) {
	if from.Kind == types.Null {
		return func(v any) (any, error) { return v, nil }, nil
	}
	switch {
	case to.Kind == types.Boolean:
		return castToBool(from)
	case to.IsInteger():
		return castToInt(from, to.Kind)
	case isApprox(to):
		return castToFloat(from, to.Kind == types.Float)
	case to.Kind == types.Decimal:
		return castToDecimal(from, to.Precision, to.Scale)
	case to.IsString():
		return castToString(from, to, loc), nil
	case to.Kind == types.Bytes:
		return castToBytes(from, to)
	case to.Kind == types.Date:
		return castToDate(from, loc)
	case to.Kind == types.Time:
		return castToTime(from, to.Precision, loc)
	case isTimestamp(to):
		return castToTimestamp(from, to, loc)
	case to.Kind == types.Array && from.Kind == types.Array:
		return castArray(*from.Elem, *to.Elem, loc)
	case to.Kind == types.Map && from.Kind == types.Map:
		return castMap(from, to, loc)
	case to.Kind == types.Multiset && from.Kind == types.Multiset:
		return castMultiset(*from.Elem, *to.Elem, loc)
	case to.Kind == types.Row && from.Kind == types.Row && len(from.Fields) == len(to.Fields):
		return castRow(from, to, loc)
	}
	return nil, errCast
}

func castToBool(from types.Type) (caster, error) {
	switch {
	case from.Kind == types.Boolean:
		return func(v any) (any, error) { return v, nil }, nil
	case from.IsNumeric():
		return func(v any) (any, error) {
			if d, ok := v.(decimal.Decimal); ok {
				return !d.IsZero(), nil
			}
			return toFloat(v) != 0, nil
		}, nil
	case from.IsString():
		return func(v any) (any, error) { return parseBool(v.(string)) }, nil
	}
	return nil, errCast
}

var (
	trueStrings  = []string{"t", "true", "y", "yes", "1"}
	falseStrings = []string{"f", "false", "n", "no", "0"}
)

// parseBool reads Flink's boolean spellings, ignoring case.
func parseBool(s string) (bool, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	for _, t := range trueStrings {
		if l == t {
			return true, nil
		}
	}
	for _, f := range falseStrings {
		if l == f {
			return false, nil
		}
	}
	return false, errors.New("not a BOOLEAN (true/false, t/f, yes/no, y/n, 1/0)")
}

func castToInt(from types.Type, k types.Kind) (caster, error) {
	switch {
	case from.IsInteger():
		return func(v any) (any, error) { return wrapInt(v.(int64), k), nil }, nil
	case isApprox(from):
		return func(v any) (any, error) { return floatToInt(v.(float64), k), nil }, nil
	case from.Kind == types.Decimal:
		return func(v any) (any, error) { return decimalToInt(v.(decimal.Decimal), k), nil }, nil
	case from.Kind == types.Boolean:
		return func(v any) (any, error) { return boolInt(v.(bool)), nil }, nil
	case from.IsString():
		return func(v any) (any, error) { return parseInteger(v.(string), k) }, nil
	case from.Kind == types.TimestampLTZ:
		return func(v any) (any, error) { return wrapInt(v.(time.Time).Unix(), k), nil }, nil
	}
	return nil, errCast
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// parseInteger reads an integer as Flink's BinaryStringDataUtil.toLong:
// an optional sign and digits, optionally followed by a fraction that is
// dropped ('1.9' is 1); surrounding whitespace is ignored; a value beyond
// the kind's range is an error.
func parseInteger(s string, k types.Kind) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty string")
	}
	body := s
	if body[0] == '+' || body[0] == '-' {
		body = body[1:]
	}
	ip, frac, _ := strings.Cut(body, ".")
	if ip == "" || !allDigits(ip) || (frac != "" && !allDigits(frac)) {
		return 0, errors.New("invalid character found")
	}
	sign := ""
	if s[0] == '-' {
		sign = "-"
	}
	n, err := strconv.ParseInt(sign+ip, 10, 64)
	lo, hi := types.IntRange(k)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("out of the range of %s", k)
	}
	return n, nil
}

func castToFloat(from types.Type, single bool) (caster, error) {
	round := func(f float64) float64 {
		if single {
			return float64(float32(f))
		}
		return f
	}
	switch {
	case from.IsNumeric():
		return func(v any) (any, error) { return round(toFloat(v)), nil }, nil
	case from.Kind == types.Boolean:
		return func(v any) (any, error) { return float64(boolInt(v.(bool))), nil }, nil
	case from.IsString():
		return func(v any) (any, error) {
			f, err := parseFloat(v.(string))
			return round(f), err
		}, nil
	case from.Kind == types.TimestampLTZ:
		return func(v any) (any, error) { return round(float64(v.(time.Time).UnixMilli()) / 1000), nil }, nil
	}
	return nil, errCast
}

// parseFloat reads a number as Java's Double.parseDouble: surrounding
// whitespace, NaN, Infinity and a d/f suffix are allowed.
func parseFloat(s string) (float64, error) {
	s = strings.TrimSpace(s)
	t := strings.TrimRight(s, "dDfF")
	if t != s && strings.HasSuffix(strings.ToLower(s), "infinity") {
		t = s
	}
	switch t {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if strings.ContainsAny(t, "_xXpPiInN") {
		return 0, errors.New("not a number")
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !isRangeErr(err) {
		return 0, errors.New("not a number")
	}
	return f, nil
}

func castToDecimal(from types.Type, p, s int) (caster, error) {
	fit := func(d decimal.Decimal) (any, error) {
		r, ok := types.FitDecimal(d, p, s)
		if !ok {
			return nil, nil // Flink gives NULL for a number that overflows
		}
		return r, nil
	}
	switch {
	case from.IsInteger() || from.Kind == types.Decimal:
		return func(v any) (any, error) { return fit(toDecimal(v)) }, nil
	case isApprox(from):
		return func(v any) (any, error) {
			f := v.(float64)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, errors.New("not a finite number")
			}
			return fit(decimal.NewFromFloat(f))
		}, nil
	case from.Kind == types.Boolean:
		return func(v any) (any, error) { return fit(decimal.NewFromInt(boolInt(v.(bool)))) }, nil
	case from.IsString():
		return func(v any) (any, error) {
			t := strings.TrimSpace(v.(string))
			if t == "" || strings.ContainsAny(t, "_xX") {
				return nil, errors.New("not a number")
			}
			d, err := decimal.NewFromString(t)
			if err != nil {
				return nil, errors.New("not a number")
			}
			r, ok := types.FitDecimal(d, p, s)
			if !ok {
				return nil, fmt.Errorf("overflows DECIMAL(%d, %d)", p, s)
			}
			return r, nil
		}, nil
	}
	return nil, errCast
}

func castToString(from, to types.Type, loc *time.Location) caster {
	n := strLen(to)
	pad := to.Kind == types.Char && to.Precision > 0
	return func(v any) (any, error) {
		var s string
		if b, ok := v.([]byte); ok {
			s = string(b)
		} else {
			s = ValueString(v, from, loc)
		}
		return fitString(s, n, pad), nil
	}
}

// fitString truncates s to n characters and, for CHAR(n), pads it with
// spaces, as Flink's CAST since 1.15.
func fitString(s string, n int, pad bool) string {
	if n >= maxVarchar {
		return s
	}
	l := utf8.RuneCountInString(s)
	if l > n {
		return string([]rune(s)[:n])
	}
	if pad && l < n {
		return s + strings.Repeat(" ", n-l)
	}
	return s
}

func castToBytes(from, to types.Type) (caster, error) {
	n := to.Precision
	cut := func(b []byte) []byte {
		if n > 0 && len(b) > n {
			return b[:n]
		}
		return b
	}
	switch {
	case from.Kind == types.Bytes:
		return func(v any) (any, error) { return cut(v.([]byte)), nil }, nil
	case from.IsString():
		return func(v any) (any, error) { return cut([]byte(v.(string))), nil }, nil
	}
	return nil, errCast
}

func castToDate(from types.Type, loc *time.Location) (caster, error) {
	switch from.Kind {
	case types.Date:
		return func(v any) (any, error) { return v, nil }, nil
	case types.Timestamp:
		return func(v any) (any, error) { return startOfDay(v.(time.Time).UTC()), nil }, nil
	case types.TimestampLTZ:
		return func(v any) (any, error) { return startOfDay(instantToWall(v.(time.Time), loc)), nil }, nil
	}
	if from.IsString() {
		return func(v any) (any, error) {
			d, ok := parseDate(v.(string))
			if !ok {
				return nil, errors.New("not a DATE (yyyy-MM-dd)")
			}
			return d, nil
		}, nil
	}
	return nil, errCast
}

// castToTime converts to TIME(p): a timestamp's time of day (in the
// session zone for TIMESTAMP_LTZ), a string in H:m[:s[.f]] form, another
// TIME truncated to p digits.
func castToTime(from types.Type, p int, loc *time.Location) (caster, error) {
	clock := func(t time.Time) any { return truncateTime(types.TimeOfDay(t), p) }
	switch {
	case from.Kind == types.Time, from.Kind == types.Timestamp:
		return func(v any) (any, error) { return clock(v.(time.Time).UTC()), nil }, nil
	case from.Kind == types.TimestampLTZ:
		return func(v any) (any, error) { return clock(instantToWall(v.(time.Time), loc)), nil }, nil
	case from.IsString():
		return func(v any) (any, error) {
			t, _, ok := parseTime(v.(string))
			if !ok {
				return nil, errors.New("not a TIME (HH:mm:ss[.SSS])")
			}
			return truncateTime(t, p), nil
		}, nil
	}
	return nil, errCast
}

func castToTimestamp(from, to types.Type, loc *time.Location) (caster, error) {
	p := to.Precision
	ltz := to.Kind == types.TimestampLTZ
	// wall converts a wall clock (in UTC) to the target's representation.
	wall := func(t time.Time) any {
		if ltz {
			return truncateTime(wallToInstant(t, loc), p)
		}
		return truncateTime(t, p)
	}
	switch {
	case from.Kind == types.Date, from.Kind == types.Timestamp, from.Kind == types.Time:
		// A TIME is carried on 1970-01-01, the day Flink puts it on.
		return func(v any) (any, error) { return wall(v.(time.Time).UTC()), nil }, nil
	case from.Kind == types.TimestampLTZ:
		return func(v any) (any, error) {
			t := v.(time.Time)
			if ltz {
				return truncateTime(t.UTC(), p), nil
			}
			return truncateTime(instantToWall(t, loc), p), nil
		}, nil
	case from.IsString():
		return func(v any) (any, error) {
			t, _, ok := parseTimestamp(v.(string))
			if !ok {
				return nil, errors.New("not a TIMESTAMP (yyyy-MM-dd HH:mm:ss[.SSS])")
			}
			return wall(t), nil
		}, nil
	case from.IsNumeric() && ltz:
		return func(v any) (any, error) {
			var ms int64
			switch x := v.(type) {
			case int64:
				ms = x * 1000
			case float64:
				ms = int64(math.Round(x * 1000))
			case decimal.Decimal:
				ms = x.Shift(3).Round(0).IntPart()
			}
			return truncateTime(time.UnixMilli(ms).UTC(), p), nil
		}, nil
	}
	return nil, errCast
}

func castArray(from, to types.Type, loc *time.Location) (caster, error) {
	fn, err := castFn(from, to, loc)
	if err != nil {
		return nil, err
	}
	return func(v any) (any, error) {
		xs := v.([]any)
		out := make([]any, len(xs))
		for i, x := range xs {
			if x == nil {
				continue
			}
			r, err := fn(x)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}, nil
}

// castMultiset casts each element of a MULTISET (Flink's
// MapToMapAndMultisetToMultisetCastRule). Elements that become equal
// (1.2 and 1.4 as INT) are one element with their counts summed, where
// Flink's map keeps one of the counts.
func castMultiset(from, to types.Type, loc *time.Location) (caster, error) {
	fn, err := castFn(from, to, loc)
	if err != nil {
		return nil, err
	}
	return func(v any) (any, error) {
		var out types.MultisetValue
		for _, e := range v.(types.MultisetValue) {
			x := e.Elem
			if x != nil {
				if x, err = fn(x); err != nil {
					return nil, err
				}
			}
			if i := slices.IndexFunc(out, func(o types.MultisetEntry) bool { return nullSafeEqual(o.Elem, x) }); i >= 0 {
				out[i].Count += e.Count
				continue
			}
			out = append(out, types.MultisetEntry{Elem: x, Count: e.Count})
		}
		return out, nil
	}, nil
}

func castMap(from, to types.Type, loc *time.Location) (caster, error) {
	kf, err := castFn(*from.Key, *to.Key, loc)
	if err != nil {
		return nil, err
	}
	vf, err := castFn(*from.Elem, *to.Elem, loc)
	if err != nil {
		return nil, err
	}
	return func(v any) (any, error) {
		m := v.(map[any]any)
		out := make(map[any]any, len(m))
		for k, x := range m {
			var err error
			if k != nil {
				if k, err = kf(k); err != nil {
					return nil, err
				}
			}
			if x != nil {
				if x, err = vf(x); err != nil {
					return nil, err
				}
			}
			out[k] = x
		}
		return out, nil
	}, nil
}

func castRow(from, to types.Type, loc *time.Location) (caster, error) {
	fns := make([]caster, len(from.Fields))
	for i := range from.Fields {
		fn, err := castFn(from.Fields[i].Type, to.Fields[i].Type, loc)
		if err != nil {
			return nil, err
		}
		fns[i] = fn
	}
	return func(v any) (any, error) {
		xs := v.([]any)
		if len(xs) != len(fns) {
			return nil, fmt.Errorf("row has %d fields, want %d", len(xs), len(fns))
		}
		out := make([]any, len(xs))
		for i, x := range xs {
			if x == nil {
				continue
			}
			r, err := fns[i](x)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}, nil
}
