// Command nexmark runs the Nexmark benchmark on Weir and, with -flink, on
// Apache Flink (bench/flink) with the same generated stream, and reports
// Nexmark's metric, events ÷ (average cores × seconds) = events ÷ CPU
// seconds, and peak RSS per query and engine.
//
//	go run ./bench/nexmark -queries q0,q1,q2 -events 1000000 -checkpoint off -flink
//
// Every query runs in a fresh child process (this program re-executed with
// the hidden first argument "weir-child"), so that the CPU time and peak
// RSS the parent reads from the child's rusage are the query's own. See
// README.md for what runs, what does not and why.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == childArg {
		if err := childMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "nexmark child:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == touchArg {
		if err := touchMain(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "nexmark touch-pages:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == latencyArg {
		if err := latencyMain(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "nexmark mem-latency:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == modelArg {
		if err := modelMain(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "nexmark state-model:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nexmark:", err)
		os.Exit(1)
	}
}

// suiteFlags are the flags of the parent.
type suiteFlags struct {
	queries     string
	events      int64
	checkpoints string
	flink       bool
	flinkOnly   bool
	tps         int64
	parallelism int
	queriesFile string
	flinkDir    string
	resultsDir  string
	profileDir  string
	timeout     time.Duration
	diff        bool
	showScript  string
	repeat      int
	gogc        int
	backend     string
	// Issue 16: the fair comparison.
	flinkBackend string
	memoryLimit  int64
	flinkXmx     string
	sample       time.Duration
	warmup       int64
}

// MaxEvents is the largest -events: Nexmark's own runs go to 100 M.
const MaxEvents = 100_000_000

func run(args []string) error {
	var f suiteFlags
	var err error
	fs := flag.NewFlagSet("nexmark", flag.ContinueOnError)
	fs.StringVar(&f.queries, "queries", "all", "comma-separated queries (q0,q1,…), or all (q0–q22)")
	fs.Int64Var(&f.events, "events", 1_000_000, "events per query (events.num)")
	fs.StringVar(&f.checkpoints, "checkpoint", "off", "checkpoint settings to run, comma-separated: off, or an interval like 10s or 1s")
	fs.BoolVar(&f.flink, "flink", false, "also run bench/flink's RunQuery for each query and setting")
	fs.BoolVar(&f.flinkOnly, "flink-only", false, "run only Flink (implies -flink)")
	fs.Int64Var(&f.tps, "tps", DefaultTPS, "the generator's event rate ${TPS}: it sets event timestamps; both engines read as fast as they can")
	fs.IntVar(&f.parallelism, "parallelism", 2, "parallelism of both engines")
	fs.StringVar(&f.queriesFile, "queries-file", "", "queries.sql (default: ../shared/nexmark/queries.sql beside the repository)")
	fs.StringVar(&f.flinkDir, "flink-dir", "", "the bench/flink project (default: bench/flink of the repository)")
	fs.StringVar(&f.resultsDir, "results", "results", "results go to <results>/nexmark-<timestamp>/")
	fs.StringVar(&f.profileDir, "cpuprofile-dir", "", "write a pprof CPU profile of each Weir run into this directory")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "give up on one engine's run of one query after this long")
	fs.BoolVar(&f.diff, "diff", false, "instead of measuring, run the differential check: each query on both engines into changelog files (at ${TPS} = 1000), final results compared")
	fs.StringVar(&f.backend, "state-backend", "hashmap", "Weir's state.backend.type, comma-separated to run several: hashmap (the heap), pebble or rocksdb (its alias)")
	fs.StringVar(&f.flinkBackend, "flink-state-backend", "hashmap", "Flink's state.backend.type, comma-separated, paired with -state-backend by position: hashmap, or rocksdb (with incremental checkpoints, as Nexmark runs it)")
	memLimit := fs.String("weir-memory-limit", "4GiB", "Weir's heap cap: the child's GOMEMLIMIT (a soft limit), e.g. 4GiB or 512MiB")
	fs.StringVar(&f.flinkXmx, "flink-xmx", "", "Flink's heap cap: the JVM's -Xmx, e.g. 4g (default: the JVM's, a quarter of the machine's memory)")
	fs.DurationVar(&f.sample, "sample", 5*time.Second, "both engines sample their progress this often: throughput over time (timeline.csv)")
	fs.Int64Var(&f.warmup, "warmup-events", -1, "the warm-up: the steady-state rate counts only from the first sample past this many events (default: a tenth of -events)")
	fs.IntVar(&f.gogc, "gogc", DefaultGOGC, "GOGC of Weir's child processes (see child.go)")
	fs.IntVar(&f.repeat, "repeat", 1, "run each engine this many times per query and keep the run with the least CPU (the machine's load adds noise)")
	fs.StringVar(&f.showScript, "show-script", "", "print the script of one query for Weir (or, with -flink, for Flink) and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f.flink = f.flink || f.flinkOnly
	if f.memoryLimit, err = parseBytes(*memLimit); err != nil {
		return fmt.Errorf("-weir-memory-limit: %w", err)
	}
	if f.events <= 0 || f.events > MaxEvents {
		return fmt.Errorf("-events %d: want 1 to %d (Nexmark's largest run)", f.events, int64(MaxEvents))
	}
	if f.warmup < 0 {
		f.warmup = f.events / 10
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if f.queriesFile == "" {
		f.queriesFile = defaultQueriesFile(root)
	}
	if f.flinkDir == "" {
		f.flinkDir = filepath.Join(root, "bench", "flink")
	}
	suite, err := LoadSuite(f.queriesFile)
	if err != nil {
		return err
	}
	queries, err := selectQueries(suite, f.queries)
	if err != nil {
		return err
	}
	if f.showScript != "" {
		p := Params{Events: f.events, TPS: f.tps, Dir: os.TempDir(), Engine: "weir"}
		if f.flink {
			p.Engine = "flink"
		}
		sc, err := suite.Script(f.showScript, p)
		if err != nil {
			return err
		}
		for name, class := range sc.Functions {
			fmt.Printf("CREATE FUNCTION %s AS '%s';\n\n", name, class)
		}
		fmt.Print(sc.Text())
		return nil
	}
	if f.diff {
		return runDiff(&runner{f: f, queriesFile: f.queriesFile}, suite, queries)
	}
	intervals, err := parseCheckpoints(f.checkpoints)
	if err != nil {
		return err
	}
	out := filepath.Join(f.resultsDir, "nexmark-"+time.Now().Format("20060102-150405"))
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if f.profileDir != "" {
		if err := os.MkdirAll(f.profileDir, 0o755); err != nil {
			return err
		}
	}
	r := &runner{f: f, queriesFile: f.queriesFile, out: out}
	pairs, err := backendPairs(f.backend, f.flinkBackend)
	if err != nil {
		return err
	}
	rows := r.runAll(context.Background(), suite, queries, intervals, pairs)
	if err := writeReport(out, rows, reportHeader(f)); err != nil {
		return err
	}
	if n := rowMismatches(rows); n > 0 {
		return fmt.Errorf("%d runs gave a different number of result rows on the two engines (see results.md)", n)
	}
	return nil
}

// repoRoot finds the module root (the directory with Weir's go.mod) from
// the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/weirstream/weir\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("run from inside the Weir repository (no go.mod of github.com/weirstream/weir above " + dir + ")")
		}
	}
}

