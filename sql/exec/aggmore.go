package exec

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// The aggregates beyond SUM, COUNT, MIN, MAX and AVG: LISTAGG, the
// variance family, and FIRST_VALUE / LAST_VALUE over a retracting input.
// Their running value (vi of the accumulator) is a []any, so RowCodec
// stores it and the heap backend copies it before a snapshot's object is
// changed:
//
//	VAR_POP … STDDEV_SAMP            [Σx, Σx²] in the argument's arithmetic
//	LISTAGG, FIRST/LAST (retracting)  [values in arrival order, pending retractions]
//
// COLLECT's running value is a types.MultisetValue, which RowCodec stores too.

// listKind reports whether k keeps its values as a list.
func (a *aggregator) listKind(k AggKind) bool {
	return k == ListAgg || (!a.insertOnly && (k == FirstValue || k == LastValue))
}

func isVariance(k AggKind) bool { return k >= VarPop && k <= StddevSamp }

// foldMore folds v into the running value of a call of a kind this file
// owns; ok is false for the others.
func (a *aggregator) foldMore(acc []any, vi int, c AggCall, v any, sign int64) (ok bool, err error) {
	switch {
	case isVariance(c.Kind):
		acc[vi], err = foldMoments(acc[vi], c, v, sign)
		return true, err
	case a.listKind(c.Kind): // lists keep the value: rebox, as pickOwned
		acc[vi] = foldList(acc[vi], rebox(v), sign)
		return true, nil
	case c.Kind == Collect:
		acc[vi] = multisetAdd(multisetOf(acc[vi]), rebox(v), sign)
		return true, nil
	case c.Kind == Lag:
		if sign < 0 {
			return true, fmt.Errorf("%w: %s cannot retract", ErrUpdatesUnsupported, c)
		}
		acc[vi] = foldLag(acc[vi], c, rebox(v))
		return true, nil
	}
	return false, nil
}

// foldLag appends v to LAG's window of the last offset+1 values, dropping
// the oldest beyond it.
func foldLag(cur any, c AggCall, v any) any {
	var vals []any
	if cur != nil {
		vals = cur.([]any)
	}
	vals = append(vals, v)
	if extra := len(vals) - (c.LagOffset + 1); extra > 0 {
		vals = append([]any(nil), vals[extra:]...)
	}
	return vals
}

// lagResult is the value offset rows before the last one, or the default
// while fewer than offset+1 rows were aggregated.
func lagResult(c AggCall, cur any) any {
	if cur == nil {
		return c.LagDefault
	}
	vals := cur.([]any)
	if len(vals) < c.LagOffset+1 {
		return c.LagDefault
	}
	return vals[len(vals)-1-c.LagOffset]
}

// foldMoments adds (or retracts) x and x² to [Σx, Σx²]. Integers stay
// integers (Calcite's reduction of VAR_POP computes SUM(x * x) in the
// argument's type).
func foldMoments(cur any, c AggCall, v any, sign int64) (any, error) {
	switch v.(type) {
	case int64, float64, decimal.Decimal:
	default:
		return nil, fmt.Errorf("%w: %s over a %T; it takes numbers", ErrType, c, v)
	}
	sq, err := multiply(v, v)
	if err != nil {
		return nil, err
	}
	if sign < 0 {
		v, _ = negate(v)
		sq, _ = negate(sq)
	}
	if cur == nil {
		return []any{v, sq}, nil
	}
	return addMoments(cur.([]any), []any{v, sq})
}

func addMoments(a, b []any) (any, error) {
	s, err := add(a[0], b[0])
	if err != nil {
		return nil, err
	}
	q, err := add(a[1], b[1])
	return []any{s, q}, err
}

func multiply(a, b any) (any, error) {
	switch x := a.(type) {
	case int64:
		return x * b.(int64), nil
	case float64:
		return x * b.(float64), nil
	case decimal.Decimal:
		return x.Mul(b.(decimal.Decimal)), nil
	}
	return nil, fmt.Errorf("%w: cannot multiply a %T", ErrType, a)
}

// foldList appends v, or removes its first occurrence (Java's
// List.remove(Object), as Flink's ListAggWithRetractAggFunction and the
// first/last-value-with-retract functions do); a retraction of a value not
// in the list waits in the pending list, which only merge reads.
//
// It returns a new running value and writes nothing cur holds, nor the
// spare capacity of its lists (slices.Clip): cur is the accumulator as
// keyed state stores it, by reference on the heap backend, where a
// snapshot taken at a barrier and written later would otherwise encode
// rows that arrived after the barrier (replayed after a restore, they
// would count twice).
func foldList(cur, v any, sign int64) any {
	l := listOf(cur)
	vals, pending := l[0].([]any), l[1].([]any)
	if sign > 0 {
		return []any{append(slices.Clip(vals), v), pending}
	}
	for i, x := range vals {
		if sameValue(x, v) {
			return []any{append(vals[:i:i], vals[i+1:]...), pending}
		}
	}
	return []any{vals, append(slices.Clip(pending), v)}
}

