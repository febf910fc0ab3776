package parser

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind int

const (
	tEOF       tokKind = iota
	tIdent             // an unquoted word: identifier or keyword
	tQuoted            // a `back-quoted` identifier
	tString            // a 'string' literal; text is the unescaped value
	tNumber            // a numeric literal; text is as written
	tPunct             // operators and punctuation
	tHintStart         // "/*+", opening a hint
	tHintEnd           // "*/" closing a hint
	tErr               // a lexical error; the parser stops here
)

// token is one lexeme. raw is its source text, used in error messages.
type token struct {
	kind  tokKind
	text  string // identifier as written, string value, number or operator
	upper string // tIdent only: the word upper-cased, for keyword matching
	raw   string
	pos   Pos
	err   *Error // tErr only
}

// describe prints the token for "found …" in error messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return "string " + quoteShort(t.raw)
	case tErr:
		return "invalid input"
	}
	return "'" + shorten(t.raw) + "'"
}

func shorten(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:37]) + "..."
	}
	return s
}

func quoteShort(raw string) string {
	if utf8.RuneCountInString(raw) > 40 {
		return string([]rune(raw)[:37]) + "...'"
	}
	return raw
}

// lexer turns source text into tokens. It tracks line and column by
// characters so that positions match what an editor shows.
type lexer struct {
	src       string
	off       int
	line, col int
	inHint    bool
}

// lex tokenizes src. On a lexical error the token list ends with a tErr
// token carrying it, so that a syntax error earlier in the text is still
// reported first.
func lex(src string) []token {
	l := &lexer{src: src, line: 1, col: 1}
	var toks []token
	for {
		t := l.next()
		toks = append(toks, t)
		if t.kind == tEOF || t.kind == tErr {
			return toks
		}
	}
}

func (l *lexer) peekRune(ahead int) rune {
	off := l.off
	for i := 0; i < ahead; i++ {
		if off >= len(l.src) {
			return 0
		}
		_, w := utf8.DecodeRuneInString(l.src[off:])
		off += w
	}
	if off >= len(l.src) {
		return 0
	}
	r, _ := utf8.DecodeRuneInString(l.src[off:])
	return r
}

func (l *lexer) advance() rune {
	r, w := utf8.DecodeRuneInString(l.src[l.off:])
	l.off += w
	if r == '\n' {
		l.line++
		l.col = 1
	} else {
		l.col++
	}
	return r
}

func (l *lexer) errTok(pos Pos, msg, hint string) token {
	return token{kind: tErr, pos: pos, err: &Error{Pos: pos, Msg: msg, Hint: hint, Class: ErrSyntax}}
}

func (l *lexer) next() token {
	if t, ok := l.skipSpace(); !ok {
		return t
	}
	pos, start := Pos{l.line, l.col}, l.off
	if l.off >= len(l.src) {
		if l.inHint {
			return l.errTok(pos, "unterminated hint: expected '*/'", "")
		}
		return token{kind: tEOF, pos: pos}
	}
	r := l.peekRune(0)
	var t token
	switch {
	case r == '\'':
		t = l.lexString(pos)
	case r == '`':
		t = l.lexQuoted(pos)
	case isDigit(r) || (r == '.' && isDigit(l.peekRune(1))):
		t = l.lexNumber(pos)
	case isIdentStart(r):
		for l.off < len(l.src) && isIdentPart(l.peekRune(0)) {
			l.advance()
		}
		word := l.src[start:l.off]
		t = token{kind: tIdent, text: word, upper: strings.ToUpper(word)}
	case r == '$' && l.peekRune(1) == '{':
		return l.lexVariable(pos)
	default:
		t = l.lexPunct(pos)
	}
	if t.kind == tErr {
		return t
	}
	t.pos, t.raw = pos, l.src[start:l.off]
	return t
}

