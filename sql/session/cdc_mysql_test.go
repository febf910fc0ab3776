package session

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/weirstream/weir/internal/testsvc"
)

// myCDCTable is a MariaDB table, in a database of its own, captured by
// mysql-cdc in a test, with the WITH options that name it.
type myCDCTable struct {
	db          *sql.DB
	dbName      string
	withOptions string
}

func newMyCDCTable(t *testing.T, rows int) *myCDCTable {
	t.Helper()
	dsn := testsvc.MySQL(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = ""
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	c := &myCDCTable{db: db, dbName: fmt.Sprintf("cdcsql_%d_%04x", time.Now().UnixNano()%1e9, rand.Uint32()%0xffff)}
	for _, q := range []string{
		"CREATE DATABASE " + c.dbName,
		"CREATE TABLE " + c.dbName + ".bills (id BIGINT PRIMARY KEY, k INT NOT NULL, amount BIGINT NOT NULL)",
		fmt.Sprintf("INSERT INTO %s.bills SELECT seq, seq %% 11, seq FROM %s.seq_1_to_%d", c.dbName, c.dbName, rows),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP DATABASE IF EXISTS " + c.dbName)
		_ = db.Close()
	})
	host, port, _ := strings.Cut(cfg.Addr, ":")
	lo := 200_000 + rand.IntN(1_000_000)*16
	c.withOptions = fmt.Sprintf(`'connector' = 'mysql-cdc', 'hostname' = '%s', 'port' = '%s', 'username' = '%s',
  'password' = '%s', 'database-name' = '%s', 'table-name' = 'bills', 'server-id' = '%d-%d',
  'scan.incremental.snapshot.chunk.size' = '400', 'server-time-zone' = 'UTC'`, host, port, cfg.User, cfg.Passwd, c.dbName, lo, lo+3)
	return c
}

// write runs n transactions of inserts, updates (of the group key too) and
// deletes on the table.
func (c *myCDCTable) write(t *testing.T, n int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	next := int64(1_000_000 * seed) // each writer its own new ids
	for range n {
		tx, err := c.db.Begin()
		if err != nil {
			t.Error(err)
			return
		}
		for range 1 + rng.IntN(3) {
			id := 1 + rng.IntN(2000)
			var q string
			switch op := rng.IntN(10); {
			case op < 3:
				next++
				q = fmt.Sprintf("INSERT INTO %s.bills VALUES (%d, %d, %d)", c.dbName, next, rng.IntN(11), rng.IntN(1000))
			case op < 6:
				q = fmt.Sprintf("UPDATE %s.bills SET amount = amount + %d WHERE id = %d", c.dbName, 1+rng.IntN(99), id)
			case op < 8:
				q = fmt.Sprintf("UPDATE %s.bills SET k = %d WHERE id = %d", c.dbName, rng.IntN(11), id)
			default:
				q = fmt.Sprintf("DELETE FROM %s.bills WHERE id = %d", c.dbName, id)
			}
			if _, err := tx.Exec(q); err != nil {
				_ = tx.Rollback()
				t.Error(err)
				return
			}
		}
		if err := tx.Commit(); err != nil {
			t.Error(err)
			return
		}
	}
}

// totals is SELECT k, SUM(amount), COUNT(*) … GROUP BY k as "k:sum:count".
func (c *myCDCTable) totals(t *testing.T) string {
	t.Helper()
	rows, err := c.db.Query("SELECT k, SUM(amount), COUNT(*) FROM " + c.dbName + ".bills GROUP BY k ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k, sum, cnt int64
		if err := rows.Scan(&k, &sum, &cnt); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:%d:%d", k, sum, cnt))
	}
	return strings.Join(out, " ")
}

// A bills table in MariaDB, captured by mysql-cdc on two subtasks (its
// snapshot split into key ranges of 400 rows) while transactions insert,
// update (amounts and group keys) and delete rows, through a GROUP BY
// into MariaDB exactly once (the checkpoint-table strategy: XA's prepared
// transactions of two sink subtasks lock each other's rows in so small a
// table). The job fails once in the snapshot and
// once in the binlog; each restart restores the last checkpoint. The
// totals end equal to the same GROUP BY computed on the source table.
func TestMySQLCDCGroupByExactlyOnceAcrossFailures(t *testing.T) {
	src := newMyCDCTable(t, 2000)
	dsn := testsvc.MySQL(t)
	mdb, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	dst := "cdc_totals_" + src.dbName[len("cdcsql_"):]
	if _, err := mdb.Exec("CREATE TABLE " + dst + " (k BIGINT PRIMARY KEY, total BIGINT, cnt BIGINT)"); err != nil {
		t.Fatal(err)
	}
	defer mdb.Exec("DROP TABLE " + dst)
	script := fmt.Sprintf(`SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '10 ms';
CREATE TABLE bills (id BIGINT, k INT, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH (%s);
CREATE TABLE totals (k BIGINT, total BIGINT, cnt BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'jdbc',
  'url' = '%s', 'table-name' = '%s', 'username' = 'weir', 'password' = 'weir',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.exactly-once.strategy' = 'checkpoint-table');
INSERT INTO totals SELECT k, SUM(amount), COUNT(*) FROM bills GROUP BY k;`, src.withOptions, jdbcURL(t, dsn), dst)
	runThroughTwoFailures(t, script, cdcRun{
		connector: "mysql-cdc",
		name:      "mycdc" + src.dbName[len("cdcsql_"):len("cdcsql_")+6],
		write: func(ctx context.Context, fs *faultySource) {
			// Each subtask's reader fails in the binlog after 100 rows of
			// it: the writer goes on until both failures happened.
			for seed := uint64(1); seed == 1 || (fs.failures.Load() < 2 && seed < 40); seed++ {
				src.write(t, 100, seed)
			}
		},
		final: func() { src.write(t, 100, 99) },
		want:  func() string { return src.totals(t) },
		got:   func() string { return mariaTotals(t, mdb, dst) },
	})
}