func listOf(cur any) []any {
	if cur == nil {
		return []any{[]any{}, []any{}}
	}
	return cur.([]any)
}

// mergeMore merges a partial running value of a kind this file owns; ok
// is false for the others.
func (a *aggregator) mergeMore(acc []any, vi int, c AggCall, pv any) (ok bool, err error) {
	switch {
	case isVariance(c.Kind):
		acc[vi], err = addMoments(acc[vi].([]any), pv.([]any))
		return true, err
	case a.listKind(c.Kind):
		acc[vi] = mergeLists(acc[vi], pv)
		return true, nil
	case c.Kind == Collect:
		acc[vi] = mergeMultisets(multisetOf(acc[vi]), multisetOf(pv))
		return true, nil
	case c.Kind == Lag:
		return true, fmt.Errorf("%w: %s cannot merge partial accumulators", ErrInvalidOptions, c)
	}
	return false, nil
}

// mergeLists concatenates two lists and then applies both pending
// retraction lists, as Flink's ListAggWsWithRetractAggFunction.merge.
func mergeLists(a, b any) any {
	la, lb := listOf(a), listOf(b)
	vals := append(append([]any{}, la[0].([]any)...), lb[0].([]any)...)
	out := []any{vals, []any{}}
	for _, r := range append(append([]any{}, la[1].([]any)...), lb[1].([]any)...) {
		out = foldList(out, r, -1).([]any)
	}
	return out
}

// resultMore computes the value of a call of a kind this file owns.
func (a *aggregator) resultMore(c AggCall, v any, n int64) (any, bool) {
	switch {
	case isVariance(c.Kind):
		return varianceResult(c, v.([]any), n), true
	case a.listKind(c.Kind):
		vals := listOf(v)[0].([]any)
		if len(vals) == 0 {
			return nil, true
		}
		switch c.Kind {
		case FirstValue:
			return vals[0], true
		case LastValue:
			return vals[len(vals)-1], true
		}
		return listAggResult(c, vals), true
	}
	return nil, false
}

func listAggResult(c AggCall, vals []any) any {
	sep := ","
	if c.Separator != nil {
		sep = *c.Separator
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, sep)
}

// varianceResult computes VAR_POP, VAR_SAMP, STDDEV_POP or STDDEV_SAMP as
// Calcite's AggregateReduceFunctionsRule rewrites them for Flink:
//
//	VAR_POP(x)     = (Σx² - Σx·Σx / n) / n
//	VAR_SAMP(x)    = (Σx² - Σx·Σx / n) / CASE WHEN n = 1 THEN NULL ELSE n - 1 END
//	STDDEV_*(x)    = POWER(VAR_*(x), 0.5)
//
// in the argument's arithmetic (integer division for integers, so
// VAR_POP of INT is an INT), the result cast back to the argument's type:
// the square root of an integer or DECIMAL variance is taken in DOUBLE and
// cast (truncated for integers, rounded half up to the scale for DECIMAL).
func varianceResult(c AggCall, m []any, n int64) any {
	den := n
	if c.Kind == VarSamp || c.Kind == StddevSamp {
		if n == 1 {
			return nil
		}
		den = n - 1
	}
	root := c.Kind == StddevPop || c.Kind == StddevSamp
	switch s := m[0].(type) {
	case int64:
		v := (m[1].(int64) - s*s/n) / den
		if root {
			return int64(math.Sqrt(float64(v)))
		}
		return v
	case float64:
		v := (m[1].(float64) - s*s/float64(n)) / float64(den)
		if root {
			return math.Sqrt(v)
		}
		return v
	case decimal.Decimal:
		return decimalVariance(c, s, m[1].(decimal.Decimal), n, den, root)
	}
	return nil
}

func decimalVariance(c AggCall, s, q decimal.Decimal, n, den int64, root bool) any {
	const digits = 32
	v := q.Sub(s.Mul(s).DivRound(decimal.NewFromInt(n), digits)).DivRound(decimal.NewFromInt(den), digits)
	if root {
		f, _ := v.Float64()
		v = decimal.NewFromFloat(math.Sqrt(f))
	}
	return v.Round(decimalScale(c, s))
}
