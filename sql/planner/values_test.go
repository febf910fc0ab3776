package planner

import (
	"testing"

	"github.com/weirstream/weir/sql/parser"
)

// The columns of VALUES take Flink's types: the least restrictive type of
// each column's values, as Calcite's leastRestrictive under FlinkTypeSystem
// derives it.
func TestValuesTypes(t *testing.T) {
	for _, c := range []struct{ values, want string }{
		// Integer literals are INT NOT NULL, and BIGINT when too large.
		{"(1), (2)", "INT NOT NULL"},
		{"(1), (3000000000)", "BIGINT NOT NULL"},
		// INT is DECIMAL(10, 0): with DECIMAL(2, 1) it gives DECIMAL(11, 1)
		// (Flink's ValuesTest.testDiffTypes: DECIMAL(2, 1) and BIGINT give
		// DECIMAL(20, 1)).
		{"(1), (2.5)", "DECIMAL(11, 1) NOT NULL"},
		{"(2.0), (CAST(4 AS BIGINT))", "DECIMAL(20, 1) NOT NULL"},
		// An approximate number makes it DOUBLE.
		{"(1), (CAST(0.5 AS DOUBLE))", "DOUBLE NOT NULL"},
		// A NULL makes the column nullable.
		{"(1), (NULL)", "INT"},
		// CHAR literals of one length stay CHAR(n); of different lengths
		// they give VARCHAR of the longest
		// (FlinkTypeSystem.shouldConvertRaggedUnionTypesToVarying).
		{"('ab'), ('cd')", "CHAR(2) NOT NULL"},
		{"('a'), ('abc')", "VARCHAR(3) NOT NULL"},
		{"('a'), (CAST('b' AS STRING))", "STRING NOT NULL"},
		{"(TRUE), (NULL)", "BOOLEAN"},
	} {
		q, err := parser.ParseQuery("VALUES " + c.values)
		if err != nil {
			t.Fatalf("%s: %v", c.values, err)
		}
		r, err := (&Planner{}).Plan(q)
		if err != nil {
			t.Errorf("VALUES %s: %v", c.values, err)
			continue
		}
		if got := r.Cols[0].Type.String(); got != c.want || r.Cols[0].Name != "EXPR$0" || !r.InsertOnly {
			t.Errorf("VALUES %s: column %s %s (insert-only %t), want EXPR$0 %s (insert-only)", c.values,
				r.Cols[0].Name, got, r.InsertOnly, c.want)
		}
	}
}
