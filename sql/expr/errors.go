package expr

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weirstream/weir/sql/parser"
)

var (
	// ErrInvalid is matched by every error Compile returns: an unknown
	// name, a type mismatch, a misused function.
	ErrInvalid = errors.New("sql/expr: invalid expression")
	// ErrEval is matched by every error Eval returns: a failed CAST, a
	// division by zero, a malformed argument.
	ErrEval = errors.New("sql/expr: evaluation failed")
)

// Error is an error at a position of the SQL source, with an optional hint
// suggesting the fix. Runtime reports an error from Eval rather than from
// Compile.
type Error struct {
	Pos     parser.Pos
	Msg     string
	Hint    string
	Runtime bool
}

// Error prints "line L:C: msg", followed by "; hint: …" when there is a hint.
func (e *Error) Error() string {
	s := fmt.Sprintf("line %d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
	if e.Hint != "" {
		s += "; hint: " + e.Hint
	}
	return s
}

// Unwrap returns ErrEval for a runtime error and ErrInvalid otherwise.
func (e *Error) Unwrap() error {
	if e.Runtime {
		return ErrEval
	}
	return ErrInvalid
}

// errAt returns a compile error at the position of n.
func errAt(n parser.Node, format string, args ...any) *Error {
	return &Error{Pos: n.Position(), Msg: fmt.Sprintf(format, args...)}
}

// hintAt returns a compile error with a hint.
func hintAt(n parser.Node, hint, format string, args ...any) *Error {
	return &Error{Pos: n.Position(), Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// evalErr returns a runtime error at pos. A nested runtime error (from an
// argument) is returned unchanged, so the innermost position wins.
func evalErr(pos parser.Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Runtime: true}
}

// wrapEval turns an error from a helper into a runtime *Error at pos,
// keeping an *Error that already names a position.
func wrapEval(pos parser.Pos, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Pos: pos, Msg: err.Error(), Runtime: true}
}

// editDistance is the optimal-string-alignment distance between a and b,
// compared case-insensitively, so that a transposition (CUONT) is one edit.
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

// closest returns the candidate nearest to word when it is near enough to
// be a plausible misspelling: a case-insensitive match, or at most one edit
// for short words and two for words of five or more characters. Ties go to
// the earliest candidate.
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
