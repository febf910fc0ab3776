package parser

import (
	"fmt"
	"strings"
)

// Expression parsing, one function per precedence level, loosest first.
// The levels are mirrored by precedence() in format.go; change both.

func (p *parser) parseExpr() Expr {
	defer p.enter()()
	return p.parseOr()
}

func (p *parser) parseOr() Expr {
	l := p.parseAnd()
	for p.isWord("OR") {
		t := p.next()
		l = &Binary{Pos: t.pos, Op: Or, L: l, R: p.parseAnd()}
	}
	return l
}

func (p *parser) parseAnd() Expr {
	l := p.parseNot()
	for p.isWord("AND") {
		t := p.next()
		l = &Binary{Pos: t.pos, Op: And, L: l, R: p.parseNot()}
	}
	return l
}

func (p *parser) parseNot() Expr {
	if p.isWord("NOT") {
		defer p.enter()()
		t := p.next()
		return &Unary{Pos: t.pos, Op: Not, X: p.parseNot()}
	}
	return p.parseIs()
}

// parseIs reads the postfix IS tests and IS [NOT] DISTINCT FROM, which
// Calcite binds more loosely than comparisons: a = b IS NULL is
// (a = b) IS NULL.
func (p *parser) parseIs() Expr {
	x := p.parseComparison()
	for p.isWord("IS") {
		t := p.next()
		not := p.acceptWord("NOT")
		switch {
		case p.acceptWord("NULL"):
			x = &Is{Pos: t.pos, X: x, Not: not, What: IsNull}
		case p.acceptWord("TRUE"):
			x = &Is{Pos: t.pos, X: x, Not: not, What: IsTrue}
		case p.acceptWord("FALSE"):
			x = &Is{Pos: t.pos, X: x, Not: not, What: IsFalse}
		case p.acceptWord("UNKNOWN"):
			x = &Is{Pos: t.pos, X: x, Not: not, What: IsUnknown}
		case p.acceptWord("JSON"):
			what := IsJSONValue
			switch {
			case p.acceptWord("SCALAR"):
				what = IsJSONScalar
			case p.acceptWord("ARRAY"):
				what = IsJSONArray
			case p.acceptWord("OBJECT"):
				what = IsJSONObject
			default:
				p.acceptWord("VALUE")
			}
			x = &Is{Pos: t.pos, X: x, Not: not, What: what}
		case p.acceptWords("DISTINCT", "FROM"):
			op := IsDistinctFrom
			if not {
				op = IsNotDistinctFrom
			}
			x = &Binary{Pos: t.pos, Op: op, L: x, R: p.parseComparison()}
		default:
			p.failExpected("NULL, TRUE, FALSE, UNKNOWN, JSON or DISTINCT FROM after IS", "")
		}
	}
	return x
}

var comparisonOps = map[string]BinaryOp{"=": Eq, "<>": Ne, "!=": Ne, "<": Lt, "<=": Le, ">": Gt, ">=": Ge}

func (p *parser) parseComparison() Expr {
	l := p.parsePredicate()
	for {
		t := p.cur()
		op, ok := comparisonOps[t.text]
		if t.kind != tPunct || !ok {
			return l
		}
		p.next()
		l = &Binary{Pos: t.pos, Op: op, L: l, R: p.parsePredicate()}
	}
}

// parsePredicate reads [NOT] BETWEEN, LIKE, SIMILAR TO and IN after an
// additive expression.
func (p *parser) parsePredicate() Expr {
	x := p.parseAdditive()
	for {
		t := p.cur()
		not := p.isWord("NOT") && p.isWordAt(1, "BETWEEN", "LIKE", "SIMILAR", "IN")
		if not {
			p.next()
		}
		switch {
		case p.acceptWord("BETWEEN"):
			p.acceptWord("ASYMMETRIC")
			b := &Between{Pos: t.pos, X: x, Not: not, Lo: p.parseAdditive()}
			p.expectWord("AND")
			b.Hi = p.parseAdditive()
			x = b
		case p.acceptWord("LIKE"):
			x = p.parseLikeRest(&Like{Pos: t.pos, X: x, Not: not})
		case p.acceptWord("SIMILAR"):
			p.expectWord("TO")
			x = p.parseLikeRest(&Like{Pos: t.pos, X: x, Not: not, Similar: true})
		case p.acceptWord("IN"):
			x = p.parseIn(t.pos, x, not)
		case t.kind == tNumber && strings.HasPrefix(t.text, "."):
			// x.1 lexes as x followed by the number .1.
			p.fail(Pos{t.pos.Line, t.pos.Col + 1}, "", "expected field name after '.', found '%s'", t.text[1:])
		default:
			return x
		}
	}
}

func (p *parser) parseLikeRest(l *Like) Expr {
	l.Pattern = p.parseAdditive()
	if p.acceptWord("ESCAPE") {
		l.Escape = p.parseAdditive()
	}
	return l
}

