package parser

import "strings"

// Piece is one statement of a script as Split cuts it: its text, from the
// end of the previous statement through its own ';', and where that text
// starts in the script.
type Piece struct {
	Text string
	// Start is the position of Text's first character in the script.
	Start Pos
	// First is the position of the statement's first token.
	First Pos
}

// Padded returns the piece's text preceded by the lines and columns
// before it, so that parsing it alone places errors where they are in
// the whole script.
func (p Piece) Padded() string {
	return strings.Repeat("\n", p.Start.Line-1) + strings.Repeat(" ", p.Start.Col-1) + p.Text
}

// Split cuts src into the statements ended by ';' — the SQL client's rule
// for when a statement is complete — and returns what follows the last
// one (blank, or a statement still being typed). A ';' inside a string,
// a quoted identifier or a comment does not count, nor one inside a
// statement set (BEGIN STATEMENT SET; …; END; or EXECUTE STATEMENT SET
// BEGIN …; END;), which ends at its END. Statements with no tokens (a
// lone ';', a comment) are dropped.
//
// A lexical error that can only be mended by more input (an unterminated
// string, quoted identifier or comment) leaves the rest incomplete; any
// other ends the statement at the next ';' after it, so the parser can
// report it.
func Split(src string) (pieces []Piece, rest string) {
	l := &lexer{src: src, line: 1, col: 1}
	start, startPos := 0, Pos{1, 1}
	var words []string // the statement's first words, upper-cased
	first, tokens, prevEnd := Pos{}, 0, false
	for {
		t := l.next()
		switch t.kind {
		case tEOF:
			return pieces, src[start:]
		case tErr:
			if strings.HasPrefix(t.err.Msg, "unterminated") {
				return pieces, src[start:]
			}
			end := strings.IndexByte(src[l.off:], ';')
			if end < 0 {
				return pieces, src[start:]
			}
			end += l.off + 1
			if tokens == 0 {
				first = t.pos
			}
			pieces = append(pieces, Piece{Text: src[start:end], Start: startPos, First: first})
			more, rest := Split(src[end:])
			return append(pieces, shift(more, src[:end])...), rest
		}
		if tokens == 0 {
			first = t.pos
		}
		tokens++
		if len(words) < 4 && t.kind == tIdent {
			words = append(words, t.upper)
		}
		if t.kind != tPunct || t.text != ";" {
			prevEnd = t.kind == tIdent && t.upper == "END"
			continue
		}
		if inStatementSet(words) && !prevEnd {
			continue
		}
		if tokens > 1 {
			pieces = append(pieces, Piece{Text: src[start:l.off], Start: startPos, First: first})
		}
		start, startPos, words, tokens, prevEnd = l.off, Pos{l.line, l.col}, nil, 0, false
	}
}

// inStatementSet reports whether a statement starting with words is a
// statement set, whose inner ';' do not end it.
func inStatementSet(words []string) bool {
	w := strings.Join(words, " ")
	return strings.HasPrefix(w, "BEGIN STATEMENT SET") || strings.HasPrefix(w, "EXECUTE STATEMENT SET BEGIN")
}

// shift moves pieces split from the text after before to their positions
// in the whole script.
func shift(pieces []Piece, before string) []Piece {
	line := strings.Count(before, "\n")
	col := len([]rune(before[strings.LastIndexByte(before, '\n')+1:]))
	move := func(p Pos) Pos {
		if p.Line == 1 {
			p.Col += col
		}
		p.Line += line
		return p
	}
	for i := range pieces {
		pieces[i].Start, pieces[i].First = move(pieces[i].Start), move(pieces[i].First)
	}
	return pieces
}
