package session

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// parquetInput is the input of TestParquetPartitionedRoundTrip: every
// column type Weir writes to Parquet, NULLs, and the partition column dt;
// a checkpoint and a crash in the middle. (The 'values' connector reads
// BYTES as the text's bytes.)
var parquetInput = []string{
	"1,true,-128,32767,-2147483648,9223372036854775807,1.5,0.1,12345678.90,-99999999999999999999.999999999999999999,héllo,aGk=,1969-12-31,1900-01-01 23:59:59.123456,2024-01-01",
	"2,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,2024-01-01",
	"CHECKPOINT",
	"3,false,127,-32768,2147483647,-9223372036854775808,-3.25,-1.0E300,-0.01,0.000000000000000001,'',AA==,2262-04-11,1970-01-01 00:00:00,2024-01-02",
	"4,true,0,0,0,0,0.0,0.0,0.00,0,x,NULL,2000-02-29,2024-02-29 12:34:56.000001,NULL",
	"CRASH",
	"5,false,1,2,3,4,5.5,6.25,7.07,8.123,y,/w==,1999-12-31,1999-12-31 23:59:59.999999,2024-01-02",
}

const parquetColumns = `id INT, b BOOLEAN, t TINYINT, s SMALLINT, i INT, l BIGINT, f FLOAT, d DOUBLE,
  m DECIMAL(10, 2), big DECIMAL(38, 18), name STRING, raw BYTES, day DATE, ts TIMESTAMP(6), dt STRING`

// TestParquetPartitionedRoundTrip writes a PARTITIONED BY (dt) parquet
// table with a checkpoint and a crash (exactly-once: the rows replayed
// after the restore are not duplicated), each partition committed with
// _SUCCESS, then reads the table back with the filesystem source (dt from
// the directories): exactly the input. When a Python with pyarrow is found
// (WEIR_PYTHON, else python3), pyarrow reads the same files independently.
func TestParquetPartitionedRoundTrip(t *testing.T) {
	out := t.TempDir()
	input := strings.ReplaceAll(strings.Join(parquetInput, "\n"), "''", `""`)
	script := fmt.Sprintf(`exec
CREATE TABLE src (%[1]s) WITH ('connector' = 'values');
CREATE TABLE p (%[1]s) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = '%[2]s',
  'format' = 'parquet', 'parquet.compression' = 'SNAPPY', 'parquet.utc-timezone' = 'true',
  'sink.partition-commit.policy.kind' = 'success-file');
----
ok

input table=src
%[3]s
----

run
INSERT INTO p SELECT * FROM src;
----
(1 restart, from a checkpoint)

clear
----

run materialize
CREATE TABLE back (%[1]s) WITH ('connector' = 'values');
INSERT INTO back SELECT * FROM p;
----
back:
[1, true, -128, 32767, -2147483648, 9223372036854775807, 1.5, 0.1, 12345678.90, -99999999999999999999.999999999999999999, héllo, aGk=, 1969-12-31, 1900-01-01 23:59:59.123456, 2024-01-01]
[2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 2024-01-01]
[3, false, 127, -32768, 2147483647, -9223372036854775808, -3.25, -1.0E300, -0.01, 0.000000000000000001, , AA==, 2262-04-11, 1970-01-01 00:00:00.000000, 2024-01-02]
[4, true, 0, 0, 0, 0, 0.0, 0.0, 0.00, 0.000000000000000000, x, NULL, 2000-02-29, 2024-02-29 12:34:56.000001, NULL]
[5, false, 1, 2, 3, 4, 5.5, 6.25, 7.07, 8.123000000000000000, y, /w==, 1999-12-31, 1999-12-31 23:59:59.999999, 2024-01-02]
`, parquetColumns, out, input)
	datadriven.RunTestFromString(t, script, newSQLScript().cmd)

	var success []string
	filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "_SUCCESS" {
			rel, _ := filepath.Rel(out, filepath.Dir(path))
			success = append(success, rel)
		}
		return err
	})
	if want := "[dt=2024-01-01 dt=2024-01-02 dt=__DEFAULT_PARTITION__]"; fmt.Sprint(success) != want {
		t.Errorf("_SUCCESS in %v, want %s", success, want)
	}
	checkWithPyarrow(t, out)
}

