package parser

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestDataDriven runs the scripts in testdata. Commands:
//
//	parse     parse the input as a script; print each statement's canonical
//	          Format, or the error
//	error     like parse, but the input must fail; print the error with the
//	          offending line and a caret
//	expr      parse an expression; print Format and the fully parenthesized
//	          form, which shows the grouping
//	type      parse a data type; print FormatType and types.Type.String
//	ast       parse a script; print the tree with positions
//	split     cut a script into statements (Split); print each one's first
//	          token position and text, then the rest
//
// Every input that parses must also survive the round trip: Format, parse
// again, same tree (positions aside) and same text.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if strings.HasSuffix(path, ".sql") || strings.Contains(path, "/fuzz/") {
			t.Skip("input of other tests")
		}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return runCmd(t, td)
		})
	})
}

func runCmd(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "parse":
		stmts, err := ParseScript(td.Input)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		checkRoundTrip(t, td.Pos, stmts)
		return FormatScript(stmts)
	case "error":
		_, err := ParseScript(td.Input)
		var perr *Error
		if !errors.As(err, &perr) || !errors.Is(err, ErrSyntax) {
			t.Fatalf("%s: expected a syntax error, got %v", td.Pos, err)
		}
		return perr.Annotate(td.Input) + "\n"
	case "expr":
		e, err := ParseExpr(td.Input)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		checkExprRoundTrip(t, td.Pos, e)
		full := formatter{fullParens: true}
		full.expr(e, 0)
		return Format(e) + "\n" + full.String() + "\n"
	case "type":
		typ, err := ParseType(td.Input)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		s := FormatType(typ)
		again, err := ParseType(s)
		if err != nil || !reflect.DeepEqual(typ, again) {
			t.Fatalf("%s: type round trip: %q -> %+v, %v", td.Pos, s, again, err)
		}
		return s + "\n" + typ.String() + "\n"
	case "ast":
		stmts, err := ParseScript(td.Input)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		var b strings.Builder
		for _, s := range stmts {
			dump(&b, reflect.ValueOf(s), "")
		}
		return b.String()
	case "split":
		return splitCmd(t, td)
	}
	t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	return ""
}

// checkRoundTrip formats stmts, parses the text again and requires the
// same trees and the same text.
func checkRoundTrip(t testing.TB, where string, stmts []Statement) {
	t.Helper()
	text := FormatScript(stmts)
	again, err := ParseScript(text)
	if err != nil {
		t.Fatalf("%s: canonical form does not parse: %v\n%s", where, err, text)
	}
	if text2 := FormatScript(again); text2 != text {
		t.Fatalf("%s: Format is not stable:\n%s\n%s", where, text, text2)
	}
	if !sameTree(stmts, again) {
		t.Fatalf("%s: tree changed in the round trip through\n%s", where, text)
	}
}

func checkExprRoundTrip(t testing.TB, where string, e Expr) {
	t.Helper()
	text := Format(e)
	again, err := ParseExpr(text)
	if err != nil {
		t.Fatalf("%s: canonical form %q does not parse: %v", where, text, err)
	}
	if !sameTree(e, again) {
		t.Fatalf("%s: tree changed in the round trip through %q", where, text)
	}
}

// sameTree compares two trees ignoring positions. It clears the positions
// of both.
func sameTree(a, b any) bool {
	clearPositions(reflect.ValueOf(a))
	clearPositions(reflect.ValueOf(b))
	return reflect.DeepEqual(a, b)
}

var posType = reflect.TypeOf(Pos{})

func clearPositions(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			clearPositions(v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			clearPositions(v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == posType {
			if v.CanSet() {
				v.Set(reflect.Zero(posType))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			clearPositions(v.Field(i))
		}
	}
}

// dump prints a tree: one node per line with its position, then its
// non-zero fields indented.
func dump(b *strings.Builder, v reflect.Value, indent string) {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			b.WriteString("nil\n")
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || v.Type().PkgPath() != posType.PkgPath() {
		fmt.Fprintf(b, "%v\n", v.Interface())
		return
	}
	b.WriteString(v.Type().Name())
	if pf := v.FieldByName("Pos"); pf.IsValid() && pf.Type() == posType {
		fmt.Fprintf(b, " @%v", pf.Interface())
	}
	b.WriteString("\n")
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		if name == "Pos" || f.IsZero() {
			continue
		}
		dumpField(b, name, f, indent+"  ")
	}
}

func dumpField(b *strings.Builder, name string, f reflect.Value, indent string) {
	fmt.Fprintf(b, "%s%s:", indent, name)
	if f.Kind() == reflect.Slice && f.Type().Elem().Kind() != reflect.String {
		b.WriteString("\n")
		for j := 0; j < f.Len(); j++ {
			fmt.Fprintf(b, "%s- ", indent)
			dump(b, f.Index(j), indent+"  ")
		}
		return
	}
	b.WriteString(" ")
	switch {
	case f.Type().PkgPath() == "github.com/weirstream/weir/types" && f.Kind() == reflect.Struct:
		fmt.Fprintf(b, "%v\n", f.Interface())
	case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
		fmt.Fprintf(b, "%q\n", f.Interface())
	case f.Kind() == reflect.String:
		fmt.Fprintf(b, "%q\n", f.String())
	default:
		dump(b, f, indent)
	}
}

// splitCmd prints Split's pieces. A piece that parses padded (Padded)
// must place its statement at the piece's First position.
func splitCmd(t *testing.T, td *datadriven.TestData) string {
	pieces, rest := Split(td.Input)
	var b strings.Builder
	for _, p := range pieces {
		fmt.Fprintf(&b, "%s %q\n", p.First, p.Text)
		if st, err := ParseScript(p.Padded()); err == nil && len(st) == 1 && st[0].Position() != p.First {
			t.Errorf("%s: %q parses at %s, want %s", td.Pos, p.Text, st[0].Position(), p.First)
		}
	}
	fmt.Fprintf(&b, "rest %q\n", rest)
	return b.String()
}
