package parser

import "fmt"

func (p *parser) parseQuery() *Query {
	defer p.enter()()
	q := &Query{Pos: p.cur().pos}
	if p.acceptWord("WITH") {
		for {
			q.With = append(q.With, p.parseCTE())
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	q.Body = p.parseUnion()
	if p.isWord("ORDER") {
		p.next()
		p.expectWord("BY")
		q.OrderBy = p.parseOrderItems()
	}
	if p.acceptWord("LIMIT") {
		q.Limit = p.parseExpr()
	}
	if p.acceptWord("OFFSET") {
		q.Offset = p.parseExpr()
		p.acceptWord("ROW", "ROWS")
	}
	if p.isWord("FETCH") {
		p.parseFetch(q)
	}
	return q
}

// parseFetch reads FETCH FIRST|NEXT n ROW|ROWS ONLY, stored as LIMIT n.
func (p *parser) parseFetch(q *Query) {
	t := p.next()
	if q.Limit != nil {
		p.fail(t.pos, "", "a query cannot have both LIMIT and FETCH")
	}
	if !p.acceptWord("FIRST", "NEXT") {
		p.failExpected("FIRST or NEXT after FETCH", "")
	}
	q.Limit = p.parseExpr()
	if !p.acceptWord("ROW", "ROWS") {
		p.failExpected("ROWS", "")
	}
	p.expectWord("ONLY")
}

func (p *parser) parseCTE() *CTE {
	c := &CTE{Pos: p.cur().pos, Name: p.parseIdent("name of the WITH query")}
	if p.isPunct("(") {
		c.Columns = p.parseIdentList("column")
	}
	p.expectWord("AS")
	open := p.expectPunct("(").pos
	c.Query = p.parseQuery()
	p.expectClose(")", open, "WITH query "+c.Name)
	return c
}

// parseUnion reads set operations; INTERSECT binds tighter than UNION and
// EXCEPT, as in standard SQL.
func (p *parser) parseUnion() QueryBody {
	left := p.parseIntersect()
	for p.isWord("UNION", "EXCEPT", "MINUS") {
		t := p.next()
		op := &SetOp{Pos: t.pos, Op: Union, Left: left}
		if t.upper != "UNION" {
			op.Op = Except
		}
		op.All = p.parseSetQuantifier()
		op.Right = p.parseIntersect()
		left = op
	}
	return left
}

func (p *parser) parseIntersect() QueryBody {
	left := p.parseQueryPrimary()
	for p.isWord("INTERSECT") {
		op := &SetOp{Pos: p.next().pos, Op: Intersect, Left: left}
		op.All = p.parseSetQuantifier()
		op.Right = p.parseQueryPrimary()
		left = op
	}
	return left
}

func (p *parser) parseSetQuantifier() bool {
	if p.acceptWord("ALL") {
		return true
	}
	p.acceptWord("DISTINCT")
	return false
}

func (p *parser) parseQueryPrimary() QueryBody {
	switch {
	case p.isWord("SELECT"):
		return p.parseSelect()
	case p.isWord("VALUES"):
		return p.parseValues()
	case p.isPunct("("):
		open := p.next().pos
		q := p.parseQuery()
		p.expectClose(")", open, "subquery")
		// A parenthesized query with nothing but a body is that body.
		if q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil {
			return q.Body
		}
		return q
	}
	hint := ""
	if t := p.cur(); t.kind == tIdent {
		if kw, ok := closest(t.text, []string{"SELECT", "VALUES"}); ok {
			hint = "did you mean " + kw + "?"
		}
	}
	p.failExpected("SELECT or VALUES", hint)
	return nil
}

func (p *parser) parseValues() *Values {
	v := &Values{Pos: p.next().pos}
	for {
		open := p.expectPunct("(").pos
		v.Rows = append(v.Rows, p.parseExprList())
		p.expectClose(")", open, "VALUES row")
		if !p.acceptPunct(",") {
			return v
		}
	}
}

func (p *parser) parseExprList() []Expr {
	var out []Expr
	for {
		out = append(out, p.parseExpr())
		if !p.acceptPunct(",") {
			return out
		}
	}
}

func (p *parser) parseSelect() *Select {
	s := &Select{Pos: p.next().pos}
	if p.cur().kind == tHintStart {
		s.Hints = p.parseHints()
	}
	if p.acceptWord("DISTINCT") {
		s.Distinct = true
	} else {
		p.acceptWord("ALL")
	}
	s.Items = p.parseSelectItems()
	if p.acceptWord("FROM") {
		s.From = p.parseFrom()
	}
	if p.acceptWord("WHERE") {
		s.Where = p.parseExpr()
	}
	if p.isWord("GROUP") {
		p.next()
		p.expectWord("BY")
		s.GroupBy = p.parseGroupBy()
	}
	if p.acceptWord("HAVING") {
		s.Having = p.parseExpr()
	}
	if p.acceptWord("WINDOW") {
		for {
			w := &NamedWindow{Pos: p.cur().pos, Name: p.parseIdent("window name")}
			p.expectWord("AS")
			w.Spec = p.parseWindowSpec()
			s.Windows = append(s.Windows, w)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	return s
}

func (p *parser) parseSelectItems() []*SelectItem {
	var items []*SelectItem
	for {
		if p.isWord("FROM") && items != nil {
			p.fail(p.cur().pos, "remove the trailing ',' before FROM", "expected an expression, found 'FROM'")
		}
		item := &SelectItem{Pos: p.cur().pos, Expr: p.parseExpr()}
		if _, star := item.Expr.(*Star); !star {
			item.Alias, _ = p.parseAlias(false)
		}
		items = append(items, item)
		if !p.acceptPunct(",") {
			break
		}
	}
	if t := p.cur(); isIdentTok(t) || t.kind == tNumber || t.kind == tString {
		hint := "missing ',' between select items?"
		if p.suspect >= 0 && p.i == p.suspect+1 {
			hint = fmt.Sprintf("did you mean %s? '%s' was read as an alias", p.suspectWord, p.toks[p.suspect].text)
		}
		p.fail(t.pos, hint, "expected ',' or FROM after the select item, found %s", t.describe())
	}
	return items
}

func (p *parser) parseOrderItems() []*OrderItem {
	var out []*OrderItem
	for {
		o := &OrderItem{Pos: p.cur().pos, Expr: p.parseExpr()}
		if p.acceptWord("DESC") {
			o.Desc = true
		} else {
			p.acceptWord("ASC")
		}
		if p.isWord("NULLS") && p.isWordAt(1, "FIRST", "LAST") {
			p.next()
			if p.next().upper == "FIRST" {
				o.Nulls = NullsFirst
			} else {
				o.Nulls = NullsLast
			}
		}
		out = append(out, o)
		if !p.acceptPunct(",") {
			return out
		}
	}
}

// parseHints reads /*+ NAME[(…)] [, …] */.
func (p *parser) parseHints() []*Hint {
	p.next()
	var hints []*Hint
	for {
		t := p.cur()
		if t.kind != tIdent && t.kind != tQuoted {
			p.failExpected("a hint name", "")
		}
		p.next()
		h := &Hint{Pos: t.pos, Name: upper(t.text)}
		if p.isPunct("(") {
			p.parseHintArgs(h)
		}
		hints = append(hints, h)
		if !p.acceptPunct(",") {
			break
		}
	}
	if p.cur().kind != tHintEnd {
		p.failExpected("'*/' to close the hint", "")
	}
	p.next()
	return hints
}

func (p *parser) parseHintArgs(h *Hint) {
	open := p.next().pos
	kv := p.isPunctAt(1, "=")
	for {
		t := p.cur()
		if t.kind != tString && t.kind != tIdent && t.kind != tQuoted {
			p.failExpected("a hint argument", "")
		}
		p.next()
		if kv {
			p.expectPunct("=")
			h.Options = append(h.Options, &Option{Pos: t.pos, Key: t.text, Value: p.parseString("hint option value")})
		} else {
			h.Args = append(h.Args, t.text)
		}
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectClose(")", open, "hint "+h.Name)
}

// ---------------------------------------------------------------- FROM

// parseFrom reads table references joined by commas and JOINs, nesting to
// the left as Calcite does: a, b JOIN c ON … is (a, b) JOIN c.
func (p *parser) parseFrom() TableExpr {
	left := p.parseTableRef()
	for {
		t := p.cur()
		if p.acceptPunct(",") {
			left = &Join{Pos: t.pos, Kind: CommaJoin, Left: left, Right: p.parseTableRef()}
			continue
		}
		kind, ok := p.parseJoinKind()
		if !ok {
			return left
		}
		j := &Join{Pos: t.pos, Kind: kind, Left: left, Right: p.parseTableRef()}
		if kind != CrossJoin {
			p.parseJoinCondition(j)
		}
		left = j
	}
}

func (p *parser) parseJoinKind() (JoinKind, bool) {
	kind := InnerJoin
	switch {
	case p.isWord("JOIN"):
	case p.acceptWord("INNER"):
	case p.acceptWord("LEFT"):
		kind = LeftJoin
		p.acceptWord("OUTER")
	case p.acceptWord("RIGHT"):
		kind = RightJoin
		p.acceptWord("OUTER")
	case p.acceptWord("FULL"):
		kind = FullJoin
		p.acceptWord("OUTER")
	case p.acceptWord("CROSS"):
		kind = CrossJoin
	case p.isWord("NATURAL"):
		p.fail(p.cur().pos, "write the join condition with ON", "NATURAL JOIN is not supported")
	default:
		return 0, false
	}
	p.expectWord("JOIN")
	return kind, true
}

func (p *parser) parseJoinCondition(j *Join) {
	switch {
	case p.acceptWord("ON"):
		j.On = p.parseExpr()
	case p.acceptWord("USING"):
		j.Using = p.parseIdentList("join column")
	default:
		p.failExpected(fmt.Sprintf("ON or USING after %s", j.Kind), "a join needs a condition; use CROSS JOIN for a cross product")
	}
}

func (p *parser) parseTableRef() TableExpr {
	defer p.enter()()
	t := p.cur()
	switch {
	case p.isPunct("("):
		return p.parseParenTableRef()
	case p.isWord("LATERAL"):
		p.next()
		if p.isWord("TABLE") {
			return p.parseTableFunc(t.pos, true)
		}
		open := p.expectPunct("(").pos
		d := &DerivedTable{Pos: t.pos, Lateral: true, Query: p.parseQuery()}
		p.expectClose(")", open, "subquery")
		d.Alias, d.Columns = p.parseAlias(true)
		return d
	case p.isWord("TABLE"):
		return p.parseTableFunc(t.pos, false)
	case p.isWord("UNNEST"):
		return p.parseUnnest()
	}
	tn := &TableName{Pos: t.pos, Name: p.parseName("table name")}
	if p.cur().kind == tHintStart {
		tn.Hints = p.parseHints()
	}
	if p.acceptWord("FOR") {
		p.expectWord("SYSTEM_TIME")
		p.expectWord("AS")
		p.expectWord("OF")
		tn.ForSystemTime = p.parseExpr()
	}
	if p.isWord("MATCH_RECOGNIZE") {
		return p.parseMatchRecognize(tn)
	}
	tn.Alias, tn.Columns = p.parseAlias(true)
	return tn
}

// parseParenTableRef reads "(query) [alias]" or a parenthesized join. A
// parenthesis followed by SELECT may still open a join whose first table
// is a subquery, so the subquery reading is tried first and undone if the
// closing parenthesis does not follow.
func (p *parser) parseParenTableRef() TableExpr {
	pos := p.cur().pos
	if p.startsQuery(1) {
		q, err := p.attempt(attemptDerivedTable, func() any {
			open := p.next().pos
			q := p.parseQuery()
			p.expectClose(")", open, "subquery")
			return q
		})
		if err == nil {
			d := &DerivedTable{Pos: pos, Query: q.(*Query)}
			if p.isWord("MATCH_RECOGNIZE") {
				return p.parseMatchRecognize(d)
			}
			d.Alias, d.Columns = p.parseAlias(true)
			return d
		}
		var te TableExpr
		if e := p.try(func() { te = p.parseJoinInParens() }); e != nil {
			panic(bailout{furthest(err, e)})
		}
		return te
	}
	return p.parseJoinInParens()
}

func (p *parser) parseJoinInParens() TableExpr {
	open := p.next().pos
	te := p.parseFrom()
	p.expectClose(")", open, "parenthesized join")
	return te
}

// furthest picks, of two errors from alternative readings, the one that
// got further into the input: it is usually the one the user meant.
func furthest(a, b *Error) *Error {
	if b.Pos.Line > a.Pos.Line || (b.Pos.Line == a.Pos.Line && b.Pos.Col > a.Pos.Col) {
		return b
	}
	return a
}

func (p *parser) parseTableFunc(pos Pos, lateral bool) *TableFunc {
	p.next()
	open := p.expectPunct("(").pos
	e := p.parseExpr()
	call, ok := e.(*FuncCall)
	if !ok || call.Over != nil || call.Filter != nil || call.Distinct {
		p.fail(e.Position(), "write TABLE(f(…)), e.g. TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))",
			"expected a table function call inside TABLE(…)")
	}
	p.expectClose(")", open, "TABLE(…)")
	tf := &TableFunc{Pos: pos, Lateral: lateral, Call: call}
	tf.Alias, tf.Columns = p.parseAlias(true)
	return tf
}

func (p *parser) parseUnnest() *Unnest {
	u := &Unnest{Pos: p.next().pos}
	open := p.expectPunct("(").pos
	u.Exprs = p.parseExprList()
	p.expectClose(")", open, "UNNEST")
	if p.acceptWords("WITH", "ORDINALITY") {
		u.WithOrdinality = true
	}
	u.Alias, u.Columns = p.parseAlias(true)
	return u
}

// ---------------------------------------------------------------- windows

// parseWindowSpec reads "(…)" of OVER or WINDOW … AS.
func (p *parser) parseWindowSpec() *WindowSpec {
	open := p.expectPunct("(").pos
	w := &WindowSpec{Pos: open}
	if p.isWord("PARTITION") {
		p.next()
		p.expectWord("BY")
		w.PartitionBy = p.parseExprList()
	}
	if p.isWord("ORDER") {
		p.next()
		p.expectWord("BY")
		w.OrderBy = p.parseOrderItems()
	}
	if p.isWord("ROWS", "RANGE") {
		w.Frame = p.parseFrame()
	}
	p.expectClose(")", open, "window")
	return w
}

func (p *parser) parseFrame() *Frame {
	t := p.next()
	f := &Frame{Pos: t.pos, Unit: Rows}
	if t.upper == "RANGE" {
		f.Unit = Range
	}
	if p.acceptWord("BETWEEN") {
		f.Start = p.parseBound()
		p.expectWord("AND")
		f.End = p.parseBound()
	} else {
		f.Start = p.parseBound()
		f.End = FrameBound{Kind: CurrentRow}
	}
	return f
}

func (p *parser) parseBound() FrameBound {
	switch {
	case p.acceptWords("UNBOUNDED", "PRECEDING"):
		return FrameBound{Kind: UnboundedPreceding}
	case p.acceptWords("UNBOUNDED", "FOLLOWING"):
		return FrameBound{Kind: UnboundedFollowing}
	case p.acceptWords("CURRENT", "ROW"):
		return FrameBound{Kind: CurrentRow}
	}
	off := p.parseAdditive()
	switch {
	case p.acceptWord("PRECEDING"):
		return FrameBound{Kind: Preceding, Offset: off}
	case p.acceptWord("FOLLOWING"):
		return FrameBound{Kind: Following, Offset: off}
	}
	p.failExpected("PRECEDING or FOLLOWING", "")
	return FrameBound{}
}
