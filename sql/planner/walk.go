package planner

import "github.com/weirstream/weir/sql/parser"

// walk calls f on e and every sub-expression, parents first; f returns
// false to skip a node's children.
func walk(e parser.Expr, f func(parser.Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	for _, c := range children(e) {
		walk(c, f)
	}
}

func children(e parser.Expr) []parser.Expr {
	switch e := e.(type) {
	case *parser.Unary:
		return []parser.Expr{e.X}
	case *parser.Binary:
		return []parser.Expr{e.L, e.R}
	case *parser.Is:
		return []parser.Expr{e.X}
	case *parser.Between:
		return []parser.Expr{e.X, e.Lo, e.Hi}
	case *parser.Like:
		return []parser.Expr{e.X, e.Pattern, e.Escape}
	case *parser.InList:
		return append([]parser.Expr{e.X}, e.List...)
	case *parser.Case:
		out := []parser.Expr{e.Operand, e.Else}
		for _, w := range e.Whens {
			out = append(out, w.Cond, w.Result)
		}
		return out
	case *parser.Cast:
		return []parser.Expr{e.X}
	case *parser.FuncCall:
		return append(append([]parser.Expr(nil), e.Args...), e.Filter)
	case *parser.FieldAccess:
		return []parser.Expr{e.X}
	case *parser.Index:
		return []parser.Expr{e.X, e.Index}
	case *parser.ArrayCtor:
		return e.Elems
	case *parser.MapCtor:
		return e.Elems
	case *parser.NamedArg:
		return []parser.Expr{e.Value}
	}
	return nil
}
