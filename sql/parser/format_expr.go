package parser

import (
	"regexp"
	"strings"
)

var endsWithUnit = regexp.MustCompile(`(YEAR|MONTH|DAY|HOUR|MINUTE|SECOND)(\(\d+\))?$`)

// Precedence levels of expressions, loosest first, matching the parse
// functions in expr.go.
const (
	precOr = iota + 1
	precAnd
	precNot
	precIs
	precComparison
	precPredicate
	precAdditive
	precMultiplicative
	precUnary
	precPrimary
)

func precedence(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		switch e.Op {
		case Or:
			return precOr
		case And:
			return precAnd
		case IsDistinctFrom, IsNotDistinctFrom:
			return precIs
		case Add, Sub:
			return precAdditive
		case Mul, Div, Mod, Concat:
			return precMultiplicative
		}
		return precComparison
	case *Unary:
		if e.Op == Not {
			return precNot
		}
		return precUnary
	case *Is:
		return precIs
	case *Between, *Like, *InList, *InQuery:
		return precPredicate
	}
	return precPrimary
}

// expr prints e, in parentheses if it binds more loosely than min.
func (f *formatter) expr(e Expr, min int) {
	p := precedence(e)
	if p < min || (f.fullParens && p < precPrimary) {
		f.WriteString("(")
		f.exprInner(e)
		f.WriteString(")")
		return
	}
	f.exprInner(e)
}

func (f *formatter) exprList(list []Expr) {
	for i, e := range list {
		if i > 0 {
			f.WriteString(", ")
		}
		f.expr(e, 0)
	}
}

func (f *formatter) exprInner(e Expr) {
	switch e := e.(type) {
	case *Ident:
		f.WriteString(formatName(e.Parts))
	case *Star:
		if e.Qualifier != nil {
			f.WriteString(formatName(e.Qualifier) + ".")
		}
		f.WriteString("*")
	case *NumberLit:
		f.WriteString(e.Text)
	case *StringLit:
		f.WriteString(quoteString(e.Value))
	case *BoolLit:
		f.WriteString(map[bool]string{true: "TRUE", false: "FALSE"}[e.Value])
	case *NullLit:
		f.WriteString("NULL")
	case *TypedLit:
		f.WriteString(e.Kind.String() + " " + quoteString(e.Value))
	case *IntervalLit:
		f.interval(e)
	case *Unary:
		f.unary(e)
	case *Binary:
		p := precedence(e)
		f.expr(e.L, p)
		f.WriteString(" " + e.Op.String() + " ")
		f.expr(e.R, p+1)
	case *Is:
		f.expr(e.X, precIs)
		f.WriteString(" IS ")
		if e.Not {
			f.WriteString("NOT ")
		}
		f.WriteString(e.What.String())
	default:
		f.predicateOrOther(e)
	}
}

func (f *formatter) unary(e *Unary) {
	if e.Op == Not {
		f.WriteString("NOT ")
		f.expr(e.X, precNot)
		return
	}
	var sub formatter
	sub.fullParens = f.fullParens
	sub.expr(e.X, precUnary)
	f.WriteString(e.Op.String())
	// "-" then "-1" would start a comment.
	if s := sub.String(); strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		f.WriteString(" ")
	}
	f.WriteString(sub.String())
}

func (f *formatter) not(not bool) {
	if not {
		f.WriteString(" NOT")
	}
}

func (f *formatter) predicateOrOther(e Expr) {
	switch e := e.(type) {
	case *Between:
		f.expr(e.X, precPredicate)
		f.not(e.Not)
		f.WriteString(" BETWEEN ")
		f.expr(e.Lo, precAdditive)
		f.WriteString(" AND ")
		f.expr(e.Hi, precAdditive)
	case *Like:
		f.expr(e.X, precPredicate)
		f.not(e.Not)
		if e.Similar {
			f.WriteString(" SIMILAR TO ")
		} else {
			f.WriteString(" LIKE ")
		}
		f.expr(e.Pattern, precAdditive)
		if e.Escape != nil {
			f.WriteString(" ESCAPE ")
			f.expr(e.Escape, precAdditive)
		}
	case *InList:
		f.expr(e.X, precPredicate)
		f.not(e.Not)
		f.WriteString(" IN (")
		f.exprList(e.List)
		f.WriteString(")")
	case *InQuery:
		f.expr(e.X, precPredicate)
		f.not(e.Not)
		f.WriteString(" IN (")
		f.query(e.Query)
		f.WriteString(")")
	case *Exists:
		f.WriteString("EXISTS (")
		f.query(e.Query)
		f.WriteString(")")
	case *Subquery:
		f.WriteString("(")
		f.query(e.Query)
		f.WriteString(")")
	default:
		f.otherExpr(e)
	}
}

