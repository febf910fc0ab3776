package expr_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// UPPER/LOWER(x) compared with constants (=, <>, IN, NOT IN; the constant
// on either side) skips building the mapped string for ASCII values; the
// answers must be those of comparing the mapped string itself (the same
// call concatenated with an empty string, which the shortcut does not see),
// for ASCII, for characters that map to ASCII or to several (Kelvin sign,
// İ, ß), and NULL.
func TestCaseMappedComparisons(t *testing.T) {
	s := &expr.Scope{Columns: []expr.Column{{Name: "x", Type: ty("STRING")}}}
	values := []any{"apple", "Apple", "APPLE", "apples", "", "Google", "\u212aelvin", "kelvin", "\u0130stanbul",
		"istanbul", "Straße", "STRASSE", "ΣΑΣ", "σας", "a\x00b", nil}
	consts := []string{"'apple'", "'APPLE'", "'kelvin'", "'KELVIN'", "'i̇stanbul'", "'straße'", "'STRASSE'",
		"'σας'", "''", "'a' || CHR(0) || 'b'", "CAST(NULL AS STRING)"}
	var forms []string
	for _, f := range []string{"LOWER", "UPPER"} {
		for _, c := range consts {
			forms = append(forms, f+"(x) = "+c, c+" <> "+f+"(x)", f+"(x) IN ("+c+", 'google')",
				f+"(x) NOT IN ('GOOGLE', "+c+")")
		}
	}
	slow := func(src string) string { // the mapped value behind || '': no shortcut
		for _, f := range []string{"LOWER(x)", "UPPER(x)"} {
			src = strings.ReplaceAll(src, f, "("+f+" || '')")
		}
		return src
	}
	for _, src := range forms {
		fast, ref := compile(t, src, s), compile(t, slow(src), s)
		for _, v := range values {
			a, errA := fast.Eval([]any{v})
			b, errB := ref.Eval([]any{v})
			if fmt.Sprint(a, errA) != fmt.Sprint(b, errB) {
				t.Errorf("%s with x = %q: %v (%v), comparing the mapped string gives %v (%v)", src, v, a, errA, b, errB)
			}
		}
	}
	// The shortcut builds nothing for an ASCII value.
	c := compile(t, "LOWER(x) = 'apple' OR LOWER(x) IN ('google', 'baidu')", s)
	r := []any{"Google"}
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Eval(r) }); n != 0 {
		t.Errorf("LOWER(x) compared with constants allocates %v times per row", n)
	}
}

func compile(t *testing.T, src string, s *expr.Scope) *expr.Compiled {
	t.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	c, err := expr.Compile(e, s)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return c
}
