package expr_test

import (
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// TestResolve shows how the planner reads aggregates from its own
// columns: HAVING COUNT(*) > 1 AND SUM(price) / COUNT(*) > 10 over a row
// of (key, count, sum).
func TestResolve(t *testing.T) {
	aggCols := map[string]int{"COUNT": 1, "SUM": 2}
	s := &expr.Scope{Columns: []expr.Column{{Name: "k", Type: ty("STRING")}}}
	s.Resolve = func(e parser.Expr) (*expr.Compiled, error) {
		call, ok := e.(*parser.FuncCall)
		if !ok || !expr.IsAggregate(call.Name) {
			return nil, nil
		}
		idx := aggCols[call.Name]
		return &expr.Compiled{Type: types.Type{Kind: types.BigInt}, Src: e,
			Eval: func(row []any) (any, error) { return row[idx], nil }}, nil
	}
	e, err := parser.ParseExpr("COUNT(*) > 1 AND SUM(price) / COUNT(*) > 10 AND k = 'a'")
	if err != nil {
		t.Fatal(err)
	}
	c, err := expr.Compile(e, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		row  []any
		want any
	}{
		{[]any{"a", int64(2), int64(30)}, true},
		{[]any{"a", int64(2), int64(20)}, false},
		{[]any{"b", int64(2), int64(30)}, false},
	} {
		if v, err := c.Eval(tc.row); err != nil || v != tc.want {
			t.Errorf("%v: got %v %v, want %v", tc.row, v, err, tc.want)
		}
	}
	for _, name := range []string{"count", "SUM", "Listagg", "first_value"} {
		if !expr.IsAggregate(name) {
			t.Errorf("IsAggregate(%s) = false", name)
		}
	}
	if expr.IsAggregate("UPPER") {
		t.Error("IsAggregate(UPPER)")
	}
}

func TestConstantFolding(t *testing.T) {
	s := scope()
	for src, want := range map[string]bool{
		"1 + 2 * 3":                            true,
		"UPPER('a') || 'b'":                    true,
		"CAST('1' AS INT) + i":                 false,
		"CURRENT_TIMESTAMP":                    false,
		"DATE '2020-01-01' + INTERVAL '1' DAY": true,
		"CAST('x' AS INT)":                     true, // folds only when it succeeds; fails at run time
	} {
		e, _ := parser.ParseExpr(src)
		c, err := expr.Compile(e, s)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if c.Const != want {
			t.Errorf("%s: Const = %v", src, c.Const)
		}
	}
	e, _ := parser.ParseExpr("CAST('x' AS INT)")
	c, _ := expr.Compile(e, s)
	if _, err := c.Eval(nil); err == nil {
		t.Error("CAST('x' AS INT) evaluated")
	}
	if tt, err := expr.InferType(e, s); err != nil || tt.String() != "INT NOT NULL" {
		t.Errorf("InferType: %v %v", tt, err)
	}
}

// TestClockAndZone reads NOW from the scope's clock and shows
// TIMESTAMP_LTZ values in the session zone.
func TestClockAndZone(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no zone database")
	}
	now := time.Date(2024, 1, 1, 23, 30, 0, 0, time.UTC)
	s := &expr.Scope{
		Columns:  []expr.Column{{Name: "ltz", Type: ty("TIMESTAMP_LTZ(3)")}, {Name: "ts", Type: ty("TIMESTAMP(3)")}},
		Location: tokyo,
		Now:      func() time.Time { return now },
	}
	r := []any{time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	for src, want := range map[string]string{
		"CAST(ltz AS STRING)":                "2024-01-01 09:00:00.000",
		"HOUR(ltz)":                          "9",
		"HOUR(ts)":                           "0",
		"CAST(ts AS TIMESTAMP_LTZ(3)) = ltz": "FALSE",
		"CAST(CAST(ts AS TIMESTAMP_LTZ(3)) AS BIGINT)": "1704034800",
		"CURRENT_DATE":                          "2024-01-02",
		"LOCALTIMESTAMP":                        "2024-01-02 08:30:00.000",
		"FROM_UNIXTIME(0)":                      "1970-01-01 09:00:00",
		"UNIX_TIMESTAMP('1970-01-01 09:00:00')": "0",
		"DATE_FORMAT(ltz, 'HH:mm XXX')":         "09:00 +09:00",
	} {
		e, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		c, err := expr.Compile(e, s)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		v, err := c.Eval(r)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if got := expr.ValueString(v, c.Type, tokyo); got != want {
			t.Errorf("%s = %s, want %s", src, got, want)
		}
	}
}

func TestUDFErrors(t *testing.T) {
	s := scope()
	s.Functions = map[string]*expr.Function{"COUNT_CHAR": countChar}
	got := compileErr(t, s, "count_char(i, 'c')")
	if got != "line 1:1: COUNT_CHAR(INT, CHAR(1)): takes (STRING, STRING)" {
		t.Errorf("got %s", got)
	}
	got = compileErr(t, s, "count_chr(s, 'c')")
	if got != "line 1:1: unknown function COUNT_CHR; hint: did you mean COUNT_CHAR?" {
		t.Errorf("got %s", got)
	}
}

// TestConcurrentEval evaluates shared compiled expressions from many
// goroutines (for the race detector), and every evaluation must give the
// value the expression has on row: s is "Hello, World", ns NULL, i 7, ts
// 2024-01-15, price 2,000,000, url https://www.nexmark.com/abc/..., and
// the scope's clock stands at 2024-03-05 10:20:30.123456789.
func TestConcurrentEval(t *testing.T) {
	s := scope()
	cases := []evalCase{
		{src: "REGEXP_REPLACE(s, ns, 'x')", want: "NULL"},
		{src: "REGEXP_EXTRACT(s, CONCAT('(', 'W', ')'), 1)", want: "W"},
		{src: "DATE_FORMAT(ts, CASE WHEN i > 0 THEN 'yyyy' ELSE 'MM' END)", want: "2024"},
		{src: "s LIKE CONCAT('H', '%')", want: "TRUE"},
		{src: "0.908 * price", want: "1816000.000"},
		{src: "SPLIT_INDEX(url, '/', 3)", want: "abc"},
		{src: "CURRENT_TIMESTAMP", want: "2024-03-05 10:20:30.123"},
	}
	var cs []*expr.Compiled
	for _, tc := range cases {
		e, err := parser.ParseExpr(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		c, err := expr.Compile(e, s)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		cs = append(cs, c)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				for j, c := range cs {
					v, err := c.Eval(row)
					if err != nil {
						t.Error(err)
						return
					}
					if got := expr.ValueString(v, c.Type, nil); got != cases[j].want {
						t.Errorf("%s = %q in goroutine %d, round %d; want %q", cases[j].src, got, g, i, cases[j].want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
