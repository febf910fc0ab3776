package expr_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

func ty(src string) types.Type {
	t, err := parser.ParseType(src)
	if err != nil {
		panic(err)
	}
	return t
}

var fixedNow = time.Date(2024, 3, 5, 10, 20, 30, 123456789, time.UTC)

// scope is the test input: one column of each kind, with the values of row.
func scope() *expr.Scope {
	return &expr.Scope{
		Columns: []expr.Column{
			{Name: "i", Type: ty("INT")},
			{Name: "b", Type: ty("BIGINT")},
			{Name: "d", Type: ty("DOUBLE")},
			{Name: "dec", Type: ty("DECIMAL(10, 2)")},
			{Name: "s", Type: ty("STRING")},
			{Name: "ts", Type: ty("TIMESTAMP(3)")},
			{Name: "ltz", Type: ty("TIMESTAMP_LTZ(3)")},
			{Name: "dt", Type: ty("DATE")},
			{Name: "flag", Type: ty("BOOLEAN")},
			{Name: "n", Type: ty("INT")},
			{Name: "arr", Type: ty("ARRAY<INT>")},
			{Name: "m", Type: ty("MAP<STRING, INT>")},
			{Name: "r", Type: ty("ROW<x INT, y STRING>")},
			{Qualifier: "B", Name: "price", Type: ty("BIGINT")},
			{Qualifier: "B", Name: "url", Type: ty("STRING")},
			{Qualifier: "B", Name: "dateTime", Type: ty("TIMESTAMP(3)")},
			{Name: "ns", Type: ty("STRING")},
			{Name: "nb", Type: ty("BOOLEAN")},
			{Name: "ti", Type: ty("TINYINT")},
			{Name: "json", Type: ty("STRING")},
			{Name: "nn", Type: ty("INT NOT NULL")},
		},
		Now: func() time.Time { return fixedNow },
	}
}

var row = []any{
	int64(7),
	int64(10_000_000_000),
	2.5,
	decimal.RequireFromString("12.34"),
	"Hello, World",
	time.Date(2024, 1, 15, 8, 5, 3, 120_000_000, time.UTC),
	time.Date(2024, 1, 15, 8, 5, 3, 0, time.UTC),
	time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
	true,
	nil,
	[]any{int64(10), nil, int64(30)},
	map[any]any{"a": int64(1), "b": int64(2)},
	[]any{int64(5), "five"},
	int64(2_000_000),
	"https://www.nexmark.com/abc/item.htm?query=1&channel_id=1234",
	time.Date(2024, 1, 15, 20, 0, 0, 0, time.UTC),
	nil,
	nil,
	int64(100),
	`{"a": {"b": [1, 2.5, "x"]}, "t": true, "n": null, "s": "str"}`,
	int64(3),
}

type evalCase struct {
	src  string
	want string // ValueString of the result; NULL for nil
	typ  string // the result type as types.Type.String prints it
}

// run compiles and evaluates each case against row.
func run(t *testing.T, cases []evalCase) {
	t.Helper()
	s := scope()
	for _, tc := range cases {
		e, err := parser.ParseExpr(tc.src)
		if err != nil {
			t.Errorf("%s: parse: %v", tc.src, err)
			continue
		}
		c, err := expr.Compile(e, s)
		if err != nil {
			t.Errorf("%s: compile: %v", tc.src, err)
			continue
		}
		v, err := c.Eval(row)
		if err != nil {
			t.Errorf("%s: eval: %v", tc.src, err)
			continue
		}
		got := expr.ValueString(v, c.Type, nil)
		if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.src, got, tc.want)
		}
		if tc.typ != "" && c.Type.String() != tc.typ {
			t.Errorf("%s: type %s, want %s", tc.src, c.Type, tc.typ)
		}
		if err := checkGoType(v, c.Type); err != "" {
			t.Errorf("%s: %s", tc.src, err)
		}
	}
}