// pyarrowScript prints each row of the partitioned dataset as Python
// sees it, sorted by id.
const pyarrowScript = `
import sys, pyarrow.dataset as ds
t = ds.dataset(sys.argv[1], format="parquet", partitioning="hive").to_table()
for r in sorted(t.to_pylist(), key=lambda r: r["id"]):
    print("|".join(repr(r[c]) for c in t.column_names))
`

func checkWithPyarrow(t *testing.T, dir string) {
	python := os.Getenv("WEIR_PYTHON")
	if python == "" {
		python = "python3"
	}
	if err := exec.Command(python, "-c", "import pyarrow").Run(); err != nil {
		t.Logf("no pyarrow (%s -c 'import pyarrow': %v): the independent read is skipped; set WEIR_PYTHON to a python with pyarrow", python, err)
		return
	}
	got, err := exec.Command(python, "-c", pyarrowScript, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, got)
	}
	want := `1|True|-128|32767|-2147483648|9223372036854775807|1.5|0.1|Decimal('12345678.90')|Decimal('-99999999999999999999.999999999999999999')|'héllo'|b'aGk='|datetime.date(1969, 12, 31)|datetime.datetime(1900, 1, 1, 23, 59, 59, 123456)|'2024-01-01'
2|None|None|None|None|None|None|None|None|None|None|None|None|None|'2024-01-01'
3|False|127|-32768|2147483647|-9223372036854775808|-3.25|-1e+300|Decimal('-0.01')|Decimal('1E-18')|''|b'AA=='|datetime.date(2262, 4, 11)|datetime.datetime(1970, 1, 1, 0, 0)|'2024-01-02'
4|True|0|0|0|0|0.0|0.0|Decimal('0.00')|Decimal('0E-18')|'x'|None|datetime.date(2000, 2, 29)|datetime.datetime(2024, 2, 29, 12, 34, 56, 1)|'__DEFAULT_PARTITION__'
5|False|1|2|3|4|5.5|6.25|Decimal('7.07')|Decimal('8.123000000000000000')|'y'|b'/w=='|datetime.date(1999, 12, 31)|datetime.datetime(1999, 12, 31, 23, 59, 59, 999999)|'2024-01-02'
`
	if string(got) != want {
		t.Errorf("pyarrow reads:\n%s\nwant\n%s", got, want)
	}
}

// TestParquetErrors: a bad parquet option is refused at planning at its
// position in the DDL; a damaged file fails the job naming the file.
func TestParquetErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.parquet"), []byte("id\n1\n"), 0o644)
	script := fmt.Sprintf(`exec
CREATE TABLE v (id INT) WITH ('connector' = 'values');
CREATE TABLE p (id INT) WITH ('connector' = 'filesystem', 'path' = '%[1]s',
  'format' = 'parquet', 'parquet.compression' = 'LZO');
CREATE TABLE q (id INT, xs ARRAY<INT>) WITH ('connector' = 'filesystem', 'format' = 'parquet', 'path' = '%[1]s');
CREATE TABLE r (id INT) WITH ('connector' = 'filesystem', 'path' = '%[1]s', 'format' = 'parquet');
----
ok

error
INSERT INTO p SELECT * FROM v;
----
error: line 3:25: table "p": 'parquet.compression' = 'LZO': unknown or unsupported codec; hint: use UNCOMPRESSED, SNAPPY, GZIP, BROTLI, ZSTD or LZ4_RAW (LZO and Hadoop's LZ4 are not supported)

error
INSERT INTO q SELECT id, ARRAY[id] FROM v;
----
error: line 4:74: table "q": format parquet: column "xs": type ARRAY<INT> is not supported by the parquet format yet (supported: scalar types)

error
INSERT INTO v SELECT * FROM r;
----
error: runtime: job failed after 0 restarts: subtask Source: r -> Calc -> Sink: v (0) failed: source sql-1-source-r: parquet: file $DIR/bad.parquet: not a readable Parquet file (invalid magic header of parquet file: "id\n1"); is the file complete and in the parquet format?
`, dir)
	r := newSQLScript()
	datadriven.RunTestFromString(t, script, func(t *testing.T, d *datadriven.TestData) string {
		return strings.ReplaceAll(r.cmd(t, d), dir, "$DIR")
	})
}
