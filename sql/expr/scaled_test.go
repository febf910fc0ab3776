package expr_test

import (
	"math"
	"strings"
	"testing"

	"github.com/weirstream/weir/sql/expr"
)

// A DECIMAL constant times an integer, compared with a constant, is
// compared as integers (scaledComparison): for every operator, either
// side, exact and inexact constants, products past the fast path's range
// and NULLs, it gives what comparing the DECIMAL product gives.
func TestScaledComparisons(t *testing.T) {
	s := &expr.Scope{Columns: []expr.Column{{Name: "x", Type: ty("BIGINT")}, {Name: "i", Type: ty("INT")}}}
	xs := []any{int64(0), int64(1), int64(-1), int64(1101321), int64(1101322), int64(-1101322), int64(55066079),
		int64(55066080), int64(1 << 40), int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64 / 908), nil}
	products := []string{"0.908 * x", "x * 0.908", "-0.908 * x", "2.50 * x", "0.000 * x", "1.5 * i",
		"12345678901234567.8 * x"}
	consts := []string{"1000000", "50000000", "1000000.0", "999999.999", "1000000.0005", "-5", "0", "0.5",
		"CAST(NULL AS INT)", "9223372036854775807", "99999999999999999999.9"}
	ops := []string{"=", "<>", "<", "<=", ">", ">="}
	for _, p := range products {
		for _, k := range consts {
			for _, op := range ops {
				for _, src := range []string{p + " " + op + " " + k, k + " " + op + " " + p} {
					// The reference: the product plus zero, a DECIMAL built
					// and compared as such.
					fast, ref := compile(t, src, s), compile(t, strings.Replace(src, p, "("+p+" + 0)", 1), s)
					for _, x := range xs {
						row := []any{x, nil}
						if x != nil && p == "1.5 * i" {
							row = []any{nil, int64(int32(x.(int64)))}
						}
						a, errA := fast.Eval(row)
						b, errB := ref.Eval(row)
						if a != b || (errA == nil) != (errB == nil) {
							t.Errorf("%s with x = %v: %v (%v), comparing the DECIMAL gives %v (%v)", src, row, a, errA, b, errB)
						}
					}
				}
			}
		}
	}
	// The fast path builds nothing.
	c := compile(t, "0.908 * x > 1000000 AND 0.908 * x < 50000000", s)
	r := []any{int64(2_000_000), nil}
	if v, err := c.Eval(r); v != true || err != nil {
		t.Fatalf("0.908 * 2000000 between the bounds: %v, %v", v, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Eval(r) }); n != 0 {
		t.Errorf("a scaled product compared with constants allocates %v times per row", n)
	}
}
