package parser

import (
	"fmt"

	"github.com/weirstream/weir/types"
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

// ParseQuery parses one query (SELECT, VALUES, set operations, WITH); a
// trailing ';' is allowed.
func ParseQuery(src string) (*Query, error) {
	return run(src, func(p *parser) *Query {
		q := p.parseQuery()
		p.acceptPunct(";")
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

// peek returns the token n ahead (n < 0: behind); past the end, the last
// (EOF or error) token.
func (p *parser) peek(n int) token {
	if p.i+n < 0 {
		return token{}
	}
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
	panic(bailout{&Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint, Class: ErrSyntax}})
}

// failExpected stops with "expected <what>, found <current token>". A
// lexical error at the current token is reported instead, since it is the
// real cause.
func (p *parser) failExpected(what, hint string) {
	t := p.cur()
	if t.kind == tErr {
		panic(bailout{t.err})
	}
	if hint == "" && t.kind == tHintStart {
		hint = "a hint /*+ … */ goes right after SELECT or after a table name"
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
			hint = p.reservedHint(t)
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
