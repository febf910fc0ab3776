package expr_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// TestTimeType covers TIME(p) as Flink has it: literals, CAST to and from
// STRING and the timestamps, comparison, EXTRACT and the clock functions.
// Row values: ts is 2024-01-15 08:05:03.120, ltz the instant 08:05:03 UTC,
// the clock reads 2024-03-05 10:20:30.123456789 UTC.
func TestTimeType(t *testing.T) {
	run(t, []evalCase{
		{"TIME '12:34:56'", "12:34:56", "TIME(0) NOT NULL"},
		{"TIME '1:2:3'", "01:02:03", "TIME(0) NOT NULL"},
		{"TIME '12:34:56.5'", "12:34:56.5", "TIME(1) NOT NULL"},
		{"TIME '12:34:56.123'", "12:34:56.123", "TIME(3) NOT NULL"},
		// Flink keeps milliseconds: digits past the third print as zeros.
		{"TIME '12:34:56.123456'", "12:34:56.123000", "TIME(6) NOT NULL"},
		{"TIME '23:59:59.999'", "23:59:59.999", ""},
		{"TIME '00:00:00'", "00:00:00", ""},
		{"CAST(TIME '12:34:56.125' AS STRING)", "12:34:56.125", "STRING NOT NULL"},
		{"CAST('7:08:09' AS TIME)", "07:08:09", "TIME(0) NOT NULL"},
		{"CAST('07:08:09.987' AS TIME(3))", "07:08:09.987", "TIME(3) NOT NULL"},
		{"CAST('07:08:09.987' AS TIME)", "07:08:09", ""},
		{"CAST(ts AS TIME)", "08:05:03", "TIME(0)"},
		{"CAST(ts AS TIME(3))", "08:05:03.120", "TIME(3)"},
		{"CAST(ltz AS TIME)", "08:05:03", "TIME(0)"},
		{"CAST(TIME '12:34:56' AS TIMESTAMP(0))", "1970-01-01 12:34:56", "TIMESTAMP(0) NOT NULL"},
		{"CAST(TIME '12:34:56.5' AS TIME(0))", "12:34:56", ""},
		{"TIME '12:34:56' > TIME '12:34:55.999'", "TRUE", "BOOLEAN NOT NULL"},
		{"TIME '12:34:56' = TIME '12:34:56.000'", "TRUE", ""},
		{"TIME '12:34:56' < '13:00:00'", "TRUE", ""},
		{"CAST(ts AS TIME) BETWEEN TIME '08:00:00' AND TIME '09:00:00'", "TRUE", ""},
		{"GREATEST(TIME '01:00:00', TIME '02:00:00.5')", "02:00:00.5", ""},
		{"CASE WHEN flag THEN TIME '01:00:00' ELSE TIME '02:00:00.25' END", "01:00:00.00", "TIME(2) NOT NULL"},
		{"EXTRACT(HOUR FROM TIME '12:34:56.789')", "12", "BIGINT NOT NULL"},
		{"EXTRACT(MINUTE FROM TIME '12:34:56.789')", "34", ""},
		{"EXTRACT(SECOND FROM TIME '12:34:56.789')", "56", ""},
		{"EXTRACT(MILLISECOND FROM TIME '12:34:56.789')", "56789", ""},
		{"HOUR(TIME '12:34:56')", "12", ""},
		{"MINUTE(TIME '12:34:56')", "34", ""},
		{"SECOND(TIME '12:34:56')", "56", ""},
		{"HOUR(CAST(ts AS TIME))", "8", "BIGINT"},
		{"FLOOR(TIME '12:44:31' TO MINUTE)", "12:44:00", "TIME(0) NOT NULL"},
		{"CEIL(TIME '12:44:31' TO MINUTE)", "12:45:00", ""},
		{"CEIL(TIME '12:44:00' TO HOUR)", "13:00:00", ""},
		{"CEIL(TIME '23:59:31' TO MINUTE)", "00:00:00", ""},
		{"TIME '23:30:00' + INTERVAL '1' HOUR", "00:30:00", "TIME(0) NOT NULL"},
		{"TIME '00:00:10' - INTERVAL '20' SECOND", "23:59:50", ""},
		{"INTERVAL '90' MINUTE + TIME '10:00:00.5'", "11:30:00.5", "TIME(1) NOT NULL"},
		{"CURRENT_TIME", "10:20:30", "TIME(0) NOT NULL"},
		{"LOCALTIME", "10:20:30", "TIME(0) NOT NULL"},
		{"CAST(NULL AS TIME(3))", "NULL", "TIME(3)"},
	})
}

// TestClockTimeInSessionZone: CURRENT_TIME and LOCALTIME read the clock in
// 'table.local-time-zone'.
func TestClockTimeInSessionZone(t *testing.T) {
	s := scope()
	s.Location = time.FixedZone("UTC+5:30", 5*3600+1800)
	for _, src := range []string{"CURRENT_TIME", "LOCALTIME"} {
		e, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		c, err := expr.Compile(e, s)
		if err != nil {
			t.Fatal(err)
		}
		v, err := c.Eval(row)
		if err != nil {
			t.Fatal(err)
		}
		if got := expr.ValueString(v, c.Type, nil); got != "15:50:30" {
			t.Errorf("%s = %s, want 15:50:30", src, got)
		}
	}
}

func TestTimeErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"EXTRACT(YEAR FROM TIME '12:00:00')", "line 1:1: cannot extract YEAR from a TIME"},
		{"DAYOFMONTH(TIME '12:00:00')", "cannot extract DAY from a TIME"},
		{"TIME '12:00:00' + INTERVAL '1' MONTH", "cannot apply + to"},
		{"FLOOR(TIME '12:00:00' TO DAY)", "FLOOR cannot round a TIME to DAY"},
		{"CAST(TIME '12:00:00' AS DATE)", "line 1:1: cannot cast TIME(0) to DATE"},
		{"TIME '12:00:00' = 1", "TIME"},
	} {
		if got := compileErr(t, scope(), tc.src); !strings.Contains(got, tc.want) {
			t.Errorf("%s: error %q, want it to contain %q", tc.src, got, tc.want)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"TIME '24:00:00'", "line 1:6: invalid TIME literal '24:00:00'"},
		{"1 +\n TIME '12:60:00'", "line 2:7: invalid TIME literal '12:60:00'"},
		{"TIME 'noon'", "hint: write TIME 'hh:mm:ss[.fff]'"},
	} {
		_, err := parser.ParseExpr(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.src, err, tc.want)
		}
	}
	if _, err := parser.ParseType("TIME(10)"); err == nil || !strings.Contains(err.Error(), "TIME precision") {
		t.Errorf("TIME(10): error %v, want a TIME precision error", err)
	}
}

// TestCastStringToTimeFails: a malformed string gives an error on CAST
// and NULL on TRY_CAST.
func TestCastStringToTimeFails(t *testing.T) {
	run(t, []evalCase{{"TRY_CAST('25:00' AS TIME)", "NULL", "TIME(0)"}})
}
