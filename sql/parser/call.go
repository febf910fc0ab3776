package parser

import "strings"

// parseCall reads a call after its name token; the '(' is next.
func (p *parser) parseCall(name token) Expr {
	f := &FuncCall{Pos: name.pos, Name: upper(name.text)}
	open := p.next().pos
	switch {
	case !p.isPunct(")"):
		p.parseArgs(f)
	case f.Name == "JSON_OBJECT":
		f.Args = []Expr{&Keyword{Pos: f.Pos, Word: "NULL"}} // its default ON NULL
	case f.Name == "JSON_ARRAY":
		f.Args = []Expr{&Keyword{Pos: f.Pos, Word: "ABSENT"}}
	}
	p.expectClose(")", open, "argument list of "+f.Name)
	if p.isWord("FILTER") && p.isPunctAt(1, "(") {
		p.next()
		fopen := p.next().pos
		p.expectWord("WHERE")
		f.Filter = p.parseExpr()
		p.expectClose(")", fopen, "FILTER")
	}
	if p.acceptWord("OVER") {
		if p.isPunct("(") {
			f.Over = p.parseWindowSpec()
		} else {
			t := p.cur()
			f.Over = &WindowSpec{Pos: t.pos, Ref: p.parseIdent("window name or '(' after OVER")}
		}
	}
	return f
}

func upper(s string) string { return strings.ToUpper(s) }

// parseArgs reads the arguments of f, handling the special forms whose
// arguments are not a plain list (EXTRACT(DAY FROM x), TRIM(… FROM s), …).
func (p *parser) parseArgs(f *FuncCall) {
	switch f.Name {
	case "EXTRACT":
		if p.cur().kind == tIdent && p.isWordAt(1, "FROM") {
			unit := p.next()
			p.next()
			f.Args = []Expr{&Keyword{Pos: unit.pos, Word: unit.upper}, p.parseExpr()}
			return
		}
	case "FLOOR", "CEIL", "CEILING":
		x := p.parseExpr()
		if p.acceptWord("TO") {
			f.Args = []Expr{x, p.parseUnitKeywordOf(floorUnitWords)}
			return
		}
		f.Args = []Expr{x}
		p.parseMoreArgs(f)
		return
	case "POSITION":
		x := p.parseAdditive()
		if p.acceptWord("IN") {
			f.Args = []Expr{x, p.parseExpr()}
			return
		}
		f.Args = []Expr{x}
		p.parseMoreArgs(f)
		return
	case "SUBSTRING":
		s := p.parseExpr()
		if p.acceptWord("FROM") {
			f.Args = []Expr{s, p.parseExpr()}
			if p.acceptWord("FOR") {
				f.Args = append(f.Args, p.parseExpr())
			}
			return
		}
		f.Args = []Expr{s}
		p.parseMoreArgs(f)
		return
	case "TRIM":
		p.parseTrim(f)
		return
	case "OVERLAY":
		s := p.parseExpr()
		if p.acceptWord("PLACING") {
			f.Args = []Expr{s, p.parseExpr()}
			p.expectWord("FROM")
			f.Args = append(f.Args, p.parseExpr())
			if p.acceptWord("FOR") {
				f.Args = append(f.Args, p.parseExpr())
			}
			return
		}
		f.Args = []Expr{s}
		p.parseMoreArgs(f)
		return
	case "JSON_OBJECT":
		p.parseJSONObject(f)
		return
	case "JSON_ARRAY":
		p.parseJSONArray(f)
		return
	case "JSON_EXISTS", "JSON_VALUE", "JSON_QUERY":
		f.Args = []Expr{p.parseArg()}
		p.parseMoreArgs(f)
		if len(f.Args) == 2 {
			p.parseJSONClauses(f)
		}
		return
	case "TIMESTAMPADD", "TIMESTAMPDIFF":
		f.Args = []Expr{p.parseUnitKeyword()}
		p.parseMoreArgs(f)
		return
	}
	if p.acceptWord("DISTINCT") {
		f.Distinct = true
	} else {
		p.acceptWord("ALL")
	}
	f.Args = []Expr{p.parseArg()}
	p.parseMoreArgs(f)
}