func (f *formatter) otherExpr(e Expr) {
	switch e := e.(type) {
	case *Case:
		f.caseExpr(e)
	case *Cast:
		if e.Try {
			f.WriteString("TRY_CAST(")
		} else {
			f.WriteString("CAST(")
		}
		f.expr(e.X, 0)
		f.WriteString(" AS ")
		f.typ(e.Type)
		f.WriteString(")")
	case *FuncCall:
		f.call(e)
	case *Keyword:
		f.WriteString(e.Word)
	case *TableArg:
		f.WriteString("TABLE " + formatName(e.Name))
		if len(e.PartitionBy) == 1 {
			f.WriteString(" PARTITION BY ")
			f.expr(e.PartitionBy[0], 0)
		} else if e.PartitionBy != nil {
			f.WriteString(" PARTITION BY (")
			f.exprList(e.PartitionBy)
			f.WriteString(")")
		}
	case *Descriptor:
		f.WriteString("DESCRIPTOR")
		f.identList(e.Columns)
	case *NamedArg:
		name := e.Name
		if !isSimpleIdent(name) {
			name = quoteIdent(name)
		}
		f.WriteString(name + " => ")
		f.expr(e.Value, 0)
	case *ArrayCtor:
		f.WriteString("ARRAY[")
		f.exprList(e.Elems)
		f.WriteString("]")
	case *MapCtor:
		f.WriteString("MAP[")
		f.exprList(e.Elems)
		f.WriteString("]")
	case *FieldAccess:
		f.postfixOperand(e.X)
		f.WriteString("." + quoteIdent(e.Field))
	case *Index:
		f.postfixOperand(e.X)
		f.WriteString("[")
		f.expr(e.Index, 0)
		f.WriteString("]")
	case *GroupingSets:
		f.groupingSets(e)
	default:
		f.printf("<%T>", e)
	}
}

// postfixOperand prints the operand of x.f or x[i]. A number is
// parenthesized: 1.f would lex as the number "1." and a name.
func (f *formatter) postfixOperand(x Expr) {
	if _, num := x.(*NumberLit); num {
		f.WriteString("(")
		f.exprInner(x)
		f.WriteString(")")
		return
	}
	f.expr(x, precPrimary)
}

func (f *formatter) caseExpr(e *Case) {
	f.WriteString("CASE")
	if e.Operand != nil {
		f.WriteString(" ")
		f.expr(e.Operand, 0)
	}
	for _, w := range e.Whens {
		f.WriteString(" WHEN ")
		f.expr(w.Cond, 0)
		f.WriteString(" THEN ")
		f.expr(w.Result, 0)
	}
	if e.Else != nil {
		f.WriteString(" ELSE ")
		f.expr(e.Else, 0)
	}
	f.WriteString(" END")
}

func (f *formatter) interval(e *IntervalLit) {
	f.WriteString("INTERVAL " + quoteString(e.Value) + " " + e.From.String())
	if e.FromPrecision > 0 {
		f.printf("(%d)", e.FromPrecision)
	}
	if e.To != NoUnit {
		f.WriteString(" TO " + e.To.String())
		if e.ToPrecision > 0 {
			f.printf("(%d)", e.ToPrecision)
		}
	}
}

