package types

import (
	"testing"

	"github.com/shopspring/decimal"
)

// TestFitDecimal is DecimalData.fromBigDecimal(v, p, s): setScale(s,
// HALF_UP), NULL when the result's precision exceeds p.
func TestFitDecimal(t *testing.T) {
	for _, c := range []struct {
		in   string
		p, s int
		want string // "" is NULL
	}{
		{"1.005", 5, 2, "1.01"}, {"-1.005", 5, 2, "-1.01"}, {"7", 5, 2, "7.00"}, {"999.995", 5, 2, ""},
		{"999.994", 5, 2, "999.99"}, {"0.001", 2, 2, "0.00"}, {"0.995", 2, 2, ""}, {"12345", 5, 0, "12345"},
		{"123456", 5, 0, ""}, {"1E+2", 3, 0, "100"},
	} {
		got := ""
		if d, ok := FitDecimal(decimal.RequireFromString(c.in), c.p, c.s); ok {
			got = d.StringFixed(int32(-d.Exponent()))
			if int(-d.Exponent()) != c.s {
				t.Errorf("FitDecimal(%s, %d, %d) has scale %d", c.in, c.p, c.s, -d.Exponent())
			}
		}
		if got != c.want {
			t.Errorf("FitDecimal(%s, %d, %d) = %q, want %q", c.in, c.p, c.s, got, c.want)
		}
	}
}