func (p *parser) parseIn(pos Pos, x Expr, not bool) Expr {
	if !p.isPunct("(") {
		p.failExpected("'(' after IN", "write x IN (a, b, …)")
	}
	if p.startsQuery(1) {
		q, err := p.attempt(attemptInSubquery, func() any {
			open := p.next().pos
			q := p.parseQuery()
			p.expectClose(")", open, "IN subquery")
			return q
		})
		if err == nil {
			return &InQuery{Pos: pos, X: x, Query: q.(*Query), Not: not}
		}
	}
	open := p.next().pos
	if p.isPunct(")") {
		p.fail(p.cur().pos, "", "empty IN list")
	}
	in := &InList{Pos: pos, X: x, Not: not, List: p.parseExprList()}
	p.expectClose(")", open, "IN list")
	return in
}

func (p *parser) parseAdditive() Expr {
	l := p.parseMultiplicative()
	for p.isPunct("+") || p.isPunct("-") {
		t := p.next()
		op := Add
		if t.text == "-" {
			op = Sub
		}
		l = &Binary{Pos: t.pos, Op: op, L: l, R: p.parseMultiplicative()}
	}
	return l
}

var multiplicativeOps = map[string]BinaryOp{"*": Mul, "/": Div, "%": Mod, "||": Concat}

func (p *parser) parseMultiplicative() Expr {
	l := p.parseUnary()
	for {
		t := p.cur()
		op, ok := multiplicativeOps[t.text]
		if t.kind != tPunct || !ok {
			return l
		}
		p.next()
		l = &Binary{Pos: t.pos, Op: op, L: l, R: p.parseUnary()}
	}
}

func (p *parser) parseUnary() Expr {
	if p.isPunct("-") || p.isPunct("+") {
		defer p.enter()()
		t := p.next()
		op := Neg
		if t.text == "+" {
			op = Plus
		}
		return &Unary{Pos: t.pos, Op: op, X: p.parseUnary()}
	}
	return p.parsePostfix()
}

// parsePostfix reads field access (x.f), indexing (x[i]) and t.* after a
// primary. A dotted path of names stays one *Ident.
func (p *parser) parsePostfix() Expr {
	x := p.parsePrimary()
	for {
		t := p.cur()
		switch {
		case p.isPunct(".") && p.isPunctAt(1, "*"):
			id, ok := x.(*Ident)
			if !ok {
				p.fail(t.pos, "", "'.*' must follow a table name")
			}
			p.next()
			p.next()
			return &Star{Pos: id.Pos, Qualifier: id.Parts}
		case p.isPunct("."):
			p.next()
			name := p.parseIdent("field name after '.'")
			if p.isPunct("(") {
				p.fail(p.cur().pos, "", "qualified function names are not supported")
			}
			if id, ok := x.(*Ident); ok {
				x = &Ident{Pos: id.Pos, Parts: append(id.Parts[:len(id.Parts):len(id.Parts)], name)}
			} else {
				x = &FieldAccess{Pos: t.pos, X: x, Field: name}
			}
		case p.isPunct("["):
			p.next()
			idx := &Index{Pos: t.pos, X: x, Index: p.parseExpr()}
			p.expectClose("]", t.pos, "index")
			x = idx
		default:
			return x
		}
	}
}

func (p *parser) parsePrimary() Expr {
	defer p.enter()()
	t := p.cur()
	switch t.kind {
	case tNumber:
		p.next()
		kind := Integer
		if strings.ContainsAny(t.text, "eE") {
			kind = Approx
		} else if strings.Contains(t.text, ".") {
			kind = Exact
		}
		return &NumberLit{Pos: t.pos, Text: t.text, Kind: kind}
	case tString:
		p.next()
		return &StringLit{Pos: t.pos, Value: t.text}
	case tQuoted:
		p.next()
		if p.isPunct("(") {
			return p.parseCall(t)
		}
		return &Ident{Pos: t.pos, Parts: []string{t.text}}
	case tPunct:
		switch t.text {
		case "(":
			return p.parseParenExpr()
		case "*":
			p.next()
			return &Star{Pos: t.pos}
		}
	case tIdent:
		return p.parseWordExpr(t)
	}
	p.failExpected("an expression", "")
	return nil
}

