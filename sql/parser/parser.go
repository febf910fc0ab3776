package parser

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/sql/types"
)

// maxDepth bounds the nesting of expressions, queries and types, so that a
// hostile input fails with an error instead of exhausting the stack.
const maxDepth = 200

// ParseScript parses a script: statements separated by ';', with optional
// empty statements and comments.
func ParseScript(src string) ([]Statement, error) {
	return run(src, (*parser).parseScript)
}

// ParseStatement parses exactly one statement; a trailing ';' is allowed.
func ParseStatement(src string) (Statement, error) {
	return run(src, func(p *parser) Statement {
		s := p.parseStatement()
		p.acceptPunct(";")
		p.expectEOF("end of input after the statement")
		return s
	})
}

// ParseQuery parses one query (SELECT, VALUES, set operations, WITH).
func ParseQuery(src string) (*Query, error) {
	return run(src, func(p *parser) *Query {
		q := p.parseQuery()
		p.expectEOF("end of input after the query")
		return q
	})
}

// ParseExpr parses one scalar expression.
func ParseExpr(src string) (Expr, error) {
	return run(src, func(p *parser) Expr {
		e := p.parseExpr()
		p.expectEOF("end of input after the expression")
		return e
	})
}

// ParseType parses a data type, e.g. "DECIMAL(10, 2) NOT NULL" or
// "ROW<id BIGINT, tags ARRAY<STRING>>".
func ParseType(src string) (types.Type, error) {
	return run(src, func(p *parser) types.Type {
		t := p.parseType()
		p.expectEOF("end of input after the type")
		return t
	})
}

// bailout is the panic value that unwinds the parser on the first error;
// run and try recover it. Any other panic is a bug and propagates.
type bailout struct{ err *Error }

func run[T any](src string, f func(*parser) T) (res T, err error) {
	p := &parser{toks: lex(src), suspect: -1, memo: map[memoKey]memoEntry{}}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			var zero T
			res, err = zero, b.err
		}
	}()
	return f(p), nil
}

// parser is a recursive-descent parser over the token slice. It can back
// up (try) to read a parenthesis either as a subquery or as an expression.
type parser struct {
	toks  []token
	i     int
	depth int
	// suspect is the index of a token read as an implicit alias that is
	// spelled like a clause keyword (FORM, WHRE): if parsing fails right
	// after it, the error suggests the keyword.
	suspect     int
	suspectWord string
	// memo remembers the outcome of each backtracking attempt by kind and
	// start token. Without it, nested "((SELECT …" would be parsed an
	// exponential number of times: each level tries two readings, and
	// each reading re-parses everything inside.
	memo map[memoKey]memoEntry
}

// Kinds of memoized attempts.
const (
	attemptSubqueryExpr = iota
	attemptInSubquery
	attemptDerivedTable
)

type memoKey struct{ kind, start int }

type memoEntry struct {
	node any
	end  int
	err  *Error
}

func (p *parser) cur() token { return p.peek(0) }

func (p *parser) peek(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.cur()
	if t.kind != tEOF && t.kind != tErr {
		p.i++
	}
	return t
}

func (p *parser) isWordAt(n int, words ...string) bool {
	t := p.peek(n)
	if t.kind != tIdent {
		return false
	}
	for _, w := range words {
		if t.upper == w {
			return true
		}
	}
	return false
}

func (p *parser) isWord(words ...string) bool { return p.isWordAt(0, words...) }

func (p *parser) acceptWord(words ...string) bool {
	if p.isWord(words...) {
		p.next()
		return true
	}
	return false
}

// acceptWords consumes the keyword sequence if it is next, all or nothing.
func (p *parser) acceptWords(words ...string) bool {
	for n, w := range words {
		if !p.isWordAt(n, w) {
			return false
		}
	}
	for range words {
		p.next()
	}
	return true
}

func (p *parser) expectWord(w string) token {
	if !p.isWord(w) {
		hint := ""
		if t := p.cur(); t.kind == tIdent && editDistance(t.text, w) <= 2 && len(w) > 2 {
			hint = "did you mean " + w + "?"
		}
		p.failExpected(w, hint)
	}
	return p.next()
}

func (p *parser) isPunctAt(n int, s string) bool {
	t := p.peek(n)
	return t.kind == tPunct && t.text == s
}

func (p *parser) isPunct(s string) bool { return p.isPunctAt(0, s) }

