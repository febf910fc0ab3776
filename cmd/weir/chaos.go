package main

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/weirstream/weir/connector/jdbc"
	"github.com/weirstream/weir/connector/sqlite"
	"github.com/weirstream/weir/internal/txncheck"
)

type chaosFlags struct {
	kills              int
	minDelay, maxDelay time.Duration
	seed               int64
	truth, table       string
	mysqlDSN, sqlite   string
	postgresDSN        string
	job, sinkName      string // whose prepared transactions count ("": everyone's)
	// An unbounded job (a CDC source) is checked against the bills table
	// it reads: the totals the verdict wants are recomputed from its
	// content at the end, and the run after the kills is stopped once the
	// table equals them (settle).
	sourceMySQL, sourcePostgres, sourceTable string
	settle                                   time.Duration
	// beforeSettle, when set, is called after the kills, before the
	// settling run starts (a test stops its writer there).
	beforeSettle func()
	// parallelism, when set, is each run's parallelism.default, cycled
	// over the runs: a restore at another parallelism, as a Flink user
	// rescales a job from a checkpoint.
	parallelism []int
	// killWhen, when set, is asked (run 0-based) whether a run that is due
	// to be killed may be killed now (see killPlan.when).
	killWhen func(run int) bool
	// logs, when set, is the directory each run's stderr goes to
	// (run-N.log) instead of chaos's own stderr.
	logs string
}