// defaultQueriesFile is ../shared/nexmark/queries.sql beside the
// repository (where CI and the workstations keep shared/).
func defaultQueriesFile(root string) string {
	return filepath.Join(filepath.Dir(root), "shared", "nexmark", "queries.sql")
}

// DefaultQueries are the queries the suite runs by default: q0–q22.
func DefaultQueries() []string {
	var out []string
	for i := 0; i <= 22; i++ {
		out = append(out, fmt.Sprintf("q%d", i))
	}
	return out
}

func selectQueries(s *Suite, list string) ([]string, error) {
	if list == "" || list == "all" {
		return DefaultQueries(), nil
	}
	var out []string
	for _, q := range strings.Split(list, ",") {
		q = strings.TrimSpace(q)
		if _, ok := s.Queries[q]; !ok {
			return nil, fmt.Errorf("-queries: no query %q in queries.sql (have %s)", q, strings.Join(s.Names(), ", "))
		}
		out = append(out, q)
	}
	return out, nil
}

// parseCheckpoints reads -checkpoint: "off" is 0.
func parseCheckpoints(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "off" || p == "0" {
			out = append(out, 0)
			continue
		}
		d, err := time.ParseDuration(p)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("-checkpoint %q: want off or a positive interval such as 10s", p)
		}
		out = append(out, d)
	}
	return out, nil
}

func checkpointLabel(d time.Duration) string {
	if d == 0 {
		return "off"
	}
	return d.String()
}

// runDiff runs the differential check of each query and fails if any
// query both engines run differs.
func runDiff(r *runner, suite *Suite, queries []string) error {
	failed := 0
	for _, q := range queries {
		d := r.differential(context.Background(), suite, q, r.f.events)
		fmt.Println(d)
		if d.WeirErr == "" && d.FlinkErr == "" && d.Mismatch != "" {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d queries differ", failed)
	}
	return nil
}
