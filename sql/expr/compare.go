package expr

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// ordered reports whether the values of t have an order (as opposed to
// equality only).
func ordered(t types.Type) bool {
	switch t.Kind {
	case types.Array, types.Map, types.Row, types.Multiset:
		return false
	}
	return true
}

// cmpTarget is the type two operands convert to for comparison: numbers
// to their common numeric type, DATE and timestamps to the wider
// timestamp, and a string compared with a number, a time or a boolean to
// that type (as Calcite's implicit coercion does). NULL takes the other
// side's type.
func cmpTarget(lt, rt types.Type) (types.Type, bool) {
	switch {
	case lt.Kind == types.Null:
		return rt, true
	case rt.Kind == types.Null:
		return lt, true
	case lt.IsString() && (rt.IsNumeric() || isTemporal(rt) || rt.Kind == types.Boolean || rt.Kind == types.Time):
		return plain(rt), true
	case rt.IsString() && (lt.IsNumeric() || isTemporal(lt) || lt.Kind == types.Boolean || lt.Kind == types.Time):
		return plain(lt), true
	}
	return join(lt, rt)
}

// unifyAll converts operands to one comparison domain; what names the
// operation for errors.
func (c *compiler) unifyAll(xs []*Compiled, at parser.Node, what string) ([]*Compiled, error) {
	// Intervals compare only with intervals of their kind (as int64).
	iv, first := NotInterval, -1
	for i, x := range xs {
		if x.Type.Kind == types.Null && x.Interval == NotInterval {
			continue
		}
		if first < 0 {
			iv, first = x.Interval, i
		} else if x.Interval != iv {
			return nil, c.cmpError(xs[first], x, at, what)
		}
	}
	to := nullType()
	for _, x := range xs {
		t, ok := cmpTarget(to, x.Type)
		if !ok {
			return nil, c.cmpError(xs[0], x, at, what)
		}
		to = t
	}
	if iv != NotInterval {
		return xs, nil
	}
	out := make([]*Compiled, len(xs))
	for i, x := range xs {
		y, err := c.coerce(x, to, at.Position())
		if err != nil {
			return nil, c.cmpError(xs[0], x, at, what)
		}
		out[i] = y
	}
	return out, nil
}

func (c *compiler) cmpError(l, r *Compiled, at parser.Node, what string) error {
	if l == r {
		return hintAt(at, "CAST the values to one type", "cannot compare values of type %s in %s", describeType(l), what)
	}
	return hintAt(at, "CAST one side to the other's type", "cannot compare %s with %s in %s",
		describeType(l), describeType(r), what)
}

// unify converts two operands to one comparison domain.
func (c *compiler) unify(l, r *Compiled, at parser.Node, what string) (*Compiled, *Compiled, error) {
	xs, err := c.unifyAll([]*Compiled{l, r}, at, what)
	if err != nil {
		return nil, nil, err
	}
	return xs[0], xs[1], nil
}

func describeType(x *Compiled) string {
	if x.Interval != NotInterval {
		return x.Interval.String()
	}
	return typeName(x.Type)
}

// compare compiles =, <>, <, <=, >, >=, IS [NOT] DISTINCT FROM.
func (c *compiler) compare(b *parser.Binary) (*Compiled, error) {
	l, err := c.expr(b.L)
	if err != nil {
		return nil, err
	}
	r, err := c.expr(b.R)
	if err != nil {
		return nil, err
	}
	return c.comparison(b.Op, l, r, b)
}

