package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// settleEvery is how often the settling run's table is compared.
const settleEvery = 200 * time.Millisecond

// settleRun runs an unbounded job once more, after its kills, until its
// table equals the truth (or f.settle passed), then stops it with SIGTERM
// and a savepoint: a stop with a savepoint commits the sink's
// transactions, where a plain cancel could leave the last checkpoint's
// prepared ones behind. The verdict itself comes after, from
// verifyTotals.
func settleRun(ctx context.Context, out io.Writer, f chaosFlags, name string, args []string, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "weir-chaos-savepoint-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	args = append(append([]string(nil), args...), "--savepoint-on-stop", dir)
	cmd, done, err := startGroup(ctx, name, args, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	settled, ended, err := waitSettled(ctx, f, done)
	if ended {
		return fmt.Errorf("VERDICT: FAIL — the settling run of %s ended by itself: %v", name, err)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	werr := <-done
	if err != nil {
		return err
	}
	var ee *exec.ExitError
	if werr != nil && !(errors.As(werr, &ee) && ee.ExitCode() == 128+int(syscall.SIGTERM)) {
		return fmt.Errorf("%s stopped with a savepoint on SIGTERM: %w", name, werr)
	}
	if !settled {
		fmt.Fprintf(out, "%s did not equal %s within %v; stopped\n", f.table, f.truthName(), f.settle)
		return nil // verifyTotals says how it differs
	}
	fmt.Fprintf(out, "%s equalled %s %.1fs into the settling run; stopped with a savepoint\n",
		f.table, f.truthName(), time.Since(start).Seconds())
	return nil
}

// waitSettled compares the table with the truth every settleEvery until
// they are equal (settled), the run ends (ended, with its error) or
// f.settle passes.
func waitSettled(ctx context.Context, f chaosFlags, done <-chan error) (settled, ended bool, err error) {
	deadline := time.After(f.settle)
	for {
		select {
		case err := <-done:
			return false, true, err
		case <-deadline:
			return false, false, nil
		case <-ctx.Done():
			return false, false, ctx.Err()
		case <-time.After(settleEvery):
		}
		want, err := wantTotals(f)
		if err != nil {
			return false, false, err
		}
		got, err := readTable(ctx, f)
		if err == nil && diffTotals(nil, got, want) == 0 {
			return true, false, nil
		}
	}
}

// readTable reads the table the job writes, without the check for
// prepared transactions.
func readTable(ctx context.Context, f chaosFlags) (map[string]string, error) {
	if f.postgresDSN != "" {
		return pgQueryTotals(ctx, f.postgresDSN, "SELECT account_id, total::text, bill_count FROM "+f.table)
	}
	db, err := openVerifyDB(f)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return queryTotals(db, f.table)
}

// truthName names what the table is compared with.
func (f chaosFlags) truthName() string {
	if f.sourceMySQL != "" || f.sourcePostgres != "" {
		return "the totals of " + f.sourceTable
	}
	return f.truth
}

// wantTotals is the truth: the --truth CSV, or the totals recomputed from
// the source table's content now.
func wantTotals(f chaosFlags) (map[string]string, error) {
	q := "SELECT account_id, SUM(amount), COUNT(*) FROM " + f.sourceTable + " GROUP BY account_id"
	switch {
	case f.sourcePostgres != "":
		return pgQueryTotals(context.Background(), f.sourcePostgres,
			"SELECT account_id, SUM(amount)::text, COUNT(*) FROM "+f.sourceTable+" GROUP BY account_id")
	case f.sourceMySQL != "":
		db, err := sql.Open("mysql", f.sourceMySQL)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		return totalsOf(db, q)
	}
	return readTruth(f.truth)
}

// pgQueryTotals reads the rows (account_id, total as text, count) of query.
func pgQueryTotals(ctx context.Context, dsn, query string) (map[string]string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	return pgRows(ctx, conn, query)
}
