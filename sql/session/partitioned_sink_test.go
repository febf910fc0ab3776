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
	got := map[string][]string{}
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, filepath.Dir(path))
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
	for dir := range want {
		slices.Sort(want[dir])
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows per partition directory:\n got %v\nwant %v", got, want)
	}
}

func defaultIfEmpty(v string) string {
	if v == "NULL" || v == "''" {
		return "__DEFAULT_PARTITION__"
	}
	return v
}
