package expr

import (
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
	"slices"
)

func init() {
	register("COALESCE", 1, -1, "value, …", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famAny); err != nil {
			return nil, err
		}
		return c.coalesce(call, a)
	})
	register("IFNULL", 2, 2, "value, replacement", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famAny); err != nil {
			return nil, err
		}
		return c.coalesce(call, a)
	})
	register("NULLIF", 2, 2, "value, value", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famAny); err != nil {
			return nil, err
		}
		return c.nullIf(call, a)
	})
	register("IF", 3, 3, "condition, then, else", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famAny); err != nil {
			return nil, err
		}
		return c.ifFunc(call, a)
	})
	register("GREATEST LEAST", 1, -1, "value, …", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famAny); err != nil {
			return nil, err
		}
		return c.greatest(call, a)
	})
}

// common converts values to their least restrictive type, the result type
// of CASE, COALESCE, IF and ARRAY[…].
func (c *compiler) common(xs []*Compiled, at parser.Node, what string) ([]*Compiled, types.Type, error) {
	ts := make([]types.Type, len(xs))
	iv := NotInterval
	for i, x := range xs {
		ts[i] = x.Type
		if x.Interval != NotInterval {
			if iv != NotInterval && iv != x.Interval {
				return nil, types.Type{}, errAt(at, "%s mixes %s and %s", what, iv, x.Interval)
			}
			iv = x.Interval
		}
	}
	t, ok := leastRestrictive(ts)
	if !ok || (iv != NotInterval && t.Kind != types.BigInt) {
		return nil, types.Type{}, hintAt(at, "CAST the values to one type", "%s has values of incompatible types %s",
			what, typeList(ts))
	}
	out := make([]*Compiled, len(xs))
	for i, x := range xs {
		if iv != NotInterval {
			out[i] = x
			continue
		}
		y, err := c.coerce(x, t, x.Src.Position())
		if err != nil {
			return nil, types.Type{}, err
		}
		out[i] = y
	}
	return out, t, nil
}

