package exec

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
)

// AggKind is an aggregate function.
type AggKind uint8

const (
	// CountStar is COUNT(*): the number of rows. BIGINT NOT NULL.
	CountStar AggKind = iota
	// Count is COUNT(x): the number of rows where x is not NULL.
	Count
	// Sum is SUM(x): BIGINT for integers, DOUBLE for floats, and exact
	// DECIMAL(38, s) for DECIMAL(p, s). NULL when no x is non-NULL.
	Sum
	// Min is MIN(x) over any ordered type.
	Min
	// Max is MAX(x).
	Max
	// Avg is AVG(x) as Flink computes it: of integers an integer (the
	// quotient truncated toward zero), of DECIMAL(p, s) a DECIMAL(38,
	// max(6, s)) rounded half up, of floats a DOUBLE.
	Avg
	// FirstValue is FIRST_VALUE(x): the first non-NULL x in arrival order.
	// Insert-only input.
	FirstValue
	// LastValue is LAST_VALUE(x): the last non-NULL x. Over a retracting
	// input FIRST_VALUE and LAST_VALUE keep the group's values in arrival
	// order and a retraction removes the value's first occurrence (Flink's
	// First/LastValueWithRetractAggFunction).
	LastValue
	// ListAgg is LISTAGG(x [, separator]): the non-NULL values as strings in
	// arrival order, joined by the separator (default ","); a retraction
	// removes the value's first occurrence. STRING; NULL when empty.
	ListAgg
	// VarPop, VarSamp, StddevPop and StddevSamp are the population and
	// sample variance and standard deviation, of the argument's type (see
	// varianceResult). VAR_SAMP and STDDEV_SAMP of one value are NULL.
	VarPop
	// VarSamp is VAR_SAMP(x) (and VARIANCE): the sample variance.
	VarSamp
	// StddevPop is STDDEV_POP(x): the square root of VarPop.
	StddevPop
	// StddevSamp is STDDEV_SAMP(x) (and STDDEV): the square root of
	// VarSamp.
	StddevSamp
	// Lag is LAG(x [, offset [, default]]) OVER …: x of the row offset
	// rows before the last one aggregated (default 1; 0 is x itself),
	// NULLs included, or Default when there are not that many rows
	// (Flink's LagAggFunction). Insert-only input; OVER aggregation only.
	Lag
	// Collect is COLLECT(x): the MULTISET of the non-NULL values, each
	// with how many rows hold it; a retraction takes one occurrence away.
	// MULTISET<T> NOT NULL, empty when no value was aggregated.
	Collect
)

var aggNames = [...]string{"COUNT", "COUNT", "SUM", "MIN", "MAX", "AVG", "FIRST_VALUE", "LAST_VALUE",
	"LISTAGG", "VAR_POP", "VAR_SAMP", "STDDEV_POP", "STDDEV_SAMP", "LAG", "COLLECT"}

// String is the function's SQL name (COUNT, SUM, VAR_SAMP, …), as EXPLAIN
// prints it; an unknown kind prints as AggKind(n).
func (k AggKind) String() string {
	if int(k) < len(aggNames) {
		return aggNames[k]
	}
	return fmt.Sprintf("AggKind(%d)", uint8(k))
}

// AggCall is one aggregate of a GROUP BY or window aggregation.
type AggCall struct {
	// Kind is the function.
	Kind AggKind
	// Arg is the index of the argument field. Ignored by CountStar.
	Arg int
	// Distinct aggregates each distinct non-NULL value once, as
	// COUNT(DISTINCT x). It keeps the distinct values of each group in
	// state (a value → count map).
	Distinct bool
	// ArgType is the argument's SQL type. Optional: when it is a DECIMAL,
	// its scale fixes the scale of SUM (s) and AVG (max(6, s)); without it
	// the scale comes from the values.
	ArgType *types.Type
	// HasFilter makes the call aggregate only the rows whose field
	// FilterField is TRUE (AGG(x) FILTER (WHERE cond), the condition
	// computed into a BOOLEAN field by the planner). A DISTINCT call with
	// a filter sees the distinct values of those rows. Default false:
	// every row.
	HasFilter   bool
	FilterField int
	// Separator is LISTAGG's separator; nil is ",".
	Separator *string
	// LagOffset and LagDefault are LAG's offset (≥ 0) and default value
	// (nil: NULL).
	LagOffset  int
	LagDefault any
}