// comparison compiles l op r for compiled operands.
func (c *compiler) comparison(op parser.BinaryOp, l, r *Compiled, at parser.Node) (*Compiled, error) {
	l0, r0 := l, r
	l, r, err := c.unify(l, r, at, op.String())
	if err != nil {
		return nil, err
	}
	if (op >= parser.Lt && op <= parser.Ge) && (!ordered(l.Type) || !ordered(r.Type)) {
		return nil, errAt(at, "%s values cannot be ordered with %s; only = and <> compare them",
			typeName(l.Type), op)
	}
	pos := at.Position()
	out := &Compiled{Const: l.Const && r.Const}
	if op == parser.IsDistinctFrom || op == parser.IsNotDistinctFrom {
		want := op == parser.IsNotDistinctFrom
		out.Type = boolType(false)
		le, re := l.Eval, r.Eval
		out.Eval = func(row []any) (any, error) {
			x, err := le(row)
			if err != nil {
				return nil, err
			}
			y, err := re(row)
			if err != nil {
				return nil, err
			}
			return nullSafeEqual(x, y) == want, nil
		}
		return out, nil
	}
	out.Type = boolType(l.Type.Nullable || r.Type.Nullable)
	out.Eval = strict2(pos, l, r, func(x, y any) (any, error) { return applyCmp(op, x, y) })
	if f := caseMappedEq(op, l, r); f != nil {
		out.Eval = f
		return out, nil
	}
	if f := scaledComparison(op, l0, r0, out.Eval); f != nil {
		out.Eval = f
		return out, nil
	}
	switch {
	case l.Type.IsInteger() && r.Type.IsInteger():
		out.Eval = typedComparison[int64](pos, op, l, r, cmp.Compare[int64])
	case l.Type.IsString() && r.Type.IsString():
		out.Eval = typedComparison[string](pos, op, l, r, strings.Compare)
	}
	return out, nil
}

// caseMappedEq compiles UPPER/LOWER(x) = or <> a constant (either side),
// or returns nil.
func caseMappedEq(op parser.BinaryOp, l, r *Compiled) func([]any) (any, error) {
	if op != parser.Eq && op != parser.Ne {
		return nil
	}
	if caseMappedOf(l) == nil {
		l, r = r, l
	}
	m := caseMappedOf(l)
	if m == nil || !r.Const {
		return nil
	}
	v, err := r.Eval(nil)
	if err != nil {
		return nil
	}
	return m.equalsAny([]any{v}, op == parser.Ne)
}

// typedComparison is strict2's comparison for two integers (int64 values,
// see package types) or two strings (compared as compareValues does)
// without applyCmp's dispatch on the values' types, which it leaves to
// applyCmp for values of other types (a caller's bug).
// It writes strict2's steps out: the call through strict2's f per row is
// part of what it saves.
func typedComparison[T int64 | string](pos parser.Pos, op parser.BinaryOp, l, r *Compiled, compare func(a, b T) int) func([]any) (any, error) {
	cmp := func(a, b T) bool {
		switch op {
		case parser.Eq:
			return a == b
		case parser.Ne:
			return a != b
		}
		n := compare(a, b)
		switch op {
		case parser.Lt:
			return n < 0
		case parser.Le:
			return n <= 0
		case parser.Gt:
			return n > 0
		}
		return n >= 0
	}
	le, re := l.Eval, r.Eval
	return func(row []any) (any, error) {
		x, err := le(row)
		if err != nil || x == nil {
			return nil, err
		}
		y, err := re(row)
		if err != nil || y == nil {
			return nil, err
		}
		a, ok1 := x.(T)
		b, ok2 := y.(T)
		if !ok1 || !ok2 {
			v, err := applyCmp(op, x, y)
			return v, wrapEval(pos, err)
		}
		return cmp(a, b), nil
	}
}

// applyCmp compares two non-NULL values of one domain. Doubles compare as
// Java's primitives do, so NaN equals nothing.
func applyCmp(op parser.BinaryOp, a, b any) (bool, error) {
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok {
			switch op {
			case parser.Eq:
				return x == y, nil
			case parser.Ne:
				return x != y, nil
			case parser.Lt:
				return x < y, nil
			case parser.Le:
				return x <= y, nil
			case parser.Gt:
				return x > y, nil
			case parser.Ge:
				return x >= y, nil
			}
		}
	}
	switch op {
	case parser.Eq:
		return valuesEqual(a, b), nil
	case parser.Ne:
		return !valuesEqual(a, b), nil
	}
	n, ok := compareValues(a, b)
	if !ok {
		return false, fmt.Errorf("cannot compare %s with %s", showValue(a), showValue(b))
	}
	return cmpHolds(op, n), nil
}

