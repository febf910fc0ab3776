package parser

import (
	"math/rand/v2"
	"testing"

	"github.com/weirstream/weir/types"
)

// TestRandomExprRoundTrip builds random expression trees of the shapes the
// parser produces, prints them and parses them back: the printer must put
// parentheses exactly where the grouping needs them, and quote every name
// that needs quoting.
func TestRandomExprRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		e := randExpr(rng, 4)
		text := Format(e)
		again, err := ParseExpr(text)
		if err != nil {
			t.Fatalf("%q does not parse: %v", text, err)
		}
		if !sameTree(e, again) {
			t.Fatalf("round trip changed the tree of %q (now %q)", text, Format(again))
		}
	}
}

var randNames = []string{"a", "B", "value", "select", "my col", "x`y", "day", "dateTime", "_k1"}

func randName(rng *rand.Rand) string { return randNames[rng.IntN(len(randNames))] }

func randLeaf(rng *rand.Rand) Expr {
	switch rng.IntN(9) {
	case 0:
		n := rng.IntN(4)
		return &NumberLit{Text: []string{"1", "2.50", "1e3", ".5"}[n], Kind: []NumberKind{Integer, Exact, Approx, Exact}[n]}
	case 1:
		return &StringLit{Value: []string{"", "it's", "x"}[rng.IntN(3)]}
	case 2:
		return &BoolLit{Value: rng.IntN(2) == 0}
	case 3:
		return &NullLit{}
	case 4:
		return &IntervalLit{Value: "5", From: Minute}
	case 5:
		return &TypedLit{Kind: DateLit, Value: "2024-01-31"}
	case 6:
		return &FuncCall{Name: "CURRENT_TIMESTAMP"}
	default:
		id := &Ident{Parts: []string{randName(rng)}}
		if rng.IntN(3) == 0 {
			id.Parts = append(id.Parts, randName(rng))
		}
		return id
	}
}

var randBinaryOps = []BinaryOp{Or, And, Eq, Ne, Lt, Le, Gt, Ge, IsDistinctFrom, IsNotDistinctFrom, Add, Sub, Mul, Div, Mod, Concat}

func randExpr(rng *rand.Rand, depth int) Expr {
	if depth == 0 || rng.IntN(4) == 0 {
		return randLeaf(rng)
	}
	sub := func() Expr { return randExpr(rng, depth-1) }
	switch rng.IntN(14) {
	case 0, 1, 2:
		return &Binary{Op: randBinaryOps[rng.IntN(len(randBinaryOps))], L: sub(), R: sub()}
	case 3:
		return &Unary{Op: UnaryOp(rng.IntN(3)), X: sub()}
	case 4:
		return &Is{X: sub(), Not: rng.IntN(2) == 0, What: IsPredicate(rng.IntN(4))}
	case 5:
		return &Between{X: sub(), Lo: sub(), Hi: sub(), Not: rng.IntN(2) == 0}
	case 6:
		l := &Like{X: sub(), Pattern: sub(), Not: rng.IntN(2) == 0, Similar: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			l.Escape = sub()
		}
		return l
	case 7:
		return &InList{X: sub(), List: []Expr{sub(), sub()}, Not: rng.IntN(2) == 0}
	case 8:
		return randCall(rng, sub)
	case 9:
		return &Index{X: randPostfixBase(rng, sub), Index: sub()}
	case 10:
		return &FieldAccess{X: randPostfixBase(rng, sub), Field: randName(rng)}
	case 11:
		c := &Case{Whens: []*When{{Cond: sub(), Result: sub()}}}
		if rng.IntN(2) == 0 {
			c.Operand = sub()
		}
		if rng.IntN(2) == 0 {
			c.Else = sub()
		}
		return c
	case 12:
		return &Cast{X: sub(), Type: types.Type{Kind: types.Decimal, Precision: 10, Scale: 2, Nullable: true}, Try: rng.IntN(2) == 0}
	default:
		return &FuncCall{Name: "ROW", Args: []Expr{sub(), sub()}}
	}
}

// randPostfixBase is an operand of x[i] or x.f: anything but a plain name,
// which the parser would read as part of a dotted name.
func randPostfixBase(rng *rand.Rand, sub func() Expr) Expr {
	for {
		if x := sub(); !isIdent(x) {
			return x
		}
	}
}

func isIdent(e Expr) bool {
	_, ok := e.(*Ident)
	return ok
}

func randCall(rng *rand.Rand, sub func() Expr) Expr {
	switch rng.IntN(6) {
	case 0:
		return &FuncCall{Name: "EXTRACT", Args: []Expr{&Keyword{Word: "DAY"}, sub()}}
	case 1:
		return &FuncCall{Name: "FLOOR", Args: []Expr{sub(), &Keyword{Word: "HOUR"}}}
	case 2:
		return &FuncCall{Name: "POSITION", Args: []Expr{sub(), sub()}}
	case 3:
		return &FuncCall{Name: "TRIM", Args: []Expr{&Keyword{Word: "LEADING"}, sub(), sub()}}
	}
	f := &FuncCall{Name: []string{"F", "COUNT", "MY FUNC", "SELECT"}[rng.IntN(4)]}
	for n := rng.IntN(3); n > 0; n-- {
		f.Args = append(f.Args, sub())
	}
	f.Distinct = f.Args != nil && rng.IntN(3) == 0
	if rng.IntN(3) == 0 {
		f.Filter = sub()
	}
	if rng.IntN(3) == 0 {
		f.Over = &WindowSpec{PartitionBy: []Expr{sub()}, OrderBy: []*OrderItem{{Expr: sub(), Desc: true}},
			Frame: &Frame{Unit: Rows, Start: FrameBound{Kind: Preceding, Offset: sub()}, End: FrameBound{Kind: CurrentRow}}}
	}
	return f
}