// call prints a function call, using the special syntax of EXTRACT,
// FLOOR/CEIL … TO, POSITION … IN and TRIM when the arguments have that
// shape (see FuncCall).
func (f *formatter) call(c *FuncCall) {
	plain := !c.Distinct && c.Filter == nil && c.Over == nil
	if niladic[c.Name] && c.Args == nil && plain {
		f.WriteString(c.Name)
		return
	}
	name := c.Name
	// A call named TRY_CAST or DESCRIPTOR (read from `DESCRIPTOR`(…) or
	// from (DESCRIPTOR(…)), outside an argument list) is quoted: bare, it
	// would read back as the special form.
	if !isSimpleIdent(name) || reserved[name] || name == "TRY_CAST" || name == "DESCRIPTOR" {
		name = quoteIdent(name)
	}
	f.WriteString(name + "(")
	if !f.specialArgs(c) {
		if c.Distinct {
			f.WriteString("DISTINCT ")
		}
		for i, a := range c.Args {
			if i > 0 {
				f.WriteString(", ")
			}
			if i == 0 && c.Name == "POSITION" {
				f.expr(a, precAdditive)
			} else {
				f.expr(a, 0)
			}
		}
	}
	f.WriteString(")")
	if c.Filter != nil {
		f.WriteString(" FILTER (WHERE ")
		f.expr(c.Filter, 0)
		f.WriteString(")")
	}
	if c.Over != nil {
		f.WriteString(" OVER ")
		f.windowSpec(c.Over)
	}
}

func (f *formatter) specialArgs(c *FuncCall) bool {
	args := c.Args
	switch c.Name {
	case "EXTRACT":
		if k, ok := firstKeyword(args); ok && len(args) == 2 {
			f.WriteString(k.Word + " FROM ")
			f.expr(args[1], 0)
			return true
		}
	case "FLOOR", "CEIL", "CEILING":
		if len(args) == 2 {
			if k, ok := args[1].(*Keyword); ok {
				// An argument ending in INTERVAL '5' MINUTE would take the
				// TO as part of the interval.
				sub := formatter{fullParens: f.fullParens}
				sub.expr(args[0], 0)
				if endsWithUnit.MatchString(sub.String()) {
					f.WriteString("(" + sub.String() + ")")
				} else {
					f.WriteString(sub.String())
				}
				f.WriteString(" TO " + k.Word)
				return true
			}
		}
	case "POSITION":
		if len(args) == 2 {
			f.expr(args[0], precAdditive)
			f.WriteString(" IN ")
			f.expr(args[1], 0)
			return true
		}
	case "OVERLAY":
		if len(args) == 3 || len(args) == 4 {
			f.expr(args[0], 0)
			f.WriteString(" PLACING ")
			f.expr(args[1], 0)
			f.WriteString(" FROM ")
			f.expr(args[2], 0)
			if len(args) == 4 {
				f.WriteString(" FOR ")
				f.expr(args[3], 0)
			}
			return true
		}
	case "JSON_EXISTS", "JSON_VALUE", "JSON_QUERY":
		if len(args) > 2 {
			f.expr(args[0], 0)
			f.WriteString(", ")
			f.expr(args[1], 0)
			for _, a := range args[2:] {
				f.WriteString(" ")
				if k, ok := a.(*Keyword); ok {
					f.WriteString(k.Word)
				} else {
					f.expr(a, precAdditive)
				}
			}
			return true
		}
	case "JSON_OBJECT", "JSON_ARRAY":
		if k, ok := firstKeyword(args); ok {
			f.jsonArgs(c.Name == "JSON_OBJECT", k, args[1:])
			return true
		}
	case "TRIM":
		if k, ok := firstKeyword(args); ok && len(args) == 3 {
			f.WriteString(k.Word + " ")
			f.expr(args[1], 0)
			f.WriteString(" FROM ")
			f.expr(args[2], 0)
			return true
		}
	}
	return false
}

// jsonArgs prints JSON_OBJECT's KEY k VALUE v pairs or JSON_ARRAY's
// values, then the ON NULL clause.
func (f *formatter) jsonArgs(object bool, onNull *Keyword, args []Expr) {
	step := 1
	if object {
		step = 2
	}
	for i := 0; i+step <= len(args); i += step {
		if i > 0 {
			f.WriteString(", ")
		}
		if object {
			f.WriteString("KEY ")
			f.expr(args[i], precAdditive)
			f.WriteString(" VALUE ")
			f.expr(args[i+1], precAdditive)
		} else {
			f.expr(args[i], 0)
		}
	}
	if len(args) > 0 {
		f.WriteString(" ")
	}
	f.WriteString(onNull.Word + " ON NULL")
}

func firstKeyword(args []Expr) (*Keyword, bool) {
	if len(args) == 0 {
		return nil, false
	}
	k, ok := args[0].(*Keyword)
	return k, ok
}
