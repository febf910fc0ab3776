package parser

import (
	"strconv"
	"strings"
)

// MatchRecognize is `input MATCH_RECOGNIZE (…) [[AS] alias]`: Flink's
// pattern recognition over the rows of input.
type MatchRecognize struct {
	Pos         // of MATCH_RECOGNIZE
	Input       TableExpr
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Measures    []*SelectItem // each expr AS name
	// AllRows is ALL ROWS PER MATCH (the planner refuses it, as Flink);
	// false: ONE ROW PER MATCH, written or not.
	AllRows    bool
	AllRowsPos Pos
	Skip       MatchSkip
	SkipVar    string // of SKIP TO FIRST|LAST var
	Pattern    []*PatternTerm
	PatternPos Pos
	// Within is the INTERVAL of WITHIN, or nil.
	Within  *IntervalLit
	Defines []*PatternDefine
	Alias   string
	Columns []string
}

// MatchSkip is an AFTER MATCH SKIP strategy.
type MatchSkip int

const (
	// SkipPastLastRow is AFTER MATCH SKIP PAST LAST ROW, the default.
	SkipPastLastRow MatchSkip = iota
	// SkipToNextRow is AFTER MATCH SKIP TO NEXT ROW.
	SkipToNextRow
	// SkipToFirst is AFTER MATCH SKIP TO FIRST var.
	SkipToFirst
	// SkipToLast is AFTER MATCH SKIP TO LAST var (or TO var).
	SkipToLast
)

// PatternTerm is one pattern variable with its quantifier: Min and Max
// rows (Max -1: no upper bound); a bare variable is {1,1}.
type PatternTerm struct {
	Pos
	Var       string
	Min, Max  int
	Reluctant bool
	// Quantifier is the quantifier as written ("", "*", "+", "?", "{2,}").
	Quantifier string
}

// PatternDefine is `var AS condition` of DEFINE.
type PatternDefine struct {
	Pos
	Var  string
	Cond Expr
}

func (*MatchRecognize) tableNode() {}

// parseMatchRecognize reads MATCH_RECOGNIZE (…) after its input.
func (p *parser) parseMatchRecognize(input TableExpr) *MatchRecognize {
	m := &MatchRecognize{Pos: p.next().pos, Input: input}
	open := p.expectPunct("(").pos
	if p.acceptWords("PARTITION", "BY") {
		m.PartitionBy = p.parseExprList()
	}
	if p.acceptWords("ORDER", "BY") {
		m.OrderBy = p.parseOrderItems()
	}
	if p.acceptWord("MEASURES") {
		m.Measures = p.parseMeasures()
	}
	p.parseRowsPerMatch(m)
	if p.acceptWords("AFTER", "MATCH") {
		p.parseSkip(m)
	}
	m.PatternPos = p.expectWord("PATTERN").pos
	m.Pattern = p.parsePattern()
	if p.acceptWord("WITHIN") {
		m.Within = p.parseWithin()
	}
	if p.isWord("SUBSET") {
		p.fail(p.cur().pos, "name each variable in MEASURES and DEFINE", "SUBSET in MATCH_RECOGNIZE is not supported (as in Flink)")
	}
	p.expectWord("DEFINE")
	m.Defines = p.parseDefines()
	p.expectClose(")", open, "MATCH_RECOGNIZE")
	m.Alias, m.Columns = p.parseAlias(true)
	return m
}

func (p *parser) parseMeasures() []*SelectItem {
	var out []*SelectItem
	for {
		it := &SelectItem{Pos: p.cur().pos, Expr: p.parseExpr()}
		p.expectWord("AS")
		it.Alias = p.parseIdent("measure name after AS")
		out = append(out, it)
		if !p.acceptPunct(",") {
			return out
		}
	}
}

