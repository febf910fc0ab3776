package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirstream/weir/connector/sqlite"
	"github.com/weirstream/weir/examples/billing/pipeline"
)

type demoFlags struct {
	bills, accounts int
	dupRate         float64
	seed            int64
	keep            bool
	kills           int
}

func newDemoCommand() *cobra.Command {
	demo := &cobra.Command{Use: "demo", Short: "Run a demo job end to end with no setup"}
	var f demoFlags
	billing := &cobra.Command{
		Use:   "billing",
		Short: "Bills with duplicates → dedup → per-account totals, exactly once through a SIGKILL",
		Long: `Starts an embedded Kafka-protocol broker and an embedded SQLite database, produces bills
with duplicates, runs the billing job as a child process, kills it with SIGKILL in the
middle, restarts it from the latest checkpoint, and compares account_totals with the
ground truth computed directly from the bills.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBillingDemo(cmd.Context(), cmd.OutOrStdout(), f) },
	}
	fl := billing.Flags()
	fl.IntVar(&f.bills, "bills", 20000, "distinct bills")
	fl.IntVar(&f.accounts, "accounts", 100, "accounts")
	fl.Float64Var(&f.dupRate, "dup-rate", 0.05, "fraction of bills sent twice")
	fl.Int64Var(&f.seed, "seed", 1, "random seed")
	fl.IntVar(&f.kills, "kills", 1, "how many times to SIGKILL the job")
	fl.BoolVar(&f.keep, "keep", false, "keep the demo's working directory")
	demo.AddCommand(billing, newBillingChildCommand())
	return demo
}

// demoEnv is the embedded world of the demo.
type demoEnv struct {
	out     io.Writer
	dir     string
	broker  *kfake.Cluster
	brokers string
	dbPath  string
	start   time.Time
}

func (e *demoEnv) step(format string, args ...any) {
	fmt.Fprintf(e.out, "[%5.1fs] %s\n", time.Since(e.start).Seconds(), fmt.Sprintf(format, args...))
}

func runBillingDemo(ctx context.Context, out io.Writer, f demoFlags) error {
	env, err := newDemoEnv(out)
	if err != nil {
		return err
	}
	defer env.close(f.keep)
	events, dups := pipeline.Generate(pipeline.GenOptions{Bills: f.bills, Accounts: f.accounts, DupRate: f.dupRate,
		DupDelay: 2000, Spread: 5 * time.Second, Seed: f.seed})
	if err := ProduceBills(ctx, env.brokers, "bills", 3, events); err != nil {
		return err
	}
	env.step("produced %d bill events (%d duplicates, up to 2000 events apart) over %d accounts into topic bills",
		len(events), dups, f.accounts)
	if err := createTotalsTable(env.dbPath); err != nil {
		return err
	}
	if err := env.runWithKills(ctx, f.kills); err != nil {
		return err
	}
	return env.verdict(events, dups)
}

func newDemoEnv(out io.Writer) (*demoEnv, error) {
	dir, err := os.MkdirTemp("", "weir-demo-billing-")
	if err != nil {
		return nil, err
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "bills"))
	if err != nil {
		return nil, fmt.Errorf("embedded broker: %w", err)
	}
	e := &demoEnv{out: out, dir: dir, broker: c, brokers: strings.Join(c.ListenAddrs(), ","),
		dbPath: filepath.Join(dir, "billing.db"), start: time.Now()}
	e.step("embedded Kafka-protocol broker on %s; SQLite database %s", e.brokers, e.dbPath)
	return e, nil
}

func (e *demoEnv) close(keep bool) {
	e.broker.Close()
	if keep {
		fmt.Fprintf(e.out, "working directory kept: %s\n", e.dir)
		return
	}
	os.RemoveAll(e.dir)
}

func createTotalsTable(path string) error {
	db, err := sqlite.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE IF NOT EXISTS account_totals (account_id TEXT PRIMARY KEY, total TEXT NOT NULL, bill_count INTEGER NOT NULL)`)
	return err
}

