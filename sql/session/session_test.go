package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/print"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/planner"
)

// rowsSink records every row written to a table, in order.
type rowsSink struct {
	mu   sync.Mutex
	rows []string
	// full, if set, is closed when the sink has want rows.
	full chan struct{}
	want int
	// show prints a row. Default print.Format.
	show func(any) string
}

func (s *rowsSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return rowsWriter{s}, nil
}
func (s *rowsSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type rowsWriter struct{ s *rowsSink }

func (w rowsWriter) Write(r event.Record) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	show := print.Format
	if w.s.show != nil {
		show = w.s.show
	}
	w.s.rows = append(w.s.rows, show(r.Value))
	if w.s.full != nil && len(w.s.rows) == w.s.want {
		close(w.s.full)
	}
	return nil
}
func (rowsWriter) Flush(bool) error                                   { return nil }
func (rowsWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (rowsWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (rowsWriter) Close() error                                       { return nil }

// harness runs scripts whose sinks use connector 'collect' (updates
// accepted) or 'collect-append' (inserts only).
type harness struct {
	t     *testing.T
	dir   string
	sinks map[string]*rowsSink
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, dir: t.TempDir(), sinks: map[string]*rowsSink{}}
}

func (h *harness) file(name, content string) string {
	p := filepath.Join(h.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) session() *Session {
	s := New()
	s.Out = &bytes.Buffer{}
	for name, updates := range map[string]bool{"collect": true, "collect-append": false} {
		updates := updates
		s.Connectors.Sinks[name] = func(t *catalog.Table) (planner.SinkSpec, error) {
			k := &rowsSink{}
			h.sinks[t.Name] = k
			return planner.SinkSpec{Sink: k, AcceptsUpdates: updates}, nil
		}
	}
	return s
}

func (h *harness) run(script string) (*Session, error) {
	h.t.Helper()
	s := h.session()
	if err := s.Execute(strings.ReplaceAll(script, "$DIR", h.dir)); err != nil {
		return s, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.Run(ctx, "test", nil)
	return s, err
}

func (h *harness) mustRun(script string) {
	h.t.Helper()
	if _, err := h.run(script); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) rows(table string) []string { return h.sinks[table].rows }

func sorted(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}

func expect(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\n got:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

const billsCSV = `acc-1,10.50,2026-01-01 00:00:01
acc-2,1.25,2026-01-01 00:00:02
acc-1,2.00,2026-01-01 00:00:07
acc-2,3.00,2026-01-01 00:00:12
acc-1,1.00,2026-01-01 00:00:13
`

const billsDDL = `CREATE TABLE bills (account_id STRING, amount DECIMAL(18, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/bills.csv', 'format' = 'csv');
`

func TestGroupAggregateChangelog(t *testing.T) {
	h := newHarness(t)
	h.file("bills.csv", billsCSV)
	h.mustRun(billsDDL + `
CREATE TABLE totals (account_id STRING, total DECIMAL(38, 2), n BIGINT) WITH ('connector' = 'collect');
INSERT INTO totals SELECT account_id, SUM(amount), COUNT(*) FROM bills GROUP BY account_id;`)
	expect(t, "changelog", h.rows("totals"), []string{
		"+I[acc-1, 10.50, 1]", "+I[acc-2, 1.25, 1]",
		"-U[acc-1, 10.50, 1]", "+U[acc-1, 12.50, 2]",
		"-U[acc-2, 1.25, 1]", "+U[acc-2, 4.25, 2]",
		"-U[acc-1, 12.50, 2]", "+U[acc-1, 13.50, 3]",
	})
}

func TestTumbleWindowAggregateHavingAndView(t *testing.T) {
	h := newHarness(t)
	h.file("bills.csv", billsCSV)
	h.mustRun(billsDDL + `
CREATE VIEW big AS SELECT * FROM bills WHERE amount > 1.00;
CREATE TABLE win (account_id STRING, ws TIMESTAMP(3), we TIMESTAMP(3), total DECIMAL(38, 2), n BIGINT) WITH ('connector' = 'collect-append');
INSERT INTO win
SELECT account_id, window_start, window_end, SUM(amount), COUNT(*)
FROM TABLE(TUMBLE(TABLE big, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY account_id, window_start, window_end
HAVING COUNT(*) >= 1;`)
	expect(t, "windows", sorted(h.rows("win")), []string{
		"+I[acc-1, 2026-01-01 00:00:00.000, 2026-01-01 00:00:10.000, 12.50, 2]",
		"+I[acc-2, 2026-01-01 00:00:00.000, 2026-01-01 00:00:10.000, 1.25, 1]",
		"+I[acc-2, 2026-01-01 00:00:10.000, 2026-01-01 00:00:20.000, 3.00, 1]",
	})
}

func TestDeduplicateFirstRowAndTopN(t *testing.T) {
	h := newHarness(t)
	h.file("events.csv", `b1,acc-1,5,2026-01-01 00:00:01
b2,acc-1,7,2026-01-01 00:00:02
b1,acc-1,5,2026-01-01 00:00:03
b3,acc-2,9,2026-01-01 00:00:04
b2,acc-1,7,2026-01-01 00:00:05
b4,acc-1,1,2026-01-01 00:00:06
`)
	h.mustRun(`
CREATE TABLE ev (bill_id STRING, account_id STRING, amount BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/events.csv', 'format' = 'csv');
CREATE TABLE firsts (bill_id STRING, amount BIGINT) WITH ('connector' = 'collect');
CREATE TABLE top1 (account_id STRING, bill_id STRING, amount BIGINT, rn BIGINT) WITH ('connector' = 'collect');
INSERT INTO firsts SELECT bill_id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY bill_id ORDER BY ts ASC) AS rn FROM ev) WHERE rn = 1;
INSERT INTO top1 SELECT account_id, bill_id, amount, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY account_id ORDER BY amount DESC) AS rn FROM ev) WHERE rn <= 1;`)
	expect(t, "dedup", h.rows("firsts"), []string{"+I[b1, 5]", "+I[b2, 7]", "+I[b3, 9]", "+I[b4, 1]"})
	final := map[string]string{}
	for _, r := range h.rows("top1") {
		fields := strings.Split(strings.Trim(r[2:], "[]"), ", ")
		if strings.HasPrefix(r, "+") {
			final[fields[0]] = r[2:]
		} else if final[fields[0]] == r[2:] {
			delete(final, fields[0])
		}
	}
	if fmt.Sprint(final) != "map[acc-1:[acc-1, b2, 7, 1] acc-2:[acc-2, b3, 9, 1]]" {
		t.Fatalf("top-1 final table %v (changelog %v)", final, h.rows("top1"))
	}
}

func TestJoinsAndUnion(t *testing.T) {
	h := newHarness(t)
	h.file("orders.csv", "o1,c1,2026-01-01 00:00:01\no2,c2,2026-01-01 00:00:02\no3,c9,2026-01-01 00:00:03\n")
	h.file("customers.csv", "c1,Ann,2026-01-01 00:00:00\nc2,Bob,2026-01-01 00:00:05\n")
	h.mustRun(`
CREATE TABLE orders (id STRING, cust STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/orders.csv', 'format' = 'csv');
CREATE TABLE customers (id STRING, name STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/customers.csv', 'format' = 'csv');
CREATE TABLE inner_out (oid STRING, name STRING) WITH ('connector' = 'collect-append');
CREATE TABLE left_out (oid STRING, name STRING) WITH ('connector' = 'collect');
CREATE TABLE interval_out (oid STRING, name STRING) WITH ('connector' = 'collect-append');
CREATE TABLE ids (id STRING) WITH ('connector' = 'collect-append');
INSERT INTO inner_out SELECT o.id, c.name FROM orders AS o JOIN customers AS c ON o.cust = c.id;
INSERT INTO left_out SELECT o.id, c.name FROM orders AS o LEFT JOIN customers AS c ON o.cust = c.id;
INSERT INTO interval_out SELECT o.id, c.name FROM orders o JOIN customers c
  ON o.cust = c.id AND c.ts BETWEEN o.ts - INTERVAL '2' SECOND AND o.ts + INTERVAL '2' SECOND;
INSERT INTO ids SELECT id FROM orders UNION ALL SELECT id FROM customers;`)
	expect(t, "inner join", sorted(h.rows("inner_out")), []string{"+I[o1, Ann]", "+I[o2, Bob]"})
	expect(t, "interval join", sorted(h.rows("interval_out")), []string{"+I[o1, Ann]"})
	expect(t, "union all", sorted(h.rows("ids")), []string{"+I[c1]", "+I[c2]", "+I[o1]", "+I[o2]", "+I[o3]"})
	final := map[string]bool{}
	for _, r := range h.rows("left_out") {
		final[r[2:]] = strings.HasPrefix(r, "+")
	}
	var kept []string
	for r, in := range final {
		if in {
			kept = append(kept, r)
		}
	}
	expect(t, "left join final table", sorted(kept), []string{"[o1, Ann]", "[o2, Bob]", "[o3, NULL]"})
}

func TestUpdatingQueryIntoAppendSinkIsRejectedClearly(t *testing.T) {
	h := newHarness(t)
	h.file("bills.csv", billsCSV)
	_, err := h.run(billsDDL + `
CREATE TABLE out (account_id STRING, n BIGINT) WITH ('connector' = 'collect-append');
INSERT INTO out SELECT account_id, COUNT(*) FROM bills GROUP BY account_id;`)
	if err == nil {
		t.Fatal("an updating query was accepted by an append-only sink")
	}
	for _, want := range []string{`line 6:1`, `table sink "out"`, `only accepts inserts`, `GroupAggregate(groupBy=[account_id])`, "hint:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestErrorsNamePositions(t *testing.T) {
	h := newHarness(t)
	h.file("bills.csv", billsCSV)
	cases := map[string]string{
		billsDDL + "CREATE TABLE o (a STRING) WITH ('connector' = 'collect');\nINSERT INTO o SELECT acount_id FROM bills;": "line 5:",
		billsDDL + "CREATE TABLE o (a STRING) WITH ('connector' = 'collect');\nINSERT INTO o SELECT x FROM bils;":          `did you mean "bills"`,
		"CREATE TABLE t (a INT) WITH ('connector' = 'collect');\nINSERT INTO t SELEC a FROM t;":                            "line 2:",
	}
	for script, want := range cases {
		_, err := h.run(script)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("script %q: error %v, want it to contain %q", script, err, want)
		}
	}
}

func TestExplainChangelogMode(t *testing.T) {
	h := newHarness(t)
	h.file("bills.csv", billsCSV)
	s := h.session()
	out := &bytes.Buffer{}
	s.Out = out
	err := s.Execute(strings.ReplaceAll(billsDDL, "$DIR", h.dir) + `
EXPLAIN CHANGELOG_MODE SELECT account_id, COUNT(*) FROM bills GROUP BY account_id;`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GroupAggregate(groupBy=[account_id], select=[COUNT(*)]), changelogMode=[I,UB,UA]",
		"TableSourceScan(table=[bills], fields=[account_id, amount, ts]), changelogMode=[I]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("EXPLAIN output lacks %q:\n%s", want, out)
		}
	}
}