// checkGoType checks that a value is carried by the Go type its SQL type
// calls for (package types).
func checkGoType(v any, t types.Type) string {
	if v == nil {
		if !t.Nullable {
			return "NULL value of a NOT NULL type " + t.String()
		}
		return ""
	}
	ok := false
	switch {
	case t.Kind == types.Boolean:
		_, ok = v.(bool)
	case t.IsInteger():
		_, ok = v.(int64)
	case t.Kind == types.Float || t.Kind == types.Double:
		_, ok = v.(float64)
	case t.Kind == types.Decimal:
		_, ok = v.(decimal.Decimal)
	case t.IsString():
		_, ok = v.(string)
	case t.Kind == types.Bytes:
		_, ok = v.([]byte)
	case t.Kind == types.Date || t.Kind == types.Timestamp || t.Kind == types.TimestampLTZ || t.Kind == types.Time:
		_, ok = v.(time.Time)
	case t.Kind == types.Array || t.Kind == types.Row:
		_, ok = v.([]any)
	case t.Kind == types.Map:
		_, ok = v.(map[any]any)
	}
	if !ok {
		return "value " + expr.ValueString(v, t, nil) + " does not carry " + t.String()
	}
	return ""
}

func TestLiterals(t *testing.T) {
	run(t, []evalCase{
		{"1", "1", "INT NOT NULL"},
		{"2147483648", "2147483648", "BIGINT NOT NULL"},
		{"99999999999999999999", "99999999999999999999", "DECIMAL(20, 0) NOT NULL"},
		{"0.908", "0.908", "DECIMAL(3, 3) NOT NULL"},
		{"1.50", "1.50", "DECIMAL(3, 2) NOT NULL"},
		{"1e3", "1000.0", "DOUBLE NOT NULL"},
		{"'abc'", "abc", "CHAR(3) NOT NULL"},
		{"TRUE", "TRUE", "BOOLEAN NOT NULL"},
		{"NULL", "NULL", "NULL"},
		{"DATE '2020-02-29'", "2020-02-29", "DATE NOT NULL"},
		{"TIMESTAMP '2020-01-01 12:00:00.5'", "2020-01-01 12:00:00.5", "TIMESTAMP(1) NOT NULL"},
		{"TIMESTAMP '2020-01-01 12:00:00'", "2020-01-01 12:00:00", "TIMESTAMP(0) NOT NULL"},
		{"INTERVAL '10' SECOND", "10000", "BIGINT NOT NULL"},
		{"INTERVAL '4' SECOND", "4000", ""},
		{"INTERVAL '1 02:03:04.005' DAY TO SECOND", "93784005", ""},
		{"INTERVAL '2:30' HOUR TO MINUTE", "9000000", ""},
		{"INTERVAL '-5' MINUTE", "-300000", ""},
		{"INTERVAL '1-2' YEAR TO MONTH", "14", ""},
		{"INTERVAL '3' MONTH", "3", ""},
		{"ARRAY[1, 2, 3]", "[1, 2, 3]", "ARRAY<INT NOT NULL> NOT NULL"},
		{"ARRAY[1, NULL]", "[1, NULL]", "ARRAY<INT> NOT NULL"},
		{"MAP['a', 1, 'b', 2]", "{a=1, b=2}", "MAP<CHAR(1) NOT NULL, INT NOT NULL> NOT NULL"},
		{"ROW(1, 'a')", "(1, a)", "ROW<`EXPR$0` INT NOT NULL, `EXPR$1` CHAR(1) NOT NULL> NOT NULL"},
		{"(1, 'a', TRUE)", "(1, a, TRUE)", ""},
	})
}

func TestColumns(t *testing.T) {
	run(t, []evalCase{
		{"i", "7", "INT"},
		{"B.price", "2000000", "BIGINT"},
		{"price", "2000000", "BIGINT"},
		{"`dateTime`", "2024-01-15 20:00:00.000", "TIMESTAMP(3)"},
		{"B.`dateTime`", "2024-01-15 20:00:00.000", "TIMESTAMP(3)"},
		{"r.x", "5", "INT"},
		{"r.y", "five", "STRING"},
		{"arr[1]", "10", "INT"},
		{"arr[2]", "NULL", "INT"},
		{"arr[4]", "NULL", "INT"},
		{"arr[0]", "NULL", "INT"},
		{"m['b']", "2", "INT"},
		{"m['z']", "NULL", "INT"},
		{"ROW(i, s).EXPR$1", "Hello, World", "STRING"},
		{"nn", "3", "INT NOT NULL"},
	})
}

