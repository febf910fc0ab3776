// Command soak runs Weir under random faults for many cycles and checks
// exactly-once at the end, after Kafka's system test transactions_test.py
// and in the manner of Jepsen.
//
// Two jobs run side by side, each a `weir run` process: the billing job
// (examples/billing/billing.sql, unbounded, into account_totals in
// MariaDB) and a Kafka→Kafka exactly-once copy whose input is written in
// transactions of which some are aborted. Load is produced all along.
// Every cycle the jobs run a short while, then one fault is injected:
// SIGKILL of a Weir process, SIGSTOP/SIGCONT of one, a hard (SIGKILL) or
// clean (SIGTERM) broker bounce, a MariaDB crash or clean restart; then
// the soak waits until both jobs have committed new output.
//
// Kafka and MariaDB are private instances on free ports with data under
// -dir (the programs scripts/services.sh up installed): the shared
// services are never touched.
//
// At the end the load stops, the jobs catch up and are stopped with
// SIGTERM, and the checker reports lost, duplicated, aborted-read and
// phantom records of the copy (reading each topic as read_uncommitted with
// markers and as read_committed), the billing totals against totals
// recomputed from the bills topic, transactions left open (Kafka
// ListTransactions, MariaDB XA RECOVER, held over 5 s) and LSO = HWM on
// every partition; VERDICT OK or FAIL, exit status 1 on FAIL.
//
//	scripts/services.sh up
//	go build -o /tmp/weir ./cmd/weir
//	go run ./bench/soak -cycles 1000 -weir /tmp/weir
//
// Without -weir, this program runs the jobs itself (a child process per
// job, as `weir run` would).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// defaultWeights: most cycles kill or pause Weir (seconds each); broker
// bounces and database restarts take longer and come less often.
var defaultWeights = map[string]int{faultWeirKill: 60, faultWeirPause: 20, faultKafkaHard: 4, faultKafkaClean: 4,
	faultMariaDBKill: 6, faultMariaDBStop: 6}

func main() {
	if len(os.Args) > 1 && os.Args[1] == childArg {
		if err := childMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(cli(os.Args[1:]))
}

func cli(args []string) int {
	cfg, keep, err := parseFlags(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// The first SIGINT/SIGTERM ends the cycles and runs the check; a
	// second one ends the soak at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	rep, err := Run(ctx, cfg)
	if rep != nil {
		rep.Print(os.Stdout, cfg)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "soak: %v (logs under %s)\n", err, cfg.Dir)
		return 1
	}
	if !rep.OK() {
		fmt.Fprintf(os.Stderr, "soak: logs under %s\n", cfg.Dir)
		return 1
	}
	if !keep {
		_ = os.RemoveAll(cfg.Dir)
	}
	return 0
}

func parseFlags(args []string) (Config, bool, error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	var cfg Config
	var weir, weights, seq string
	var keep bool
	fs.IntVar(&cfg.Cycles, "cycles", 1000, "fault cycles")
	fs.DurationVar(&cfg.MaxDuration, "max-duration", 0, "start no cycle after this long (0: no limit)")
	fs.Int64Var(&cfg.Seed, "seed", time.Now().UnixNano(), "random seed (faults, timing, load)")
	fs.StringVar(&weir, "weir", "", "weir binary to run the jobs (default: this program)")
	fs.StringVar(&cfg.Dir, "dir", "", "scratch directory (default: a new temporary one)")
	fs.BoolVar(&keep, "keep", false, "keep the scratch directory (kept anyway on FAIL)")
	fs.StringVar(&weights, "weights", formatWeights(defaultWeights), "fault weights kind=n,…")
	fs.StringVar(&seq, "sequence", "", "fault kinds in order (repeated) instead of random by -weights")
	fs.DurationVar(&cfg.RunMin, "run-min", 300*time.Millisecond, "shortest run before a fault")
	fs.DurationVar(&cfg.RunMax, "run-max", 1200*time.Millisecond, "longest run before a fault")
	fs.DurationVar(&cfg.PauseMax, "pause-max", 3*time.Second, "longest SIGSTOP pause")
	fs.DurationVar(&cfg.Recovery, "recovery", 2*time.Minute, "longest wait for progress after a fault")
	fs.DurationVar(&cfg.Drain, "drain", 3*time.Minute, "longest wait for the jobs to catch up at the end")
	fs.DurationVar(&cfg.Checkpoint, "checkpoint", 500*time.Millisecond, "checkpoint interval of the jobs")
	fs.IntVar(&cfg.GoMaxProcs, "gomaxprocs", 1, "GOMAXPROCS of the Weir processes (0: inherit)")
	fs.StringVar(&cfg.CopyGuarantee, "copy-guarantee", "exactly-once", "the copy's sink.delivery-guarantee (at-least-once: a control run the checker must fail)")
	fs.StringVar(&cfg.CopyIsolation, "copy-isolation", "read_committed", "the copy's source isolation level (read_uncommitted: a control run the checker must fail)")
	if err := fs.Parse(args); err != nil {
		return cfg, false, err
	}
	var err error
	if cfg.Weights, err = parseWeights(weights); err != nil {
		return cfg, false, err
	}
	if seq != "" {
		cfg.Sequence = strings.Split(seq, ",")
		for _, k := range cfg.Sequence {
			if _, ok := defaultWeights[k]; !ok {
				return cfg, false, fmt.Errorf("-sequence: unknown fault kind %q (want one of %s)", k, strings.Join(faultKinds, ", "))
			}
		}
	}
	if cfg.Root, err = repoRoot(); err != nil {
		return cfg, false, err
	}
	if cfg.Dir == "" {
		if cfg.Dir, err = os.MkdirTemp("", "weir-soak-"); err != nil {
			return cfg, false, err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return cfg, false, err
	}
	cfg.Weir = []string{self, childArg}
	if weir != "" {
		cfg.Weir = []string{weir}
	}
	cfg.Log = os.Stderr
	return cfg, keep, nil
}

func formatWeights(w map[string]int) string {
	var parts []string
	for _, k := range faultKinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k, w[k]))
	}
	return strings.Join(parts, ",")
}

func parseWeights(s string) (map[string]int, error) {
	w := map[string]int{}
	total := 0
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if _, known := defaultWeights[k]; !ok || !known || err != nil || n < 0 {
			return nil, fmt.Errorf("-weights %q: want kind=n,… with kinds %s", kv, strings.Join(faultKinds, ", "))
		}
		w[k] = n
		total += n
	}
	if total == 0 {
		return nil, errors.New("-weights: all zero")
	}
	return w, nil
}

// repoRoot finds the repository (scripts/services.sh) from the working
// directory upwards.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "scripts", "services.sh")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no scripts/services.sh in %s or above: run the soak inside the weir repository", dir)
		}
	}
}
