package parser
import ("testing";"fmt")
func TestScratch(t *testing.T) {
	for _, src := range []string{
		"SELECT * FROM t AS a (x, y)", "SELECT (SELECT 1) AS s", "SELECT a FROM t WHERE (a, b) IN ((1, 2))",
		"SELECT -(-1), - -1, +-1", "SELECT 1.e5, 1.", "SELECT x.1", "SELECT 1.a", "SELECT a.`b`.c[1].d",
		"SELECT * FROM a, (b CROSS JOIN c)", "SELECT * FROM TABLE(f(1)) t", "SELECT CAST(a AS INT ARRAY)",
		"SELECT f(a)(b)", "SELECT `ROW`(1)", "SELECT DATE", "SELECT timestamp FROM t", "SELECT t.* FROM t",
		"SELECT * FROM t FOR SYSTEM_TIME AS OF PROCTIME()", "select count(*) over w from t window w as (order by ts)",
		"SELECT a NOT BETWEEN 1 AND 2 IS TRUE", "SELECT NOT a IS NULL", "SELECT x IN (1) IN (TRUE)",
		"SELECT ((a))", "SELECT ROW(1)", "SELECT (1)", "INSERT INTO t VALUES (1)", "SELECT 'a' 'b'",
		"SELECT ARRAY[1][1][1]", "WITH a AS (SELECT 1) (SELECT * FROM a)",
	} {
		stmts, err := ParseScript(src)
		if err != nil { fmt.Printf("%-50s ERR %v\n", src, err); continue }
		checkRoundTrip(t, src, stmts)
		fmt.Printf("%-50s => %s", src, FormatScript(stmts))
	}
}
