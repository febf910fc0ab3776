package expr

import (
	"math"
	"testing"
	"time"

	"github.com/weirstream/weir/types"
)

func TestJavaFloat(t *testing.T) {
	tenth, fifth := 0.1, 0.2
	cases := []struct {
		f    float64
		bits int
		want string
	}{
		{1, 64, "1.0"}, {-1.5, 64, "-1.5"}, {0.001, 64, "0.001"}, {0.0001, 64, "1.0E-4"},
		{1234567, 64, "1234567.0"}, {1e7, 64, "1.0E7"}, {12345678.9, 64, "1.23456789E7"},
		{tenth + fifth, 64, "0.30000000000000004"}, {100, 64, "100.0"}, {math.NaN(), 64, "NaN"},
		{math.Inf(-1), 64, "-Infinity"}, {math.Copysign(0, -1), 64, "-0.0"}, {1e-300, 64, "1.0E-300"},
		{float64(float32(0.1)), 32, "0.1"}, {float64(float32(1.0 / 3)), 32, "0.33333334"},
	}
	for _, tc := range cases {
		if got := javaFloat(tc.f, tc.bits); got != tc.want {
			t.Errorf("javaFloat(%v, %d) = %s, want %s", tc.f, tc.bits, got, tc.want)
		}
	}
}

func TestFormatTimestamp(t *testing.T) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 120_000_000, time.UTC)
	for p, want := range map[int]string{0: "2024-01-02 03:04:05.12", 1: "2024-01-02 03:04:05.12",
		3: "2024-01-02 03:04:05.120", 6: "2024-01-02 03:04:05.120000"} {
		if got := types.FormatTimestamp(ts, p); got != want {
			t.Errorf("precision %d: %s, want %s", p, got, want)
		}
	}
	if got := types.FormatTimestamp(ts.Truncate(time.Second), 0); got != "2024-01-02 03:04:05" {
		t.Errorf("got %s", got)
	}
}

func TestDateFormatRoundTrip(t *testing.T) {
	ts := time.Date(2024, 12, 30, 15, 4, 5, 7_000_000, time.UTC)
	cases := map[string]string{
		"yyyy-MM-dd HH:mm:ss.SSS": "2024-12-30 15:04:05.007",
		"yyyyMMddHHmmss":          "20241230150405",
		"dd/MMM/yyyy:HH:mm:ss Z":  "30/Dec/2024:15:04:05 +0000",
		"EEE, d MMM yyyy h:mm a":  "Mon, 30 Dec 2024 3:04 PM",
		"yyyy-'W'w":               "2024-W1",
		"yy.M.d K:mm":             "24.12.30 3:04",
	}
	for p, want := range cases {
		f, err := compileDateFormat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got := f.format(ts)
		if got != want {
			t.Errorf("format %q = %s, want %s", p, got, want)
		}
		back, _, err := f.parse(got)
		if err != nil {
			t.Errorf("parse %q with %q: %v", got, p, err)
			continue
		}
		if p == "yyyy-MM-dd HH:mm:ss.SSS" && !back.Equal(ts) {
			t.Errorf("round trip %s", back)
		}
	}
	if _, err := compileDateFormat("yyyy-'MM"); err == nil {
		t.Error("unterminated quote accepted")
	}
}

func TestLikeToRegexp(t *testing.T) {
	for _, tc := range []struct {
		p    string
		esc  rune
		sim  bool
		want string
	}{
		{"a%b_", 0, false, `(?s)\A(?:a.*b.)\z`},
		{"a.b*", 0, false, `(?s)\A(?:a\.b\*)\z`},
		{"a!%", '!', false, `(?s)\A(?:a%)\z`},
		{"(a|b)+%", 0, true, `(?s)\A(?:(a|b)+.*)\z`},
	} {
		got, err := likeToRegexp(tc.p, tc.esc, tc.sim)
		if err != nil || got != tc.want {
			t.Errorf("%q: %s %v, want %s", tc.p, got, err, tc.want)
		}
	}
	if _, err := likeToRegexp("a!", '!', false); err == nil {
		t.Error("dangling escape accepted")
	}
}

