package parser

import (
	"errors"
	"fmt"
	"strings"
)

// Pos is a position in the source text: 1-based line and column, where the
// column counts characters (not bytes) from the start of the line.
type Pos struct {
	Line, Col int
}

// Position returns p; node types embed Pos to implement Node.
func (p Pos) Position() Pos { return p }

// String prints p as "line:col".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// ErrSyntax is matched by every error the parser returns:
// errors.Is(err, parser.ErrSyntax).
var ErrSyntax = errors.New("parser: syntax error")

// Error is Weir's one positional SQL error: a syntax error (the parser's),
// a planning error (sql/planner's) or an expression error (sql/expr's,
// found compiling or evaluating), at a line and column of the SQL text,
// with an optional hint suggesting the fix. planner.Error and expr.Error
// are this type. Match the layer with errors.Is on Class: ErrSyntax,
// expr.ErrInvalid, expr.ErrEval; a planning error has no Class.
type Error struct {
	Pos  Pos
	Msg  string
	Hint string
	// Class is the sentinel of the error's kind (see above); nil for a
	// planning error.
	Class error
	// Err is the cause, when the error places one (a connector's); nil
	// otherwise.
	Err error
}

// Error prints "line L:C: msg", followed by "; hint: …" when there is a hint.
func (e *Error) Error() string {
	s := fmt.Sprintf("line %d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
	if e.Hint != "" {
		s += "; hint: " + e.Hint
	}
	return s
}

// Unwrap returns the error's Class and cause, those that are set.
func (e *Error) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Class, e.Err} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// IsSyntax reports whether e is a syntax error (the parser's).
func (e *Error) IsSyntax() bool { return e.Class == ErrSyntax }

// Annotate returns the error followed by the offending line of src and a
// caret under the error's column, for terminals:
//
//	line 2:8: expected expression, found 'FROM'
//	  SELECT FROM t
//	         ^
func (e *Error) Annotate(src string) string {
	lines := strings.Split(src, "\n")
	if e.Pos.Line < 1 || e.Pos.Line > len(lines) {
		return e.Error()
	}
	line := strings.TrimRight(lines[e.Pos.Line-1], "\r")
	var pad strings.Builder
	col := 1
	for _, r := range line {
		if col >= e.Pos.Col {
			break
		}
		if r == '\t' {
			pad.WriteRune('\t')
		} else {
			pad.WriteRune(' ')
		}
		col++
	}
	return fmt.Sprintf("%s\n  %s\n  %s^", e.Error(), line, pad.String())
}

// editDistance is the optimal-string-alignment distance between a and b
// (insertions, deletions, substitutions and adjacent transpositions, so
// that GRUOP is one edit from GROUP), compared case-insensitively.
func editDistance(a, b string) int {
	ra, rb := []rune(strings.ToUpper(a)), []rune(strings.ToUpper(b))
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// Closest returns the candidate nearest to word, if one is near enough to
// be a plausible misspelling: at most one edit for short words, two for
// words of five or more characters. An exact case-insensitive match wins;
// ties go to the earliest candidate. sql/expr uses it for its hints too.
func Closest(word string, candidates []string) (string, bool) { return closest(word, candidates) }

func closest(word string, candidates []string) (string, bool) {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if strings.EqualFold(c, word) {
			return c, true
		}
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	limit := 1
	if len([]rune(word)) >= 5 {
		limit = 2
	}
	if len([]rune(word)) < 3 || bestD > limit {
		return "", false
	}
	return best, true
}