// String prints the call in SQL, with the argument as $index.
func (c AggCall) String() string {
	f := ""
	if c.HasFilter {
		f = fmt.Sprintf(" FILTER (WHERE $%d)", c.FilterField)
	}
	if c.Kind == CountStar {
		return "COUNT(*)" + f
	}
	d := ""
	if c.Distinct {
		d = "DISTINCT "
	}
	return fmt.Sprintf("%s(%s$%d)%s", c.Kind, d, c.Arg, f)
}

func checkAggs(calls []AggCall, twoPhase bool) error {
	for _, c := range calls {
		if c.Kind > Collect {
			return fmt.Errorf("%w: unknown aggregate kind %d", ErrInvalidOptions, c.Kind)
		}
		if c.Kind != CountStar && c.Arg < 0 {
			return fmt.Errorf("%w: %s has a negative argument index", ErrInvalidOptions, c)
		}
		if c.HasFilter && c.FilterField < 0 {
			return fmt.Errorf("%w: %s has a negative filter field index", ErrInvalidOptions, c)
		}
		if c.Kind == Lag && (c.Distinct || c.LagOffset < 0 || twoPhase) {
			return fmt.Errorf("%w: %s takes no DISTINCT, a non-negative offset, and runs in one phase", ErrInvalidOptions, c)
		}
		if twoPhase && c.Distinct {
			return fmt.Errorf("%w: %s cannot run in two phases; set 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE' for this query", ErrInvalidOptions, c)
		}
	}
	return nil
}

// multiset counts the values of one aggregate of one group (and window):
// the distinct values of a DISTINCT aggregate, every value of MIN and MAX
// under retraction.
type multiset interface {
	// add adds delta to v's count; it returns the count before and after.
	add(v any, delta int64) (before, after int64)
	// each calls f with every value whose count is positive.
	each(f func(v any))
}

// valueSet is a multiset in a MapState of the current key: valueKey(v),
// after prefix (a window's id, or "" for a whole group), → [count, v].
type valueSet struct {
	m      state.MapState[string, []any]
	prefix string
}

func (s valueSet) add(v any, delta int64) (int64, int64) {
	k := s.prefix + valueKey(v)
	var before int64
	if e, ok := s.m.Get(k); ok {
		before = e[0].(int64)
	}
	after := before + delta
	if after == 0 {
		s.m.Remove(k)
	} else {
		s.m.Put(k, []any{after, rebox(v)}) // held for as long as the value: as pickOwned
	}
	return before, after
}

func (s valueSet) each(f func(v any)) {
	s.m.Range(func(k string, e []any) bool {
		if strings.HasPrefix(k, s.prefix) && e[0].(int64) > 0 {
			f(e[1])
		}
		return true
	})
}

// clear removes the set's entries.
func (s valueSet) clear() { clearPrefix(s.m, s.prefix) }

// clearPrefix removes the entries of m whose key starts with prefix.
func clearPrefix[V any](m state.MapState[string, V], prefix string) {
	if prefix == "" {
		m.Clear()
		return
	}
	var ks []string
	m.Range(func(k string, _ V) bool {
		if strings.HasPrefix(k, prefix) {
			ks = append(ks, k)
		}
		return true
	})
	for _, k := range ks {
		m.Remove(k)
	}
}

// aggregator computes a list of AggCalls over accumulators. An
// accumulator is a []any, so RowCodec stores it: [rows, n0, v0, n1, v1, …]
// where rows counts the group's rows (inserts minus retractions), ni
// counts the values call i aggregated and vi is its running value (the
// sum, the extreme, the first or last value; nil for counts).
type aggregator struct {
	calls []AggCall
	// insertOnly: the input never retracts, so MIN and MAX keep only the
	// extreme, not every value.
	insertOnly bool
	// groups are the DISTINCT calls sharing a map by argument, inGroup
	// marks their calls, and groupSet gives group g's map of the current
	// key; all unset unless shareDistinct was called (see distinct.go).
	groups   []distinctGroup
	inGroup  []bool
	groupSet func(g int) *distinctSet
}

func (a *aggregator) newAcc() []any {
	acc := make([]any, a.accLen())
	a.initAcc(acc)
	return acc
}

// accLen is the length of an accumulator.
func (a *aggregator) accLen() int { return 1 + 2*len(a.calls) }

