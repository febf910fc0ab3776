package expr

import (
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// requireBool checks that x is a condition: BOOLEAN or an untyped NULL.
func requireBool(x *Compiled, what string) error {
	if x.Type.Kind == types.Boolean || x.Type.Kind == types.Null {
		return nil
	}
	return hintAt(x.Src, "compare it with a value, e.g. x <> 0 or x IS NOT NULL",
		"%s requires a BOOLEAN operand, got %s", what, typeName(x.Type))
}

// logic compiles AND and OR with three-valued logic, evaluating the right
// operand only when the left does not decide the result.
func (c *compiler) logic(b *parser.Binary) (*Compiled, error) {
	l, err := c.expr(b.L)
	if err != nil {
		return nil, err
	}
	r, err := c.expr(b.R)
	if err != nil {
		return nil, err
	}
	if err := requireBool(l, b.Op.String()); err != nil {
		return nil, err
	}
	if err := requireBool(r, b.Op.String()); err != nil {
		return nil, err
	}
	// decisive is the operand value that decides the result alone: FALSE
	// for AND, TRUE for OR.
	decisive := b.Op == parser.Or
	le, re := l.Eval, r.Eval
	return &Compiled{
		Type:  boolType(l.Type.Nullable || r.Type.Nullable),
		Const: l.Const && r.Const,
		Eval: func(row []any) (any, error) {
			x, err := le(row)
			if err != nil {
				return nil, err
			}
			if x == decisive {
				return decisive, nil
			}
			y, err := re(row)
			if err != nil {
				return nil, err
			}
			if y == decisive {
				return decisive, nil
			}
			if x == nil || y == nil {
				return nil, nil
			}
			return !decisive, nil
		},
	}, nil
}

// is compiles x IS [NOT] NULL | TRUE | FALSE | UNKNOWN, which is never NULL.
func (c *compiler) is(x *parser.Is) (*Compiled, error) {
	in, err := c.expr(x.X)
	if err != nil {
		return nil, err
	}
	if x.What >= parser.IsJSONValue {
		if !in.Type.IsString() && in.Type.Kind != types.Null {
			return nil, errAt(x, "IS %s takes a string, got %s", x.What, in.Type.Base())
		}
	} else if x.What != parser.IsNull {
		if err := requireBool(in, "IS "+x.What.String()); err != nil {
			return nil, err
		}
	}
	test := func(v any) bool {
		switch x.What {
		case parser.IsTrue:
			return v == true
		case parser.IsFalse:
			return v == false
		case parser.IsJSONValue, parser.IsJSONScalar, parser.IsJSONArray, parser.IsJSONObject:
			return isJSON(x.What, v)
		}
		return v == nil // IS NULL, IS UNKNOWN
	}
	not, inner := x.Not, in.Eval
	return &Compiled{Type: boolType(false), Const: in.Const, Eval: func(row []any) (any, error) {
		v, err := inner(row)
		if err != nil {
			return nil, err
		}
		return test(v) != not, nil
	}}, nil
}

// not compiles NOT x.
func (c *compiler) not(u *parser.Unary, in *Compiled) (*Compiled, error) {
	if err := requireBool(in, "NOT"); err != nil {
		return nil, err
	}
	return &Compiled{Type: boolType(in.Type.Nullable), Const: in.Const,
		Eval: strict(u.Pos, []*Compiled{in}, func(v []any) (any, error) { return !v[0].(bool), nil })}, nil
}