// skipSpace skips white space and comments. A hint comment "/*+" is not
// skipped: it returns the hint-start token.
func (l *lexer) skipSpace() (token, bool) {
	for l.off < len(l.src) {
		r := l.peekRune(0)
		switch {
		case unicode.IsSpace(r):
			l.advance()
		case r == '-' && l.peekRune(1) == '-':
			for l.off < len(l.src) && l.peekRune(0) != '\n' {
				l.advance()
			}
		case r == '/' && l.peekRune(1) == '*' && l.peekRune(2) == '+' && !l.inHint:
			pos := Pos{l.line, l.col}
			l.advance()
			l.advance()
			l.advance()
			l.inHint = true
			return token{kind: tHintStart, text: "/*+", raw: "/*+", pos: pos}, false
		case r == '/' && l.peekRune(1) == '*':
			pos := Pos{l.line, l.col}
			l.advance()
			l.advance()
			for {
				if l.off >= len(l.src) {
					return l.errTok(pos, "unterminated comment: '/*' has no closing '*/'", ""), false
				}
				if l.peekRune(0) == '*' && l.peekRune(1) == '/' {
					l.advance()
					l.advance()
					break
				}
				l.advance()
			}
		default:
			return token{}, true
		}
	}
	return token{}, true
}

func (l *lexer) lexString(pos Pos) token {
	l.advance()
	var b strings.Builder
	for {
		if l.off >= len(l.src) {
			return l.errTok(pos, "unterminated string literal",
				"close it with ' (write '' for a quote inside a string)")
		}
		r := l.advance()
		if r == '\'' {
			if l.peekRune(0) != '\'' {
				return token{kind: tString, text: b.String()}
			}
			l.advance()
		}
		b.WriteRune(r)
	}
}

func (l *lexer) lexQuoted(pos Pos) token {
	l.advance()
	var b strings.Builder
	for {
		if l.off >= len(l.src) {
			return l.errTok(pos, "unterminated quoted identifier",
				"close it with ` (write `` for a back-quote inside a name)")
		}
		r := l.advance()
		if r == '`' {
			if l.peekRune(0) != '`' {
				break
			}
			l.advance()
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return l.errTok(pos, "empty quoted identifier ``", "")
	}
	return token{kind: tQuoted, text: b.String()}
}

// lexNumber reads 12, 1.5, .5, 1., 1e10, 1.5E-3.
func (l *lexer) lexNumber(pos Pos) token {
	start := l.off
	for isDigit(l.peekRune(0)) {
		l.advance()
	}
	if l.peekRune(0) == '.' {
		l.advance()
		for isDigit(l.peekRune(0)) {
			l.advance()
		}
	}
	if r := l.peekRune(0); r == 'e' || r == 'E' {
		n := 1
		if s := l.peekRune(1); s == '+' || s == '-' {
			n = 2
		}
		if isDigit(l.peekRune(n)) {
			for i := 0; i < n; i++ {
				l.advance()
			}
			for isDigit(l.peekRune(0)) {
				l.advance()
			}
		}
	}
	return token{kind: tNumber, text: l.src[start:l.off]}
}

func (l *lexer) lexVariable(pos Pos) token {
	end := strings.IndexByte(l.src[l.off:], '}')
	if end < 0 {
		return l.errTok(pos, "unexpected '${' with no closing '}'", "")
	}
	name := l.src[l.off+2 : l.off+end]
	return l.errTok(pos, fmt.Sprintf("unsubstituted variable ${%s}", name),
		fmt.Sprintf("${…} placeholders are replaced from the environment before parsing; set %s", name))
}

var punct2 = []string{"<>", "!=", "<=", ">=", "||", "=>"}

func (l *lexer) lexPunct(pos Pos) token {
	rest := l.src[l.off:]
	if l.inHint && strings.HasPrefix(rest, "*/") {
		l.advance()
		l.advance()
		l.inHint = false
		return token{kind: tHintEnd, text: "*/"}
	}
	for _, p := range punct2 {
		if strings.HasPrefix(rest, p) {
			l.advance()
			l.advance()
			return token{kind: tPunct, text: p}
		}
	}
	r := l.advance()
	if strings.ContainsRune("(),;.*+-/%=<>[]?{}|^", r) {
		return token{kind: tPunct, text: string(r)}
	}
	if r == '"' {
		return l.errTok(pos, `unexpected '"'`,
			"Flink SQL quotes strings with ' and identifiers with `")
	}
	return l.errTok(pos, fmt.Sprintf("unexpected character %q", r), "")
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func isIdentPart(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
