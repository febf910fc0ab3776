package session

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// partitionedInput is the input of TestPartitionedFilesystemSink: dt, hm,
// id, name; a checkpoint and a crash in the middle.
var partitionedInput = []string{
	"2024-01-01,10:00,1,a", "2024-01-01,10:01,2,b", "2024-01-02,10:00,3,c",
	"CHECKPOINT",
	"2024-01-01,10:00,4,d", "NULL,10:00,5,e", "'',x/y,6,f",
	"CRASH",
	"2024-01-02,10:00,7,g", "2024-01-01,10:01,8,h",
}

// TestPartitionedFilesystemSink writes a PARTITIONED BY (dt, hm) csv table
// with checkpoints and a crash between them: each Hive-style directory
// holds exactly its input rows without the partition columns, once (the
// rows replayed after the restore are not duplicated), NULL and empty
// values go to __DEFAULT_PARTITION__ ('partition.default-name'), and a
// '/' in a value is escaped, as Flink writes it.
func TestPartitionedFilesystemSink(t *testing.T) {
	out := t.TempDir()
	input := strings.Join(partitionedInput, "\n")
	input = strings.ReplaceAll(input, "''", `""`)
	script := fmt.Sprintf(`exec
CREATE TABLE src (dt STRING, hm STRING, id INT, name STRING) WITH ('connector' = 'values');
CREATE TABLE f (id INT, name STRING, dt STRING, hm STRING) PARTITIONED BY (dt, hm)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
----
ok

input table=src
%s
----

run
INSERT INTO f SELECT id, name, dt, hm FROM src;
----
(1 restart, from a checkpoint)
`, out, input)
	datadriven.RunTestFromString(t, script, newSQLScript().cmd)

	want := map[string][]string{}
	for _, line := range partitionedInput {
		f := strings.Split(line, ",")
		if len(f) != 4 {
			continue
		}
		dir := "dt=" + defaultIfEmpty(f[0]) + "/hm=" + strings.ReplaceAll(defaultIfEmpty(f[1]), "/", "%2F")
		dir = strings.ReplaceAll(dir, ":", "%3A")
		want[dir] = append(want[dir], f[2]+","+f[3])
	}
	got, success := readPartitions(t, out)
	if len(success) != 0 {
		t.Errorf("success files %v without a commit policy", success)
	}
	for dir := range want {
		slices.Sort(want[dir])
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows per partition directory:\n got %v\nwant %v", got, want)
	}
}

