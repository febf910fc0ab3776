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

	"github.com/weirstream/weir/connector/jdbc"
	"github.com/weirstream/weir/internal/testsvc"
)

// The verdict's check for prepared transactions on a shared MariaDB: with
// --job, a lingering XA branch of that job's sink fails it, named; another
// job's is named as a note and does not; without --job, every branch on
// the server counts.
func TestChaosVerdictCountsTheJobsPreparedTransactions(t *testing.T) {
	dsn := testsvc.MySQL(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	suffix := fmt.Sprint(time.Now().UnixNano())
	table, scratch := "verdict_totals_"+suffix, "verdict_scratch_"+suffix
	createMySQLTotals(t, dsn, table)
	mustExec(t, db, "INSERT INTO "+table+" VALUES ('acct-1', 12.50, 2)")
	mustExec(t, db, "CREATE TABLE "+scratch+" (id INT PRIMARY KEY)")
	ours := jdbc.XIDPrefix("billing-verdict", table) + ":0:3:rabc123"
	other := jdbc.XIDPrefix("another-job", table) + ":0:3:rabc123"
	t.Cleanup(func() {
		for _, x := range []string{ours, other} {
			_, _ = db.Exec("XA ROLLBACK '" + x + "'")
		}
		_, _ = db.Exec("DROP TABLE IF EXISTS " + scratch)
		_, _ = db.Exec("DROP TABLE IF EXISTS " + table)
	})
	prepareDetached(t, dsn, ours, "INSERT INTO "+scratch+" VALUES (1)")
	prepareDetached(t, dsn, other, "INSERT INTO "+scratch+" VALUES (2)")

	truth := filepath.Join(t.TempDir(), "truth.csv")
	if err := os.WriteFile(truth, []byte("account_id,total,count\nacct-1,12.50,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := chaosFlags{truth: truth, table: table, mysqlDSN: dsn, job: "billing-verdict"}
	verdict := func(f chaosFlags) (string, error) {
		var out bytes.Buffer
		err := verifyTotals(&out, f)
		return out.String(), err
	}
	out, err := verdict(f)
	if err == nil || !strings.Contains(err.Error(), `of job "billing-verdict"`) || !strings.Contains(err.Error(), ours) ||
		strings.Contains(err.Error(), other) {
		t.Fatalf("with the job's branch prepared: %v\n%s", err, out)
	}
	if !strings.Contains(out, "of other jobs on the server, left alone: ") || !strings.Contains(out, other) {
		t.Errorf("the other job's branch is not named:\n%s", out)
	}

	xaRollback(t, db, ours)
	if out, err = verdict(f); err != nil || !strings.Contains(out, other) {
		t.Fatalf("with only another job's branch prepared: %v\n%s", err, out)
	}
	f.job = ""
	if out, err = verdict(f); err == nil || !strings.Contains(err.Error(), "on the server") || !strings.Contains(err.Error(), other) {
		t.Fatalf("without --job, another job's branch: %v\n%s", err, out)
	}
}

// prepareDetached prepares XA branch xid doing stmt on a session of its
// own, then closes that session: the branch stays prepared on the server,
// as a killed job's does.
func prepareDetached(t *testing.T, dsn, xid, stmt string) {
	t.Helper()
	xadb, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer xadb.Close()
	conn, err := xadb.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"XA START '" + xid + "'", stmt, "XA END '" + xid + "'", "XA PREPARE '" + xid + "'"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// xaRollback rolls back a detached branch, waiting while the server still
// processes the disconnect of the session that prepared it (unknown xid).
func xaRollback(t *testing.T, db *sql.DB, xid string) {
	t.Helper()
	var err error
	for i := 0; i < 100; i++ {
		if _, err = db.Exec("XA ROLLBACK '" + xid + "'"); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("XA ROLLBACK %s: %v", xid, err)
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