// runWithKills runs the job as a child process; the first `kills` runs are
// killed with SIGKILL once a checkpoint has completed after some progress;
// the last run is left to finish.
func (e *demoEnv) runWithKills(ctx context.Context, kills int) error {
	for attempt := 0; ; attempt++ {
		restore := ""
		if attempt > 0 {
			restore = "latest"
		}
		kill := attempt < kills
		done, err := e.runChild(ctx, restore, kill)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// runChild starts the job and follows its progress lines. With kill it
// sends SIGKILL after the second completed checkpoint; it reports whether
// the job finished.
func (e *demoEnv) runChild(ctx context.Context, restore string, kill bool) (bool, error) {
	self, err := os.Executable()
	if err != nil {
		return false, err
	}
	args := []string{"demo", "billing-child", "--brokers", e.brokers, "--db", e.dbPath,
		"--checkpoints", filepath.Join(e.dir, "checkpoints")}
	if restore != "" {
		args = append(args, "--restore", restore)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stderr = newPrefixWriter(filepath.Join(e.dir, "job.log"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return false, err
	}
	if err := cmd.Start(); err != nil {
		return false, err
	}
	what := "started"
	if restore != "" {
		what = "restarted with --restore latest"
	}
	e.step("job %s (pid %d)", what, cmd.Process.Pid)
	return e.follow(cmd, stdout, kill)
}

func (e *demoEnv) follow(cmd *exec.Cmd, stdout io.Reader, kill bool) (bool, error) {
	sc := bufio.NewScanner(stdout)
	checkpoints, killed := 0, false
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "restored":
			e.step("  restored checkpoint %s: sources rewound to its offsets, state and pending commits restored", fields[1])
		case "checkpoint":
			checkpoints++
			e.step("  checkpoint %s completed (%s bills read by this run)", fields[1], fields[2])
			if kill && checkpoints >= 2 && !killed {
				killed = true
				_ = cmd.Process.Signal(syscall.SIGKILL)
				e.step("  ✖ killed the job with SIGKILL (no shutdown, no flush)")
			}
		case "finished":
			e.step("  job finished")
		}
	}
	err := cmd.Wait()
	if killed {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("the job failed: %w (log: %s)", err, filepath.Join(e.dir, "job.log"))
	}
	return true, nil
}

// verdict compares account_totals with the ground truth.
func (e *demoEnv) verdict(events []pipeline.Bill, dups int) error {
	got, err := readTotals(e.dbPath)
	if err != nil {
		return err
	}
	truth := pipeline.Truth(events)
	var lost, double, wrongAccounts int64
	for id, want := range truth {
		g := got[id]
		if g.Count < want.Count {
			lost += want.Count - g.Count
		} else if g.Count > want.Count {
			double += g.Count - want.Count
		}
		if g.Count != want.Count || !g.Total.Equal(want.Total) {
			wrongAccounts++
		}
	}
	for id := range got {
		if _, ok := truth[id]; !ok {
			wrongAccounts++
		}
	}
	fmt.Fprintf(e.out, "\nbills: %d distinct (%d events), duplicates dropped: %d, accounts: %d\n", len(events)-dups, len(events), dups, len(truth))
	fmt.Fprintf(e.out, "lost: %d, double-counted: %d, accounts wrong: %d, time: %.1fs\n", lost, double, wrongAccounts, time.Since(e.start).Seconds())
	if wrongAccounts > 0 {
		return fmt.Errorf("VERDICT: FAIL — account_totals differs from the ground truth")
	}
	fmt.Fprintln(e.out, "VERDICT: OK — account_totals equals the ground truth exactly, through a SIGKILL")
	return nil
}

func readTotals(path string) (map[string]pipeline.Total, error) {
	db, err := sqlite.Open(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT account_id, total, bill_count FROM account_totals`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]pipeline.Total{}
	for rows.Next() {
		var t pipeline.Total
		var total string
		if err := rows.Scan(&t.AccountID, &total, &t.Count); err != nil {
			return nil, err
		}
		if t.Total, err = decimal.NewFromString(total); err != nil {
			return nil, err
		}
		out[t.AccountID] = t
	}
	return out, rows.Err()
}

// prefixWriter appends the child's log to a file.
func newPrefixWriter(path string) io.Writer {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return io.Discard
	}
	return f
}
