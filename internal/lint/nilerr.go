package lint

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// Finding is one place a check flags.
type Finding struct {
	Pos   token.Position
	Check string
	Msg   string
}

// String prints the finding as the Go tools do: file:line: check: message.
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.Pos.Filename, f.Pos.Line, f.Check, f.Msg)
}

// Names of the error checks.
const (
	// DiscardedConstructorError: x, _ := NewX(...) where the blank takes an
	// error. The value is then a nil pointer that fails far away (the
	// planner's SIGSEGV on an interval join with inverted bounds).
	DiscardedConstructorError = "discarded-constructor-error"
	// TypedNilInterface: return newX(...) or return x, err from a function
	// whose result is an interface, x a pointer: on error the caller gets
	// a non-nil interface holding a nil pointer, and its `!= nil` checks
	// pass (the Kafka sink's panic in Close).
	TypedNilInterface = "typed-nil-interface"
)

// CheckErrors runs both error checks over the files of one type-checked
// package.
func CheckErrors(fset *token.FileSet, files []*ast.File, info *types.Info) []Finding {
	var out []Finding
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				out = append(out, discardedConstructorError(fset, n, info)...)
			case *ast.FuncDecl:
				if n.Body != nil {
					out = append(out, typedNilReturns(fset, n.Type, n.Body, info)...)
				}
			case *ast.FuncLit:
				out = append(out, typedNilReturns(fset, n.Type, n.Body, info)...)
			}
			return true
		})
	}
	return out
}

// discardedConstructorError flags `…, _ := NewX(…)` (or new…) whose last
// result, the blank's, is an error.
func discardedConstructorError(fset *token.FileSet, a *ast.AssignStmt, info *types.Info) []Finding {
	if len(a.Rhs) != 1 || len(a.Lhs) < 2 || !isBlank(a.Lhs[len(a.Lhs)-1]) {
		return nil
	}
	call, ok := a.Rhs[0].(*ast.CallExpr)
	if !ok {
		return nil
	}
	name := calleeName(call)
	if !strings.HasPrefix(name, "New") && !strings.HasPrefix(name, "new") {
		return nil
	}
	tuple, ok := info.TypeOf(call).(*types.Tuple)
	if !ok || tuple.Len() != len(a.Lhs) || !isError(tuple.At(tuple.Len()-1).Type()) {
		return nil
	}
	return []Finding{{Pos: fset.Position(a.Pos()), Check: DiscardedConstructorError,
		Msg: fmt.Sprintf("the error of %s is discarded: a failed constructor returns a nil value; return the error", name)}}
}

// typedNilReturns flags the returns of one function (not of the function
// literals inside it: Inspect visits those on their own) that can put a
// nil pointer into an interface result next to a non-nil error.
func typedNilReturns(fset *token.FileSet, ft *ast.FuncType, body *ast.BlockStmt, info *types.Info) []Finding {
	results := resultTypes(ft, info)
	if len(results) < 2 || !isError(results[len(results)-1]) {
		return nil
	}
	var out []Finding
	ast.Inspect(body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		if r, ok := n.(*ast.ReturnStmt); ok {
			if i := typedNilAt(r, results, info); i >= 0 {
				out = append(out, Finding{Pos: fset.Position(r.Pos()), Check: TypedNilInterface,
					Msg: fmt.Sprintf("result %d is the interface %s but gets a pointer that is nil when the error is not; "+
						"check the error and return an untyped nil", i, results[i])})
			}
		}
		return true
	})
	return out
}

// typedNilAt returns the index of a result of r that is an interface
// filled from a pointer that may be nil along with an error, or -1.
func typedNilAt(r *ast.ReturnStmt, results []types.Type, info *types.Info) int {
	var got []types.Type
	switch {
	case len(r.Results) == 1 && len(results) > 1:
		tuple, ok := info.TypeOf(r.Results[0]).(*types.Tuple)
		if !ok || tuple.Len() != len(results) {
			return -1
		}
		for i := range tuple.Len() {
			got = append(got, tuple.At(i).Type())
		}
	case len(r.Results) == len(results):
		if isNilIdent(r.Results[len(r.Results)-1], info) {
			return -1 // no error: whatever the pointer, it is meant
		}
		for i, e := range r.Results {
			got = append(got, info.TypeOf(e))
			if neverNil(e, info) {
				got[i] = nil
			}
		}
	default:
		return -1
	}
	for i := range len(results) - 1 {
		if types.IsInterface(results[i]) && got[i] != nil && isPointer(got[i]) {
			return i
		}
	}
	return -1
}

func resultTypes(ft *ast.FuncType, info *types.Info) []types.Type {
	if ft.Results == nil {
		return nil
	}
	var out []types.Type
	for _, f := range ft.Results.List {
		t := info.TypeOf(f.Type)
		for range max(1, len(f.Names)) {
			out = append(out, t)
		}
	}
	return out
}

// neverNil: &T{…} and new(T) are never nil pointers.
func neverNil(e ast.Expr, info *types.Info) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		return e.Op == token.AND
	case *ast.CallExpr:
		id, ok := ast.Unparen(e.Fun).(*ast.Ident)
		if !ok {
			return false
		}
		_, builtin := info.Uses[id].(*types.Builtin)
		return builtin && id.Name == "new"
	}
	return false
}

func calleeName(call *ast.CallExpr) string {
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	case *ast.IndexExpr: // a generic function instantiated explicitly
		return calleeName(&ast.CallExpr{Fun: f.X})
	case *ast.IndexListExpr:
		return calleeName(&ast.CallExpr{Fun: f.X})
	}
	return ""
}

func isBlank(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "_"
}

func isNilIdent(e ast.Expr, info *types.Info) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return false
	}
	_, isNil := info.Uses[id].(*types.Nil)
	return isNil
}

var errorType = types.Universe.Lookup("error").Type()

func isError(t types.Type) bool { return t != nil && types.Identical(t, errorType) }

func isPointer(t types.Type) bool {
	_, ok := t.Underlying().(*types.Pointer)
	return ok && !types.IsInterface(t)
}
