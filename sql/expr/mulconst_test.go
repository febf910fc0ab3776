package expr

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/sql/parser"
)

// TestMulByConst checks the int64 path of DECIMAL constant * integer
// against decimalOp, the math/big path, value and representation alike,
// at the edges: signs, zero, int64 overflow and the result's precision.
func TestMulByConst(t *testing.T) {
	bigint, err := parser.ParseType("BIGINT")
	if err != nil {
		t.Fatal(err)
	}
	s := &Scope{Columns: []Column{{Name: "n", Type: bigint}}}
	ns := []int64{0, 1, -1, 7, 123_456_789, -987_654_321, 1 << 40, math.MaxInt64 / 908, math.MaxInt64 / 907,
		math.MaxInt64, math.MinInt64, math.MinInt64 + 1, 10_000_000_000_000_000, 99_999_999_999_999_999}
	for _, k := range []string{"0.908", "-0.908", "0.90", "123.5", "0.000", "CAST(1.5 AS DECIMAL(2, 1))",
		"CAST(2 AS DECIMAL(38, 0))", "CAST(0.001 AS DECIMAL(38, 37))", "CAST(5 AS DECIMAL(1, 0))",
		"99999999999999999999.5", "CAST(NULL AS DECIMAL(3, 1))"} {
		kc := compileSQL(t, k, s)
		kv, _ := kc.Eval(nil)
		for _, src := range []string{k + " * n", "n * " + k} {
			c := compileSQL(t, src, s)
			for _, n := range ns {
				got, gotErr := c.Eval([]any{n})
				var want any
				if kv != nil {
					want, _ = decimalOp('*', toDecimal(kv), decimal.NewFromInt(n), c.Type.Precision, c.Type.Scale)
				}
				if gotErr != nil || !sameDecimal(got, want) {
					t.Errorf("%s with n=%d: %v (%v), want %v", src, n, got, gotErr, want)
				}
			}
		}
	}
}

func compileSQL(t *testing.T, src string, s *Scope) *Compiled {
	t.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(e, s)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return c
}

// sameDecimal reports equal values with equal coefficients and exponents.
func sameDecimal(a, b any) bool {
	x, ok1 := a.(decimal.Decimal)
	y, ok2 := b.(decimal.Decimal)
	if !ok1 || !ok2 {
		return a == nil && b == nil
	}
	return x.Exponent() == y.Exponent() && x.Coefficient().Cmp(y.Coefficient()) == 0
}