func TestArithmetic(t *testing.T) {
	run(t, []evalCase{
		{"i + 1", "8", "INT"},
		{"i + b", "10000000007", "BIGINT"},
		{"ti + ti", "-56", "TINYINT"},
		{"CAST(100 AS TINYINT) + CAST(100 AS TINYINT)", "-56", "TINYINT NOT NULL"},
		{"2147483647 + 1", "-2147483648", "INT NOT NULL"},
		{"9223372036854775807 + CAST(1 AS BIGINT)", "-9223372036854775808", "BIGINT NOT NULL"},
		{"7 / 2", "3", "INT NOT NULL"},
		{"-7 / 2", "-3", "INT NOT NULL"},
		{"-7 % 3", "-1", "INT NOT NULL"},
		{"b % 3", "1", "INT"},
		{"MOD(b, 3)", "1", "INT"},
		{"MOD(price, 123)", "20", "INT"},
		{"i * 2.5", "17.5", "DECIMAL(12, 1)"},
		{"i * d", "17.5", "DOUBLE"},
		{"d / 0", "Infinity", "DOUBLE"},
		{"0.908 * price", "1816000.000", "DECIMAL(22, 3)"},
		{"0.908 * 3", "2.724", "DECIMAL(13, 3) NOT NULL"},
		{"dec + 1", "13.34", "DECIMAL(13, 2)"},
		{"dec - 0.001", "12.339", "DECIMAL(12, 3)"},
		{"dec * dec", "152.2756", "DECIMAL(20, 4)"},
		{"dec / 3", "4.1133333333333", "DECIMAL(21, 13)"},
		{"1.0 / 3", "0.333333333333", "DECIMAL(13, 12) NOT NULL"},
		{"2.00 / 3", "0.6666666666667", "DECIMAL(14, 13) NOT NULL"},
		{"CAST(2 AS DECIMAL(38, 0)) / 3", "0.666667", "DECIMAL(38, 6)"},
		{"dec % 5", "2.34", "DECIMAL(10, 2)"},
		{"dec + d", "14.84", "DOUBLE"},
		{"CAST(1 AS DECIMAL(38, 0)) * CAST(1 AS DECIMAL(38, 10))", "1.000000", "DECIMAL(38, 6)"},
		{"-i", "-7", "INT"},
		{"-dec", "-12.34", "DECIMAL(10, 2)"},
		{"+d", "2.5", "DOUBLE"},
		{"i + n", "NULL", "INT"},
		{"i + NULL", "NULL", "INT"},
		{"CAST(99999999 AS DECIMAL(8, 0)) + CAST(99999999 AS DECIMAL(8, 0))", "199999998", "DECIMAL(9, 0)"},
		{"CAST(99999999 AS DECIMAL(8, 0)) * 100", "9999999900", "DECIMAL(18, 0)"},
		{"CAST(REPEAT('9', 38) AS DECIMAL(38, 0)) * 10", "NULL", "DECIMAL(38, 0)"},
		{"s || '!'", "Hello, World!", "STRING"},
		{"'a' || 'bc'", "abc", "CHAR(3) NOT NULL"},
		{"'a' || ns", "NULL", "STRING"},
	})
}

func TestTemporalArithmetic(t *testing.T) {
	run(t, []evalCase{
		{"ts - INTERVAL '4' SECOND", "2024-01-15 08:04:59.120", "TIMESTAMP(3)"},
		{"ts + INTERVAL '1' DAY", "2024-01-16 08:05:03.120", "TIMESTAMP(3)"},
		{"INTERVAL '1' HOUR + ts", "2024-01-15 09:05:03.120", "TIMESTAMP(3)"},
		{"ts + INTERVAL '1' MONTH", "2024-02-15 08:05:03.120", "TIMESTAMP(3)"},
		{"TIMESTAMP '2024-01-31 00:00:00' + INTERVAL '1' MONTH", "2024-02-29 00:00:00", ""},
		{"dt + INTERVAL '1' YEAR", "2025-02-28", "DATE"},
		{"dt - INTERVAL '1' DAY", "2024-02-28", "DATE"},
		{"INTERVAL '1' MINUTE * 3", "180000", ""},
		{"INTERVAL '1' MINUTE + INTERVAL '1' SECOND", "61000", ""},
		{"ltz + INTERVAL '1' SECOND", "2024-01-15 08:05:04.000", "TIMESTAMP_LTZ(3)"},
	})
}

