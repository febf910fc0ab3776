package session

import (
	"strings"
	"testing"
)

// debeziumBills are change events on a MySQL table bills(id, account_id,
// amount), as Debezium writes them (no schema envelope): a snapshot row,
// inserts, an update that moves a bill to another account, an update of
// an amount, a delete and its tombstone (an empty line here: Debezium's
// empty value).
const debeziumBills = `{"before":null,"after":{"id":1,"account_id":"acc-1","amount":10.50},"source":{"connector":"mysql","db":"shop","table":"bills","snapshot":"true","file":"mysql-bin.000003","pos":154},"op":"r","ts_ms":1700000000000}
{"before":null,"after":{"id":2,"account_id":"acc-2","amount":1.25},"source":{"connector":"mysql","db":"shop","table":"bills","snapshot":"false","file":"mysql-bin.000003","pos":480},"op":"c","ts_ms":1700000001000}
{"before":null,"after":{"id":3,"account_id":"acc-1","amount":2.00},"source":{"connector":"mysql","db":"shop","table":"bills","snapshot":"false","file":"mysql-bin.000003","pos":812},"op":"c","ts_ms":1700000002000}
{"before":{"id":3,"account_id":"acc-1","amount":2.00},"after":{"id":3,"account_id":"acc-2","amount":2.00},"source":{"connector":"mysql","db":"shop","table":"bills","snapshot":"false","file":"mysql-bin.000003","pos":1140},"op":"u","ts_ms":1700000003000}
{"before":{"id":1,"account_id":"acc-1","amount":10.50},"after":{"id":1,"account_id":"acc-1","amount":12.00},"source":{"connector":"mysql","db":"shop","table":"bills","snapshot":"false","file":"mysql-bin.000003","pos":1470},"op":"u","ts_ms":1700000004000}
{"before":{"id":2,"account_id":"acc-2","amount":1.25},"after":null,"source":{"connector":"mysql","db":"shop","table":"bills","snapshot":"false","file":"mysql-bin.000003","pos":1800},"op":"d","ts_ms":1700000005000}

`

const debeziumBillsDDL = `CREATE TABLE bills (id INT, account_id STRING, amount DECIMAL(18, 2))
  WITH ('connector' = 'filesystem', 'path' = '$DIR/bills.json', 'format' = 'debezium-json');
`

// TestDebeziumJSONSourceIsUpdating: a debezium-json table is a changelog,
// so a GROUP BY over it retracts what updates and deletes take back (an
// append-only plan would count every event as a new bill), and a sink
// that takes inserts only refuses the query, naming the source.
func TestDebeziumJSONSourceIsUpdating(t *testing.T) {
	h := newHarness(t)
	h.file("bills.json", debeziumBills)
	h.mustRun(debeziumBillsDDL + `
CREATE TABLE changes (id INT, account_id STRING, amount DECIMAL(18, 2)) WITH ('connector' = 'collect');
CREATE TABLE totals (account_id STRING, total DECIMAL(38, 2), n BIGINT) WITH ('connector' = 'collect');
SET 'parallelism.default' = '1';
INSERT INTO changes SELECT * FROM bills;
INSERT INTO totals SELECT account_id, SUM(amount), COUNT(*) FROM bills GROUP BY account_id;`)
	expect(t, "rows read", h.rows("changes"), []string{
		"+I[1, acc-1, 10.50]", "+I[2, acc-2, 1.25]", "+I[3, acc-1, 2.00]",
		"-U[3, acc-1, 2.00]", "+U[3, acc-2, 2.00]", "-U[1, acc-1, 10.50]", "+U[1, acc-1, 12.00]", "-D[2, acc-2, 1.25]",
	})
	expect(t, "totals", h.rows("totals"), []string{
		"+I[acc-1, 10.50, 1]", "+I[acc-2, 1.25, 1]",
		"-U[acc-1, 10.50, 1]", "+U[acc-1, 12.50, 2]", // bill 3 arrives
		"-U[acc-1, 12.50, 2]", "+U[acc-1, 10.50, 1]", // bill 3 leaves acc-1…
		"-U[acc-2, 1.25, 1]", "+U[acc-2, 3.25, 2]", // …for acc-2
		"-D[acc-1, 10.50, 1]", "+I[acc-1, 12.00, 1]", // bill 1's update: its group empties, then refills
		"-U[acc-2, 3.25, 2]", "+U[acc-2, 2.00, 1]", // bill 2 deleted; the tombstone gives nothing
	})
}

// TestDebeziumJSONFileSinkRoundTrip: an updating GROUP BY written to files
// in debezium-json (-U and -D as op d with the old row, as Flink writes
// them) reads back through a debezium-json source as the same changelog,
// retractions as deletes; an insert-only sink refuses the updating source.
func TestDebeziumJSONFileSinkRoundTrip(t *testing.T) {
	h := newHarness(t)
	h.file("bills.json", debeziumBills)
	h.mustRun(debeziumBillsDDL + `
CREATE TABLE totals (account_id STRING, total DECIMAL(38, 2), n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/totals', 'format' = 'debezium-json');
SET 'parallelism.default' = '1';
INSERT INTO totals SELECT account_id, SUM(amount), COUNT(*) FROM bills GROUP BY account_id;`)
	h.mustRun(`
CREATE TABLE totals (account_id STRING, total DECIMAL(38, 2), n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/totals', 'format' = 'debezium-json');
CREATE TABLE back (account_id STRING, total DECIMAL(38, 2), n BIGINT) WITH ('connector' = 'collect');
SET 'parallelism.default' = '1';
INSERT INTO back SELECT * FROM totals;`)
	expect(t, "read back", h.rows("back"), []string{
		"+I[acc-1, 10.50, 1]", "+I[acc-2, 1.25, 1]", "-D[acc-1, 10.50, 1]", "+I[acc-1, 12.50, 2]",
		"-D[acc-1, 12.50, 2]", "+I[acc-1, 10.50, 1]", "-D[acc-2, 1.25, 1]", "+I[acc-2, 3.25, 2]",
		"-D[acc-1, 10.50, 1]", "+I[acc-1, 12.00, 1]", "-D[acc-2, 3.25, 2]", "+I[acc-2, 2.00, 1]",
	})
	_, err := h.run(debeziumBillsDDL + `
CREATE TABLE copy (id INT, account_id STRING, amount DECIMAL(18, 2)) WITH ('connector' = 'collect-append');
INSERT INTO copy SELECT * FROM bills;`)
	if err == nil || !strings.Contains(err.Error(), "format=[debezium-json]") {
		t.Fatalf("an insert-only sink fed by a debezium-json table: %v", err)
	}
}
