package expr_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// compileErr compiles src and returns the error text.
func compileErr(t *testing.T, s *expr.Scope, src string) string {
	t.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatalf("%s: parse: %v", src, err)
	}
	_, err = expr.Compile(e, s)
	if err == nil {
		t.Fatalf("%s: compiled, want an error", src)
	}
	var xe *expr.Error
	if !errors.As(err, &xe) || !errors.Is(err, expr.ErrInvalid) || xe.Class == expr.ErrEval {
		t.Fatalf("%s: error %v is not a compile *expr.Error", src, err)
	}
	return err.Error()
}

func TestCompileErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"pricee + 1", "line 1:1: unknown column `pricee`; hint: did you mean `price`?"},
		{"1 +\n  datetime", "line 2:3: unknown column `datetime`; hint: did you mean `dateTime`? names are case-sensitive"},
		{"B.prise", "line 1:1: column `prise` not found in table `B`; hint: did you mean `price`?"},
		{"zzzzzzzz", "line 1:1: unknown column `zzzzzzzz`"},
		{"r.z", "line 1:1: type ROW<`x` INT, `y` STRING> has no field `z`"},
		{"UPPER(i)", "line 1:7: cannot apply UPPER to (INT): argument 1 must be STRING; hint: UPPER expects UPPER(STRING)"},
		{"SUBSTRING(s FROM 'a')", "argument 2 must be INTEGER"},
		{"DATE_FORMT(ts, 'yyyy')", "line 1:1: unknown function DATE_FORMT; hint: did you mean DATE_FORMAT?"},
		{"SPLIT_INDX(s, ',', 1)", "hint: did you mean SPLIT_INDEX?"},
		{"nosuchfunction(1)", "unknown function NOSUCHFUNCTION"},
		{"COUNT(*)", "line 1:1: aggregate function COUNT is not allowed here"},
		{"SUM(i) + 1", "aggregate function SUM is not allowed here"},
		{"ROW_NUMBER()", "ROW_NUMBER requires an OVER clause"},
		{"SESSION_START(ts, INTERVAL '10' SECOND)", "group window function SESSION_START is not allowed here"},
		{"UUID()", "function UUID is not supported"},
		{"i + 'a'", "line 1:3: cannot apply + to INT and CHAR(1)"},
		{"i AND flag", "AND requires a BOOLEAN operand, got INT"},
		{"CASE WHEN i THEN 1 END", "WHEN requires a BOOLEAN operand, got INT"},
		{"CASE WHEN flag THEN 1 ELSE 'x' END", "CASE has values of incompatible types INT, CHAR(1)"},
		{"i = flag", "line 1:3: cannot compare INT with BOOLEAN in ="},
		{"arr < arr", "cannot be ordered"},
		{"s || i", "cannot apply || to STRING and INT"},
		{"ts - ts", "hint: use TIMESTAMPDIFF(unit, t1, t2) to subtract times"},
		{"CAST(i AS TIMESTAMP(3))", "cannot cast INT to TIMESTAMP(3); hint: use TO_TIMESTAMP_LTZ"},
		{"CAST(flag AS DATE)", "cannot cast BOOLEAN to DATE"},
		{"UPPER('a', 'b')", "UPPER takes 1 argument, got 2; hint: call it as UPPER(STRING)"},
		{"JSON_VALUE(json, '$.a'\n  RETURNING BIGINT)", "line 2:3: JSON_VALUE … RETURNING BIGINT is not supported; hint: use RETURNING STRING, BOOLEAN, INT or DOUBLE, or CAST the STRING result"},
		{"JSON_VALUE(json, '$.a' RETURNING BOOLEAN DEFAULT 'no' ON EMPTY)", "line 1:50: the DEFAULT of JSON_VALUE must be BOOLEAN, found CHAR(2); hint: write a DEFAULT of the RETURNING type, or CAST it"},
		{"JSON_VALUE(json, '$.a' DEFAULT 1.5 ON ERROR)", "the DEFAULT of JSON_VALUE must be STRING, found DECIMAL(2, 1)"},
		{"REGEXP_EXTRACT(s, '(a')", "invalid regular expression '(a'"},
		{"DATE_FORMAT(ts, 'yyyy-bb')", "invalid date format 'yyyy-bb': illegal pattern character 'b'"},
		{"x.y.z", "unknown column `x.y.z`"},
		{"arr['a']", "argument 2 must be INTEGER"},
		{"i[1]", "cannot index a value of type INT"},
		{"EXTRACT(HOUR FROM dt)", "cannot extract HOUR from a DATE"},
		{"ROUND(dec, i)", "needs a constant number of digits"},
		{"JSON_VALUE(json, 'a.b')", "invalid JSON path 'a.b': a path starts with $"},
		{"'a' LIKE 'b' ESCAPE 'xy'", "the ESCAPE string must be a single character"},
		{"count_char(s, 'c')", "unknown function COUNT_CHAR"},
	}
	s := scope()
	for _, tc := range cases {
		got := compileErr(t, s, tc.src)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

func TestAmbiguousColumn(t *testing.T) {
	s := &expr.Scope{Columns: []expr.Column{
		{Qualifier: "A", Name: "id", Type: ty("BIGINT")},
		{Qualifier: "P", Name: "id", Type: ty("BIGINT")},
	}}
	got := compileErr(t, s, "id = 1")
	want := "line 1:1: column `id` is ambiguous; hint: qualify it: `A`.`id` or `P`.`id`"
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	for _, src := range []string{"A.id", "P.id"} {
		e, _ := parser.ParseExpr(src)
		c, err := expr.Compile(e, s)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := c.Eval([]any{int64(1), int64(2)})
		if want := map[string]int64{"A.id": 1, "P.id": 2}[src]; v != want {
			t.Errorf("%s = %v, want %d", src, v, want)
		}
	}
}

func TestCaseInsensitive(t *testing.T) {
	s := scope()
	s.CaseInsensitive = true
	e, _ := parser.ParseExpr("DATETIME")
	c, err := expr.Compile(e, s)
	if err != nil {
		t.Fatal(err)
	}
	if c.Type.Kind != types.Timestamp {
		t.Errorf("type %s", c.Type)
	}
}

func TestRuntimeErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"CAST(s AS INT)", "line 1:1: cannot cast 'Hello, World' to INT: invalid character found; hint: use TRY_CAST to get NULL for values that do not convert"},
		{"CAST('300' AS TINYINT)", "cannot cast '300' to TINYINT: out of the range of TINYINT"},
		{"CAST('maybe' AS BOOLEAN)", "cannot cast 'maybe' to BOOLEAN"},
		{"CAST('2024-13-01' AS DATE)", "cannot cast '2024-13-01' to DATE"},
		{"CAST('12:00' AS TIMESTAMP(3))", "cannot cast '12:00' to TIMESTAMP(3)"},
		{"CAST('1e400x' AS DOUBLE)", "cannot cast '1e400x' to DOUBLE"},
		{"CAST('123.456' AS DECIMAL(4, 2))", "cannot cast '123.456' to DECIMAL(4, 2): overflows DECIMAL(4, 2)"},
		{"i / (i - 7)", "line 1:3: division by zero"},
		{"dec / 0", "division by zero"},
		{"i % 0", "division by zero"},
		{"ELEMENT(arr)", "ELEMENT of an array with 3 elements"},
		{"JSON_VALUE(json, '$.zz' ERROR ON ERROR)", "line 1:1: JSON_VALUE: no value at the path (ERROR ON ERROR)"},
		{"JSON_VALUE(json, 'lax $.zz' ERROR ON EMPTY)", "JSON_VALUE: empty result (ERROR ON EMPTY)"},
		{"JSON_EXISTS('x', '$' ERROR ON ERROR)", "JSON_EXISTS: the input is not JSON (ERROR ON ERROR)"},
		{"JSON_QUERY(json, '$.s' ERROR ON ERROR)", `JSON_QUERY: strict mode requires an array or object, found "str" (ERROR ON ERROR)`},
		{"JSON_VALUE(json, '$.s' RETURNING BOOLEAN)", `JSON_VALUE cannot give the JSON value "str" as BOOLEAN the way Flink does`},
		{"JSON_VALUE(json, '$.a.b[0]' RETURNING DOUBLE)", "JSON_VALUE cannot give the JSON value 1 as DOUBLE"},
		{"JSON_VALUE('{\"a\": 1e3}', '$.a')", "JSON_VALUE cannot give the JSON value 1e3 as STRING"},
		{"JSON_VALUE(json, s)", `line 1:1: JSON_VALUE cannot read the JSON path "Hello, World": a path starts with $`},
		{"CASE WHEN i = 7 THEN 1 / (i - 7) ELSE 0 END", "line 1:24: division by zero"},
		{"FROM_BASE64('!!')", "FROM_BASE64: '!!' is not base64"},
	}
	s := scope()
	for _, tc := range cases {
		e, err := parser.ParseExpr(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		c, err := expr.Compile(e, s)
		if err != nil {
			t.Errorf("%s: compile: %v", tc.src, err)
			continue
		}
		_, err = c.Eval(row)
		var xe *expr.Error
		if err == nil || !errors.As(err, &xe) || xe.Class != expr.ErrEval || !errors.Is(err, expr.ErrEval) {
			t.Errorf("%s: error %v, want a runtime *expr.Error", tc.src, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, err, tc.want)
		}
	}
}

