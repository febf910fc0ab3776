package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/examples/billing/pipeline"
	"github.com/weirstream/weir/internal/testsvc"
)

// The acceptance run of the billing job: examples/billing/billing.sql on
// the real Kafka and MariaDB, 200,000 bills with 5 % duplicates, at least
// 20 SIGKILLs of the `weir run` process at random moments, each followed by
// a restart with --restore latest. account_totals must equal the ground
// truth exactly and XA RECOVER must be empty.
func TestBillingSQLExactlyOnceThrough20Kills(t *testing.T) {
	brokers, dsn := testsvc.Kafka(t), testsvc.MySQL(t)
	bills := 200000
	if testing.Short() {
		bills = 20000
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dir := t.TempDir()
	suffix := fmt.Sprint(time.Now().UnixNano())
	topic, table := "bills-"+suffix, "account_totals_"+suffix

	events, dups := pipeline.Generate(pipeline.GenOptions{Bills: bills, Accounts: 1000, DupRate: 0.05, DupDelay: 20000,
		Spread: 5 * time.Second, Seed: 2026})
	if err := ProduceBills(ctx, brokers, topic, 3, events); err != nil {
		t.Fatal(err)
	}
	truth := filepath.Join(dir, "truth.csv")
	if err := os.WriteFile(truth, []byte(pipeline.FormatTruth(pipeline.Truth(events))), 0o644); err != nil {
		t.Fatal(err)
	}
	createMySQLTotals(t, dsn, table)
	script := billingScript(t, dir, topic, table)

	t.Setenv("WEIR_KAFKA_BROKERS", brokers)
	t.Setenv("WEIR_MYSQL_URL", "jdbc:mysql://"+mysqlHostPort(dsn)+"/weir")
	t.Setenv("WEIR_BILLING_CHECKPOINTS", filepath.Join(dir, "checkpoints"))
	self, _ := os.Executable()
	var out bytes.Buffer
	// Kills come 0.3–1 s after each start; one subtask per operator and
	// checkpoints every 250 ms keep the job long enough for 20 of them.
	f := chaosFlags{kills: 20, minDelay: 300 * time.Millisecond, maxDelay: time.Second, seed: 42,
		truth: truth, table: table, mysqlDSN: dsn}
	err := runChaos(ctx, &out, f, []string{self, "run", script, "-q",
		"-D", "execution.checkpointing.interval=250ms", "-D", "parallelism.default=1"})
	t.Logf("%d bills (%d duplicates)\n%s", len(events), dups, out.String())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "killed with SIGKILL"); n < 20 && !testing.Short() {
		t.Fatalf("only %d kills happened; the job finished too early for the acceptance run", n)
	}
}

func billingScript(t *testing.T, dir, topic, table string) string {
	src, err := os.ReadFile("../../examples/billing/billing.sql")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "'topic' = 'bills'", "'topic' = '"+topic+"'", 1)
	s = strings.Replace(s, "'table-name' = 'account_totals'", "'table-name' = '"+table+"'", 1)
	path := filepath.Join(dir, "billing.sql")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func createMySQLTotals(t *testing.T, dsn, table string) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec("CREATE TABLE " + table + " (account_id VARCHAR(64) PRIMARY KEY, total DECIMAL(38,2) NOT NULL, bill_count BIGINT NOT NULL)")
	if err != nil {
		t.Fatal(err)
	}
}

// mysqlHostPort reads host:port out of a go-sql-driver DSN.
func mysqlHostPort(dsn string) string {
	if i := strings.Index(dsn, "tcp("); i >= 0 {
		rest := dsn[i+4:]
		return rest[:strings.Index(rest, ")")]
	}
	return "127.0.0.1:3306"
}
