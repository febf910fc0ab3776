package client

import (
	"errors"
	"fmt"
	"testing"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// TestPlaceOfPrefersSyntaxThenPlanningThenExpression: with one positional
// error type for the three SQL layers, placeOf still picks the position as
// it did with three types — a syntax error's anywhere in the chain first,
// then a planning error's, then an expression error's, else the
// statement's.
func TestPlaceOfPrefersSyntaxThenPlanningThenExpression(t *testing.T) {
	at := func(l, c int) parser.Pos { return parser.Pos{Line: l, Col: c} }
	syntax := &parser.Error{Pos: at(3, 4), Msg: "bad", Class: parser.ErrSyntax}
	exprErr := &parser.Error{Pos: at(5, 6), Msg: "unknown column", Class: expr.ErrInvalid}
	piece := parser.Piece{First: at(1, 1)}
	for _, c := range []struct {
		err  error
		want parser.Pos
	}{
		{&parser.Error{Pos: at(9, 9), Msg: "plan", Err: syntax}, at(3, 4)},
		{fmt.Errorf("wrapped: %w", &parser.Error{Pos: at(7, 1), Msg: "plan", Err: exprErr}), at(7, 1)},
		{&parser.Error{Msg: "plan without a place", Err: exprErr}, at(5, 6)},
		{errors.New("no place"), at(1, 1)},
	} {
		if got := placeOf(c.err, piece); got != c.want {
			t.Errorf("placeOf(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if !errors.Is(syntax, parser.ErrSyntax) || !errors.Is(exprErr, expr.ErrInvalid) || errors.Is(exprErr, parser.ErrSyntax) {
		t.Error("Class is not matched by errors.Is")
	}
}
