package expr

import (
	"math"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

func init() {
	doubles := map[string]func(float64) float64{
		"SQRT": math.Sqrt, "EXP": javaExp, "LN": javaLog, "LOG10": javaLog10, "LOG2": javaLog2,
		"SIN": math.Sin, "COS": math.Cos, "TAN": math.Tan, "ASIN": math.Asin, "ACOS": math.Acos,
		"ATAN": math.Atan, "SINH": math.Sinh, "COSH": math.Cosh, "TANH": math.Tanh,
		"COT": func(x float64) float64 { return 1 / math.Tan(x) },
		// Java's Math.toDegrees and toRadians, which Flink calls: one
		// multiplication by the rounded ratio (x * 180 / π rounds twice and
		// differs in the last digit for one argument in four).
		"DEGREES": func(x float64) float64 { return x * 57.29577951308232 },
		"RADIANS": func(x float64) float64 { return x * 0.017453292519943295 },
	}
	for name, f := range doubles {
		register(name, 1, 1, "NUMERIC", doubleFunc(func(v []float64) float64 { return f(v[0]) }))
	}
	register("POWER", 2, 2, "NUMERIC, NUMERIC", doubleFunc(func(v []float64) float64 { return javaPow(v[0], v[1]) }))
	register("ATAN2", 2, 2, "NUMERIC, NUMERIC", doubleFunc(func(v []float64) float64 { return math.Atan2(v[0], v[1]) }))
	register("LOG", 1, 2, "[base, ] NUMERIC", doubleFunc(func(v []float64) float64 {
		if len(v) == 1 {
			return javaLog(v[0])
		}
		return javaLogBase(v[0], v[1])
	}))
	register("PI", 0, 0, "", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		return constant(call, doubleType(false), math.Pi), nil
	})
	register("E", 0, 0, "", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		return constant(call, doubleType(false), math.E), nil
	})
	register("ABS", 1, 1, "NUMERIC", absSign)
	register("SIGN", 1, 1, "NUMERIC", absSign)
	register("MOD", 2, 2, "NUMERIC, NUMERIC", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famNumeric); err != nil {
			return nil, err
		}
		return c.arithOf('%', a[0], a[1], call)
	})
	register("FLOOR CEIL CEILING", 1, 2, "NUMERIC or (time TO unit)", floorCeil)
	register("ROUND TRUNCATE", 1, 2, "NUMERIC[, INT]", roundFunc)
}

// doubleFunc is a function of numbers computed in DOUBLE.
func doubleFunc(f func([]float64) float64) func(*compiler, *parser.FuncCall, []*Compiled) (*Compiled, error) {
	return func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famNumeric); err != nil {
			return nil, err
		}
		return fn(call, a, doubleType(false), func(v []any) (any, error) {
			fs := make([]float64, len(v))
			for i, x := range v {
				fs[i] = toFloat(x)
			}
			return f(fs), nil
		}), nil
	}
}

// absSign is ABS and SIGN, both typed like their argument.
func absSign(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famNumeric); err != nil {
		return nil, err
	}
	t := plain(a[0].Type)
	if t.Kind == types.Null {
		t = intType(true)
	}
	k, sign := t.Kind, call.Name == "SIGN"
	return fn(call, a, t, func(v []any) (any, error) {
		switch x := v[0].(type) {
		case int64:
			if sign {
				return int64(cmp3(x < 0, x > 0)), nil
			}
			if x < 0 {
				return wrapInt(-x, k), nil
			}
			return x, nil
		case float64:
			if sign {
				if x == 0 || math.IsNaN(x) {
					return x, nil
				}
				return math.Copysign(1, x), nil
			}
			return math.Abs(x), nil
		case decimal.Decimal:
			if sign {
				return decimal.NewFromInt(int64(x.Sign())), nil
			}
			return x.Abs(), nil
		}
		return nil, typeError(v[0], t)
	}), nil
}

// floorCeil is FLOOR(x), CEIL(x) and, for times, FLOOR(t TO unit).
func floorCeil(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	up := call.Name != "FLOOR"
	if len(a) == 2 {
		return timeFloorCeil(c, call, a, up)
	}
	if err := expect(call, a, famNumeric); err != nil {
		return nil, err
	}
	t := plain(a[0].Type)
	if t.Kind == types.Decimal {
		t = decimalType(t.Precision, 0, t.Nullable)
	}
	if t.Kind == types.Null {
		t = intType(true)
	}
	return fn(call, a, t, func(v []any) (any, error) {
		switch x := v[0].(type) {
		case int64:
			return x, nil
		case float64:
			if up {
				return math.Ceil(x), nil
			}
			return math.Floor(x), nil
		case decimal.Decimal:
			if up {
				return x.Ceil(), nil
			}
			return x.Floor(), nil
		}
		return nil, typeError(v[0], t)
	}), nil
}

// roundFunc is ROUND(x[, d]) (HALF_UP) and TRUNCATE(x[, d]) (toward
// zero) to d decimal places; a negative d rounds left of the point. A
// DECIMAL(p, s) result has scale d, as Flink's ROUND type rule.
func roundFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famNumeric, famInteger); err != nil {
		return nil, err
	}
	t := plain(a[0].Type)
	if t.Kind == types.Null {
		t = intType(true)
	}
	digits := int64(0)
	if len(a) == 2 {
		if v, ok := constArg(a, 1); ok && v != nil {
			digits = v.(int64)
		} else if t.Kind == types.Decimal {
			return nil, errAt(call.Args[1], "%s of a DECIMAL needs a constant number of digits", call.Name)
		}
	}
	if t.Kind == types.Decimal {
		p, s := t.Precision, t.Scale
		switch {
		case digits >= int64(s):
		case digits < 0:
			p, s = min(MaxDecimalPrecision, 1+p-s), 0
		default:
			p, s = 1+p-s+int(digits), int(digits)
		}
		t = decimalType(min(p, MaxDecimalPrecision), s, t.Nullable)
	}
	trunc := call.Name == "TRUNCATE"
	k := t.Kind
	return fn(call, a, t, func(v []any) (any, error) {
		d := digits
		if len(v) == 2 {
			d = v[1].(int64)
		}
		if d > 100 || d < -100 {
			d = max(-100, min(100, d))
		}
		var x decimal.Decimal
		switch y := v[0].(type) {
		case int64:
			x = decimal.NewFromInt(y)
		case float64:
			if math.IsNaN(y) || math.IsInf(y, 0) {
				return y, nil
			}
			x = decimal.NewFromFloat(y)
		case decimal.Decimal:
			x = y
		default:
			return nil, typeError(v[0], t)
		}
		if trunc {
			x = truncateDecimal(x, int32(d))
		} else {
			x = x.Round(int32(d))
		}
		switch k {
		case types.Float, types.Double:
			return x.InexactFloat64(), nil
		case types.Decimal:
			return x, nil
		}
		return decimalToInt(x, k), nil
	}), nil
}

// truncateDecimal cuts d to places decimal places toward zero; negative
// places zero digits left of the point.
func truncateDecimal(d decimal.Decimal, places int32) decimal.Decimal {
	if places >= 0 {
		return d.Truncate(places)
	}
	return d.Shift(places).Truncate(0).Shift(-places)
}