// parseJSONObject reads JSON_OBJECT([KEY] k VALUE v, … [NULL|ABSENT ON
// NULL]) into (Keyword NULL|ABSENT, k1, v1, k2, v2, …); NULL ON NULL is
// the default.
func (p *parser) parseJSONObject(f *FuncCall) {
	f.Args = []Expr{&Keyword{Pos: f.Pos, Word: "NULL"}}
	for !p.parseJSONOnNull(f) {
		p.acceptWord("KEY")
		k := p.parseAdditive()
		p.expectWord("VALUE")
		f.Args = append(f.Args, k, p.parseAdditive())
		if !p.acceptPunct(",") {
			p.parseJSONOnNull(f)
			return
		}
	}
}

// parseJSONArray reads JSON_ARRAY(v, … [NULL|ABSENT ON NULL]) into
// (Keyword NULL|ABSENT, v1, …); ABSENT ON NULL is the default.
func (p *parser) parseJSONArray(f *FuncCall) {
	f.Args = []Expr{&Keyword{Pos: f.Pos, Word: "ABSENT"}}
	for !p.parseJSONOnNull(f) {
		f.Args = append(f.Args, p.parseExpr())
		if !p.acceptPunct(",") {
			p.parseJSONOnNull(f)
			return
		}
	}
}

// parseJSONClauses reads the clauses after the path of JSON_EXISTS,
// JSON_VALUE and JSON_QUERY into keyword arguments, each written in its
// full form, only those written:
//
//	JSON_EXISTS  [TRUE|FALSE|UNKNOWN|ERROR ON ERROR]
//	JSON_VALUE   [RETURNING type] [NULL|ERROR|DEFAULT expr ON EMPTY]
//	             [NULL|ERROR|DEFAULT expr ON ERROR]
//	JSON_QUERY   [WITHOUT [ARRAY] WRAPPER | WITH [CONDITIONAL|UNCONDITIONAL]
//	             [ARRAY] WRAPPER] [NULL|ERROR|EMPTY ARRAY|EMPTY OBJECT ON EMPTY]
//	             [… ON ERROR]
//
// DEFAULT expr ON EMPTY is (Keyword DEFAULT, expr, Keyword ON EMPTY);
// RETURNING t is Keyword "RETURNING t".
func (p *parser) parseJSONClauses(f *FuncCall) {
	switch f.Name {
	case "JSON_EXISTS":
		if p.isWord("TRUE", "FALSE", "UNKNOWN", "ERROR") && p.isWordAt(1, "ON") {
			t := p.next()
			p.expectWord("ON")
			p.expectWord("ERROR")
			f.Args = append(f.Args, &Keyword{Pos: t.pos, Word: t.upper + " ON ERROR"})
		}
	case "JSON_VALUE":
		if t := p.cur(); p.acceptWord("RETURNING") {
			f.Args = append(f.Args, &Keyword{Pos: t.pos, Word: "RETURNING " + p.parseType().Base()})
		}
		p.parseJSONBehaviors(f, "NULL", "ERROR", "DEFAULT")
	case "JSON_QUERY":
		t := p.cur()
		switch {
		case p.acceptWord("WITHOUT"):
			p.acceptWord("ARRAY")
			p.expectWord("WRAPPER")
			f.Args = append(f.Args, &Keyword{Pos: t.pos, Word: "WITHOUT ARRAY WRAPPER"})
		case p.acceptWord("WITH"):
			kind := "UNCONDITIONAL"
			if c := p.cur(); p.acceptWord("CONDITIONAL", "UNCONDITIONAL") {
				kind = c.upper
			}
			p.acceptWord("ARRAY")
			p.expectWord("WRAPPER")
			f.Args = append(f.Args, &Keyword{Pos: t.pos, Word: "WITH " + kind + " ARRAY WRAPPER"})
		}
		p.parseJSONBehaviors(f, "NULL", "ERROR", "EMPTY")
	}
}

// parseJSONBehaviors reads [behavior ON EMPTY] [behavior ON ERROR], each
// behavior one of words (EMPTY meaning EMPTY ARRAY or EMPTY OBJECT).
func (p *parser) parseJSONBehaviors(f *FuncCall, words ...string) {
	seen := ""
	for p.isWord(words...) && seen != "ERROR" {
		t := p.next()
		w := t.upper
		var def Expr
		switch w {
		case "DEFAULT":
			def = p.parseAdditive()
		case "EMPTY":
			if !p.isWord("ARRAY", "OBJECT") {
				p.failExpected("ARRAY or OBJECT after EMPTY", "")
			}
			w += " " + p.next().upper
		}
		p.expectWord("ON")
		on := p.cur()
		if !p.acceptWord("EMPTY", "ERROR") || on.upper == seen {
			p.failExpected("EMPTY or ERROR after ON", "write ON EMPTY first, then ON ERROR")
		}
		seen = on.upper
		if def != nil {
			f.Args = append(f.Args, &Keyword{Pos: t.pos, Word: w}, def, &Keyword{Pos: on.pos, Word: "ON " + seen})
			continue
		}
		f.Args = append(f.Args, &Keyword{Pos: t.pos, Word: w + " ON " + seen})
	}
}