func (p *parser) acceptPunct(s string) bool {
	if p.isPunct(s) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectPunct(s string) token {
	if !p.isPunct(s) {
		p.failExpected("'"+s+"'", "")
	}
	return p.next()
}

// expectClose expects the ')' (or ']', '>') closing what was opened at
// open, naming it in the error.
func (p *parser) expectClose(s string, open Pos, what string) {
	if !p.isPunct(s) {
		p.failExpected(fmt.Sprintf("'%s' to close the %s opened at line %s", s, what, open), "")
	}
	p.next()
}

// expectEOF fails with "expected <what>" unless the input is consumed.
func (p *parser) expectEOF(what string) {
	if p.cur().kind != tEOF {
		hint := ""
		if t := p.cur(); t.kind == tIdent && isStatementWord(t.upper) {
			hint = "missing ';' between statements?"
		}
		p.failExpected(what, hint)
	}
}

// fail stops parsing with an error at pos.
func (p *parser) fail(pos Pos, hint, format string, args ...any) {
	panic(bailout{&Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint}})
}

// failExpected stops with "expected <what>, found <current token>". A
// lexical error at the current token is reported instead, since it is the
// real cause.
func (p *parser) failExpected(what, hint string) {
	t := p.cur()
	if t.kind == tErr {
		panic(bailout{t.err})
	}
	if hint == "" && p.suspect >= 0 && p.i == p.suspect+1 {
		hint = fmt.Sprintf("did you mean %s? '%s' was read as an alias", p.suspectWord, p.toks[p.suspect].text)
	}
	p.fail(t.pos, hint, "expected %s, found %s", what, t.describe())
}

// try runs f; if f fails, try rewinds to where it started and returns the
// error.
func (p *parser) try(f func()) (err *Error) {
	start, depth, suspect, word := p.i, p.depth, p.suspect, p.suspectWord
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			p.i, p.depth, p.suspect, p.suspectWord = start, depth, suspect, word
			err = b.err
		}
	}()
	f()
	return nil
}

// attempt is try with memoization: an attempt of the same kind at the same
// token replays the first outcome.
func (p *parser) attempt(kind int, f func() any) (any, *Error) {
	key := memoKey{kind, p.i}
	if e, ok := p.memo[key]; ok {
		if e.err == nil {
			p.i = e.end
		}
		return e.node, e.err
	}
	var n any
	err := p.try(func() { n = f() })
	p.memo[key] = memoEntry{node: n, end: p.i, err: err}
	return n, err
}

// enter guards recursion depth; call the returned func on the way out.
func (p *parser) enter() func() {
	p.depth++
	if p.depth > maxDepth {
		p.fail(p.cur().pos, "", "the input nests too deeply")
	}
	return func() { p.depth-- }
}

// isIdentTok reports whether t can be an identifier: quoted, or a word
// that is not reserved.
func isIdentTok(t token) bool {
	return t.kind == tQuoted || (t.kind == tIdent && !reserved[t.upper])
}

func (p *parser) parseIdent(what string) string {
	t := p.cur()
	if !isIdentTok(t) {
		hint := ""
		if t.kind == tIdent {
			hint = fmt.Sprintf("%s is a reserved word; quote it as `%s` to use it as a name", t.upper, t.text)
		}
		p.failExpected(what, hint)
	}
	p.next()
	return t.text
}

func (p *parser) parseName(what string) Name {
	n := Name{p.parseIdent(what)}
	for p.isPunct(".") {
		p.next()
		n = append(n, p.parseIdent(what))
	}
	return n
}

