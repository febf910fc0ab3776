package expr_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// gen writes random SQL expressions over the test scope's columns.
type gen struct {
	r *rand.Rand
}

var (
	genColumns = []string{"i", "b", "d", "dec", "s", "ts", "ltz", "dt", "flag", "n", "arr", "m", "r", "B.price",
		"url", "`dateTime`", "ns", "nb", "ti", "json", "nn", "r.x", "r.y", "arr[2]", "m['a']"}
	genLiterals = []string{"0", "1", "-1", "7", "2147483647", "9223372036854775807", "0.5", "0.908", "1.50", "1e3",
		"-0.0E0", "'a'", "''", "'Hello%'", "'2024-01-15 08:05:03'", "'x_y'", "NULL", "TRUE", "FALSE",
		"DATE '2024-02-29'", "TIMESTAMP '2024-01-01 00:00:00.123'", "INTERVAL '4' SECOND", "INTERVAL '1' MONTH",
		"ARRAY[1, 2]", "MAP['a', 1]", "'yyyy-MM-dd'", "'(a|b)+'", "'$.a.b[0]'", "3", "'/'", "-128"}
	genBinary = []string{"+", "-", "*", "/", "%", "||", "=", "<>", "<", "<=", ">", ">=", "AND", "OR",
		"IS DISTINCT FROM", "IS NOT DISTINCT FROM"}
	genFuncs = []string{"UPPER", "LOWER", "CHAR_LENGTH", "TRIM", "LTRIM", "RTRIM", "SUBSTRING", "SUBSTR", "REPLACE",
		"CONCAT", "CONCAT_WS", "POSITION", "LOCATE", "INSTR", "SPLIT_INDEX", "REGEXP", "REGEXP_EXTRACT",
		"REGEXP_REPLACE", "INITCAP", "LPAD", "RPAD", "REPEAT", "REVERSE", "MD5", "SHA256", "SHA2", "TO_BASE64",
		"FROM_BASE64", "ASCII", "CHR", "PARSE_URL", "STR_TO_MAP", "IS_DIGIT", "BIN", "HEX", "TYPEOF", "ABS",
		"MOD", "POWER", "SQRT", "EXP", "LN", "LOG10", "LOG2", "LOG", "FLOOR", "CEIL", "ROUND", "TRUNCATE", "SIGN",
		"PI", "COALESCE", "IFNULL", "NULLIF", "IF", "GREATEST", "LEAST", "DATE_FORMAT", "TO_TIMESTAMP",
		"TO_TIMESTAMP_LTZ", "TO_DATE", "FROM_UNIXTIME", "UNIX_TIMESTAMP", "YEAR", "MONTH", "HOUR", "WEEK",
		"DAYOFWEEK", "CURRENT_TIMESTAMP", "CARDINALITY", "ELEMENT", "ARRAY_CONTAINS", "MAP_KEYS", "JSON_VALUE",
		"JSON_QUERY", "JSON_EXISTS", "ROW", "CONVERT_TZ", "DEGREES", "COT"}
	genTypes = []string{"INT", "BIGINT", "TINYINT", "DOUBLE", "FLOAT", "DECIMAL(10, 2)", "DECIMAL(3, 0)", "STRING",
		"VARCHAR(3)", "CHAR(4)", "BOOLEAN", "DATE", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)", "BYTES", "ARRAY<STRING>"}
)

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) expr(depth int) string {
	if depth <= 0 || g.r.IntN(4) == 0 {
		if g.r.IntN(2) == 0 {
			return g.pick(genColumns)
		}
		return g.pick(genLiterals)
	}
	d := depth - 1
	switch g.r.IntN(12) {
	case 0:
		return "-" + g.expr(d)
	case 1:
		return "NOT " + g.expr(d)
	case 2, 3, 4:
		return "(" + g.expr(d) + " " + g.pick(genBinary) + " " + g.expr(d) + ")"
	case 5:
		return "(" + g.expr(d) + " IS " + g.pick([]string{"NULL", "NOT NULL", "TRUE", "FALSE", "UNKNOWN"}) + ")"
	case 6:
		return "(" + g.expr(d) + " BETWEEN " + g.expr(d) + " AND " + g.expr(d) + ")"
	case 7:
		return "(" + g.expr(d) + " LIKE " + g.expr(d) + ")"
	case 8:
		return "(" + g.expr(d) + " IN (" + g.expr(d) + ", " + g.expr(d) + "))"
	case 9:
		if g.r.IntN(2) == 0 {
			return "CASE " + g.expr(d) + " WHEN " + g.expr(d) + " THEN " + g.expr(d) + " ELSE " + g.expr(d) + " END"
		}
		return "CASE WHEN " + g.expr(d) + " THEN " + g.expr(d) + " END"
	case 10:
		kw := "CAST"
		if g.r.IntN(3) == 0 {
			kw = "TRY_CAST"
		}
		return kw + "(" + g.expr(d) + " AS " + g.pick(genTypes) + ")"
	}
	name := g.pick(genFuncs)
	args := make([]string, g.r.IntN(4))
	for i := range args {
		args[i] = g.expr(d)
	}
	return name + "(" + strings.Join(args, ", ") + ")"
}

// check compiles and evaluates src, failing on a panic, on an evaluation
// that recovered from one, and on a value that does not carry its type.
func check(t *testing.T, s *expr.Scope, src string) {
	e, err := parser.ParseExpr(src)
	if err != nil {
		return
	}
	c, err := expr.Compile(e, s)
	if err != nil {
		if _, ok := err.(*expr.Error); !ok {
			t.Fatalf("%s: error %T %v", src, err, err)
		}
		return
	}
	for _, r := range [][]any{row, make([]any, len(row))} {
		if r[20] == nil {
			r[20] = int64(0) // nn is NOT NULL
		}
		v, err := c.Eval(r)
		if err != nil {
			if strings.Contains(err.Error(), "cannot evaluate the expression") {
				t.Fatalf("%s: %v", src, err)
			}
			continue
		}
		if msg := checkGoType(v, c.Type); msg != "" {
			t.Fatalf("%s: %s", src, msg)
		}
	}
}

// TestRandomExpressions compiles and runs many random expressions.
func TestRandomExpressions(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	g := &gen{r: rand.New(rand.NewPCG(1, 2))}
	s := scope()
	compiled := 0
	for i := 0; i < n; i++ {
		src := g.expr(4)
		check(t, s, src)
		if e, err := parser.ParseExpr(src); err == nil {
			if _, err := expr.Compile(e, s); err == nil {
				compiled++
			}
		}
	}
	t.Logf("%d of %d random expressions compiled", compiled, n)
	if compiled < n/20 {
		t.Errorf("only %d of %d random expressions compiled; the generator is off", compiled, n)
	}
}

func FuzzCompile(f *testing.F) {
	g := &gen{r: rand.New(rand.NewPCG(3, 4))}
	for i := 0; i < 200; i++ {
		f.Add(g.expr(3))
	}
	for _, s := range []string{"0.908 * price", "DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')", "CAST(s AS INT)",
		"SPLIT_INDEX(url, '/', 3)", "i / 0"} {
		f.Add(s)
	}
	s := scope()
	f.Fuzz(func(t *testing.T, src string) {
		check(t, s, src)
	})
}
