package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/weirstream/weir/sql/wasmudf"
)

// TestWasmFunctions: CREATE FUNCTION … LANGUAGE WASM USING JAR loads a
// WebAssembly module (sql/wasmudf's test module) and SQL calls its export;
// a missing module, a missing export and a type mismatch fail at planning
// at their SQL position; a function that loops forever fails the job with
// the function named.
func TestWasmFunctions(t *testing.T) {
	dir := t.TempDir()
	mod := filepath.Join(dir, "udf.wasm")
	if err := os.WriteFile(mod, wasmudf.TestModule(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`exec
CREATE FUNCTION plus AS 'add' LANGUAGE WASM USING JAR '%[1]s/udf.wasm';
CREATE FUNCTION spin AS 'spin' LANGUAGE WASM USING JAR '%[1]s/udf.wasm';
CREATE TABLE src (id INT, a BIGINT, b INT, s STRING) WITH ('connector' = 'values');
CREATE TABLE out (id INT, r BIGINT) WITH ('connector' = 'values');
----
ok

input table=src
1,40,2,x
2,NULL,5,y
3,-7,7,z
----

run
INSERT INTO out SELECT id, plus(a, b) FROM src;
----
out:
+I[1, 42]
+I[2, NULL]
+I[3, 0]

error
INSERT INTO out SELECT id, plus(a, s) FROM src;
----
error: line 1:28: PLUS(BIGINT, STRING): function PLUS: argument 2 is STRING, which does not pass to the module's parameter i64 (add(i64, i64) i64)

error
CREATE FUNCTION f AS 'mul' LANGUAGE WASM USING JAR '%[1]s/udf.wasm';
----
error: line 1:52: function F (module $DIR/udf.wasm): the module exports no function "mul" (AS 'mul'); hint: build the module for wasm32 and export the function named after AS

error
CREATE FUNCTION g AS 'add' LANGUAGE WASM USING JAR '%[1]s/none.wasm';
----
error: line 1:52: function G (module $DIR/none.wasm): open $DIR/none.wasm: no such file or directory; hint: build the module for wasm32 and export the function named after AS

error
CREATE FUNCTION h AS 'com.example.H' LANGUAGE JAVA;
----
error: line 1:1: CREATE FUNCTION … LANGUAGE JAVA is not supported: Weir runs no Java or Python user-defined functions; hint: compile the function to WebAssembly: CREATE FUNCTION f AS 'export' LANGUAGE WASM USING JAR 'f.wasm'

error
INSERT INTO out SELECT id, spin(a) FROM src;
----
error: runtime: job failed after 0 restarts: subtask Source: src -> Calc -> Sink: out (0) failed: sql/exec: Calc projection: line 1:28: function SPIN (module $DIR/udf.wasm): wasmudf: the call ran longer than its time limit (1s)

error
SET 'weir.wasm-udf.memory' = '1 kb';
----
error: line 1:1: SET 'weir.wasm-udf.memory' = '1 kb': want a memory size from 64 kb to 4 gb

error
SET 'weir.wasm-udf.on-error' = 'skip';
----
error: line 1:1: SET 'weir.wasm-udf.on-error' = 'skip': want 'fail' or 'null'
`, dir)
	r := newSQLScript()
	datadriven.RunTestFromString(t, script, func(t *testing.T, d *datadriven.TestData) string {
		return strings.ReplaceAll(r.cmd(t, d), dir, "$DIR")
	})
}

// TestWasmFunctionsFromLanguages runs sql/wasmudf's example modules, built
// from Rust, Go and AssemblyScript, in SQL: a numeric and a string
// function give exact rows, and so does a table function (ARRAY<STRING>
// result) in LATERAL TABLE, inner and LEFT JOIN … ON TRUE; a function that loops forever and one that
// allocates without bound fail the job naming the function and the limit;
// with 'weir.wasm-udf.on-error' = 'null' the failing row gets NULL
// and the job's other rows are exact.
func TestWasmFunctionsFromLanguages(t *testing.T) {
	for _, lang := range []string{"rust", "go", "assemblyscript"} {
		t.Run(lang, func(t *testing.T) {
			mod, err := filepath.Abs(filepath.Join("..", "wasmudf", "testdata", lang, "udf.wasm"))
			if err != nil {
				t.Fatal(err)
			}
			r := newSQLScript()
			datadriven.RunTestFromString(t, fmt.Sprintf(wasmLanguageScript, mod), func(t *testing.T, d *datadriven.TestData) string {
				return strings.ReplaceAll(r.cmd(t, d), mod, "$MODULE")
			})
		})
	}
}

const wasmLanguageScript = `exec
SET 'weir.wasm-udf.timeout' = '300 ms';
CREATE FUNCTION spin AS 'spin' LANGUAGE WASM USING JAR '%[1]s';
SET 'weir.wasm-udf.timeout' = '1 min';
SET 'weir.wasm-udf.memory' = '16 mb';
CREATE FUNCTION plus AS 'add' LANGUAGE WASM USING JAR '%[1]s';
CREATE FUNCTION shout AS 'shout(STRING) RETURNS STRING' LANGUAGE WASM USING JAR '%[1]s';
CREATE FUNCTION words AS 'words(STRING) RETURNS ARRAY<STRING>' LANGUAGE WASM USING JAR '%[1]s';
CREATE FUNCTION hog AS 'hog' LANGUAGE WASM USING JAR '%[1]s';
CREATE TABLE src (id INT, a BIGINT, s STRING) WITH ('connector' = 'values');
CREATE TABLE out (id INT, n BIGINT, s STRING) WITH ('connector' = 'values');
----
ok

input table=src
1,40,weir
2,NULL,NULL
3,-7,héllo wörld
4,5,
----

run
INSERT INTO out SELECT id, plus(a, id), shout(s) FROM src;
----
out:
+I[1, 41, WEIR!]
+I[2, NULL, NULL]
+I[3, -4, HÉLLO WÖRLD!]
+I[4, 9, !]

run
INSERT INTO out SELECT id, CHAR_LENGTH(w), w FROM src, LATERAL TABLE(words(s)) AS t(w);
----
out:
+I[1, 4, weir]
+I[3, 5, héllo]
+I[3, 5, wörld]

run
INSERT INTO out SELECT id, CAST(NULL AS BIGINT), w FROM src LEFT JOIN LATERAL TABLE(words(s)) AS t(w) ON TRUE;
----
out:
+I[1, NULL, weir]
+I[2, NULL, NULL]
+I[3, NULL, héllo]
+I[3, NULL, wörld]
+I[4, NULL, NULL]

error
INSERT INTO out SELECT id, CASE WHEN id = 3 THEN spin(a) ELSE a END, s FROM src;
----
error: runtime: job failed after 0 restarts: subtask Source: src -> Calc -> Sink: out (0) failed: sql/exec: Calc projection: line 1:50: function SPIN (module $MODULE): wasmudf: the call ran longer than its time limit (300ms)

error
INSERT INTO out SELECT id, hog(a), s FROM src;
----
error: runtime: job failed after 0 restarts: subtask Source: src -> Calc -> Sink: out (0) failed: sql/exec: Calc projection: line 1:28: function HOG (module $MODULE): wasmudf: the module ran out of memory at its memory limit (16 MiB): wasm error: unreachable

exec
SET 'weir.wasm-udf.on-error' = 'null';
CREATE FUNCTION hog_or_null AS 'hog' LANGUAGE WASM USING JAR '%[1]s';
SET 'weir.wasm-udf.timeout' = '300 ms';
CREATE FUNCTION spin_or_null AS 'spin' LANGUAGE WASM USING JAR '%[1]s';
----
ok

run
INSERT INTO out SELECT id, CASE WHEN id = 3 THEN spin_or_null(a) WHEN id = 4 THEN hog_or_null(a) ELSE plus(a, 1) END, shout(s) FROM src;
----
out:
+I[1, 41, WEIR!]
+I[2, NULL, NULL]
+I[3, NULL, HÉLLO WÖRLD!]
+I[4, NULL, !]
`
