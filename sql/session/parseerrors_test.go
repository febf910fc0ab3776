package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
)

// copyFile runs a filesystem → filesystem copy of the lines in, with the
// source table's extra WITH options, and returns what the sink wrote.
func copyFile(t *testing.T, format, in, options string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	src, out := filepath.Join(dir, "in."+format), filepath.Join(dir, "out")
	if err := os.WriteFile(src, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runScript(t, fmt.Sprintf(`
CREATE TABLE src (id STRING, n TINYINT, b BYTES) WITH ('connector'='filesystem','path'='%s','format'='%s'%s);
CREATE TABLE dst (id STRING, n TINYINT, b BYTES) WITH ('connector'='filesystem','path'='%s','format'='%s');
INSERT INTO dst SELECT * FROM src;`, src, format, options, out, format))
	if err != nil {
		return "", err
	}
	files, _ := filepath.Glob(filepath.Join(out, "part-*"))
	var got strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got.Write(b)
	}
	return got.String(), nil
}

// A value that does not parse fails the job with the file, the line and
// the column; 'csv.ignore-parse-errors' reads it as NULL and
// 'json.ignore-parse-errors' skips the line, as Flink's formats do. BYTES
// go through a json → json copy unchanged (base64 both ways).
func TestFilesystemParseErrors(t *testing.T) {
	for _, c := range []struct {
		format, in, options, want string
	}{
		{"csv", "a,1,AAE=\nb,300,AAE=\nc,3,\n", "", `in.csv line 2: csv: column "n" (TINYINT): 300 is out of range for TINYINT (-128 to 127)` +
			` (to continue past such lines set 'csv.ignore-parse-errors' = 'true' on table "src")`},
		{"csv", "a,1,AAE=\nb,12abc,AAE=\nc,3,\n", ",'csv.ignore-parse-errors'='true'", "a,1,AAE=\nb,,AAE=\nc,3,\n"},
		{"csv", "a,1,AAE=\nb,\"2,AAE=\nc,3,\n", ",'csv.ignore-parse-errors'='true'", "a,1,AAE=\nc,3,\n"},
		{"json", "{\"id\":\"a\",\"n\":1}\n{\"id\":\"b\",\"n\":\"12abc\"}\n", "", `in.json line 2: json: field "n" (TINYINT): "12abc" is not an integer` +
			` (to continue past such lines set 'json.ignore-parse-errors' = 'true' on table "src")`},
		{"json", "{\"id\":\"a\",\"n\":1,\"b\":\"AAH/\"}\n{\"id\":\"b\",\"n\":1e3}\n{\"id\":\"c\",\"n\":3}\n", ",'json.ignore-parse-errors'='true'",
			"{\"id\":\"a\",\"n\":1,\"b\":\"AAH/\"}\n{\"id\":\"c\",\"n\":3,\"b\":null}\n"},
	} {
		got, err := copyFile(t, c.format, c.in, c.options)
		if err != nil {
			got = err.Error()
		}
		if got != c.want && !(err != nil && strings.HasSuffix(got, c.want)) {
			t.Errorf("%s %q with %q:\ngot  %s\nwant %s", c.format, c.in, c.options, got, c.want)
		}
	}
}

// A Kafka record with a value that does not parse goes to the bad-record
// policy with its topic, partition, offset and column; with
// 'csv.ignore-parse-errors' a malformed record is skipped and a bad field
// read as NULL.
func TestKafkaParseErrors(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("parse-errors-%d", time.Now().UnixNano())
	cl := createTopic(t, brokers, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, v := range []string{"a,1", "b,0x10", "c,\"3", "d,4"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	table := func(options string) string {
		return fmt.Sprintf(`CREATE TABLE k (id STRING, n INT) WITH ('connector'='kafka','topic'='%s',
  'properties.bootstrap.servers'='%s','format'='csv','scan.startup.mode'='earliest-offset',
  'scan.bounded.mode'='latest-offset'%s);`, topic, brokers, options)
	}
	_, err := runScript(t, table("")+`CREATE TABLE out (id STRING, n INT) WITH ('connector'='blackhole');
INSERT INTO out SELECT * FROM k;`)
	want := fmt.Sprintf(`kafka source: bad record at topic %s partition 0 offset 1: csv: column "n" (INT): "0x10" is not an integer`, topic)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v\nwant an error containing %s", err, want)
	}
	out := filepath.Join(t.TempDir(), "out")
	_, err = runScript(t, table(",'csv.ignore-parse-errors'='true'")+fmt.Sprintf(`
CREATE TABLE out (id STRING, n INT) WITH ('connector'='filesystem','path'='%s','format'='csv');
INSERT INTO out SELECT * FROM k;`, out))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "part-*"))
	if len(files) != 1 {
		t.Fatalf("output files %v", files)
	}
	if got, _ := os.ReadFile(files[0]); string(got) != "a,1\nb,\nd,4\n" {
		t.Fatalf("with 'csv.ignore-parse-errors': got %q, want a,1 b,NULL d,4", got)
	}
}
