package expr

import (
	"cmp"
	"errors"
	"math"
	"math/bits"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

var errDivZero = errors.New("division by zero")

func (c *compiler) unary(u *parser.Unary) (*Compiled, error) {
	if lit, ok := u.X.(*parser.NumberLit); ok && u.Op == parser.Neg && !strings.HasPrefix(lit.Text, "-") {
		// -2147483648 is an INT and -9223372036854775808 a BIGINT, as in
		// Flink, though their digits alone do not fit.
		return numberLit(&parser.NumberLit{Pos: u.Pos, Text: "-" + lit.Text, Kind: lit.Kind})
	}
	in, err := c.expr(u.X)
	if err != nil {
		return nil, err
	}
	switch u.Op {
	case parser.Not:
		return c.not(u, in)
	case parser.Plus:
		if !in.Type.IsNumeric() && in.Interval == NotInterval && in.Type.Kind != types.Null {
			return nil, errAt(u, "unary + requires a number, got %s", typeName(in.Type))
		}
		return in, nil
	}
	if !in.Type.IsNumeric() && in.Interval == NotInterval && in.Type.Kind != types.Null {
		return nil, errAt(u, "unary - requires a number or an interval, got %s", typeName(in.Type))
	}
	k := in.Type.Kind
	out := &Compiled{Type: plain(in.Type), Interval: in.Interval, Const: in.Const}
	out.Eval = strict(u.Pos, []*Compiled{in}, func(v []any) (any, error) {
		switch x := v[0].(type) {
		case int64:
			return wrapInt(-x, k), nil
		case float64:
			return -x, nil
		case decimal.Decimal:
			return x.Neg(), nil
		}
		return nil, typeError(v[0], in.Type)
	})
	return out, nil
}

// binary dispatches an infix operator.
func (c *compiler) binary(b *parser.Binary) (*Compiled, error) {
	switch b.Op {
	case parser.And, parser.Or:
		return c.logic(b)
	case parser.Add, parser.Sub, parser.Mul, parser.Div, parser.Mod:
		return c.arith(b)
	case parser.Concat:
		return c.concat(b)
	}
	return c.compare(b)
}

var opByte = map[parser.BinaryOp]byte{parser.Add: '+', parser.Sub: '-', parser.Mul: '*', parser.Div: '/', parser.Mod: '%'}

// arith compiles + - * / %.
func (c *compiler) arith(b *parser.Binary) (*Compiled, error) {
	l, err := c.expr(b.L)
	if err != nil {
		return nil, err
	}
	r, err := c.expr(b.R)
	if err != nil {
		return nil, err
	}
	return c.arithOf(opByte[b.Op], l, r, b)
}

func (c *compiler) arithOf(op byte, l, r *Compiled, at parser.Expr) (*Compiled, error) {
	lt, rt := l.Type, r.Type
	if l.Interval != NotInterval || r.Interval != NotInterval || shiftable(lt) || shiftable(rt) {
		return c.temporalArith(op, l, r, at)
	}
	if lt.Kind == types.Null && (rt.IsNumeric() || rt.Kind == types.Null) ||
		rt.Kind == types.Null && lt.IsNumeric() {
		t := lt
		if t.Kind == types.Null {
			t = rt
		}
		return constant(at, withNull(t, true), nil), nil
	}
	if !lt.IsNumeric() || !rt.IsNumeric() {
		hint := ""
		if lt.IsString() || rt.IsString() {
			hint = "use || or CONCAT to join strings, or CAST a string to a number"
		}
		return nil, hintAt(at, hint, "cannot apply %c to %s and %s", op, typeName(lt), typeName(rt))
	}
	n := lt.Nullable || rt.Nullable
	pos := at.Position()
	out := &Compiled{Const: l.Const && r.Const}
	switch {
	case isApprox(lt) || isApprox(rt):
		out.Type = commonNumeric(lt, rt)
		single := out.Type.Kind == types.Float
		out.Eval = strict2(pos, l, r, func(x, y any) (any, error) {
			f := floatOp(op, toFloat(x), toFloat(y))
			if single {
				f = float64(float32(f))
			}
			return f, nil
		})
	case lt.Kind == types.Decimal || rt.Kind == types.Decimal:
		p, s, fits := decimalResult(op, lt, rt)
		out.Type = decimalType(p, s, n || !fits)
		out.Eval = strict2(pos, l, r, func(x, y any) (any, error) {
			return decimalOp(op, toDecimal(x), toDecimal(y), p, s)
		})
		if op == '*' {
			out.Eval, out.scaled = mulByConst(pos, l, r, p, s, out.Eval)
			if out.scaled != nil {
				out.scaled.self = out
			}
		}
	default:
		k := wider(lt.Kind, rt.Kind)
		if op == '%' {
			k = rt.Kind // Calcite types MOD by its second operand
		}
		out.Type = scalar(k, n)
		out.Eval = strict2(pos, l, r, func(x, y any) (any, error) {
			return intOp(op, x.(int64), y.(int64), k)
		})
	}
	return out, nil
}

func floatOp(op byte, x, y float64) float64 {
	switch op {
	case '+':
		return x + y
	case '-':
		return x - y
	case '*':
		return x * y
	case '/':
		return x / y
	}
	return math.Mod(x, y)
}

// intOp computes in int64 and narrows to k, so INT overflows like Java's
// int; x / y truncates toward zero and x % y has the sign of x.
func intOp(op byte, x, y int64, k types.Kind) (any, error) {
	var r int64
	switch op {
	case '+':
		r = x + y
	case '-':
		r = x - y
	case '*':
		r = x * y
	case '/', '%':
		if y == 0 {
			return nil, errDivZero
		}
		if y == -1 { // MinInt64 / -1 overflows; Java wraps
			if op == '%' {
				return int64(0), nil
			}
			return wrapInt(-x, k), nil
		}
		if op == '/' {
			r = x / y
		} else {
			r = x % y
		}
	}
	return wrapInt(r, k), nil
}

// decimalOp computes exactly and rounds HALF_UP to scale s; a result that
// does not fit precision p is NULL, as in Flink.
func decimalOp(op byte, x, y decimal.Decimal, p, s int) (any, error) {
	var r decimal.Decimal
	switch op {
	case '+':
		r = x.Add(y)
	case '-':
		r = x.Sub(y)
	case '*':
		r = x.Mul(y)
	case '/':
		if y.IsZero() {
			return nil, errDivZero
		}
		r = x.DivRound(y, int32(s)) // HALF_UP, as BigDecimal.divide in Flink
	case '%':
		if y.IsZero() {
			return nil, errDivZero
		}
		r = x.Mod(y)
	}
	v, ok := types.FitDecimal(r, p, s)
	if !ok {
		return nil, nil
	}
	return v, nil
}

// mulByConst returns the evaluator of k * n or n * k, for a DECIMAL
// constant k and an integer n, that multiplies in int64 instead of
// math/big (Nexmark q1's 0.908 * price), or slow when k does not allow it.
// Its values are decimalOp's, representation included: when k's exponent
// is -s nothing is rounded and the product is k's coefficient times n at
// that exponent. A product that overflows int64 or precision p goes
// through decimalOp.
func mulByConst(at parser.Pos, l, r *Compiled, p, s int, slow func([]any) (any, error)) (func([]any) (any, error), *scaledProduct) {
	k, n := l, r
	if !k.Const {
		k, n = r, l
	}
	if !k.Const || !n.Type.IsInteger() || p-s < 0 {
		return slow, nil
	}
	kv, err := k.Eval(nil)
	d, ok := kv.(decimal.Decimal)
	if err != nil || !ok || d.Exponent() != int32(-s) || !d.Coefficient().IsInt64() {
		return slow, nil
	}
	sp := &scaledProduct{read: n.Eval, coef: d.CoefficientInt64(), limit: uint64(math.MaxInt64), scale: s}
	if p-s < 19 {
		sp.limit = 1
		for range p - s {
			sp.limit *= 10
		}
		sp.limit-- // the largest magnitude of p-s integer digits
	}
	return func(row []any) (any, error) {
		prod, v, ok, err := sp.eval(row)
		if v == nil {
			return nil, err
		}
		if !ok {
			r, err := decimalOp('*', d, toDecimal(v), p, s)
			return r, wrapEval(at, err)
		}
		return decimal.New(prod, int32(-s)), nil
	}, sp
}

// scaledProduct says that a Compiled (self) is a DECIMAL(p, scale)
// constant times an integer expression: its value is coef × the integer,
// unscaled, as long as that stays within limit. A comparison with a
// constant then compares the unscaled integers and builds no DECIMAL
// (q14's WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000).
type scaledProduct struct {
	self  *Compiled
	read  func([]any) (any, error) // the integer operand
	coef  int64
	limit uint64 // the largest magnitude of the unscaled product
	scale int
}

// eval reads the integer operand's value v (nil with an error, or for
// NULL) and returns the unscaled product of it, if product takes it.
func (sp *scaledProduct) eval(row []any) (prod int64, v any, ok bool, err error) {
	if v, err = sp.read(row); err != nil || v == nil {
		return 0, nil, false, err
	}
	prod, ok = sp.product(v)
	return prod, v, ok, nil
}

// product returns the unscaled product of the integer operand's value v;
// false when v is not an int64 or the product exceeds limit (the DECIMAL
// arithmetic then decides: an overflow error or a rounded value).
func (sp *scaledProduct) product(v any) (int64, bool) {
	x, ok := v.(int64)
	hi, lo := bits.Mul64(absUint(sp.coef), absUint(x))
	if !ok || hi != 0 || lo > sp.limit {
		return 0, false
	}
	prod := int64(lo)
	if (sp.coef < 0) != (x < 0) {
		prod = -prod
	}
	return prod, true
}

// ScaledProduct reports whether c is a DECIMAL constant times an integer,
// which comparisons with constants compute as integers without building
// the DECIMAL.
func (c *Compiled) ScaledProduct() bool { return scaledOf(c) != nil }

func scaledOf(x *Compiled) *scaledProduct {
	if sp := x.scaled; sp != nil && sp.self == x {
		return sp
	}
	return nil
}

// scaledComparison compiles a scaledProduct compared (=, <>, <, <=, >,
// >=) with a constant DECIMAL or integer, either side, whose value is a
// whole number of the product's units (10^-scale) within an int64; or
// returns nil. A product the fast path cannot take goes to slow, the
// comparison as compiled without it. l and r are the operands before
// unify: comparing values, the common type's scale only widens.
func scaledComparison(op parser.BinaryOp, l, r *Compiled, slow func([]any) (any, error)) func([]any) (any, error) {
	if op < parser.Eq || op > parser.Ge {
		return nil
	}
	if scaledOf(l) == nil {
		l, r, op = r, l, op.Swapped()
	}
	sp := scaledOf(l)
	if sp == nil || !r.Const || !(r.Type.Kind == types.Decimal || r.Type.IsInteger()) {
		return nil
	}
	kv, err := r.Eval(nil)
	if err != nil || kv == nil {
		return nil
	}
	k := toDecimal(kv).Shift(int32(sp.scale))
	if !k.IsInteger() || !k.BigInt().IsInt64() {
		return nil
	}
	want := k.BigInt().Int64()
	return func(row []any) (any, error) {
		prod, v, ok, err := sp.eval(row)
		if v == nil {
			return nil, err
		}
		if !ok {
			return slow(row)
		}
		return cmpHolds(op, cmp.Compare(prod, want)), nil
	}
}

func absUint(x int64) uint64 {
	if x < 0 {
		return -uint64(x)
	}
	return uint64(x)
}

// temporalArith compiles arithmetic with intervals, dates and timestamps:
// time ± interval, interval + time, interval ± interval, interval * n,
// n * interval, interval / n.
func (c *compiler) temporalArith(op byte, l, r *Compiled, at parser.Node) (*Compiled, error) {
	pos := at.Position()
	args := []*Compiled{l, r}
	lt, rt := l.Type, r.Type
	li, ri := l.Interval, r.Interval
	konst := l.Const && r.Const
	fail := func() error {
		hint := ""
		if isTemporal(lt) && isTemporal(rt) && op == '-' {
			hint = "use TIMESTAMPDIFF(unit, t1, t2) to subtract times"
		}
		return hintAt(at, hint, "cannot apply %c to %s and %s", op, describeType(l), describeType(r))
	}
	switch {
	case lt.Kind == types.Time && ri == YearMonthInterval || rt.Kind == types.Time && li == YearMonthInterval:
		return nil, hintAt(at, "add a day-time interval (INTERVAL '1' HOUR) to a TIME", "cannot apply %c to %s and %s", op, describeType(l), describeType(r))
	case shiftable(lt) && ri != NotInterval && (op == '+' || op == '-'):
		return c.shiftTime(l, r, op == '-', pos, konst)
	case li != NotInterval && shiftable(rt) && op == '+':
		return c.shiftTime(r, l, false, pos, konst)
	case li != NotInterval && li == ri && (op == '+' || op == '-'):
		out := &Compiled{Type: bigintType(false), Interval: li, Const: konst}
		out.Eval = strict(pos, args, func(v []any) (any, error) {
			if op == '+' {
				return v[0].(int64) + v[1].(int64), nil
			}
			return v[0].(int64) - v[1].(int64), nil
		})
		return out, nil
	case li != NotInterval && ri == NotInterval && rt.IsNumeric() && (op == '*' || op == '/'),
		ri != NotInterval && li == NotInterval && lt.IsNumeric() && op == '*':
		iv, num, ivFirst := l, r, true
		if ri != NotInterval {
			iv, num, ivFirst = r, l, false
		}
		out := &Compiled{Type: bigintType(num.Type.Nullable), Interval: iv.Interval, Const: konst}
		out.Eval = strict(pos, args, func(v []any) (any, error) {
			n, f := v[0], v[1]
			if !ivFirst {
				n, f = v[1], v[0]
			}
			factor := toFloat(f)
			if op == '/' {
				if factor == 0 {
					return nil, errDivZero
				}
				factor = 1 / factor
			}
			if i, ok := f.(int64); ok && op == '*' {
				return n.(int64) * i, nil
			}
			return int64(math.Round(float64(n.(int64)) * factor)), nil
		})
		return out, nil
	}
	return nil, fail()
}

// shiftable reports the types an interval shifts: DATE, TIME and the
// timestamps.
func shiftable(t types.Type) bool { return isTemporal(t) || t.Kind == types.Time }

// shiftTime compiles t + iv (or t - iv). A DATE stays a DATE: shifting it
// by hours keeps the day the shift lands on. A TIME stays a TIME, modulo a
// day (TIME '23:30:00' + INTERVAL '1' HOUR is 00:30:00), as in Flink.
func (c *compiler) shiftTime(t, iv *Compiled, sub bool, pos parser.Pos, konst bool) (*Compiled, error) {
	kind := iv.Interval
	isDate, isTime := t.Type.Kind == types.Date, t.Type.Kind == types.Time
	out := &Compiled{Type: withNull(t.Type, t.Type.Nullable || iv.Type.Nullable), Const: konst}
	out.Eval = strict(pos, []*Compiled{t, iv}, func(v []any) (any, error) {
		tm, n := v[0].(time.Time), v[1].(int64)
		if sub {
			n = -n
		}
		var r time.Time
		if kind == YearMonthInterval {
			r = addMonths(tm, n)
		} else {
			r = tm.Add(time.Duration(n) * time.Millisecond)
		}
		if isDate {
			r = startOfDay(r)
		}
		if isTime {
			r = types.TimeOfDay(r)
		}
		return r, nil
	})
	return out, nil
}

// addMonths adds n months as Java's LocalDateTime.plusMonths: a day past
// the end of the target month becomes its last day (Jan 31 + 1 month is
// Feb 28 or 29).
func addMonths(t time.Time, n int64) time.Time {
	y, m, d := t.Date()
	total := int64(y)*12 + int64(m-1) + n
	ny, nm := int(total/12), int(total%12)
	if nm < 0 {
		nm += 12
		ny--
	}
	d = min(d, daysIn(ny, nm+1))
	return time.Date(ny, time.Month(nm+1), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

// concat compiles a || b for strings (or byte strings).
func (c *compiler) concat(b *parser.Binary) (*Compiled, error) {
	l, err := c.expr(b.L)
	if err != nil {
		return nil, err
	}
	r, err := c.expr(b.R)
	if err != nil {
		return nil, err
	}
	lt, rt := l.Type, r.Type
	isStr := func(t types.Type) bool { return t.IsString() || t.Kind == types.Null }
	isBin := func(t types.Type) bool { return t.Kind == types.Bytes || t.Kind == types.Null }
	n := lt.Nullable || rt.Nullable
	args := []*Compiled{l, r}
	switch {
	case isStr(lt) && isStr(rt):
		t := concatType(lt, rt, n)
		return &Compiled{Type: t, Const: l.Const && r.Const, Eval: strict(b.Pos, args, func(v []any) (any, error) {
			return v[0].(string) + v[1].(string), nil
		})}, nil
	case isBin(lt) && isBin(rt):
		return &Compiled{Type: types.Type{Kind: types.Bytes, Nullable: n}, Const: l.Const && r.Const,
			Eval: strict(b.Pos, args, func(v []any) (any, error) {
				return append(append([]byte{}, v[0].([]byte)...), v[1].([]byte)...), nil
			})}, nil
	}
	return nil, hintAt(b, "CAST the operand to STRING, or use CONCAT", "cannot apply || to %s and %s", typeName(lt), typeName(rt))
}

// concatType is CHAR(n1 + n2) for two CHARs, VARCHAR(n1 + n2) otherwise,
// STRING when either is unbounded.
func concatType(a, b types.Type, n bool) types.Type {
	la, lb := 0, 0
	if a.Kind != types.Null {
		la = strLen(a)
	}
	if b.Kind != types.Null {
		lb = strLen(b)
	}
	if la >= maxVarchar || lb >= maxVarchar || la+lb >= maxVarchar {
		return stringType(n)
	}
	if a.Kind == types.Char && b.Kind == types.Char {
		return types.Type{Kind: types.Char, Precision: la + lb, Nullable: n}
	}
	return types.Type{Kind: types.Varchar, Precision: la + lb, Nullable: n}
}
