package expr

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// TestIntegerSwitch: a CASE comparing one integer column with integer
// constants (the Nexmark table's rowtime, searched or simple) takes the
// integer switch and gives what the same CASE gives through the
// comparison operators (each WHEN written "(x = k) IS TRUE", which the
// switch does not take), for hits, misses, NULL and values of other Go
// types; CASEs that do not qualify keep the general path.
func TestIntegerSwitch(t *testing.T) {
	scope := &Scope{Columns: []Column{{Name: "event_type", Type: types.Type{Kind: types.Int, Nullable: true}},
		{Name: "a", Type: types.Type{Kind: types.BigInt, Nullable: true}}, {Name: "b", Type: types.Type{Kind: types.BigInt}},
		{Name: "d", Type: types.Type{Kind: types.Double, Nullable: true}}}}
	compile := func(src string) *Compiled { return compileSQL(t, src, scope) }
	pairs := [][2]string{
		{"CASE WHEN event_type = 0 THEN a WHEN event_type = 1 THEN b ELSE a + b END",
			"CASE WHEN (event_type = 0) IS TRUE THEN a WHEN (event_type = 1) IS TRUE THEN b ELSE a + b END"},
		{"CASE WHEN 2 = event_type THEN 'two' WHEN event_type = -1 THEN 'minus' END",
			"CASE WHEN (2 = event_type) IS TRUE THEN 'two' WHEN (event_type = -1) IS TRUE THEN 'minus' END"},
		{"CASE event_type WHEN 1 THEN a WHEN 2 THEN b END",
			"CASE WHEN (event_type = 1) IS TRUE THEN a WHEN (event_type = 2) IS TRUE THEN b END"},
		{"CASE a WHEN 0 THEN 'zero' WHEN 10000000000 THEN 'big' ELSE 'other' END",
			"CASE WHEN (a = 0) IS TRUE THEN 'zero' WHEN (a = 10000000000) IS TRUE THEN 'big' ELSE 'other' END"},
	}
	for _, p := range pairs {
		fast, slow := compile(p[0]), compile(p[1])
		if fast.Type.String() != slow.Type.String() {
			t.Errorf("%s: type %s, the comparison form's %s", p[0], fast.Type, slow.Type)
		}
		for _, v := range []any{nil, int64(0), int64(1), int64(2), int64(-1), int64(7), int64(10_000_000_000), int32(1), 1.0} {
			row := []any{v, v, int64(5), 2.5}
			got, gerr := fast.Eval(row)
			want, werr := slow.Eval(row)
			if fmt.Sprint(got) != fmt.Sprint(want) || (gerr == nil) != (werr == nil) {
				t.Errorf("%s with %T %v: %v (%v), the comparison form gives %v (%v)", p[0], v, v, got, gerr, want, werr)
			}
		}
	}
	c := &compiler{s: scope}
	for src, want := range map[string]bool{
		"CASE WHEN event_type = 0 THEN a WHEN event_type = 1 THEN b ELSE a END": true,
		"CASE event_type WHEN 1 THEN a END":                                     true,
		"CASE WHEN event_type = 0 THEN a WHEN a = 1 THEN b END":                 false, // two columns
		"CASE WHEN event_type = 0 THEN a WHEN event_type > 1 THEN b END":        false, // not =
		"CASE WHEN d = 0 THEN a END":                                            false, // not an integer
		"CASE event_type WHEN 1.5 THEN a END":                                   false, // not an integer constant
		"CASE event_type WHEN b THEN a END":                                     false, // not a constant
	} {
		e, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		x := e.(*parser.Case)
		var operand *Compiled
		var conds []*Compiled
		if x.Operand != nil {
			if operand, err = c.expr(x.Operand); err != nil {
				t.Fatal(err)
			}
			for _, w := range x.Whens {
				k, err := c.expr(w.Cond)
				if err != nil {
					t.Fatal(err)
				}
				conds = append(conds, k)
			}
		}
		if got := c.integerSwitch(x, operand, conds) != nil; got != want {
			t.Errorf("%s: integer switch %v, want %v", src, got, want)
		}
	}
}