// initAcc makes acc, of accLen fields, an accumulator of no rows.
func (a *aggregator) initAcc(acc []any) {
	acc[0] = int64(0)
	for i := range a.calls {
		acc[1+2*i], acc[2+2*i] = int64(0), nil
	}
}

// countBoxes are the counts an accumulator most often holds, each boxed
// once. Go boxes 0 to 255 without allocating, a larger int64 afresh: a
// key's counts, updated with every row, were a new box each time, the
// garbage of every row and, kept by state, a box of each key's own
// apart from its accumulator.
var countBoxes = func() []any {
	b := make([]any, 1<<14)
	for i := range b {
		b[i] = int64(i)
	}
	return b
}()

// boxCount is n as an any, from countBoxes when it holds n.
func boxCount(n int64) any {
	if uint64(n) < uint64(len(countBoxes)) {
		return countBoxes[n]
	}
	return n
}

// rows is the number of rows acc aggregates.
func rows(acc []any) int64 { return acc[0].(int64) }

// needsSet reports whether call i keeps a multiset of values.
func (a *aggregator) needsSet(i int) bool {
	c := a.calls[i]
	if a.inGroup != nil && a.inGroup[i] {
		return false // its group's shared map counts its values
	}
	return c.Distinct || (!a.insertOnly && (c.Kind == Min || c.Kind == Max))
}

// accumulate folds one row into acc (which it modifies), or retracts it.
// set(i) gives call i's multiset when needsSet(i).
func (a *aggregator) accumulate(acc, fields []any, retract bool, set func(i int) multiset) error {
	if retract && a.insertOnly {
		return fmt.Errorf("%w: got a retraction; the planner must not mark this input insert-only", ErrUpdatesUnsupported)
	}
	sign := int64(1)
	if retract {
		sign = -1
	}
	acc[0] = boxCount(rows(acc) + sign)
	for i, c := range a.calls {
		if a.inGroup != nil && a.inGroup[i] {
			continue // folded by foldGroups, below
		}
		ok, err := passes(c, fields)
		if err != nil {
			return err
		}
		if !ok {
			continue // FILTER (WHERE …) is not TRUE for this row
		}
		var v any = true
		if c.Kind != CountStar {
			if c.Arg >= len(fields) {
				return fmt.Errorf("%w: %s reads field %d of a row of %d fields", ErrType, c, c.Arg, len(fields))
			}
			if v = widen(fields[c.Arg]); v == nil && c.Kind != Lag {
				continue // aggregates skip NULLs (LAG sees them)
			}
		}
		if err := a.fold(acc, i, v, sign, set); err != nil {
			return err
		}
	}
	if len(a.groups) > 0 {
		return a.foldGroups(acc, fields, sign, a.groupSet)
	}
	return nil
}

// fold adds (sign 1) or retracts (sign -1) the non-NULL value v to call i.
func (a *aggregator) fold(acc []any, i int, v any, sign int64, set func(int) multiset) error {
	c := a.calls[i]
	var ms multiset
	var after int64
	if a.needsSet(i) {
		ms = set(i)
		var before int64
		before, after = ms.add(v, sign)
		appeared, vanished := before <= 0 && after > 0, before > 0 && after <= 0
		if c.Distinct && ((sign > 0 && !appeared) || (sign < 0 && !vanished)) {
			return nil // a DISTINCT aggregate sees each value once
		}
	}
	return a.foldValue(acc, i, v, sign, ms, after)
}

// foldValue folds v into call i past its DISTINCT check; ms is its
// multiset (nil when it keeps none) and after v's count in it after the
// row.
func (a *aggregator) foldValue(acc []any, i int, v any, sign int64, ms multiset, after int64) error {
	c := a.calls[i]
	ni, vi := 1+2*i, 2+2*i
	n := acc[ni].(int64) + sign
	acc[ni] = boxCount(n)
	if ok, err := a.foldMore(acc, vi, c, v, sign); ok {
		return err
	}
	switch c.Kind {
	case Sum, Avg:
		return a.foldSum(acc, vi, c, v, sign)
	case Min, Max:
		cur := acc[vi]
		switch {
		case sign > 0 && (cur == nil || a.better(c.Kind, v, cur)):
			acc[vi] = rebox(v) // kept: not inside the row's block (pickOwned)
		case sign < 0 && n <= 0:
			acc[vi] = nil
		case sign < 0 && (cur == nil || (after <= 0 && compareValues(v, cur) == 0)):
			acc[vi] = a.extreme(c.Kind, ms)
		}
	case FirstValue, LastValue:
		if sign < 0 {
			return fmt.Errorf("%w: %s cannot retract", ErrUpdatesUnsupported, c)
		}
		if c.Kind == LastValue || acc[vi] == nil {
			acc[vi] = rebox(v)
		}
	}
	return nil
}