func (p *parser) parseRowsPerMatch(m *MatchRecognize) {
	switch {
	case p.acceptWords("ONE", "ROW", "PER", "MATCH"):
	case p.isWord("ALL") && p.isWordAt(1, "ROWS"):
		m.AllRows, m.AllRowsPos = true, p.next().pos
		p.expectWord("ROWS")
		p.expectWord("PER")
		p.expectWord("MATCH")
	}
}

func (p *parser) parseSkip(m *MatchRecognize) {
	p.expectWord("SKIP")
	switch {
	case p.acceptWords("PAST", "LAST", "ROW"):
		m.Skip = SkipPastLastRow
	case p.acceptWords("TO", "NEXT", "ROW"):
		m.Skip = SkipToNextRow
	case p.acceptWords("TO", "FIRST"):
		m.Skip, m.SkipVar = SkipToFirst, p.parseIdent("pattern variable after SKIP TO FIRST")
	case p.acceptWords("TO", "LAST"):
		m.Skip, m.SkipVar = SkipToLast, p.parseIdent("pattern variable after SKIP TO LAST")
	case p.acceptWord("TO"):
		m.Skip, m.SkipVar = SkipToLast, p.parseIdent("pattern variable after SKIP TO")
	default:
		p.failExpected("PAST LAST ROW, TO NEXT ROW, TO FIRST var or TO LAST var after AFTER MATCH SKIP", "")
	}
}

// parsePattern reads "(A B+ C*? …)": a concatenation of quantified
// variables, which is all Flink supports.
func (p *parser) parsePattern() []*PatternTerm {
	open := p.expectPunct("(").pos
	var terms []*PatternTerm
	for !p.isPunct(")") {
		p.refusePatternSyntax()
		t := &PatternTerm{Pos: p.cur().pos, Var: p.parseIdent("a pattern variable"), Min: 1, Max: 1}
		p.parseQuantifier(t)
		terms = append(terms, t)
	}
	if terms == nil {
		p.failExpected("a pattern variable", "")
	}
	p.expectClose(")", open, "PATTERN")
	return terms
}

// refusePatternSyntax names the row pattern operators Flink does not
// support rather than failing on them as unknown syntax.
func (p *parser) refusePatternSyntax() {
	t := p.cur()
	hint := "write the pattern as a sequence of variables with quantifiers, e.g. PATTERN (A B+ C?)"
	switch {
	case t.kind == tPunct && t.text == "|":
		p.fail(t.pos, "write one MATCH_RECOGNIZE per alternative, or one variable whose DEFINE accepts either row",
			"pattern alternation (|) in MATCH_RECOGNIZE is not supported (as in Flink)")
	case t.kind == tPunct && t.text == "(":
		p.fail(t.pos, hint, "pattern groups in MATCH_RECOGNIZE are not supported (as in Flink)")
	case t.kind == tPunct && (t.text == "^" || t.text == "$"):
		p.fail(t.pos, hint, "pattern anchors (^, $) in MATCH_RECOGNIZE are not supported (as in Flink)")
	case t.kind == tPunct && t.text == "{":
		p.fail(t.pos, hint, "pattern exclusion ({- … -}) in MATCH_RECOGNIZE is not supported (as in Flink)")
	case t.kind == tIdent && t.upper == "PERMUTE" && p.isPunctAt(1, "("):
		p.fail(t.pos, hint, "PERMUTE in MATCH_RECOGNIZE is not supported (as in Flink)")
	}
}

func (p *parser) parseQuantifier(t *PatternTerm) {
	start := p.i
	switch {
	case p.acceptPunct("*"):
		t.Min, t.Max = 0, -1
	case p.acceptPunct("+"):
		t.Min, t.Max = 1, -1
	case p.acceptPunct("?"):
		t.Min, t.Max = 0, 1
	case p.isPunct("{") && !p.isPunctAt(1, "-"):
		p.parseBraces(t)
	default:
		return
	}
	if p.acceptPunct("?") {
		t.Reluctant = true
	}
	var b strings.Builder
	for _, tok := range p.toks[start:p.i] {
		b.WriteString(tok.text)
	}
	t.Quantifier = b.String()
}