// parseJSONOnNull reads NULL ON NULL or ABSENT ON NULL, if next, into
// f.Args[0].
func (p *parser) parseJSONOnNull(f *FuncCall) bool {
	if !(p.isWord("NULL") || p.isWord("ABSENT")) || !p.isWordAt(1, "ON") {
		return false
	}
	t := p.next()
	p.expectWord("ON")
	p.expectWord("NULL")
	f.Args[0] = &Keyword{Pos: t.pos, Word: upper(t.text)}
	return true
}

func (p *parser) parseMoreArgs(f *FuncCall) {
	for p.acceptPunct(",") {
		f.Args = append(f.Args, p.parseArg())
	}
}

// parseTrim reads TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) into
// (Keyword, chars, s), and a plain TRIM(s, …) into its arguments.
func (p *parser) parseTrim(f *FuncCall) {
	side := p.cur()
	var chars Expr
	if p.acceptWord("BOTH", "LEADING", "TRAILING") {
		if !p.isWord("FROM") {
			chars = p.parseExpr()
		}
		p.expectWord("FROM")
	} else {
		side.upper = "BOTH"
		if !p.acceptWord("FROM") {
			chars = p.parseExpr()
			if !p.acceptWord("FROM") {
				f.Args = []Expr{chars}
				p.parseMoreArgs(f)
				return
			}
		}
	}
	if chars == nil {
		chars = &StringLit{Pos: side.pos, Value: " "}
	}
	f.Args = []Expr{&Keyword{Pos: side.pos, Word: side.upper}, chars, p.parseExpr()}
}

var timeUnitWords = []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND",
	"MILLISECOND", "MICROSECOND", "NANOSECOND"}

// floorUnitWords are the units of FLOOR/CEIL(t TO unit).
var floorUnitWords = append([]string{"DECADE", "CENTURY", "MILLENNIUM"}, timeUnitWords...)

func (p *parser) parseUnitKeyword() Expr { return p.parseUnitKeywordOf(timeUnitWords) }

func (p *parser) parseUnitKeywordOf(words []string) Expr {
	t := p.cur()
	if t.kind != tIdent || !containsStr(words, t.upper) {
		hint := ""
		if kw, ok := closest(t.text, words); ok && t.kind == tIdent {
			hint = "did you mean " + kw + "?"
		}
		p.failExpected("a time unit (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, …)", hint)
	}
	p.next()
	return &Keyword{Pos: t.pos, Word: t.upper}
}

// parseArg reads one call argument: an expression, *, or one of the
// table-function forms TABLE t [PARTITION BY …], DESCRIPTOR(…) and
// name => value.
func (p *parser) parseArg() Expr {
	t := p.cur()
	switch {
	case p.isPunct("*") && (p.isPunctAt(1, ")") || p.isPunctAt(1, ",")):
		p.next()
		return &Star{Pos: t.pos}
	case p.isWord("TABLE"):
		return p.parseTableArg()
	case p.isWord("DESCRIPTOR") && p.isPunctAt(1, "("):
		p.next()
		return &Descriptor{Pos: t.pos, Columns: p.parseIdentList("column")}
	case (t.kind == tIdent || t.kind == tQuoted) && p.isPunctAt(1, "=>"):
		// Any word may name a parameter (OFFSET => …): "=>" disambiguates.
		p.next()
		p.next()
		return &NamedArg{Pos: t.pos, Name: upper(t.text), Value: p.parseArg()}
	}
	return p.parseExpr()
}

func (p *parser) parseTableArg() Expr {
	a := &TableArg{Pos: p.next().pos, Name: p.parseName("table name after TABLE")}
	if p.isWord("PARTITION") {
		p.next()
		p.expectWord("BY")
		if p.isPunct("(") {
			open := p.next().pos
			a.PartitionBy = p.parseExprList()
			p.expectClose(")", open, "PARTITION BY list")
		} else {
			a.PartitionBy = []Expr{p.parseExpr()}
		}
	}
	return a
}