func (a *aggregator) foldSum(acc []any, vi int, c AggCall, v any, sign int64) error {
	switch v.(type) {
	case int64, float64, decimal.Decimal:
	default:
		return fmt.Errorf("%w: %s over a %T; SUM and AVG take numbers", ErrType, c, v)
	}
	if sign < 0 {
		var err error
		if v, err = negate(v); err != nil {
			return err
		}
	}
	if acc[vi] == nil {
		acc[vi] = v
		return nil
	}
	s, err := add(acc[vi], v)
	acc[vi] = s
	return err
}

// better reports whether v beats cur for MIN or MAX.
func (a *aggregator) better(k AggKind, v, cur any) bool {
	c := compareValues(v, cur)
	return (k == Min && c < 0) || (k == Max && c > 0)
}

// extreme finds the MIN or MAX of a multiset; nil when it is empty.
func (a *aggregator) extreme(k AggKind, ms multiset) any {
	var best any
	ms.each(func(v any) {
		if best == nil || a.better(k, v, best) {
			best = v
		}
	})
	return best
}

// merge folds a partial accumulator (LocalAggregate's output) into acc.
func (a *aggregator) merge(acc, partial []any) error {
	if len(partial) != len(acc) {
		return fmt.Errorf("%w: partial accumulator of %d fields, want %d", ErrType, len(partial), len(acc))
	}
	acc[0] = boxCount(rows(acc) + rows(partial))
	for i, c := range a.calls {
		ni, vi := 1+2*i, 2+2*i
		acc[ni] = boxCount(acc[ni].(int64) + partial[ni].(int64))
		pv := partial[vi]
		if pv == nil {
			continue
		}
		if acc[vi] != nil {
			if ok, err := a.mergeMore(acc, vi, c, pv); ok {
				if err != nil {
					return err
				}
				continue
			}
		}
		switch {
		case acc[vi] == nil:
			acc[vi] = pv
		case c.Kind == Sum || c.Kind == Avg:
			s, err := add(acc[vi], pv)
			if err != nil {
				return err
			}
			acc[vi] = s
		case (c.Kind == Min || c.Kind == Max) && a.better(c.Kind, pv, acc[vi]):
			acc[vi] = pv
		case c.Kind == LastValue:
			acc[vi] = pv
		}
	}
	return nil
}

// result computes every call's value from acc.
func (a *aggregator) result(acc []any) []any {
	out := make([]any, len(a.calls))
	for i, c := range a.calls {
		n, v := acc[1+2*i].(int64), acc[2+2*i]
		switch {
		case c.Kind == Lag:
			out[i] = lagResult(c, v)
		case c.Kind == CountStar || c.Kind == Count:
			out[i] = n
		case c.Kind == Collect:
			out[i] = collectResult(v)
		case n <= 0 || v == nil:
			out[i] = nil
		case c.Kind >= ListAgg || a.listKind(c.Kind):
			out[i], _ = a.resultMore(c, v, n)
		case c.Kind == Sum:
			out[i] = sumResult(c, v)
		case c.Kind == Avg:
			out[i] = avgResult(c, v, n)
		default:
			out[i] = v
		}
	}
	return out
}

// decimalScale is the scale of a DECIMAL argument: its declared one, or
// the value's.
func decimalScale(c AggCall, d decimal.Decimal) int32 {
	if c.ArgType != nil && c.ArgType.Kind == types.Decimal {
		return int32(c.ArgType.Scale)
	}
	return max(0, -d.Exponent())
}

func sumResult(c AggCall, v any) any {
	if d, ok := v.(decimal.Decimal); ok {
		return d.Round(decimalScale(c, d))
	}
	return v
}

func avgResult(c AggCall, v any, n int64) any {
	switch s := v.(type) {
	case int64:
		return s / n
	case float64:
		return s / float64(n)
	case decimal.Decimal:
		return s.DivRound(decimal.NewFromInt(n), max(6, decimalScale(c, s)))
	}
	return nil
}