// parseBraces reads {n}, {n,}, {n,m} or {,m}.
func (p *parser) parseBraces(t *PatternTerm) {
	open := p.next().pos
	t.Min, t.Max = 0, -1
	if !p.isPunct(",") {
		t.Min = p.parseCount()
		t.Max = t.Min
	}
	if p.acceptPunct(",") {
		t.Max = -1
		if !p.isPunct("}") {
			t.Max = p.parseCount()
		}
	}
	p.expectClose("}", open, "quantifier")
	if t.Max == 0 || (t.Max > 0 && t.Max < t.Min) {
		p.fail(open, "write {n,m} with 0 ≤ n ≤ m and m > 0", "invalid quantifier for pattern variable %s", t.Var)
	}
}

func (p *parser) parseCount() int {
	t := p.cur()
	n, err := strconv.Atoi(t.text)
	if t.kind != tNumber || err != nil || n < 0 {
		p.failExpected("a row count (a non-negative integer)", "")
	}
	p.next()
	return n
}

func (p *parser) parseWithin() *IntervalLit {
	e := p.parseExpr()
	lit, ok := e.(*IntervalLit)
	if !ok {
		p.fail(e.Position(), "e.g. WITHIN INTERVAL '10' MINUTE", "WITHIN takes an INTERVAL literal")
	}
	return lit
}

func (p *parser) parseDefines() []*PatternDefine {
	var out []*PatternDefine
	for {
		d := &PatternDefine{Pos: p.cur().pos, Var: p.parseIdent("a pattern variable")}
		p.expectWord("AS")
		d.Cond = p.parseExpr()
		out = append(out, d)
		if !p.acceptPunct(",") {
			return out
		}
	}
}

// ---------------------------------------------------------------- format

func (f *formatter) matchRecognize(m *MatchRecognize) {
	f.table(m.Input)
	f.WriteString(" MATCH_RECOGNIZE (")
	if m.PartitionBy != nil {
		f.WriteString("PARTITION BY ")
		f.exprList(m.PartitionBy)
		f.WriteString(" ")
	}
	if m.OrderBy != nil {
		f.WriteString("ORDER BY ")
		f.orderItems(m.OrderBy)
		f.WriteString(" ")
	}
	if m.Measures != nil {
		f.WriteString("MEASURES ")
		for i, it := range m.Measures {
			if i > 0 {
				f.WriteString(", ")
			}
			f.expr(it.Expr, 0)
			f.WriteString(" AS " + quoteIdent(it.Alias))
		}
		f.WriteString(" ")
	}
	if m.AllRows {
		f.WriteString("ALL ROWS PER MATCH ")
	} else {
		f.WriteString("ONE ROW PER MATCH ")
	}
	f.WriteString("AFTER MATCH SKIP " + m.skipText() + " PATTERN (")
	for i, t := range m.Pattern {
		if i > 0 {
			f.WriteString(" ")
		}
		f.WriteString(quoteIdent(t.Var) + t.Quantifier)
	}
	f.WriteString(")")
	if m.Within != nil {
		f.WriteString(" WITHIN ")
		f.expr(m.Within, 0)
	}
	f.WriteString(" DEFINE ")
	for i, d := range m.Defines {
		if i > 0 {
			f.WriteString(", ")
		}
		f.WriteString(quoteIdent(d.Var) + " AS ")
		f.expr(d.Cond, 0)
	}
	f.WriteString(")")
	f.alias(m.Alias, m.Columns)
}

func (m *MatchRecognize) skipText() string {
	switch m.Skip {
	case SkipToNextRow:
		return "TO NEXT ROW"
	case SkipToFirst:
		return "TO FIRST " + quoteIdent(m.SkipVar)
	case SkipToLast:
		return "TO LAST " + quoteIdent(m.SkipVar)
	}
	return "PAST LAST ROW"
}