// parseWordExpr reads an expression that starts with a word: a literal
// keyword, a special form, a function call or a name.
func (p *parser) parseWordExpr(t token) Expr {
	next := p.peek(1)
	switch t.upper {
	case "TRUE", "FALSE":
		p.next()
		return &BoolLit{Pos: t.pos, Value: t.upper == "TRUE"}
	case "NULL":
		p.next()
		return &NullLit{Pos: t.pos}
	case "CASE":
		return p.parseCase()
	case "CAST":
		return p.parseCast(false)
	case "TRY_CAST":
		if next.kind == tPunct && next.text == "(" {
			return p.parseCast(true)
		}
	case "EXISTS":
		p.next()
		open := p.expectPunct("(").pos
		e := &Exists{Pos: t.pos, Query: p.parseQuery()}
		p.expectClose(")", open, "EXISTS subquery")
		return e
	case "INTERVAL":
		return p.parseInterval()
	case "DATE", "TIME", "TIMESTAMP":
		if next.kind == tString {
			return p.parseTypedLit()
		}
	case "ARRAY", "MAP":
		if next.kind == tPunct && next.text == "[" {
			return p.parseCollection()
		}
	}
	if niladic[t.upper] {
		p.next()
		if p.isPunct("(") {
			p.fail(p.cur().pos, "write "+t.upper+" without parentheses", "%s takes no parentheses", t.upper)
		}
		return &FuncCall{Pos: t.pos, Name: t.upper}
	}
	if reserved[t.upper] {
		p.failExpected("an expression", p.reservedHint(t))
	}
	p.next()
	if p.isPunct("(") {
		return p.parseCall(t)
	}
	return &Ident{Pos: t.pos, Parts: []string{t.text}}
}

// reservedHint explains a reserved word found where an expression should
// be: a trailing comma before a clause, or a name that needs quoting.
func (p *parser) reservedHint(t token) string {
	prev := token{}
	if p.i > 0 {
		prev = p.toks[p.i-1]
	}
	switch t.upper {
	case "FROM", "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT":
		if prev.kind == tPunct && prev.text == "," {
			return "remove the trailing ',' before " + t.upper
		}
	}
	next := p.peek(1)
	if (next.kind == tPunct && strings.Contains(",)=<>.", next.text)) || (next.kind == tIdent && (next.upper == "FROM" || next.upper == "AS")) {
		return fmt.Sprintf("%s is a reserved word; quote it as `%s` to use it as a name", t.upper, t.text)
	}
	return ""
}

// parseParenExpr reads "(" … ")": a scalar subquery, a parenthesized
// expression, or a row (a, b). A parenthesis followed by SELECT may also
// open an expression such as ((SELECT 1) + 1), so the subquery reading is
// tried first.
func (p *parser) parseParenExpr() Expr {
	t := p.cur()
	if p.startsQuery(1) {
		q, err := p.attempt(attemptSubqueryExpr, func() any {
			p.next()
			q := p.parseQuery()
			p.expectClose(")", t.pos, "subquery")
			return q
		})
		if err == nil {
			return &Subquery{Pos: t.pos, Query: q.(*Query)}
		}
		var e Expr
		if err2 := p.try(func() { e = p.parseParenExprList() }); err2 != nil {
			panic(bailout{furthest(err, err2)})
		}
		return e
	}
	return p.parseParenExprList()
}

func (p *parser) parseParenExprList() Expr {
	open := p.next().pos
	list := p.parseExprList()
	p.expectClose(")", open, "parenthesis")
	if len(list) == 1 {
		return list[0]
	}
	return &FuncCall{Pos: open, Name: "ROW", Args: list}
}

func (p *parser) parseCase() Expr {
	c := &Case{Pos: p.next().pos}
	if !p.isWord("WHEN") {
		c.Operand = p.parseExpr()
	}
	for p.isWord("WHEN") {
		w := &When{Pos: p.next().pos, Cond: p.parseExpr()}
		p.expectWord("THEN")
		w.Result = p.parseExpr()
		c.Whens = append(c.Whens, w)
	}
	if c.Whens == nil {
		p.failExpected("WHEN", "")
	}
	if p.acceptWord("ELSE") {
		c.Else = p.parseExpr()
	}
	if !p.isWord("END") {
		p.failExpected(fmt.Sprintf("END to close the CASE opened at line %s", c.Pos), "")
	}
	p.next()
	return c
}

func (p *parser) parseCast(try bool) Expr {
	c := &Cast{Pos: p.next().pos, Try: try}
	open := p.expectPunct("(").pos
	c.X = p.parseExpr()
	if !p.isWord("AS") {
		p.failExpected("AS", "write CAST(x AS type)")
	}
	p.next()
	c.Type = p.parseType()
	p.expectClose(")", open, "CAST")
	return c
}

func (p *parser) parseCollection() Expr {
	t := p.next()
	open := p.next().pos
	var elems []Expr
	if !p.isPunct("]") {
		elems = p.parseExprList()
	}
	p.expectClose("]", open, t.upper+" constructor")
	if t.upper == "ARRAY" {
		return &ArrayCtor{Pos: t.pos, Elems: elems}
	}
	if len(elems)%2 != 0 {
		p.fail(t.pos, "write MAP[key1, value1, key2, value2, …]", "MAP constructor needs an even number of elements, found %d", len(elems))
	}
	return &MapCtor{Pos: t.pos, Elems: elems}
}
