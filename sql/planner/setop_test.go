package planner

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/sql/parser"
)

// The columns of UNION ALL take Flink's types: per position the least
// restrictive type of both inputs (Calcite's leastRestrictive under
// FlinkTypeSystem), and an input whose column has another type is cast to
// it by a Calc below the Union.
func TestUnionTypes(t *testing.T) {
	for _, c := range []struct {
		left, right string
		want        string
		// castLeft and castRight tell which inputs need a Calc.
		castLeft, castRight bool
	}{
		{"CAST(1 AS INT)", "CAST(2 AS BIGINT)", "BIGINT NOT NULL", true, false},
		{"CAST(1 AS BIGINT)", "CAST(2 AS TINYINT)", "BIGINT NOT NULL", false, true},
		// INT is DECIMAL(10, 0): with DECIMAL(5, 2) it gives DECIMAL(12, 2).
		{"CAST(1.5 AS DECIMAL(5, 2))", "CAST(7 AS INT)", "DECIMAL(12, 2) NOT NULL", true, true},
		// A wider scale rescales the narrower side's values.
		{"CAST(1.5 AS DECIMAL(5, 2))", "CAST(1.5 AS DECIMAL(6, 4))", "DECIMAL(7, 4) NOT NULL", true, true},
		{"CAST(1 AS INT)", "CAST(0.5 AS DOUBLE)", "DOUBLE NOT NULL", true, false},
		{"CAST(1 AS FLOAT)", "CAST(0.5 AS DOUBLE)", "DOUBLE NOT NULL", true, false},
		// CHARs of one length stay CHAR(n); of different lengths they give
		// VARCHAR of the longest (shouldConvertRaggedUnionTypesToVarying).
		{"'ab'", "'cd'", "CHAR(2) NOT NULL", false, false},
		{"'a'", "'abc'", "VARCHAR(3) NOT NULL", true, true},
		{"'a'", "CAST('b' AS STRING)", "STRING NOT NULL", true, false},
		{"DATE '2024-01-02'", "TIMESTAMP '2024-01-02 10:00:00.123'", "TIMESTAMP(3) NOT NULL", true, false},
		// Nullability is ORed, and alone needs no cast.
		{"CAST(1 AS INT)", "CAST(NULL AS INT)", "INT", false, false},
		{"CAST(NULL AS INT)", "CAST(2 AS BIGINT)", "BIGINT", true, false},
	} {
		sql := "SELECT * FROM (VALUES (" + c.left + ")) AS l(a) UNION ALL SELECT * FROM (VALUES (" + c.right + ")) AS r(b)"
		q, err := parser.ParseQuery(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		u, err := (&Planner{}).Plan(q)
		if err != nil {
			t.Errorf("%s UNION ALL %s: %v", c.left, c.right, err)
			continue
		}
		if got := u.Cols[0].Type.String(); u.Op != "Union" || got != c.want || u.Cols[0].Name != "a" {
			t.Errorf("%s UNION ALL %s: %s column %s %s, want Union column a %s", c.left, c.right, u.Op, u.Cols[0].Name, got, c.want)
			continue
		}
		for i, want := range []bool{c.castLeft, c.castRight} {
			in := u.Inputs[i]
			if cast := strings.Contains(in.Detail, "CAST("); cast != want {
				t.Errorf("%s UNION ALL %s: input %d is %s(%s), want a cast: %t", c.left, c.right, i, in.Op, in.Detail, want)
			}
			if want && in.Cols[0].Type.Base() != u.Cols[0].Type.Base() {
				t.Errorf("%s UNION ALL %s: input %d gives %s, want %s", c.left, c.right, i, in.Cols[0].Type, u.Cols[0].Type)
			}
		}
	}
}

// Inputs without a common type, or of different widths, fail at the set
// operation, naming the column and both types, INTERSECT and EXCEPT as
// UNION.
func TestSetOpErrors(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{"VALUES (1, 'a') UNION ALL VALUES (2, 3)",
			"line 1:17: type mismatch in column 2 (EXPR$1) of UNION ALL: the left input gives CHAR(1), the right INT, which have no common type; hint: CAST the column on one side to the other side's type"},
		{"VALUES (1) UNION VALUES (TRUE)",
			"line 1:12: type mismatch in column 1 (EXPR$0) of UNION: the left input gives INT, the right BOOLEAN, which have no common type; hint: CAST the column on one side to the other side's type"},
		{"VALUES (1) UNION ALL VALUES (2, 3)",
			"line 1:12: column count mismatch in UNION ALL: the left input has 1 columns, the right 2; hint: select the same number of columns on both sides"},
		{"VALUES (1) INTERSECT VALUES (2, 3)",
			"line 1:12: column count mismatch in INTERSECT: the left input has 1 columns, the right 2; hint: select the same number of columns on both sides"},
		{"VALUES (1) EXCEPT ALL VALUES ('a')",
			"line 1:12: type mismatch in column 1 (EXPR$0) of EXCEPT ALL: the left input gives INT, the right CHAR(1), which have no common type; hint: CAST the column on one side to the other side's type"},
	} {
		q, err := parser.ParseQuery(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		_, err = (&Planner{}).Plan(q)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.sql, err, c.want)
		}
	}
}