func TestComparisonsAndLogic(t *testing.T) {
	run(t, []evalCase{
		{"i = 7", "TRUE", "BOOLEAN"},
		{"i <> 7", "FALSE", "BOOLEAN"},
		{"i = b", "FALSE", "BOOLEAN"},
		{"i < 8", "TRUE", "BOOLEAN"}, {"i < 7", "FALSE", "BOOLEAN"}, {"i <= 7", "TRUE", "BOOLEAN"},
		{"i > 7", "FALSE", "BOOLEAN"}, {"b > i", "TRUE", "BOOLEAN"}, {"i >= 8", "FALSE", "BOOLEAN"},
		{"-i >= -7", "TRUE", "BOOLEAN"}, {"i <> n", "NULL", "BOOLEAN"}, {"n < i", "NULL", "BOOLEAN"}, {"ti = ti", "TRUE", "BOOLEAN"},
		{"i < 7.5", "TRUE", "BOOLEAN"},
		{"dec > 12.339", "TRUE", "BOOLEAN"},
		{"dec = 12.340", "TRUE", "BOOLEAN"},
		{"d = 2.5", "TRUE", "BOOLEAN"},
		{"0.908 * price > 1000000 AND 0.908 * price < 50000000", "TRUE", "BOOLEAN"},
		{"s = 'Hello, World'", "TRUE", "BOOLEAN"},
		{"s < 'I'", "TRUE", "BOOLEAN"}, {"s > 'I'", "FALSE", "BOOLEAN"}, {"s <= s", "TRUE", "BOOLEAN"}, {"s >= 'Hello, World!'", "FALSE", "BOOLEAN"},
		{"s <> 'x'", "TRUE", "BOOLEAN"}, {"s = ns", "NULL", "BOOLEAN"}, {"ns < s", "NULL", "BOOLEAN"}, {"'b' > CAST('a' AS CHAR(3))", "TRUE", "BOOLEAN NOT NULL"},
		{"ts > TIMESTAMP '2024-01-01 00:00:00'", "TRUE", "BOOLEAN"},
		{"ts > '2024-01-15 08:05:03'", "TRUE", "BOOLEAN"},
		{"ts = '2024-01-15 08:05:03.12'", "TRUE", "BOOLEAN"},
		{"dt < ts", "FALSE", "BOOLEAN"},
		{"i = '7'", "TRUE", "BOOLEAN"},
		{"i = n", "NULL", "BOOLEAN"},
		{"n = NULL", "NULL", "BOOLEAN"},
		{"n IS NULL", "TRUE", "BOOLEAN NOT NULL"},
		{"i IS NOT NULL", "TRUE", "BOOLEAN NOT NULL"},
		{"n IS DISTINCT FROM NULL", "FALSE", "BOOLEAN NOT NULL"},
		{"i IS DISTINCT FROM n", "TRUE", "BOOLEAN NOT NULL"},
		{"i IS NOT DISTINCT FROM 7", "TRUE", "BOOLEAN NOT NULL"},
		{"nb AND FALSE", "FALSE", "BOOLEAN"},
		{"nb AND TRUE", "NULL", "BOOLEAN"},
		{"FALSE AND nb", "FALSE", "BOOLEAN"},
		{"nb OR TRUE", "TRUE", "BOOLEAN"},
		{"nb OR FALSE", "NULL", "BOOLEAN"},
		{"NOT nb", "NULL", "BOOLEAN"},
		{"NOT flag", "FALSE", "BOOLEAN"},
		{"nb IS UNKNOWN", "TRUE", "BOOLEAN NOT NULL"},
		{"nb IS NOT TRUE", "TRUE", "BOOLEAN NOT NULL"},
		{"flag IS TRUE", "TRUE", "BOOLEAN NOT NULL"},
		{"nb IS FALSE", "FALSE", "BOOLEAN NOT NULL"},
		{"i BETWEEN 1 AND 10", "TRUE", "BOOLEAN"},
		{"i NOT BETWEEN 1 AND 10", "FALSE", "BOOLEAN"},
		{"12 BETWEEN 10 AND NULL", "NULL", "BOOLEAN"},
		{"12 BETWEEN NULL AND 10", "FALSE", "BOOLEAN"},
		{"12 NOT BETWEEN 15 AND NULL", "TRUE", "BOOLEAN"},
		{"B.`dateTime` BETWEEN ts AND ts + INTERVAL '1' DAY", "TRUE", "BOOLEAN"},
		{"i IN (1, 7, 9)", "TRUE", "BOOLEAN"},
		{"4 IN (1, 2, 3)", "FALSE", "BOOLEAN NOT NULL"},
		{"1 IN (1, 2, NULL)", "TRUE", "BOOLEAN"},
		{"4 IN (1, 2, NULL)", "NULL", "BOOLEAN"},
		{"4 NOT IN (1, 2, NULL)", "NULL", "BOOLEAN"},
		{"1 NOT IN (1, 2, NULL)", "FALSE", "BOOLEAN"},
		{"n IN (1, 2)", "NULL", "BOOLEAN"},
		{"lower(s) IN ('hello, world', 'x')", "TRUE", "BOOLEAN"},
		{"i IN (7.0, 8)", "TRUE", "BOOLEAN"},
		{"arr = ARRAY[10, NULL, 30]", "TRUE", "BOOLEAN"},
		{"r = ROW(5, 'five')", "TRUE", "BOOLEAN"},
		{"CAST('NaN' AS DOUBLE) = CAST('NaN' AS DOUBLE)", "FALSE", "BOOLEAN NOT NULL"},
	})
}

