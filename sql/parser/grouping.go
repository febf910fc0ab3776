package parser

// GroupingKind is the kind of a GroupingSets item of GROUP BY.
type GroupingKind int

const (
	// GroupingSetsKind is GROUPING SETS (…): each element is one set.
	GroupingSetsKind GroupingKind = iota
	// RollupKind is ROLLUP (…): the elements' prefixes.
	RollupKind
	// CubeKind is CUBE (…): every subset of the elements.
	CubeKind
)

// String is the item's keyword: GROUPING SETS, ROLLUP or CUBE.
func (k GroupingKind) String() string { return [...]string{"GROUPING SETS", "ROLLUP", "CUBE"}[k] }

// GroupingSets is a GROUPING SETS, ROLLUP or CUBE item of GROUP BY. Each
// element is a parenthesized list of expressions (a composite column; ()
// is the empty set) or, in GROUPING SETS, a nested ROLLUP or CUBE (in
// Nested, at the same index; Elems[i] is then nil).
type GroupingSets struct {
	Pos
	Kind   GroupingKind
	Elems  [][]Expr
	Nested []*GroupingSets
}

func (*GroupingSets) exprNode() {}

// parseGroupBy reads the items of GROUP BY: expressions, GROUPING SETS,
// ROLLUP and CUBE.
func (p *parser) parseGroupBy() []Expr {
	var out []Expr
	for {
		if g := p.parseGroupingItem(); g != nil {
			out = append(out, g)
		} else {
			out = append(out, p.parseExpr())
		}
		if !p.acceptPunct(",") {
			return out
		}
	}
}

// parseGroupingItem reads GROUPING SETS (…), ROLLUP (…) or CUBE (…), or
// returns nil when none starts here.
func (p *parser) parseGroupingItem() *GroupingSets {
	pos := p.cur().pos
	var kind GroupingKind
	switch {
	case p.isWord("GROUPING") && p.isWordAt(1, "SETS"):
		p.next()
		kind = GroupingSetsKind
	case p.isWord("ROLLUP") && p.isPunctAt(1, "("):
		kind = RollupKind
	case p.isWord("CUBE") && p.isPunctAt(1, "("):
		kind = CubeKind
	default:
		return nil
	}
	p.next()
	g := &GroupingSets{Pos: pos, Kind: kind}
	open := p.expectPunct("(").pos
	for {
		var nested *GroupingSets
		if kind == GroupingSetsKind {
			nested = p.parseGroupingItem()
		}
		if nested != nil {
			g.Elems, g.Nested = append(g.Elems, nil), append(g.Nested, nested)
		} else {
			g.Elems, g.Nested = append(g.Elems, p.parseGroupingElem()), append(g.Nested, nil)
		}
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectClose(")", open, g.Kind.String())
	return g
}

// parseGroupingElem reads one element: (a, b), () or a single expression.
// A parenthesized single expression is the same set as the expression.
func (p *parser) parseGroupingElem() []Expr {
	if !p.isPunct("(") {
		return []Expr{p.parseExpr()}
	}
	open := p.next().pos
	if p.acceptPunct(")") {
		return []Expr{}
	}
	list := p.parseExprList()
	p.expectClose(")", open, "grouping set")
	return list
}

// groupingSets prints g.
func (f *formatter) groupingSets(g *GroupingSets) {
	f.WriteString(g.Kind.String() + "(")
	for i, e := range g.Elems {
		if i > 0 {
			f.WriteString(", ")
		}
		if g.Nested[i] != nil {
			f.groupingSets(g.Nested[i])
			continue
		}
		f.WriteString("(")
		f.exprList(e)
		f.WriteString(")")
	}
	f.WriteString(")")
}
