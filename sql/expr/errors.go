package expr

import (
	"errors"
	"fmt"

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

// closest is the parser's misspelling finder, so both layers suggest the
// same names.
func closest(word string, candidates []string) (string, bool) {
	return parser.Closest(word, candidates)
}