func TestLike(t *testing.T) {
	run(t, []evalCase{
		{"s LIKE 'Hello%'", "TRUE", "BOOLEAN"},
		{"s LIKE 'hello%'", "FALSE", "BOOLEAN"},
		{"s LIKE '_ello, World'", "TRUE", "BOOLEAN"},
		{"s NOT LIKE '%World'", "FALSE", "BOOLEAN"},
		{"'a_c' LIKE 'a!_c' ESCAPE '!'", "TRUE", "BOOLEAN NOT NULL"},
		{"'abc' LIKE 'a!_c' ESCAPE '!'", "FALSE", "BOOLEAN NOT NULL"},
		{"'100%' LIKE '100\\%' ESCAPE '\\'", "TRUE", ""},
		{"'a.c' LIKE 'a.c'", "TRUE", ""},
		{"'abc' LIKE 'a.c'", "FALSE", ""},
		{"'line1\nline2' LIKE 'line1%'", "TRUE", ""},
		{"ns LIKE 'a%'", "NULL", "BOOLEAN"},
		{"s LIKE ns", "NULL", "BOOLEAN"},
		{"'abc' SIMILAR TO '(a|x)b%'", "TRUE", ""},
		{"'xbc' SIMILAR TO 'a(b|c)%'", "FALSE", ""},
	})
}