// readPartitions returns the rows of each partition directory under out
// (sorted) and the directories holding a _SUCCESS file; any other file
// fails the test.
func readPartitions(t *testing.T, out string) (map[string][]string, []string) {
	t.Helper()
	got := map[string][]string{}
	var success []string
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".weir-committed" {
			return filepath.SkipDir // the sink's committed-checkpoint markers
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, filepath.Dir(path))
		if d.Name() == "_SUCCESS" {
			success = append(success, rel)
			return nil
		}
		if !strings.HasPrefix(d.Name(), "part-") {
			t.Errorf("unexpected file %s in %s", d.Name(), rel)
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		got[rel] = append(got[rel], strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range got {
		slices.Sort(got[dir])
	}
	slices.Sort(success)
	return got, success
}

// TestPartitionCommitSuccessFiles writes Nexmark q10's table shape
// (PARTITIONED BY (dt, hm), partition-time trigger, '$dt $hm:00',
// success-file) with a checkpoint and a crash: each partition holds its
// rows once, and at the end of the bounded input every partition is
// committed with its _SUCCESS file.
func TestPartitionCommitSuccessFiles(t *testing.T) {
	out := t.TempDir()
	rows := []string{
		"2024-01-01,10:00,1,2024-01-01 10:00:01", "2024-01-01,10:01,2,2024-01-01 10:01:30",
		"CHECKPOINT",
		"2024-01-01,10:00,3,2024-01-01 10:00:59", "2024-01-01,10:03,4,2024-01-01 10:03:00",
		"CRASH",
		"2024-01-01,10:05,5,2024-01-01 10:05:00", "2024-01-01,10:01,6,2024-01-01 10:01:31",
	}
	script := fmt.Sprintf(`exec
CREATE TABLE src (dt STRING, hm STRING, id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'values');
CREATE TABLE f (id INT, dt STRING, hm STRING) PARTITIONED BY (dt, hm) WITH ('connector' = 'filesystem',
  'path' = '%s', 'format' = 'csv', 'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '1 min', 'sink.partition-commit.policy.kind' = 'success-file',
  'partition.time-extractor.timestamp-pattern' = '$dt $hm:00');
----
ok

input table=src
%s
----

run
INSERT INTO f SELECT id, dt, hm FROM src;
----
(1 restart, from a checkpoint)
`, out, strings.Join(rows, "\n"))
	datadriven.RunTestFromString(t, script, newSQLScript().cmd)
	want := map[string][]string{}
	var dirs []string
	for _, line := range rows {
		f := strings.Split(line, ",")
		if len(f) != 4 {
			continue
		}
		dir := "dt=" + f[0] + "/hm=" + strings.ReplaceAll(f[1], ":", "%3A")
		if want[dir] == nil {
			dirs = append(dirs, dir)
		}
		want[dir] = append(want[dir], f[2])
	}
	for dir := range want {
		slices.Sort(want[dir])
	}
	slices.Sort(dirs)
	got, success := readPartitions(t, out)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows per partition directory:\n got %v\nwant %v", got, want)
	}
	if fmt.Sprint(success) != fmt.Sprint(dirs) {
		t.Errorf("_SUCCESS in %v, want in every partition %v", success, dirs)
	}
}

// TestPartitionCommitOptionErrors: bad partition commit options fail at
// planning with Flink's option names.
func TestPartitionCommitOptionErrors(t *testing.T) {
	for _, c := range []struct{ opts, want string }{
		{"'sink.partition-commit.trigger' = 'watermark'", `table "f": 'sink.partition-commit.trigger' = 'watermark': unknown trigger; hint: use 'process-time' or 'partition-time'`},
		{"'sink.partition-commit.policy.kind' = 'success-file', 'partition.time-extractor.timestamp-pattern' = '$dt $hour:00'",
			`table "f": 'partition.time-extractor.timestamp-pattern' = '$dt $hour:00': $hour is not a partition column (partition columns: dt, hm); hint: refer to PARTITIONED BY columns as $column, e.g. '$dt $hm:00'`},
		{"'sink.partition-commit.policy.kind' = 'metastore,success-file'", `table "f": 'sink.partition-commit.policy.kind' = 'metastore,success-file': the 'metastore' policy needs a Hive metastore, and Weir has none; hint: use 'success-file'`},
		{"'sink.rolling-policy.file-size' = 'big'", `table "f": 'sink.rolling-policy.file-size' = 'big': want a size; hint: e.g. '128MB', '1 gb' or '512kb'`},
		{"'sink.allow-replay' = 'yes'", `table "f": 'sink.allow-replay' = 'yes': want true or false`},
		{"'sink.partition-commit.delay' = 'soon'", `table "f": 'sink.partition-commit.delay' = 'soon': want a duration; hint: e.g. '1 min', '1 h', '0 s'`},
	} {
		sql := fmt.Sprintf(`CREATE TABLE src (dt STRING, hm STRING, id INT) WITH ('connector' = 'values');
CREATE TABLE f (id INT, dt STRING, hm STRING) PARTITIONED BY (dt, hm) WITH ('connector' = 'filesystem',
  'path' = '%s', 'format' = 'csv', %s);
INSERT INTO f SELECT id, dt, hm FROM src;`, t.TempDir(), c.opts)
		r := newSQLScript()
		_, err := r.run(sql, false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant …%s", c.opts, err, c.want)
		}
	}
}

func defaultIfEmpty(v string) string {
	if v == "NULL" || v == "''" {
		return "__DEFAULT_PARTITION__"
	}
	return v
}

// TestPartitionDirectoriesByType: a table PARTITIONED BY a DATE, a DOUBLE
// and a DECIMAL column writes the directories Flink writes
// (d=2024-01-02/x=0.5/m=1.00), and reads its rows back through them.
func TestPartitionDirectoriesByType(t *testing.T) {
	out := t.TempDir()
	script := fmt.Sprintf(`exec
CREATE TABLE src (id INT, d DATE, x DOUBLE, m DECIMAL(10, 2)) WITH ('connector' = 'values');
CREATE TABLE f (id INT, d DATE, x DOUBLE, m DECIMAL(10, 2)) PARTITIONED BY (d, x, m)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE back (id INT, d DATE, x DOUBLE, m DECIMAL(10, 2)) WITH ('connector' = 'values');
----
ok

input table=src
1,2024-01-02,0.5,1.00
2,2024-01-02,0.0,1.50
3,2023-12-31,1e10,-2.00
----

run
INSERT INTO f SELECT * FROM src;
----

run
INSERT INTO back SELECT * FROM f;
----
back:
+I[3, 2023-12-31, 1.0E10, -2.00]
+I[2, 2024-01-02, 0.0, 1.50]
+I[1, 2024-01-02, 0.5, 1.00]
`, out)
	datadriven.RunTestFromString(t, script, newSQLScript().cmd)
	got, _ := readPartitions(t, out)
	want := map[string][]string{"d=2024-01-02/x=0.5/m=1.00": {"1"}, "d=2024-01-02/x=0.0/m=1.50": {"2"},
		"d=2023-12-31/x=1.0E10/m=-2.00": {"3"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows per partition directory:\n got %v\nwant %v", got, want)
	}
}
