package expr

import (
	"time"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// Column is one column of the row an expression reads.
type Column struct {
	// Qualifier is the table alias or name the column can be qualified
	// with (A in A.id), or "".
	Qualifier string
	Name      string
	Type      types.Type
	// Shadowed hides the column from unqualified references: the right
	// side's copy of a JOIN … USING column, which an unqualified name
	// reads from the left. Default false.
	Shadowed bool
}

// Scope is what an expression may refer to: the columns of its input row,
// in row order, and the session's settings.
type Scope struct {
	// Columns are the input row's columns; row[i] is Columns[i]'s value.
	Columns []Column
	// CaseInsensitive lets a name that matches no column exactly resolve to
	// the single column it matches ignoring case. Default false: names are
	// case-sensitive, as in Flink, and a near miss is reported with a hint.
	CaseInsensitive bool
	// Location is the session time zone (Flink's table.local-time-zone),
	// used to show TIMESTAMP_LTZ values and to convert between TIMESTAMP
	// and TIMESTAMP_LTZ. Default (nil): UTC.
	Location *time.Location
	// Now is the clock that CURRENT_TIMESTAMP, NOW(), LOCALTIMESTAMP,
	// CURRENT_DATE, CURRENT_ROW_TIMESTAMP(), PROCTIME() and UNIX_TIMESTAMP()
	// read, once per evaluation. Default (nil): time.Now.
	Now func() time.Time
	// Functions are user-defined scalar functions by upper-case name
	// (CREATE FUNCTION); they shadow no built-in function.
	Functions map[string]*Function
	// Resolve, when set, is offered every expression and sub-expression
	// before it is compiled; a non-nil result is used as its compiled form.
	// The planner uses it to read aggregate calls, window functions and
	// grouping expressions from the columns of its own operators. It
	// returns (nil, nil) to let Compile proceed.
	Resolve func(e parser.Expr) (*Compiled, error)
}

// Function is a user-defined scalar function.
type Function struct {
	// Result returns the result type for the argument types, or an error
	// saying why the function cannot take them.
	Result func(args []types.Type) (types.Type, error)
	// Eval computes the result. It is given NULL arguments as nil, and
	// must be safe for concurrent use.
	Eval func(args []any) (any, error)
	// Deterministic lets Compile evaluate a call with constant arguments
	// once, at compile time.
	Deterministic bool
}

// IntervalKind tells an INTERVAL expression from a number.
type IntervalKind int

const (
	// NotInterval marks every expression that is not an interval.
	NotInterval IntervalKind = iota
	// DayTimeInterval values are int64 milliseconds (INTERVAL '5' SECOND
	// is 5000).
	DayTimeInterval
	// YearMonthInterval values are int64 months.
	YearMonthInterval
)

// String is the SQL type of the interval kind (INTERVAL DAY TO SECOND or
// INTERVAL YEAR TO MONTH), "" for NotInterval.
func (k IntervalKind) String() string {
	return [...]string{"", "INTERVAL DAY TO SECOND", "INTERVAL YEAR TO MONTH"}[k]
}

// Compiled is a compiled expression.
type Compiled struct {
	// Type is the result type. Its Nullable is false only when the value
	// can never be NULL. Intervals have Type BIGINT NOT NULL.
	Type types.Type
	// Interval is set when the value is an interval rather than a number.
	Interval IntervalKind
	// Eval computes the value for one input row. It is safe for concurrent
	// use. Its errors are *Error values with Runtime set.
	Eval func(row []any) (any, error)
	// Src is the expression compiled.
	Src parser.Expr
	// Const reports a value that depends on no column and no clock; Eval
	// then ignores its row and returns the same value every time.
	Const bool
	// guarded, set by guard, is what guard wrapped: ProjectInto evaluates
	// it under one recover per row instead of Eval's one per call.
	guarded *guarded
	// column, when set, says that Eval returns one input column as is
	// (see Column).
	column *columnRef
	// caseMapped, when set, says that Eval is UPPER or LOWER of an
	// argument: = and IN against constants compare without building the
	// mapped string (see caseMapping).
	caseMapped *caseMapping
	// scaled, when set, says that Eval is a DECIMAL constant times an
	// integer: comparisons with constants compare integers (see
	// scaledProduct).
	scaled *scaledProduct
	// now, when set, says that Eval is the current instant on the default
	// clock (see IsCurrentTimestamp).
	now *nowMark
}

// nowMark is the Compiled that is the current instant: a copy of it
// (whose Eval may have been replaced) is not it.
type nowMark struct{ self *Compiled }

// IsCurrentTimestamp reports whether c is CURRENT_TIMESTAMP, NOW(),
// CURRENT_ROW_TIMESTAMP() or PROCTIME() as it is, read from the default
// clock (the Scope had no Now): the current instant as TIMESTAMP_LTZ(3).
// A projection may then give its column CurrentTimestamp of a reading of
// its own, its subtask's processing time, instead of calling Eval, which
// reads the wall clock each row.
func (c *Compiled) IsCurrentTimestamp() bool { return c.now != nil && c.now.self == c }

// CurrentTimestamp is the value CURRENT_TIMESTAMP and PROCTIME() have at
// the instant ms (milliseconds since the epoch): a TIMESTAMP_LTZ(3), the
// Eval of an IsCurrentTimestamp expression's value at any instant of
// that millisecond.
func CurrentTimestamp(ms int64) any { return time.UnixMilli(ms).UTC() }

// columnRef is the column a Compiled reads as is, and that Compiled: a
// copy of it (whose Eval may have been replaced) is not it.
type columnRef struct {
	self  *Compiled
	index int
}

// ColumnRef returns the expression that reads column i of its row as is,
// of type t.
func ColumnRef(i int, t types.Type) *Compiled {
	c := &Compiled{Type: t, Eval: func(row []any) (any, error) { return row[i], nil }}
	c.column = &columnRef{self: c, index: i}
	return c
}

// Column reports whether c reads one column of its row as is (a column
// reference compiled from a name, or ColumnRef), and which: a projection
// of such expressions over another projection can read that one's
// expressions instead.
func (c *Compiled) Column() (int, bool) {
	if c.column == nil || c.column.self != c {
		return 0, false
	}
	return c.column.index, true
}

// guarded is an evaluator without guard's recover, and the Compiled guard
// returned: a copy of that Compiled (whose Eval may have been replaced)
// is not it, and evaluates by its Eval.
type guarded struct {
	self  *Compiled
	inner func(row []any) (any, error)
	pos   parser.Pos
}

// Compile type-checks e against s and returns its evaluator. Errors are
// *Error values carrying e's position (errors.Is(err, ErrInvalid)).
func Compile(e parser.Expr, s *Scope) (*Compiled, error) {
	if s == nil {
		s = &Scope{}
	}
	c := &compiler{s: s}
	out, err := c.expr(e)
	if err != nil {
		return nil, err
	}
	return guard(out), nil
}

// guard makes Eval report, rather than panic on, a row whose values do
// not have the Go types their columns declare (see package types): a
// caller's bug that should fail the job with a message, not crash it.
func guard(out *Compiled) *Compiled {
	inner := out.Eval
	pos := parser.Pos{}
	if out.Src != nil {
		pos = out.Src.Position()
	}
	g := *out
	g.Eval = func(row []any) (v any, err error) {
		defer func() {
			if r := recover(); r != nil {
				v, err = nil, panicErr(pos, row, r)
			}
		}()
		return inner(row)
	}
	g.guarded = &guarded{self: &g, inner: inner, pos: pos}
	if i, ok := out.Column(); ok {
		g.column = &columnRef{self: &g, index: i}
	}
	if sp := scaledOf(out); sp != nil {
		c := *sp
		c.self = &g
		g.scaled = &c
	}
	if out.IsCurrentTimestamp() {
		g.now = &nowMark{self: &g}
	}
	return &g
}

func panicErr(pos parser.Pos, row []any, r any) error {
	return evalErr(pos, "cannot evaluate the expression on row %s: %v", untypedString(row), r)
}

// ProjectInto returns what evaluates each of evals over a row into out
// (len(evals) long): out[i] is evals[i].Eval(row), and the first error
// is returned. Expressions Compile returned are evaluated under one
// recover for the row rather than one per expression, with the same
// error as their Eval's for a row that makes one panic.
func ProjectInto(evals []*Compiled) func(out, row []any) error {
	fns := make([]func([]any) (any, error), len(evals))
	pos := make([]parser.Pos, len(evals))
	for i, e := range evals {
		fns[i] = e.Eval
		if g := e.guarded; g != nil && g.self == e {
			fns[i], pos[i] = g.inner, g.pos
		}
	}
	return func(out, row []any) (err error) {
		i := 0
		defer func() {
			if r := recover(); r != nil {
				err = panicErr(pos[i], row, r)
			}
		}()
		for ; i < len(fns); i++ {
			v, err := fns[i](row)
			if err != nil {
				return err
			}
			out[i] = v
		}
		return nil
	}
}

// InferType returns the type of e in s without keeping the evaluator.
func InferType(e parser.Expr, s *Scope) (types.Type, error) {
	out, err := Compile(e, s)
	if err != nil {
		return types.Type{}, err
	}
	return out.Type, nil
}

// IsTrue reports whether a condition's value is TRUE: WHERE, HAVING and
// JOIN … ON keep a row only then, dropping FALSE and NULL alike.
func IsTrue(v any) bool {
	b, ok := v.(bool)
	return ok && b
}

// compiler carries the scope through one Compile call.
type compiler struct {
	s *Scope
}

func (c *compiler) loc() *time.Location {
	if c.s.Location != nil {
		return c.s.Location
	}
	return time.UTC
}

// expr compiles e, giving Resolve the first word and folding constants.
func (c *compiler) expr(e parser.Expr) (*Compiled, error) {
	if e == nil {
		return nil, &Error{Msg: "missing expression", Class: ErrInvalid}
	}
	if c.s.Resolve != nil {
		r, err := c.s.Resolve(e)
		if err != nil || r != nil {
			return r, err
		}
	}
	out, err := c.dispatch(e)
	if err != nil {
		return nil, err
	}
	if out.Src == nil {
		out.Src = e
	}
	return fold(out), nil
}

// fold replaces the evaluator of a constant expression by its value. A
// constant that fails to evaluate (1/0, CAST('x' AS INT)) is left to fail
// at run time, and only if a row reaches it: CASE WHEN false THEN 1/0 END
// is fine.
func fold(out *Compiled) *Compiled {
	if !out.Const {
		return out
	}
	v, err := out.Eval(nil)
	if err != nil {
		return out
	}
	out.Eval = func([]any) (any, error) { return v, nil }
	return out
}

func (c *compiler) dispatch(e parser.Expr) (*Compiled, error) {
	switch x := e.(type) {
	case *parser.Ident:
		return c.ident(x)
	case *parser.NumberLit:
		return numberLit(x)
	case *parser.StringLit:
		return stringLit(x), nil
	case *parser.BoolLit:
		return constant(x, boolType(false), x.Value), nil
	case *parser.NullLit:
		return constant(x, nullType(), nil), nil
	case *parser.TypedLit:
		return typedLit(x)
	case *parser.IntervalLit:
		return intervalLit(x)
	case *parser.Unary:
		return c.unary(x)
	case *parser.Binary:
		return c.binary(x)
	case *parser.Is:
		return c.is(x)
	case *parser.Between:
		return c.between(x)
	case *parser.Like:
		return c.like(x)
	case *parser.InList:
		return c.inList(x)
	case *parser.Case:
		return c.caseExpr(x)
	case *parser.Cast:
		return c.cast(x)
	case *parser.FuncCall:
		return c.call(x)
	case *parser.ArrayCtor:
		return c.arrayCtor(x)
	case *parser.MapCtor:
		return c.mapCtor(x)
	case *parser.FieldAccess:
		return c.fieldAccess(x)
	case *parser.Index:
		return c.index(x)
	case *parser.Star:
		return nil, hintAt(x, "use * in a SELECT list or COUNT(*)", "* is not allowed here")
	case *parser.InQuery, *parser.Exists, *parser.Subquery:
		return nil, hintAt(e, "rewrite it as a join", "subqueries are not supported in this position")
	case *parser.Keyword:
		return nil, errAt(x, "unexpected keyword %s", x.Word)
	case *parser.TableArg, *parser.Descriptor, *parser.NamedArg:
		return nil, hintAt(e, "TABLE, DESCRIPTOR and name => value are arguments of window table functions (TUMBLE, HOP, CUMULATE, SESSION) in FROM",
			"this argument is only allowed in a table function call")
	}
	return nil, errAt(e, "this expression is not supported here")
}

// constant is a compiled literal.
func constant(src parser.Expr, t types.Type, v any) *Compiled {
	return &Compiled{Type: t, Src: src, Const: true, Eval: func([]any) (any, error) { return v, nil }}
}

// allConst reports whether every argument is constant.
func allConst(args []*Compiled) bool {
	for _, a := range args {
		if !a.Const {
			return false
		}
	}
	return true
}

// anyNullable reports whether any argument may be NULL.
func anyNullable(args []*Compiled) bool {
	for _, a := range args {
		if a.Type.Nullable {
			return true
		}
	}
	return false
}

// strict2 is strict for two arguments, handed to f one by one: a []any
// passed to a closure escapes, so strict costs an allocation per row that
// the comparisons and arithmetic on the hot path of every query avoid.
func strict2(pos parser.Pos, l, r *Compiled, f func(x, y any) (any, error)) func([]any) (any, error) {
	a, b := l.Eval, r.Eval
	return func(row []any) (any, error) {
		x, err := a(row)
		if err != nil || x == nil {
			return nil, err
		}
		y, err := b(row)
		if err != nil || y == nil {
			return nil, err
		}
		v, err := f(x, y)
		return v, wrapEval(pos, err)
	}
}

// strict builds the evaluator of an operation that is NULL when any
// argument is NULL and otherwise computes f of the argument values. The
// arguments are evaluated left to right; errors from f are reported at pos.
func strict(pos parser.Pos, args []*Compiled, f func(vals []any) (any, error)) func([]any) (any, error) {
	switch len(args) {
	case 1:
		a := args[0].Eval
		return func(row []any) (any, error) {
			v, err := a(row)
			if err != nil || v == nil {
				return nil, err
			}
			r, err := f([]any{v})
			return r, wrapEval(pos, err)
		}
	case 2:
		return strict2(pos, args[0], args[1], func(x, y any) (any, error) { return f([]any{x, y}) })
	}
	return func(row []any) (any, error) {
		vals := make([]any, len(args))
		for i, a := range args {
			v, err := a.Eval(row)
			if err != nil || v == nil {
				return nil, err
			}
			vals[i] = v
		}
		r, err := f(vals)
		return r, wrapEval(pos, err)
	}
}
