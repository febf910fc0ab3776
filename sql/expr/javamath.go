package expr

import "math"

// Flink computes LN and LOG with java.lang.Math.log and LOG10 with
// Math.log10, whose HotSpot intrinsics return the correctly rounded
// result (checked against 50-digit decimal logarithms on 200,000
// arguments); LOG2(x) is Math.log(x) / Math.log(2) and LOG(b, x)
// Math.log(x) / Math.log(b), both divisions in double. Go's math.Log is
// within one ulp, and differs from Java's in the last digit for about one
// argument in 140 (LN(3)); math.Log10 is ln(x) * (1/ln 10) and differs for
// one in five (LOG10(0.1) is -0.9999999999999999). So the logarithms here
// are computed in double-double arithmetic (about 104 bits) and rounded
// once: they return Java's doubles.

// dd is an unevaluated sum hi + lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

var (
	ddLn2  = dd{0.6931471805599453, 2.3190468138462996e-17}
	ddLn10 = dd{2.302585092994046, -2.1707562233822494e-16}
	// ddOdd[k] is 1/(2k+1), the coefficients of atanh's series.
	ddOdd = func() []dd {
		out := make([]dd, 24)
		for k := range out {
			out[k] = ddDiv(dd{1, 0}, dd{float64(2*k + 1), 0})
		}
		return out
	}()
)

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func ddAdd(a, b dd) dd {
	s, t := twoSum(a.hi, b.hi), twoSum(a.lo, b.lo)
	s = quickTwoSum(s.hi, s.lo+t.hi)
	return quickTwoSum(s.hi, s.lo+t.lo)
}

func ddMul(a, b dd) dd {
	p := a.hi * b.hi
	e := math.FMA(a.hi, b.hi, -p) + (a.hi*b.lo + a.lo*b.hi)
	return quickTwoSum(p, e)
}

func ddNeg(a dd) dd { return dd{-a.hi, -a.lo} }

func ddDiv(a, b dd) dd {
	q1 := a.hi / b.hi
	r := ddAdd(a, ddNeg(ddMul(dd{q1, 0}, b)))
	q2 := r.hi / b.hi
	r = ddAdd(r, ddNeg(ddMul(dd{q2, 0}, b)))
	q3 := r.hi / b.hi
	return ddAdd(quickTwoSum(q1, q2), dd{q3, 0})
}

// ddLog is ln(x) for a finite x > 0: x = m·2^k with m in [√½, √2), and
// ln(m) = 2·atanh(s), s = (m-1)/(m+1), |s| < 0.172, whose series converges
// to 2^-106 within 22 terms.
func ddLog(x float64) dd {
	m, k := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m, k = m*2, k-1
	}
	s := ddDiv(dd{m - 1, 0}, twoSum(m, 1)) // m-1 is exact here
	s2 := ddMul(s, s)
	sum := ddOdd[len(ddOdd)-1]
	for i := len(ddOdd) - 2; i >= 0; i-- {
		sum = ddAdd(ddOdd[i], ddMul(s2, sum))
	}
	lnm := ddMul(dd{2 * s.hi, 2 * s.lo}, sum)
	return ddAdd(ddMul(dd{float64(k), 0}, ddLn2), lnm)
}

// javaLog is java.lang.Math.log(x): ln(x) correctly rounded; NaN below 0,
// -Infinity at 0.
func javaLog(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 1) {
		return math.Log(x)
	}
	r := ddLog(x)
	return r.hi + r.lo
}

// javaLog10 is java.lang.Math.log10(x): exact for powers of ten.
func javaLog10(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 1) {
		return math.Log10(x)
	}
	r := ddDiv(ddLog(x), ddLn10)
	return r.hi + r.lo
}

// javaLog2 is Flink's LOG2: Math.log(x) / Math.log(2) in double.
func javaLog2(x float64) float64 { return javaLog(x) / javaLog(2) }

// javaLogBase is Flink's LOG(base, x): Math.log(x) / Math.log(base).
func javaLogBase(base, x float64) float64 { return javaLog(x) / javaLog(base) }

// EXP and POWER: Java's Math.exp and Math.pow (HotSpot intrinsics) are
// not always correctly rounded, but nearly (all but 24 and 7 of 10,000
// arguments), where Go's math.Exp and math.Pow differ from them for one
// argument in seven and two in five. The correctly rounded value is the
// closest we can compute to Java's without its code.

// ddInvFact[n] is 1/n!.
var ddInvFact = func() []dd {
	out := make([]dd, 14)
	out[0] = dd{1, 0}
	for n := 1; n < len(out); n++ {
		out[n] = ddDiv(out[n-1], dd{float64(n), 0})
	}
	return out
}()

// ddExp is e^t for |t.hi| < 709: t = k·ln2 + r, |r| <= ln2/2; e^r is
// (e^(r/256))^256, the inner one by its Taylor series (13 terms reach
// 2^-106 for |r/256| < 0.0014), then squared eight times.
func ddExp(t dd) (dd, int) {
	k := math.Round(t.hi / ddLn2.hi)
	r := ddAdd(t, ddNeg(ddMul(dd{k, 0}, ddLn2)))
	r = dd{r.hi / 256, r.lo / 256}
	sum := ddInvFact[len(ddInvFact)-1]
	for n := len(ddInvFact) - 2; n >= 0; n-- {
		sum = ddAdd(ddInvFact[n], ddMul(r, sum))
	}
	for range 8 {
		sum = ddMul(sum, sum)
	}
	return sum, int(k)
}

// expRange is where ddExp's result, scaled by 2^k, is a normal double.
const expRange = 708

// javaExp is Math.exp(x), correctly rounded; outside the range of normal
// results, math.Exp (overflow to +Inf, underflow to 0 or a subnormal).
func javaExp(x float64) float64 {
	if !(math.Abs(x) < expRange) {
		return math.Exp(x)
	}
	e, k := ddExp(dd{x, 0})
	return math.Ldexp(e.hi+e.lo, k)
}

// javaPow is Math.pow(x, y): e^(y·ln x) correctly rounded for a finite
// x > 0 and a finite y with a normal result; every special case (x <= 0,
// NaN, infinities, y = 0, x = 1) as math.Pow, which follows the same
// IEEE rules as Java.
func javaPow(x, y float64) float64 {
	if !(x > 0) || x == 1 || y == 0 || math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsNaN(y) {
		return math.Pow(x, y)
	}
	t := ddMul(ddLog(x), dd{y, 0})
	if !(math.Abs(t.hi) < expRange) {
		return math.Pow(x, y)
	}
	e, k := ddExp(t)
	return math.Ldexp(e.hi+e.lo, k)
}