// TestWrongGoType checks that a row carrying a value of the wrong Go type
// gives an error, not a panic.
func TestWrongGoType(t *testing.T) {
	s := scope()
	e, _ := parser.ParseExpr("i + 1")
	c, err := expr.Compile(e, s)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]any(nil), row...)
	bad[0] = "seven"
	if _, err := c.Eval(bad); err == nil || !errors.Is(err, expr.ErrEval) {
		t.Fatalf("got %v", err)
	}
	if _, err := c.Eval(nil); err == nil || !strings.Contains(err.Error(), "row has 0 fields") {
		t.Fatalf("short row: got %v", err)
	}
}

func TestIntervalValue(t *testing.T) {
	cases := []struct {
		lit  parser.IntervalLit
		want int64
		kind expr.IntervalKind
		err  string
	}{
		{parser.IntervalLit{Value: "10", From: parser.Second}, 10_000, expr.DayTimeInterval, ""},
		{parser.IntervalLit{Value: "1.5", From: parser.Second}, 1_500, expr.DayTimeInterval, ""},
		{parser.IntervalLit{Value: "2", From: parser.Day}, 2 * 86_400_000, expr.DayTimeInterval, ""},
		{parser.IntervalLit{Value: "-1 01", From: parser.Day, To: parser.Hour}, -90_000_000, expr.DayTimeInterval, ""},
		{parser.IntervalLit{Value: "01:02:03.4", From: parser.Hour, To: parser.Second}, 3_723_400, expr.DayTimeInterval, ""},
		{parser.IntervalLit{Value: "5", From: parser.Year}, 60, expr.YearMonthInterval, ""},
		{parser.IntervalLit{Value: "1:2", From: parser.Day}, 0, 0, "malformed interval '1:2' for DAY; hint: write the value as 'n'"},
		{parser.IntervalLit{Value: "1-13", From: parser.Year, To: parser.Month}, 0, 0, "malformed interval"},
	}
	for _, tc := range cases {
		v, k, err := expr.IntervalValue(&tc.lit)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.lit.Value, err, tc.err)
			}
			continue
		}
		if err != nil || v != tc.want || k != tc.kind {
			t.Errorf("%q %s: got %d %v %v, want %d %v", tc.lit.Value, tc.lit.From, v, k, err, tc.want, tc.kind)
		}
	}
}