// parseIdentList parses "(a, b, …)" after the '(' was seen at open.
func (p *parser) parseIdentList(what string) []string {
	open := p.expectPunct("(").pos
	var out []string
	for {
		out = append(out, p.parseIdent(what))
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectClose(")", open, what+" list")
	return out
}

func (p *parser) parseString(what string) string {
	t := p.cur()
	if t.kind != tString {
		p.failExpected(what+" (a 'quoted' string)", "")
	}
	p.next()
	return t.text
}

// implicitAlias reads an alias written without AS, if the next token can
// be one. A word spelled like GROUP or ORDER followed by BY is surely a
// misspelled clause, not an alias.
func (p *parser) implicitAlias() (string, bool) {
	t := p.cur()
	if !isIdentTok(t) {
		return "", false
	}
	if t.kind == tIdent {
		if kw, ok := closest(t.text, clauseWords); ok {
			if (kw == "GROUP" || kw == "ORDER" || kw == "PARTITION") && p.isWordAt(1, "BY") {
				p.fail(t.pos, "did you mean "+kw+" BY?", "unexpected '%s'", t.text)
			}
			p.suspect, p.suspectWord = p.i, kw
		}
	}
	p.next()
	return t.text, true
}

// parseAlias reads "[AS] alias [(cols)]"; withCols allows the column list.
func (p *parser) parseAlias(withCols bool) (alias string, cols []string) {
	if p.acceptWord("AS") {
		alias = p.parseIdent("alias after AS")
	} else if a, ok := p.implicitAlias(); ok {
		alias = a
	} else {
		return "", nil
	}
	if withCols && p.isPunct("(") {
		cols = p.parseIdentList("column alias")
	}
	return alias, cols
}

func isStatementWord(w string) bool {
	for _, s := range statementWords {
		if s == w {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------- statements

func (p *parser) parseScript() []Statement {
	var out []Statement
	for {
		for p.acceptPunct(";") {
		}
		if p.cur().kind == tEOF {
			return out
		}
		out = append(out, p.parseStatement())
		if !p.acceptPunct(";") {
			p.expectEOF("';' or end of input after the statement")
			return out
		}
	}
}

func (p *parser) parseStatement() Statement {
	t := p.cur()
	if p.isPunct("(") {
		return p.parseQuery()
	}
	switch {
	case p.isWord("SELECT", "WITH", "VALUES"):
		return p.parseQuery()
	case p.isWord("INSERT"):
		return p.parseInsert()
	case p.isWord("CREATE"):
		return p.parseCreate()
	case p.isWord("DROP"):
		return p.parseDrop()
	case p.isWord("SET"):
		return p.parseSet()
	case p.isWord("RESET"):
		p.next()
		s := &ResetStmt{Pos: t.pos}
		if p.cur().kind == tString {
			s.Key = p.next().text
		}
		return s
	case p.isWord("EXPLAIN"):
		return p.parseExplain()
	case p.isWord("SHOW"):
		return p.parseShow()
	case p.isWord("DESCRIBE", "DESC"):
		p.next()
		return &Describe{Pos: t.pos, Name: p.parseName("table name")}
	case p.isWord("EXECUTE"):
		return p.parseExecute()
	case p.isWord("BEGIN"):
		return p.parseBeginStatementSet()
	}
	p.failStatement()
	return nil
}

func (p *parser) failStatement() {
	t := p.cur()
	if t.kind == tIdent {
		switch t.upper {
		case "ALTER", "USE", "LOAD", "UNLOAD", "ANALYZE", "TRUNCATE", "UPDATE", "DELETE", "CALL", "ADD", "REMOVE":
			p.fail(t.pos, "", "%s statements are not supported", t.upper)
		}
		if kw, ok := closest(t.text, statementWords); ok {
			p.failExpected("a statement", "did you mean "+kw+"?")
		}
	}
	p.failExpected("a statement", "")
}

func (p *parser) parseSet() Statement {
	s := &SetStmt{Pos: p.next().pos}
	if p.isPunct(";") || p.cur().kind == tEOF {
		return s
	}
	if t := p.cur(); isIdentTok(t) || t.kind == tIdent {
		p.fail(t.pos, "write SET 'key' = 'value'", "expected a 'quoted' configuration key, found %s", t.describe())
	}
	s.Key = p.parseString("configuration key")
	p.expectPunct("=")
	if t := p.cur(); t.kind != tString {
		p.fail(t.pos, fmt.Sprintf("quote the value: SET '%s' = '…'", s.Key),
			"expected a 'quoted' value for '%s', found %s", s.Key, t.describe())
	}
	s.Value = p.next().text
	return s
}

var explainDetails = []string{string(ChangelogMode), string(EstimatedCost), string(JSONExecutionPlan), string(PlanAdvice)}

func (p *parser) parseExplain() Statement {
	e := &Explain{Pos: p.next().pos}
	p.acceptWords("PLAN", "FOR")
	for {
		t := p.cur()
		if t.kind != tIdent || isStatementWord(t.upper) || t.upper == "STATEMENT" || t.upper == "EXECUTE" {
			break
		}
		if !containsStr(explainDetails, t.upper) {
			hint := "details are " + strings.Join(explainDetails, ", ")
			if kw, ok := closest(t.text, explainDetails); ok {
				hint = "did you mean " + kw + "?"
			}
			p.fail(t.pos, hint, "unknown EXPLAIN detail '%s'", t.text)
		}
		p.next()
		e.Details = append(e.Details, ExplainDetail(t.upper))
		if !p.acceptPunct(",") {
			break
		}
	}
	switch {
	case p.isWord("SELECT", "WITH", "VALUES") || p.isPunct("("):
		e.Stmt = p.parseQuery()
	case p.isWord("INSERT"):
		e.Stmt = p.parseInsert()
	case p.isWord("EXECUTE"):
		e.Stmt = p.parseExecute()
	case p.isWord("STATEMENT"):
		e.Stmt = p.parseStatementSetBody(p.cur().pos)
	default:
		p.failExpected("a query, INSERT or STATEMENT SET to explain", "")
	}
	return e
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) parseShow() Statement {
	s := &Show{Pos: p.next().pos}
	switch {
	case p.acceptWord("TABLES"):
		s.Object = TableObject
	case p.acceptWord("VIEWS"):
		s.Object = ViewObject
	case p.acceptWord("FUNCTIONS"):
		s.Object = FunctionObject
	default:
		hint := "supported: SHOW TABLES, SHOW VIEWS, SHOW FUNCTIONS"
		if t := p.cur(); t.kind == tIdent {
			if kw, ok := closest(t.text, []string{"TABLES", "VIEWS", "FUNCTIONS"}); ok {
				hint = "did you mean SHOW " + kw + "?"
			}
		}
		p.failExpected("TABLES, VIEWS or FUNCTIONS", hint)
	}
	return s
}

// parseExecute reads EXECUTE STATEMENT SET BEGIN … END, or EXECUTE INSERT.
func (p *parser) parseExecute() Statement {
	pos := p.next().pos
	if p.isWord("INSERT") {
		return p.parseInsert()
	}
	return p.parseStatementSetBody(pos)
}

// parseStatementSetBody reads STATEMENT SET BEGIN insert; … END.
func (p *parser) parseStatementSetBody(pos Pos) *StatementSet {
	p.expectWord("STATEMENT")
	p.expectWord("SET")
	open := p.expectWord("BEGIN").pos
	return p.parseSetInserts(pos, open)
}

// parseBeginStatementSet reads the SQL-client form BEGIN STATEMENT SET;
// insert; … END.
func (p *parser) parseBeginStatementSet() Statement {
	open := p.next().pos
	p.expectWord("STATEMENT")
	p.expectWord("SET")
	return p.parseSetInserts(open, open)
}

func (p *parser) parseSetInserts(pos, open Pos) *StatementSet {
	s := &StatementSet{Pos: pos}
	for {
		for p.acceptPunct(";") {
		}
		switch {
		case p.isWord("END"):
			if len(s.Inserts) == 0 {
				p.fail(p.cur().pos, "", "empty STATEMENT SET: expected at least one INSERT")
			}
			p.next()
			return s
		case p.isWord("INSERT"):
			s.Inserts = append(s.Inserts, p.parseInsert())
			if !p.isWord("END") {
				p.expectPunct(";")
			}
		case p.cur().kind == tEOF:
			p.failExpected(fmt.Sprintf("END to close the STATEMENT SET opened at line %s", open), "")
		default:
			p.failExpected("INSERT or END (a STATEMENT SET holds only INSERT statements)", "")
		}
	}
}

func (p *parser) parseInsert() *Insert {
	ins := &Insert{Pos: p.next().pos}
	if p.acceptWord("OVERWRITE") {
		ins.Overwrite = true
	} else {
		p.expectWord("INTO")
	}
	ins.Table = p.parseName("table name")
	if p.isWord("PARTITION") {
		ins.Partition = p.parsePartitionSpec()
	}
	if p.isPunct("(") && !p.startsQuery(0) {
		ins.Columns = p.parseIdentList("column")
	}
	if !p.isWord("SELECT", "WITH", "VALUES") && !p.isPunct("(") {
		hint := ""
		if kw, ok := closest(p.cur().text, []string{"SELECT", "VALUES", "WITH"}); ok && p.cur().kind == tIdent {
			hint = "did you mean " + kw + "?"
		}
		p.failExpected("a query (SELECT or VALUES) after INSERT INTO "+formatName(ins.Table), hint)
	}
	ins.Query = p.parseQuery()
	return ins
}

func (p *parser) parsePartitionSpec() []*PartitionValue {
	p.next()
	open := p.expectPunct("(").pos
	var out []*PartitionValue
	for {
		pv := &PartitionValue{Pos: p.cur().pos, Column: p.parseIdent("partition column")}
		p.expectPunct("=")
		pv.Value = p.parsePrimary()
		out = append(out, pv)
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectClose(")", open, "partition spec")
	return out
}

// startsQuery reports whether the tokens from offset n, past any opening
// parentheses, begin a query.
func (p *parser) startsQuery(n int) bool {
	for p.isPunctAt(n, "(") {
		n++
	}
	return p.isWordAt(n, "SELECT", "WITH", "VALUES")
}