// cmpHolds reports whether op (=, <>, <, <=, >, >=) holds for two values
// that compare as n (negative, zero, positive).
func cmpHolds(op parser.BinaryOp, n int) bool {
	switch op {
	case parser.Eq:
		return n == 0
	case parser.Ne:
		return n != 0
	case parser.Lt:
		return n < 0
	case parser.Le:
		return n <= 0
	case parser.Gt:
		return n > 0
	}
	return n >= 0
}

// between compiles x [NOT] BETWEEN lo AND hi as x >= lo AND x <= hi (or its
// negation), with three-valued logic: 12 BETWEEN 10 AND NULL is NULL,
// 12 BETWEEN NULL AND 10 is FALSE.
func (c *compiler) between(b *parser.Between) (*Compiled, error) {
	x, err := c.expr(b.X)
	if err != nil {
		return nil, err
	}
	lo, err := c.expr(b.Lo)
	if err != nil {
		return nil, err
	}
	hi, err := c.expr(b.Hi)
	if err != nil {
		return nil, err
	}
	geOp, leOp := parser.Ge, parser.Le
	if b.Not {
		geOp, leOp = parser.Lt, parser.Gt
	}
	ge, err := c.comparison(geOp, x, lo, b)
	if err != nil {
		return nil, err
	}
	le, err := c.comparison(leOp, x, hi, b)
	if err != nil {
		return nil, err
	}
	// NOT BETWEEN is x < lo OR x > hi; BETWEEN is x >= lo AND x <= hi.
	decisive := b.Not
	ge1, le1 := ge.Eval, le.Eval
	return &Compiled{Type: boolType(ge.Type.Nullable || le.Type.Nullable), Const: ge.Const && le.Const,
		Eval: func(row []any) (any, error) {
			p, err := ge1(row)
			if err != nil {
				return nil, err
			}
			if p == decisive {
				return decisive, nil
			}
			q, err := le1(row)
			if err != nil {
				return nil, err
			}
			if q == decisive {
				return decisive, nil
			}
			if p == nil || q == nil {
				return nil, nil
			}
			return !decisive, nil
		}}, nil
}

// inList compiles x [NOT] IN (a, b, …): TRUE when x equals an element,
// otherwise NULL when x or an element is NULL, otherwise FALSE. x is
// evaluated once.
func (c *compiler) inList(in *parser.InList) (*Compiled, error) {
	xs := make([]*Compiled, 0, len(in.List)+1)
	for _, e := range append([]parser.Expr{in.X}, in.List...) {
		y, err := c.expr(e)
		if err != nil {
			return nil, err
		}
		xs = append(xs, y)
	}
	xs, err := c.unifyAll(xs, in, "IN")
	if err != nil {
		return nil, err
	}
	not := in.Not
	x, list := xs[0], xs[1:]
	if m := caseMappedOf(x); m != nil && allConst(list) {
		consts := make([]any, len(list))
		for i, e := range list {
			if consts[i], err = e.Eval(nil); err != nil {
				return nil, err
			}
		}
		if f := m.equalsAny(consts, not); f != nil {
			return &Compiled{Type: boolType(anyNullable(xs)), Const: x.Const, Eval: f}, nil
		}
	}
	return &Compiled{Type: boolType(anyNullable(xs)), Const: allConst(xs), Eval: func(row []any) (any, error) {
		v, err := x.Eval(row)
		if err != nil || v == nil {
			return nil, err
		}
		sawNull := false
		for _, e := range list {
			w, err := e.Eval(row)
			if err != nil {
				return nil, err
			}
			if w == nil {
				sawNull = true
				continue
			}
			if eq, _ := applyCmp(parser.Eq, v, w); eq {
				return !not, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return not, nil
	}}, nil
}
