package session

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/jdbc"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/catalog"
)

// Stop-with-savepoint into MariaDB through XA: the sources stop mid-stream,
// the savepoint is taken and the sink's prepared XA transactions commit,
// so the table holds exactly the rows read before the stop; a restore of
// the savepoint at parallelism 3 continues to the end with every row in
// the table exactly once and no XA transaction left open.
func TestStopWithSavepointMariaDBXA(t *testing.T) {
	dsn := testsvc.MySQL(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	table := fmt.Sprintf("savepoint_xa_%d", time.Now().UnixNano())
	if _, err := db.Exec("CREATE TABLE " + table + " (k VARCHAR(16))"); err != nil {
		t.Fatal(err)
	}
	defer db.Exec("DROP TABLE " + table)
	jobName := fmt.Sprintf("spxa%d", time.Now().UnixNano()%1e6)
	var keys []string
	for i := range 400 {
		keys = append(keys, "r"+strconv.Itoa(i))
	}
	script := fmt.Sprintf(`SET 'execution.checkpointing.interval' = '50 ms';
CREATE TABLE src (k STRING) WITH ('connector' = 'held');
CREATE TABLE dst (k STRING) WITH ('connector'='jdbc','url'='%s','table-name'='%s','username'='weir','password'='weir',
  'sink.delivery-guarantee'='exactly-once','sink.exactly-once.strategy'='xa');
INSERT INTO dst SELECT k FROM src;`, jdbcURL(t, dsn), table)
	session := func(src *heldRows, par int) *Session {
		s := New()
		s.Connectors.Sources["held"] = func(*catalog.Table) (operator.Source, error) { return src, nil }
		if err := s.Execute(script); err != nil {
			t.Fatal(err)
		}
		s.Settings["parallelism.default"] = strconv.Itoa(par)
		s.Settings["execution.checkpointing.dir"] = filepath.Join(t.TempDir(), "checkpoints")
		s.Settings["pipeline.name"] = jobName // names the XA transactions
		return s
	}
	src := &heldRows{Keys: keys, Splits: 4, Limit: int64(len(keys) / 2), Release: make(chan struct{})}
	jg, opts, err := session(src, 2).Job("xa")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	job, err := runtime.Start(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for src.emitted.Load() < src.Limit {
		time.Sleep(5 * time.Millisecond)
	}
	path, err := job.StopWithSavepoint(ctx, t.TempDir(), false)
	if err != nil {
		t.Fatalf("stop with savepoint: %v", err)
	}
	if _, err := job.Wait(); err != nil {
		t.Fatalf("job after stop-with-savepoint: %v", err)
	}
	rows, dups := tableKeys(t, db, table)
	if int64(len(rows)) != src.emitted.Load() || dups != 0 {
		t.Fatalf("%s after the stop: %d rows (%d duplicates); want the %d rows read before it", table, len(rows), dups, src.emitted.Load())
	}
	checkNoOpenXA(t, db, jobName, table)

	src = &heldRows{Keys: keys, Splits: 4, Limit: 1 << 62, Release: make(chan struct{})}
	res, err := session(src, 3).Run(ctx, "xa", func(o *runtime.Options) { o.Restore = path })
	if err != nil {
		t.Fatal(err)
	}
	if res.RestoredFrom == 0 {
		t.Fatal("the second run did not restore the savepoint")
	}
	rows, dups = tableKeys(t, db, table)
	if len(rows) != len(keys) || dups != 0 {
		t.Fatalf("%s after the restore: %d distinct rows, %d duplicates; want each of the %d rows once", table, len(rows), dups, len(keys))
	}
	for _, k := range keys {
		if !rows[k] {
			t.Fatalf("row %s lost", k)
		}
	}
	checkNoOpenXA(t, db, jobName, table)
}

// tableKeys returns the distinct k of table and how many rows repeat one.
func tableKeys(t *testing.T, db *sql.DB, table string) (map[string]bool, int) {
	t.Helper()
	rs, err := db.Query("SELECT k FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	out, dups := map[string]bool{}, 0
	for rs.Next() {
		var k string
		if err := rs.Scan(&k); err != nil {
			t.Fatal(err)
		}
		if out[k] {
			dups++
		}
		out[k] = true
	}
	return out, dups
}

// checkNoOpenXA fails when a prepared XA transaction of job's sink into
// table is left. (It looked for ":job:" in the xid, which a hashed prefix
// — job and table longer than 30 bytes, as here — never contains.)
func checkNoOpenXA(t *testing.T, db *sql.DB, job, table string) {
	t.Helper()
	rs, err := db.Query("XA RECOVER")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var format, gl, bl int
		var data string
		if err := rs.Scan(&format, &gl, &bl, &data); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(data, jdbc.XIDPrefix(job, table)+":") {
			t.Errorf("XA transaction left prepared: %q", data)
		}
	}
}