// caseExpr compiles searched and simple CASE. A simple CASE evaluates its
// operand once and compares it with each WHEN value by =, so a NULL
// operand matches nothing.
func (c *compiler) caseExpr(x *parser.Case) (*Compiled, error) {
	var operand *Compiled
	var conds []*Compiled
	if x.Operand != nil {
		op, err := c.expr(x.Operand)
		if err != nil {
			return nil, err
		}
		vals := []*Compiled{op}
		for _, w := range x.Whens {
			v, err := c.expr(w.Cond)
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
		if vals, err = c.unifyAll(vals, x, "CASE"); err != nil {
			return nil, err
		}
		operand, conds = vals[0], vals[1:]
	} else {
		for _, w := range x.Whens {
			cond, err := c.expr(w.Cond)
			if err != nil {
				return nil, err
			}
			if err := requireBool(cond, "WHEN"); err != nil {
				return nil, err
			}
			conds = append(conds, cond)
		}
	}
	results := make([]*Compiled, 0, len(x.Whens)+1)
	for _, w := range x.Whens {
		r, err := c.expr(w.Result)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	var elseX *Compiled
	if x.Else != nil {
		e, err := c.expr(x.Else)
		if err != nil {
			return nil, err
		}
		results = append(results, e)
	} else {
		results = append(results, constant(x, nullType(), nil))
	}
	results, t, err := c.common(results, x, "CASE")
	if err != nil {
		return nil, err
	}
	elseX = results[len(results)-1]
	whens := results[:len(results)-1]
	konst := allConst(results) && allConst(conds) && (operand == nil || operand.Const)
	iv := NotInterval
	for _, r := range results {
		if r.Interval != NotInterval {
			iv = r.Interval
		}
	}
	general := func(row []any) (any, error) {
		var ov any
		if operand != nil {
			v, err := operand.Eval(row)
			if err != nil {
				return nil, err
			}
			if v == nil {
				return elseX.Eval(row)
			}
			ov = v
		}
		for i, cond := range conds {
			v, err := cond.Eval(row)
			if err != nil {
				return nil, err
			}
			var hit bool
			if operand != nil {
				hit = v != nil
				if hit {
					hit, _ = applyCmp(parser.Eq, ov, v)
				}
			} else {
				hit = v == true
			}
			if hit {
				return whens[i].Eval(row)
			}
		}
		return elseX.Eval(row)
	}
	eval := general
	if sw := c.integerSwitch(x, operand, conds); sw != nil {
		eval = sw.eval(whens, elseX, general)
	}
	return &Compiled{Type: t, Interval: iv, Const: konst, Eval: eval}, nil
}

// intSwitch is a CASE that compares one integer expression with integer
// constants: CASE x WHEN 0 THEN … WHEN 1 THEN …, or CASE WHEN x = 0 THEN …
// WHEN x = 1 THEN … with the same column x (the Nexmark table's rowtime).
// It evaluates x once and compares integers, not values through the
// comparison operators, once per WHEN.
type intSwitch struct {
	x    *Compiled
	keys []int64
}

// integerSwitch returns x's intSwitch, or nil when it is not one.
func (c *compiler) integerSwitch(x *parser.Case, operand *Compiled, conds []*Compiled) *intSwitch {
	sw := &intSwitch{x: operand}
	if operand == nil {
		col, consts := sameColumnEqualities(x)
		if col == nil {
			return nil
		}
		xc, err := c.expr(col)
		if err != nil {
			return nil
		}
		sw.x, conds = xc, make([]*Compiled, len(consts))
		for i, k := range consts {
			if conds[i], err = c.expr(k); err != nil {
				return nil
			}
		}
	}
	if !sw.x.Type.IsInteger() {
		return nil
	}
	for _, k := range conds {
		v, err := k.Eval(nil)
		n, ok := v.(int64)
		if !k.Const || err != nil || !ok || !k.Type.IsInteger() {
			return nil
		}
		sw.keys = append(sw.keys, n)
	}
	return sw
}

// sameColumnEqualities returns, for a searched CASE whose every WHEN is
// column = number (or number = column) of one column, the column and the
// numbers; nil otherwise.
func sameColumnEqualities(x *parser.Case) (*parser.Ident, []parser.Expr) {
	var col *parser.Ident
	var consts []parser.Expr
	for _, w := range x.Whens {
		b, ok := w.Cond.(*parser.Binary)
		if !ok || b.Op != parser.Eq {
			return nil, nil
		}
		id, idOK := b.L.(*parser.Ident)
		num, numOK := b.R.(*parser.NumberLit)
		if !idOK || !numOK {
			id, idOK = b.R.(*parser.Ident)
			num, numOK = b.L.(*parser.NumberLit)
		}
		if !idOK || !numOK || (col != nil && !slices.Equal(col.Parts, id.Parts)) {
			return nil, nil
		}
		col, consts = id, append(consts, num)
	}
	return col, consts
}

// eval evaluates the CASE whose WHENs compare with s.keys; a value of x
// that is not an int64 goes to general, the CASE as compiled.
func (s *intSwitch) eval(whens []*Compiled, elseX *Compiled, general func([]any) (any, error)) func([]any) (any, error) {
	return func(row []any) (any, error) {
		v, err := s.x.Eval(row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return elseX.Eval(row)
		}
		n, ok := v.(int64)
		if !ok {
			return general(row)
		}
		for i, k := range s.keys {
			if n == k {
				return whens[i].Eval(row)
			}
		}
		return elseX.Eval(row)
	}
}

// coalesce returns the first non-NULL argument; it is NULL only when all
// are. IFNULL is COALESCE of two.
func (c *compiler) coalesce(call *parser.FuncCall, args []*Compiled) (*Compiled, error) {
	xs, t, err := c.common(args, call, call.Name)
	if err != nil {
		return nil, err
	}
	t.Nullable = true
	for _, x := range args {
		t.Nullable = t.Nullable && x.Type.Nullable
	}
	if call.Name == "IFNULL" {
		t.Nullable = args[1].Type.Nullable
	}
	return &Compiled{Type: t, Interval: xs[0].Interval, Const: allConst(xs), Eval: func(row []any) (any, error) {
		for _, x := range xs {
			v, err := x.Eval(row)
			if err != nil || v != nil {
				return v, err
			}
		}
		return nil, nil
	}}, nil
}

// ifFunc is IF(cond, a, b): a when cond is TRUE, else b.
func (c *compiler) ifFunc(call *parser.FuncCall, args []*Compiled) (*Compiled, error) {
	if err := requireBool(args[0], "IF"); err != nil {
		return nil, err
	}
	xs, t, err := c.common(args[1:], call, "IF")
	if err != nil {
		return nil, err
	}
	cond, a, b := args[0], xs[0], xs[1]
	return &Compiled{Type: t, Interval: a.Interval, Const: allConst(args), Eval: func(row []any) (any, error) {
		v, err := cond.Eval(row)
		if err != nil {
			return nil, err
		}
		if v == true {
			return a.Eval(row)
		}
		return b.Eval(row)
	}}, nil
}

// nullIf is NULLIF(a, b): NULL when a = b, else a. a is evaluated once.
func (c *compiler) nullIf(call *parser.FuncCall, args []*Compiled) (*Compiled, error) {
	a, b := args[0], args[1]
	to, ok := cmpTarget(a.Type, b.Type)
	if !ok || a.Interval != b.Interval {
		return nil, c.cmpError(a, b, call, "NULLIF")
	}
	conv := c.convFn(a.Type, to)
	b2, err := c.coerce(b, to, call.Pos)
	if err != nil || conv == nil {
		return nil, c.cmpError(a, b, call, "NULLIF")
	}
	return &Compiled{Type: withNull(a.Type, true), Interval: a.Interval, Const: allConst(args),
		Eval: func(row []any) (any, error) {
			v, err := a.Eval(row)
			if err != nil || v == nil {
				return nil, err
			}
			w, err := b2.Eval(row)
			if err != nil || w == nil {
				return v, err
			}
			cv, err := conv(v)
			if err != nil {
				return nil, evalErr(call.Pos, "NULLIF: %v", err)
			}
			if eq, _ := applyCmp(parser.Eq, cv, w); eq {
				return nil, nil
			}
			return v, nil
		}}, nil
}

// convFn is the implicit conversion from one type to another as a value
// function, or nil when there is none.
func (c *compiler) convFn(from, to types.Type) caster {
	if noopCast(from, to) {
		return func(v any) (any, error) { return v, nil }
	}
	fn, err := castFn(from, to, c.loc())
	if err != nil {
		return nil
	}
	return fn
}

// greatest is GREATEST or LEAST: NULL when any argument is NULL.
func (c *compiler) greatest(call *parser.FuncCall, args []*Compiled) (*Compiled, error) {
	xs, t, err := c.common(args, call, call.Name)
	if err != nil {
		return nil, err
	}
	if !ordered(t) {
		return nil, errAt(call, "%s cannot order values of type %s", call.Name, typeName(t))
	}
	want := parser.Gt
	if call.Name == "LEAST" {
		want = parser.Lt
	}
	return &Compiled{Type: t, Interval: xs[0].Interval, Const: allConst(xs),
		Eval: strict(call.Pos, xs, func(v []any) (any, error) {
			best := v[0]
			for _, x := range v[1:] {
				if better, err := applyCmp(want, x, best); err != nil {
					return nil, err
				} else if better {
					best = x
				}
			}
			return best, nil
		})}, nil
}
