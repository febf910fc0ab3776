package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/sqlite"
)

// chaosTotals writes a truth CSV and an SQLite table that matches it, so the
// only thing a verdict can fail on is the number of kills.
func chaosTotals(t *testing.T, kills int) chaosFlags {
	dir := t.TempDir()
	truth := filepath.Join(dir, "truth.csv")
	if err := os.WriteFile(truth, []byte("account_id,total,count\nacct-1,12.50,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(filepath.Join(dir, "totals.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE account_totals (account_id TEXT PRIMARY KEY, total TEXT, bill_count INTEGER)",
		"INSERT INTO account_totals VALUES ('acct-1', '12.5', 2)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return chaosFlags{kills: kills, minDelay: 50 * time.Millisecond, maxDelay: 50 * time.Millisecond,
		truth: truth, table: "account_totals", sqlite: filepath.Join(dir, "totals.db"), seed: 1}
}

// A job that ends before the first kill is not a chaos run: the verdict
// says how many kills happened and fails (it said VERDICT: OK after 0 of 5).
func TestChaosVerdictFailsWhenTheJobEndsBeforeItsKills(t *testing.T) {
	f := chaosTotals(t, 5)
	var out bytes.Buffer
	err := runChaos(context.Background(), &out, f, []string{"true"})
	if err == nil || !strings.HasPrefix(err.Error(), "VERDICT: FAIL — only 0 of 5 kills happened: the job finished after ") {
		t.Fatalf("err = %v\nout:\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "VERDICT: OK") {
		t.Fatalf("an OK verdict after 0 kills:\n%s", out.String())
	}
}

// Every requested kill happened: OK, and the verdict counts them. The job
// sleeps until killed, and ends at once when restarted (--restore latest).
func TestChaosVerdictCountsTheKills(t *testing.T) {
	f := chaosTotals(t, 1)
	var out bytes.Buffer
	err := runChaos(context.Background(), &out, f, []string{"sh", "-c", `test "$1" = --restore || sleep 60`, "job"})
	if err != nil {
		t.Fatalf("%v\nout:\n%s", err, out.String())
	}
	want := "run 1 killed with SIGKILL after 50ms\nrun 2 finished after 1 kills ("
	if !strings.HasPrefix(out.String(), want) {
		t.Fatalf("out:\n%s\nwant prefix:\n%s", out.String(), want)
	}
	if !strings.Contains(out.String(), "account_totals equals "+f.truth+" exactly (1 accounts)\n"+
		"VERDICT: OK — account_totals equals "+f.truth+" exactly, through 1 of 1 kills\n") {
		t.Fatalf("out:\n%s", out.String())
	}
}