func TestCase(t *testing.T) {
	run(t, []evalCase{
		{"CASE WHEN i > 5 THEN 'big' ELSE 'small' END", "big", "VARCHAR(5) NOT NULL"},
		{"CASE WHEN i > 50 THEN 'big' ELSE 'small' END", "small", "VARCHAR(5) NOT NULL"},
		{"CASE WHEN i > 50 THEN 'big' END", "NULL", "CHAR(3)"},
		{"CASE WHEN nb THEN 1 ELSE 2 END", "2", "INT NOT NULL"},
		{"CASE i WHEN 1 THEN 'one' WHEN 7 THEN 'seven' END", "seven", "VARCHAR(5)"},
		{"CASE n WHEN 1 THEN 'one' ELSE 'other' END", "other", "VARCHAR(5) NOT NULL"},
		{"CASE WHEN i = 7 THEN 1 ELSE 2.5 END", "1.0", "DECIMAL(11, 1) NOT NULL"},
		{"CASE WHEN i = 7 THEN b ELSE i END", "10000000000", "BIGINT"},
		{"CASE WHEN i = 7 THEN d ELSE i END", "2.5", "DOUBLE"},
		{"CASE WHEN FALSE THEN 1 / 0 ELSE 1 END", "1", ""},
		{`CASE
            WHEN HOUR(ts) >= 8 AND HOUR(ts) <= 18 THEN 'dayTime'
            WHEN HOUR(ts) <= 6 OR HOUR(ts) >= 20 THEN 'nightTime'
            ELSE 'otherTime'
        END`, "dayTime", "VARCHAR(9) NOT NULL"},
		{"COALESCE(n, i, 0)", "7", "INT NOT NULL"},
		{"COALESCE(ns, s)", "Hello, World", "STRING"},
		{"COALESCE(ns, CAST(NULL AS STRING))", "NULL", "STRING"},
		{"COALESCE(NULL, 'default')", "default", "CHAR(7) NOT NULL"},
		{"IFNULL(n, 5)", "5", "INT NOT NULL"},
		{"IFNULL(i, n)", "7", "INT"},
		{"NULLIF(i, 7)", "NULL", "INT"},
		{"NULLIF(i, 5)", "7", "INT"},
		{"IF(i > 5, 'y', 'n')", "y", "CHAR(1) NOT NULL"},
		{"IF(nb, 1, 2)", "2", "INT NOT NULL"},
		{"GREATEST(1, i, 3)", "7", "INT"},
		{"LEAST(1.5, i, 3)", "1.5", "DECIMAL(11, 1)"},
		{"GREATEST(i, n)", "NULL", "INT"},
		{"GREATEST('a', 'b')", "b", "CHAR(1) NOT NULL"},
	})
}

func TestNegativeLiterals(t *testing.T) {
	run(t, []evalCase{
		{"-2147483648", "-2147483648", "INT NOT NULL"},
		{"-9223372036854775808", "-9223372036854775808", "BIGINT NOT NULL"},
		{"-1.50", "-1.50", "DECIMAL(3, 2) NOT NULL"},
		{"-1e3", "-1000.0", "DOUBLE NOT NULL"},
		{"- -1", "1", "INT NOT NULL"},
	})
}

// ProjectInto gives each expression's Eval: its values, its first error,
// and for a row of the wrong Go types the error Eval reports rather than
// a panic. A copy of a compiled expression whose Eval was replaced
// evaluates by the replacement.
func TestProjectIntoIsEval(t *testing.T) {
	compile := func(src string) *expr.Compiled {
		e, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		c, err := expr.Compile(e, scope())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	copied := *compile("b + 1")
	copied.Eval = func([]any) (any, error) { return "replaced", nil }
	evals := []*expr.Compiled{compile("i * 2"), compile("UPPER(s)"), compile("CASE WHEN i = 7 THEN B.price END"), &copied, compile("r.y")}
	out := make([]any, len(evals))
	if err := expr.ProjectInto(evals)(out, row); err != nil {
		t.Fatal(err)
	}
	for i, e := range evals {
		if want, _ := e.Eval(row); !reflect.DeepEqual(out[i], want) {
			t.Errorf("field %d: %#v, Eval gives %#v", i, out[i], want)
		}
	}
	if out[3] != "replaced" || out[0] != int64(14) {
		t.Errorf("fields %#v", out)
	}
	bad := slices.Clone(row)
	bad[4] = int64(3) // s must be a string: UPPER's evaluation panics
	_, want := evals[1].Eval(bad)
	err := expr.ProjectInto(evals)(out, bad)
	if err == nil || want == nil || err.Error() != want.Error() || !strings.Contains(err.Error(), "cannot evaluate") {
		t.Fatalf("error %v, Eval's %v", err, want)
	}
}