func newChaosCommand() *cobra.Command {
	var f chaosFlags
	cmd := &cobra.Command{
		Use:   "chaos [flags] -- COMMAND [ARGS…]",
		Short: "Kill a job with SIGKILL at random moments, restart it, and verify its output",
		Long: `Runs COMMAND (e.g. weir run billing.sql) as a child process and kills it with SIGKILL
--kills times, each after a random delay between --min-delay and --max-delay; every restart
appends --restore latest-or-empty (a kill may come before the first checkpoint). With
--parallelism 2,3,1 the runs take those parallelisms in turn (-D parallelism.default=N is
appended to every run's arguments, as weir run reads it), so that each restore rescales the job
from a checkpoint taken at another parallelism (Flink's rescaling on restore; with unaligned
checkpoints their in-flight rows are re-partitioned too). --logs DIR writes each run's stderr
to DIR/run-N.log instead of chaos's own stderr (weir run without -q logs there which
checkpoint it restored). After the last run finishes, the --table (account_id, total,
bill_count) in the --mysql or --sqlite database is compared with the --truth CSV written by
weir tool gen-bills, and no prepared transaction of the job may be left (XA RECOVER on
MySQL/MariaDB, pg_prepared_xacts on PostgreSQL). With --job, only the transactions of that job's
sink count (other jobs' on a shared server are named and left alone); without it, every prepared
transaction on the server counts. The verdict is OK
only when every one of the --kills happened: a job that finishes before its last kill fails
the verdict (lower the delays, give it more input, or run it unbounded with --settle).

An unbounded job never finishes: give --settle. The run after the kills is then stopped with
SIGTERM (--savepoint-on-stop is appended, so the stop commits the sink's transactions) as soon
as --table equals the truth, or after --settle; the verdict compares them once more. The truth
is the --truth CSV (a Kafka source without 'scan.bounded.mode'), or, for a CDC source, the
totals recomputed from the bills table (bill_id, account_id, amount) it captures: give
--source-mysql or --source-postgres with --source-table. Whatever changes the source must stop
before that run: chaos prints "settling" first.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runChaos(cmd.Context(), cmd.OutOrStdout(), f, args)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.kills, "kills", 20, "number of SIGKILLs")
	fl.DurationVar(&f.minDelay, "min-delay", time.Second, "shortest run before a kill")
	fl.DurationVar(&f.maxDelay, "max-delay", 4*time.Second, "longest run before a kill")
	fl.Int64Var(&f.seed, "seed", time.Now().UnixNano(), "random seed for the kill times")
	fl.StringVar(&f.truth, "truth", "truth.csv", "expected totals (weir tool gen-bills --truth)")
	fl.StringVar(&f.table, "table", "account_totals", "table to verify")
	fl.StringVar(&f.mysqlDSN, "mysql", "", "MySQL/MariaDB DSN of the table (go-sql-driver form)")
	fl.StringVar(&f.sqlite, "sqlite", "", "SQLite file of the table")
	fl.StringVar(&f.postgresDSN, "postgres", "", "PostgreSQL DSN of the table (postgres://…)")
	fl.StringVar(&f.job, "job", "", "the job's pipeline.name: only its prepared transactions count (default: all on the server)")
	fl.StringVar(&f.sinkName, "sink-name", "", "the JDBC sink's sink.name (default: --table)")
	fl.StringVar(&f.sourceMySQL, "source-mysql", "", "MySQL/MariaDB DSN of the source table the truth is recomputed from")
	fl.StringVar(&f.sourcePostgres, "source-postgres", "", "PostgreSQL DSN of the source table the truth is recomputed from")
	fl.StringVar(&f.sourceTable, "source-table", "bills", "source table (bill_id, account_id, amount) of --source-mysql/--source-postgres")
	fl.DurationVar(&f.settle, "settle", 0, "unbounded job: stop the last run once the table equals the truth, waiting at most this long")
	fl.IntSliceVar(&f.parallelism, "parallelism", nil, "parallelism of the runs, cycled (e.g. 2,3,1): appends -D parallelism.default=N to each run (default: the job's own)")
	fl.StringVar(&f.logs, "logs", "", "write each run's stderr to DIR/run-N.log instead of chaos's stderr")
	return cmd
}

func runChaos(ctx context.Context, out io.Writer, f chaosFlags, command []string) error {
	kills, took, err := chaosRuns(ctx, out, f, command)
	if err != nil {
		return err
	}
	if err := verifyTotals(out, f); err != nil {
		return err
	}
	return killVerdict(out, f, kills, took)
}

// chaosRuns runs the command until a run ends by itself, killing the first
// f.kills runs; it returns how many kills happened and how long it took.
func chaosRuns(ctx context.Context, out io.Writer, f chaosFlags, command []string) (int, time.Duration, error) {
	if err := f.validateRuns(); err != nil {
		return 0, 0, err
	}
	rnd := rand.New(rand.NewSource(f.seed))
	start := time.Now()
	kills := 0
	for run := 0; ; run++ {
		args := f.runArgs(command, run)
		stderr, closeLog, err := f.runStderr(run)
		if err != nil {
			return kills, time.Since(start), err
		}
		if f.settle > 0 && kills == f.kills {
			if f.beforeSettle != nil {
				f.beforeSettle()
			}
			fmt.Fprintf(out, "run %d%s: settling after %d kills\n", run+1, f.atParallelism(run), kills)
			err := settleRun(ctx, out, f, command[0], args, stderr)
			return kills, time.Since(start), errors.Join(err, closeLog())
		}
		delay := f.minDelay + time.Duration(rnd.Int63n(int64(f.maxDelay-f.minDelay)+1))
		began := time.Now()
		killed, err := runOnce(ctx, command[0], args, stderr, f.killPlan(run, kills, delay))
		if err := errors.Join(err, closeLog()); err != nil {
			return kills, time.Since(start), err
		}
		if !killed {
			fmt.Fprintf(out, "run %d%s finished after %d kills (%.1fs)\n", run+1, f.atParallelism(run), kills, time.Since(start).Seconds())
			return kills, time.Since(start), nil
		}
		kills++
		fmt.Fprintln(out, f.killedLine(run, delay, time.Since(began)))
	}
}

// killedLine reports the kill of run, due after delay, which came after
// lived (later when killWhen held it).
func (f chaosFlags) killedLine(run int, delay, lived time.Duration) string {
	line := fmt.Sprintf("run %d%s killed with SIGKILL after %v", run+1, f.atParallelism(run), delay.Round(time.Millisecond))
	if f.killWhen != nil {
		line += fmt.Sprintf(" (killed at %v: killWhen may hold it)", lived.Round(time.Millisecond))
	}
	return line
}

// validateRuns checks the flags that shape the runs.
func (f chaosFlags) validateRuns() error {
	for _, p := range f.parallelism {
		if p < 1 {
			return fmt.Errorf("--parallelism %v: every parallelism must be at least 1", f.parallelism)
		}
	}
	if f.logs != "" {
		return os.MkdirAll(f.logs, 0o755)
	}
	return nil
}

// killPlan is how run is killed, or nil when the kills are done.
func (f chaosFlags) killPlan(run, kills int, delay time.Duration) *killPlan {
	if kills >= f.kills {
		return nil
	}
	k := &killPlan{delay: delay}
	if f.killWhen != nil {
		k.when = func() bool { return f.killWhen(run) }
	}
	return k
}

// runArgs is the command line of run (0-based): the command's arguments,
// then its parallelism (--parallelism), then, after the first run,
// --restore latest-or-empty. Later settings win in weir run, so the
// appended parallelism overrides the job's own.
func (f chaosFlags) runArgs(command []string, run int) []string {
	args := append([]string(nil), command[1:]...)
	if p, ok := f.runParallelism(run); ok {
		args = append(args, "-D", "parallelism.default="+strconv.Itoa(p))
	}
	if run > 0 {
		args = append(args, "--restore", "latest-or-empty")
	}
	return args
}

// runParallelism is run's parallelism from --parallelism, cycled; false
// without the flag.
func (f chaosFlags) runParallelism(run int) (int, bool) {
	if len(f.parallelism) == 0 {
		return 0, false
	}
	return f.parallelism[run%len(f.parallelism)], true
}

// atParallelism says run's parallelism in the runs' report lines, or
// nothing without --parallelism.
func (f chaosFlags) atParallelism(run int) string {
	if p, ok := f.runParallelism(run); ok {
		return fmt.Sprintf(" at parallelism %d", p)
	}
	return ""
}

// runStderr is where run's stderr goes: DIR/run-N.log with --logs (closed
// by the returned func), else chaos's own stderr.
func (f chaosFlags) runStderr(run int) (io.Writer, func() error, error) {
	if f.logs == "" {
		return os.Stderr, func() error { return nil }, nil
	}
	fh, err := os.Create(filepath.Join(f.logs, fmt.Sprintf("run-%d.log", run+1)))
	if err != nil {
		return nil, nil, err
	}
	return fh, fh.Close, nil
}

// killVerdict is the verdict once the output is right: OK only when every
// requested kill happened. A job that finishes before its kills was never
// tested under the faults asked for, so that is a failure, not an OK.
func killVerdict(out io.Writer, f chaosFlags, kills int, took time.Duration) error {
	if kills < f.kills {
		return fmt.Errorf("VERDICT: FAIL — only %d of %d kills happened: the job finished after %.1fs, before the next kill "+
			"(random delay %v–%v); %s matches %s, but not through the faults asked for: lower --min-delay and --max-delay, "+
			"or give the job more input", kills, f.kills, took.Seconds(), f.minDelay, f.maxDelay, f.table, f.truthName())
	}
	fmt.Fprintf(out, "VERDICT: OK — %s equals %s exactly, through %d of %d kills\n", f.table, f.truthName(), kills, f.kills)
	return nil
}

// runOnce runs the command; with kill, it is killed as kill plans unless
// it ends first. It reports whether the kill happened. The command runs in
// a process group of its own and the kill goes to the whole group, so a
// wrapper (`go run`, a shell script) dies together with the job it started.
func runOnce(ctx context.Context, name string, args []string, stderr io.Writer, kill *killPlan) (bool, error) {
	cmd, done, err := startGroup(ctx, name, args, stderr)
	if err != nil {
		return false, err
	}
	var timer <-chan time.Time
	if kill != nil {
		timer = time.After(kill.delay)
	}
	select {
	case err := <-done:
		return false, ended(name, err)
	case <-timer:
		return kill.carryOut(cmd.Process.Pid, name, done)
	}
}

// killPlan is when runOnce kills a run: after delay, at the first moment
// that when (if set) allows.
type killPlan struct {
	delay time.Duration
	// when is asked while the run's process group is stopped (SIGSTOP, and
	// the command seen stopped), so that what the run wrote (its
	// checkpoints) holds still between the answer and the kill; false resumes the run (SIGCONT) for killPoll
	// before it asks again. A test uses it to kill a run only once its
	// newest checkpoint is one it wants the next run to restore.
	when func() bool
}

// killPoll is how long a run resumes between two questions of killPlan.when.
const killPoll = 20 * time.Millisecond

// carryOut kills the process group pid once k.when allows it; false when
// the run ends first.
func (k *killPlan) carryOut(pid int, name string, done <-chan error) (bool, error) {
	for k.when != nil {
		_ = syscall.Kill(-pid, syscall.SIGSTOP)
		if stopped(pid) && k.when() {
			break
		}
		_ = syscall.Kill(-pid, syscall.SIGCONT)
		select {
		case err := <-done:
			return false, ended(name, err)
		case <-time.After(killPoll):
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-done
	return true, nil
}

// stopped waits up to a second until process pid has stopped: kill(2)
// returns before a process running on another CPU acts on SIGSTOP. It
// reads the state in /proc (Linux); without /proc it cannot tell and says
// yes. Only the group's leader, the command itself, is waited for.
func stopped(pid int) bool {
	if procState(os.Getpid()) == "" {
		return true
	}
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		switch procState(pid) {
		case "T", "t":
			return true
		case "", "Z":
			return false // it ended
		}
	}
	return false
}

// procState is pid's state letter in /proc/PID/stat (R, S, T: stopped,
// Z: a zombie), or "" when there is no such file.
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// ended is the error of a run that ended by itself.
func ended(name string, err error) error {
	if err != nil {
		return fmt.Errorf("%s failed: %w", name, err)
	}
	return nil
}

// startGroup starts the command in a process group of its own, its stderr
// to stderr; done receives its end.
func startGroup(ctx context.Context, name string, args []string, stderr io.Writer) (*exec.Cmd, <-chan error, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, done, nil
}

func verifyTotals(out io.Writer, f chaosFlags) error {
	want, err := wantTotals(f)
	if err != nil {
		return err
	}
	got, lingering, err := readTotalsFrom(f)
	if err != nil {
		return err
	}
	return verdictOnTotals(out, f, got, want, lingering)
}

// diffTotals counts the accounts where got and want differ, printing the
// first ten to out (nil: quiet).
func diffTotals(out io.Writer, got, want map[string]string) int {
	bad := 0
	for id, w := range want {
		if g, ok := got[id]; !ok || g != w {
			if bad < 10 && out != nil {
				fmt.Fprintf(out, "  %s: got %q, want %q\n", id, g, w)
			}
			bad++
		}
	}
	for id, g := range got {
		if _, ok := want[id]; !ok {
			if bad < 10 && out != nil {
				fmt.Fprintf(out, "  %s: got %q, want none\n", id, g)
			}
			bad++ // an account the bills never mention
		}
	}
	return bad
}

// verdictOnTotals fails when got differs from want or a prepared
// transaction of the job lingers.
func verdictOnTotals(out io.Writer, f chaosFlags, got, want map[string]string, lingering []string) error {
	if bad := diffTotals(out, got, want); bad != 0 {
		return fmt.Errorf("VERDICT: FAIL — %s differs from %s in %d accounts", f.table, f.truthName(), bad)
	}
	if err := leftBehind(out, f, lingering); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s equals %s exactly (%d accounts)\n", f.table, f.truthName(), len(want))
	return nil
}

// leftBehind fails the verdict when a prepared transaction of the job
// under test lingers, naming it; other jobs' are named as a note.
func leftBehind(out io.Writer, f chaosFlags, lingering []string) error {
	prefix := ""
	if f.job != "" {
		prefix = jdbc.XIDPrefix(f.job, cmp.Or(f.sinkName, f.table))
	}
	ours, others := txncheck.Split(lingering, prefix)
	if len(others) > 0 {
		fmt.Fprintf(out, "note: %d prepared transactions of other jobs on the server, left alone: %s\n",
			len(others), firstFew(others))
	}
	if len(ours) == 0 {
		return nil
	}
	whose := "on the server"
	if f.job != "" {
		whose = fmt.Sprintf("of job %q (sink %s)", f.job, cmp.Or(f.sinkName, f.table))
	}
	return fmt.Errorf("VERDICT: FAIL — %d prepared transactions %s left behind (XA RECOVER / pg_prepared_xacts): %s",
		len(ours), whose, firstFew(ours))
}

// firstFew joins up to five ids, saying how many more there are.
func firstFew(ids []string) string {
	if len(ids) <= 5 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:5], ", "), len(ids)-5)
}

// readTotalsFrom reads the table and the prepared transactions that
// linger on its server (XA RECOVER, pg_prepared_xacts; none for SQLite).
func readTotalsFrom(f chaosFlags) (map[string]string, []string, error) {
	if f.postgresDSN != "" {
		return pgTotals(context.Background(), f.postgresDSN, f.table)
	}
	db, err := openVerifyDB(f)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	got, err := queryTotals(db, f.table)
	if err != nil || f.mysqlDSN == "" {
		return got, nil, err
	}
	left, err := txncheck.Lingering(func() ([]string, error) { return txncheck.XARecover(db) }, lingerPolls, lingerEvery)
	return got, left, err
}

func openVerifyDB(f chaosFlags) (*sql.DB, error) {
	switch {
	case f.mysqlDSN != "":
		return sql.Open("mysql", f.mysqlDSN)
	case f.sqlite != "":
		return sqlite.Open(f.sqlite)
	}
	return nil, fmt.Errorf("name the database to verify with --mysql, --postgres or --sqlite")
}

// readTruth reads account_id,total,count into "total/count" strings with
// totals normalised to two decimals.
func readTruth(path string) (map[string]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range recs[1:] {
		out[r[0]] = normTotal(r[1]) + "/" + r[2]
	}
	return out, nil
}

func normTotal(s string) string {
	d, err := decimal.NewFromString(strings.TrimSpace(s))
	if err != nil {
		return s
	}
	return d.StringFixed(2)
}

func queryTotals(db *sql.DB, table string) (map[string]string, error) {
	return totalsOf(db, "SELECT account_id, total, bill_count FROM "+table)
}

// totalsOf reads the rows (account_id, total, count) of query.
func totalsOf(db *sql.DB, query string) (map[string]string, error) {
	rows, err := db.Query(query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, total string
		var n int64
		if err := rows.Scan(&id, &total, &n); err != nil {
			return nil, err
		}
		out[id] = normTotal(total) + "/" + strconv.FormatInt(n, 10)
	}
	return out, rows.Err()
}
