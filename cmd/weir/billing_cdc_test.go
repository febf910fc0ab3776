package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/weirstream/weir/examples/billing/cdcbills"
	"github.com/weirstream/weir/internal/testsvc"
)

// cdcBilling is the billing case fed by a CDC source: a bills table that a
// writer changes while `weir run` captures it and totals it per account
// into a table of the same database exactly once.
type cdcBilling struct {
	t             *testing.T
	dir           string
	db            *sql.DB
	bills, totals string
	rows          int
	script        string
	flags         chaosFlags
}

// newMySQLCDCBilling: bills in MariaDB captured by mysql-cdc (two
// subtasks, the snapshot split into key ranges of 1,000 rows), totals in
// MariaDB through XA.
func newMySQLCDCBilling(t *testing.T, rows int) *cdcBilling {
	dsn := testsvc.MySQL(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	r := newCDCBilling(t, "mysql", dsn, "bills_cdc", rows, cdcbills.MySQL)
	host, port, _ := strings.Cut(cfg.Addr, ":")
	lo := 200_000 + rand.IntN(1_000_000)*16
	source := fmt.Sprintf(`'connector' = 'mysql-cdc', 'hostname' = '%s', 'port' = '%s', 'username' = '%s',
  'password' = '%s', 'database-name' = '%s', 'table-name' = '%s', 'server-id' = '%d-%d',
  'scan.incremental.snapshot.chunk.size' = '1000', 'server-time-zone' = 'UTC'`,
		host, port, cfg.User, cfg.Passwd, cfg.DBName, r.bills, lo, lo+3)
	r.write(source, "jdbc:mysql://"+cfg.Addr+"/"+cfg.DBName)
	r.flags.mysqlDSN, r.flags.sourceMySQL = dsn, dsn
	return r
}

// newPostgresCDCBilling: bills in PostgreSQL captured by postgres-cdc
// (logical replication, pgoutput), totals in PostgreSQL through prepared
// transactions.
func newPostgresCDCBilling(t *testing.T, rows int) *cdcBilling {
	pc := testsvc.PostgresCDCTable(t, "bills_cdc") // the table is made below; this names it and its slot and cleans up
	cfg, err := pgconn.ParseConfig(pc.DSN)
	if err != nil {
		t.Fatal(err)
	}
	r := newCDCBilling(t, "pgx", pc.DSN, pc.Table, rows, cdcbills.Postgres)
	source := fmt.Sprintf(`'connector' = 'postgres-cdc', 'hostname' = '%s', 'port' = '%d', 'username' = '%s',
  'password' = '%s', 'database-name' = '%s', 'schema-name' = 'public', 'table-name' = '%s', 'slot.name' = '%s',
  'decoding.plugin.name' = 'pgoutput'`, cfg.Host, cfg.Port, cfg.User, cfg.Password, cfg.Database, pc.Table, pc.Slot)
	r.write(source, fmt.Sprintf("jdbc:postgresql://%s:%d/%s", cfg.Host, cfg.Port, cfg.Database))
	r.flags.postgresDSN, r.flags.sourcePostgres = pc.DSN, pc.DSN
	return r
}

// newCDCBilling creates the bills table (bills; a prefix on MariaDB, the
// name PostgresCDCTable gave on PostgreSQL) and the totals table.
func newCDCBilling(t *testing.T, driver, dsn, bills string, rows int, d cdcbills.Dialect) *cdcBilling {
	suffix := fmt.Sprintf("%d_%04x", time.Now().UnixNano()%1e9, rand.Uint32()%0xffff)
	if d == cdcbills.MySQL {
		bills += "_" + suffix
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	r := &cdcBilling{t: t, dir: t.TempDir(), db: db, bills: bills, totals: "account_totals_cdc_" + suffix, rows: rows}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP TABLE IF EXISTS " + r.totals)
		_, _ = db.Exec("DROP TABLE IF EXISTS " + r.bills)
		_ = db.Close()
	})
	if err := cdcbills.Create(context.Background(), db, d, r.bills, r.totals, rows); err != nil {
		t.Fatal(err)
	}
	return r
}

// write writes the job's script and sets the verdict's tables.
func (r *cdcBilling) write(source, jdbcURL string) {
	r.script = filepath.Join(r.dir, "billing-cdc.sql")
	if err := os.WriteFile(r.script, []byte(cdcbills.Script(source, jdbcURL, r.totals)), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.flags.table, r.flags.sourceTable, r.flags.seed = r.totals, r.bills, 18
	r.flags.job = "billing-cdc-" + r.totals[len("account_totals_cdc_"):] // only its prepared transactions count
}

// chaos runs the job under `weir chaos` with kills SIGKILLs, minDelay to
// maxDelay after each start, while a writer changes the bills; the writer
// stops after the kills and the last run settles. It returns the report.
func (r *cdcBilling) chaos(ctx context.Context, kills int, minDelay, maxDelay time.Duration) string {
	w := &cdcbills.Writer{DB: r.db, Table: r.bills, MaxID: int64(r.rows), Seed: 18}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	werr := make(chan error, 1)
	go func() { werr <- w.Run(wctx) }()
	f := r.flags
	f.kills, f.minDelay, f.maxDelay, f.settle = kills, minDelay, maxDelay, 2*time.Minute
	stopped := false
	f.beforeSettle = func() {
		stop()
		stopped = true
		if err := <-werr; err != nil {
			r.t.Errorf("writer: %v", err)
		}
	}
	self, _ := os.Executable()
	args := []string{self, "run", r.script, "-q", "--set", "execution.checkpointing.interval=250ms",
		"--set", "parallelism.default=2", "--set", "execution.checkpointing.dir=" + filepath.Join(r.dir, "checkpoints"), "--set", "pipeline.name=" + f.job}
	var out bytes.Buffer
	err := runChaos(ctx, &out, f, args)
	if !stopped {
		stop()
		<-werr
	}
	r.t.Logf("%d bills at the start, %d writer transactions\n%s", r.rows, w.Txns, out.String())
	if err != nil {
		r.t.Fatal(err)
	}
	return out.String()
}

// The billing case with its bills captured by mysql-cdc from MariaDB
// while a writer inserts, updates (amounts and accounts) and deletes
// bills: `weir run` is killed with SIGKILL 3 times and restored from its
// latest checkpoint each time; after the kills the writer stops and the
// last run is stopped with a savepoint once the MariaDB totals equal the
// totals recomputed from the bills table. They must be equal, and XA
// RECOVER empty. bench/cdcchaos runs the same with more kills.
func TestBillingMySQLCDCThroughKills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := newMySQLCDCBilling(t, 20000)
	r.chaos(ctx, 3, 300*time.Millisecond, 1200*time.Millisecond)
}

// The same with postgres-cdc from PostgreSQL into PostgreSQL (prepared
// transactions; pg_prepared_xacts must end empty).
func TestBillingPostgresCDCThroughKills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := newPostgresCDCBilling(t, 20000)
	r.chaos(ctx, 3, 300*time.Millisecond, 1200*time.Millisecond)
}