func TestJavaReplacement(t *testing.T) {
	for in, want := range map[string]string{"$1-$2": "${1}-${2}", `\$5`: "$$5", "a$": "a$$", "${name}": "${name}", `\\`: `\`} {
		if got := javaReplacement(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestAddMonths(t *testing.T) {
	d := func(y, m, day int) time.Time { return time.Date(y, time.Month(m), day, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		t    time.Time
		n    int64
		want time.Time
	}{
		{d(2024, 1, 31), 1, d(2024, 2, 29)}, {d(2023, 1, 31), 1, d(2023, 2, 28)},
		{d(2024, 3, 31), -1, d(2024, 2, 29)}, {d(2024, 1, 15), -13, d(2022, 12, 15)},
		{d(2024, 12, 1), 1, d(2025, 1, 1)},
	} {
		if got := addMonths(tc.t, tc.n); !got.Equal(tc.want) {
			t.Errorf("%s + %d months = %s, want %s", tc.t, tc.n, got, tc.want)
		}
	}
}

func TestDecimalRules(t *testing.T) {
	dec := func(p, s int) types.Type { return decimalType(p, s, false) }
	for _, tc := range []struct {
		op   byte
		l, r types.Type
		p, s int
		fits bool
	}{
		{'+', dec(10, 2), dec(5, 4), 13, 4, true},
		{'*', dec(3, 3), scalar(types.BigInt, false), 22, 3, true},
		{'/', dec(10, 2), dec(5, 1), 17, 8, true},
		{'/', dec(38, 10), dec(38, 10), 38, 6, false},
		{'%', dec(10, 2), scalar(types.Int, false), 10, 2, true},
		{'*', dec(38, 10), dec(38, 10), 38, 6, false},
	} {
		p, s, fits := decimalResult(tc.op, tc.l, tc.r)
		if p != tc.p || s != tc.s || fits != tc.fits {
			t.Errorf("%s %c %s = DECIMAL(%d, %d) fits %v, want DECIMAL(%d, %d) fits %v",
				tc.l, tc.op, tc.r, p, s, fits, tc.p, tc.s, tc.fits)
		}
	}
}

func TestLeastRestrictive(t *testing.T) {
	ch := func(n int) types.Type { return types.Type{Kind: types.Char, Precision: n} }
	for _, tc := range []struct {
		in   []types.Type
		want string
	}{
		{[]types.Type{scalar(types.Int, false), scalar(types.BigInt, true)}, "BIGINT"},
		{[]types.Type{scalar(types.Int, false), decimalType(5, 2, false)}, "DECIMAL(12, 2) NOT NULL"},
		{[]types.Type{decimalType(5, 2, false), scalar(types.Double, false)}, "DOUBLE NOT NULL"},
		{[]types.Type{ch(3), ch(5)}, "VARCHAR(5) NOT NULL"},
		{[]types.Type{ch(3), ch(3)}, "CHAR(3) NOT NULL"},
		{[]types.Type{ch(3), stringType(false)}, "STRING NOT NULL"},
		{[]types.Type{nullType(), scalar(types.Int, false)}, "INT"},
		{[]types.Type{scalar(types.Date, false), timestampType(3, false)}, "TIMESTAMP(3) NOT NULL"},
	} {
		got, ok := leastRestrictive(tc.in)
		if !ok || got.String() != tc.want {
			t.Errorf("%v: %s %v, want %s", tc.in, got, ok, tc.want)
		}
	}
	if _, ok := leastRestrictive([]types.Type{scalar(types.Int, false), scalar(types.Boolean, false)}); ok {
		t.Error("INT and BOOLEAN joined")
	}
}

// TestJavaLogs: the logarithms are Java's correctly rounded ones, so
// LOG10 of a power of ten is exact (Math.log10's contract) and LN is
// within an ulp of Go's; special arguments keep Java's results.
func TestJavaLogs(t *testing.T) {
	for n := -300; n <= 300; n++ {
		if got := javaLog10(math.Pow10(n)); got != float64(n) {
			t.Errorf("javaLog10(1e%d) = %v", n, got)
		}
	}
	for x := 0.001; x < 1e6; x *= 1.37 {
		if got, near := javaLog(x), math.Log(x); math.Abs(got-near) > math.Abs(near)*0x1p-52 {
			t.Errorf("javaLog(%v) = %v, math.Log gives %v", x, got, near)
		}
	}
	if !math.IsInf(javaLog(0), -1) || !math.IsNaN(javaLog(-1)) || !math.IsNaN(javaLog10(-1)) || !math.IsInf(javaLog2(math.Inf(1)), 1) {
		t.Error("special cases differ from Math.log")
	}
}

// TestJavaExpPow: EXP stays within an ulp of Go's over its whole range,
// POWER near Go's (whose error grows with the exponent: several ulps at
// 7142.09^49, where ours is Java's and the exact value's), and both keep
// IEEE's special cases at the edges.
func TestJavaExpPow(t *testing.T) {
	ulp := func(a, b float64) bool { return a == b || math.Abs(a-b) <= math.Abs(b)*0x1p-51 }
	for x := -745.0; x < 710; x += 0.731 {
		if got, near := javaExp(x), math.Exp(x); !ulp(got, near) {
			t.Errorf("javaExp(%v) = %v, math.Exp gives %v", x, got, near)
		}
	}
	for x := 0.01; x < 1e4; x *= 1.9 {
		for y := -50.0; y < 50; y += 3.3 {
			if got, near := javaPow(x, y), math.Pow(x, y); math.Abs(got-near) > math.Abs(near)*1e-14 {
				t.Errorf("javaPow(%v, %v) = %v, math.Pow gives %v", x, y, got, near)
			}
		}
	}
	for _, c := range [][3]float64{{7142.0949569337245, 48.99999999999998, 6.877892450152183e188}, {0, 0, 1}, {2, 1100, math.Inf(1)}, {2, -1100, 0}, {-2, 3, -8}, {4, 0.5, 2}, {10, -2, 0.01}} {
		if got := javaPow(c[0], c[1]); got != c[2] {
			t.Errorf("javaPow(%v, %v) = %v, want %v", c[0], c[1], got, c[2])
		}
	}
	if !math.IsInf(javaExp(1000), 1) || javaExp(-1000) != 0 || !math.IsNaN(javaPow(-8, 1.0/3)) {
		t.Error("special cases differ from Math.exp / Math.pow")
	}
}
