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

// Error is an expression error at a position of the SQL source: the one
// positional SQL error type, parser.Error, with Class ErrInvalid for an
// error from Compile and ErrEval for one from Eval.
type Error = parser.Error

// errAt returns a compile error at the position of n.
func errAt(n parser.Node, format string, args ...any) *Error {
	return &Error{Pos: n.Position(), Msg: fmt.Sprintf(format, args...), Class: ErrInvalid}
}

// hintAt returns a compile error with a hint.
func hintAt(n parser.Node, hint, format string, args ...any) *Error {
	return &Error{Pos: n.Position(), Msg: fmt.Sprintf(format, args...), Hint: hint, Class: ErrInvalid}
}

// evalErr returns a runtime error at pos. A nested runtime error (from an
// argument) is returned unchanged, so the innermost position wins.
func evalErr(pos parser.Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Class: ErrEval}
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
	return &Error{Pos: pos, Msg: err.Error(), Class: ErrEval}
}

// closest is the parser's misspelling finder, so both layers suggest the
// same names.
func closest(word string, candidates []string) (string, bool) {
	return parser.Closest(word, candidates)
}
