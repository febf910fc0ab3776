package session

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/runtime"
)

// TestProcTimeColumnsReadProcessingTime: PROCTIME() and CURRENT_TIMESTAMP
// as columns — computed in the table's DDL, in a view, in the query — are
// the job's processing time (runtime.Options.Now here, a fixed instant),
// as Flink's are the timer service's, where a PROCTIME() inside a larger
// expression reads the wall clock still. The projection fills them from
// its subtask's reading, once a batch, instead of reading the clock for
// each row.
func TestProcTimeColumnsReadProcessingTime(t *testing.T) {
	h := newHarness(t)
	h.file("in.csv", "a,1\nb,2\nc,3\n")
	s := h.session()
	script := strings.ReplaceAll(`
CREATE TABLE src (k STRING, v INT, pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '$DIR/in.csv', 'format' = 'csv');
CREATE VIEW vw AS SELECT k, v, pt, PROCTIME() AS p FROM src;
CREATE TABLE out (k STRING, v INT, pt TIMESTAMP_LTZ(3), p TIMESTAMP_LTZ(3), c TIMESTAMP_LTZ(3), later BOOLEAN)
  WITH ('connector' = 'collect');
SET 'parallelism.default' = '2';
INSERT INTO out SELECT k, v, pt, p, CURRENT_TIMESTAMP, PROCTIME() + INTERVAL '1' DAY > p FROM vw;`, "$DIR", h.dir)
	if err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	fixed := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Run(ctx, "proctime", func(o *runtime.Options) { o.Now = func() time.Time { return fixed } }); err != nil {
		t.Fatal(err)
	}
	got := append([]string(nil), h.rows("out")...)
	sort.Strings(got)
	// The wall clock is past 2024-05-05, so PROCTIME() + 1 day, read from
	// it, is later than p (the fixed instant) whatever the clock's zone.
	ts := "2024-05-06 07:08:09.123"
	var want []string
	for _, r := range []string{"a, 1", "b, 2", "c, 3"} {
		want = append(want, "+I["+r+", "+ts+", "+ts+", "+ts+", true]")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
