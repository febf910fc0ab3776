package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The child's GC settings. Go's default GOGC=100 collects whenever the
// heap doubles, which for the large, pointer-rich state of the stateful
// queries costs up to a third of the CPU; the JVM that Flink runs in
// gets its default heap (a quarter of the machine's memory) and collects
// far less often. GOGC=400 with a 4 GiB soft limit is the comparable
// setting: the heap may grow to 5× the live data, but the limit makes the
// GC work harder before the process gets near Flink's own footprint.
const (
	DefaultGOGC        = 400
	DefaultMemoryLimit = 4 << 30
)

// childArg is the hidden first argument that makes this program run one
// query on Weir and print a JSON line (WeirRun) instead of the suite.
const childArg = "weir-child"

func childMain(args []string) error {
	fs := flag.NewFlagSet(childArg, flag.ContinueOnError)
	var cfg RunConfig
	var queriesFile, query, profile, memProfile string
	var gogc int
	var memLimit int64
	fs.StringVar(&queriesFile, "queries-file", "", "queries.sql (default: ../shared/nexmark/queries.sql beside the repository)")
	fs.StringVar(&query, "query", "", "the query")
	fs.Int64Var(&cfg.Events, "events", 0, "events")
	fs.Int64Var(&cfg.TPS, "tps", DefaultTPS, "event rate")
	fs.DurationVar(&cfg.Checkpoint, "checkpoint", 0, "checkpoint interval (0: off)")
	fs.IntVar(&cfg.Parallelism, "parallelism", 2, "parallelism")
	fs.StringVar(&cfg.StateBackend, "state-backend", "hashmap", "state.backend.type")
	fs.DurationVar(&cfg.Sample, "sample", 5*time.Second, "how often to sample progress")
	fs.StringVar(&cfg.Dir, "dir", "", "scratch directory (default: a temporary one, removed after)")
	fs.StringVar(&cfg.Changelog, "changelog", "", "write sink changelogs here instead of the sinks")
	fs.StringVar(&profile, "cpuprofile", "", "write a CPU profile here")
	fs.StringVar(&memProfile, "memprofile", "", "write a heap profile here every 10 s while the job runs (the last one is the state near the end)")
	fs.IntVar(&gogc, "gogc", DefaultGOGC, "the Go GC target percentage (GOGC)")
	fs.Int64Var(&memLimit, "memory-limit", DefaultMemoryLimit, "the Go soft memory limit in bytes (GOMEMLIMIT)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if queriesFile == "" { // the suite's default, for a child run by hand
		root, err := repoRoot()
		if err != nil {
			return err
		}
		queriesFile = defaultQueriesFile(root)
	}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "nexmark-child-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
	}
	suite, err := LoadSuite(queriesFile)
	if err != nil {
		return err
	}
	debug.SetGCPercent(gogc)
	debug.SetMemoryLimit(memLimit)
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if memProfile != "" {
		stop := writeHeapProfiles(memProfile, 10*time.Second)
		defer stop()
	}
	res, err := runWeir(context.Background(), suite, query, cfg)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// Measured is one engine's run of one query.
type Measured struct {
	// Err is why the run failed ("" when it ran).
	Err         string
	CPUSeconds  float64
	WallSeconds float64
	PeakRSS     int64 // bytes
	// ProcessCPUSeconds is the whole child process's CPU (for Flink it
	// includes JVM start, planning and JIT before the job; CPUSeconds is
	// the job's alone, as RunQuery measures it).
	ProcessCPUSeconds float64
	Checkpoints       int
	// CheckpointList has each completed checkpoint the engine reported
	// (Flink's are polled: one followed by the next within 20 ms is in
	// Checkpoints but not here).
	CheckpointList []CheckpointInfo
	// Samples are the run's progress over time (progress.go).
	Samples []Sample
	// Rows and Changes: the result rows, net, and every changelog row
	// the sinks received; -1 when not counted (q10 writes files).
	Rows, Changes int64
	// Backend is the engine's state.backend.type (Flink's with
	// "+incremental"); HeapCap the heap limit the engine ran under,
	// bytes (Weir's GOMEMLIMIT, Flink's JVM max heap).
	Backend string
	HeapCap int64
}

// EventsPerCoreSecond is Nexmark's metric.
func (m *Measured) EventsPerCoreSecond(events int64) float64 {
	if m == nil || m.Err != "" || m.CPUSeconds <= 0 {
		return 0
	}
	return float64(events) / m.CPUSeconds
}

// childCommand runs a command and returns its stdout and rusage.
func childCommand(ctx context.Context, timeout time.Duration, dir string, name string, args ...string) ([]byte, *syscall.Rusage, time.Duration, error) {
	return childCommandEnv(ctx, timeout, dir, nil, name, args...)
}

// childCommandEnv is childCommand with the child's environment (nil: this
// process's).
func childCommandEnv(ctx context.Context, timeout time.Duration, dir string, env []string, name string, args ...string) ([]byte, *syscall.Rusage, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ru *syscall.Rusage
	if cmd.ProcessState != nil {
		ru, _ = cmd.ProcessState.SysUsage().(*syscall.Rusage)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 && len(msg) > 2000 {
			msg = lastLines(msg, 15)
		}
		return stdout.Bytes(), ru, wall, fmt.Errorf("%v: %s", err, msg)
	}
	return stdout.Bytes(), ru, wall, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func cpuOf(ru *syscall.Rusage) float64 {
	if ru == nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// runWeirChild runs one query in a child process and measures it.
func (r *runner) runWeirChild(ctx context.Context, q string, cfg RunConfig, profile string) *Measured {
	exe, err := os.Executable()
	if err != nil {
		return &Measured{Err: err.Error()}
	}
	args := []string{childArg, "-queries-file", r.queriesFile, "-query", q,
		"-events", strconv.FormatInt(cfg.Events, 10), "-tps", strconv.FormatInt(cfg.TPS, 10),
		"-checkpoint", cfg.Checkpoint.String(), "-parallelism", strconv.Itoa(cfg.Parallelism), "-dir", cfg.Dir,
		"-gogc", strconv.Itoa(r.f.gogc), "-state-backend", cfg.StateBackend,
		"-memory-limit", strconv.FormatInt(r.memoryLimit(), 10), "-sample", r.sample().String()}
	if cfg.Changelog != "" {
		args = append(args, "-changelog", cfg.Changelog)
	}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	out, ru, wall, err := childCommand(ctx, r.f.timeout, "", exe, args...)
	m := &Measured{CPUSeconds: cpuOf(ru), ProcessCPUSeconds: cpuOf(ru), WallSeconds: wall.Seconds(),
		Backend: cfg.StateBackend, HeapCap: r.memoryLimit(), Rows: -1, Changes: -1}
	if ru != nil {
		m.PeakRSS = ru.Maxrss * 1024 // Linux reports KB
	}
	if err != nil {
		m.Err = firstLine(err.Error())
		return m
	}
	var wr WeirRun
	if err := json.Unmarshal(lastJSONLine(out), &wr); err != nil {
		m.Err = fmt.Sprintf("reading the child's result: %v", err)
		return m
	}
	m.Checkpoints, m.CheckpointList, m.Samples, m.Rows, m.Changes = wr.Checkpoints, wr.CheckpointList, wr.Samples, wr.Rows, wr.Changes
	return m
}

func firstLine(s string) string {
	s = strings.TrimPrefix(s, "exit status 1: ")
	s = strings.TrimPrefix(s, "nexmark child: ")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// lastJSONLine is the last line of out that starts with '{'.
func lastJSONLine(out []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if bytes.HasPrefix(bytes.TrimSpace(lines[i]), []byte("{")) {
			return lines[i]
		}
	}
	return nil
}

// writeHeapProfiles overwrites path with a heap profile every period until
// the returned stop is called: the last one shows the state a run held
// near its end, which a profile written after the run (its state freed)
// would not.
func writeHeapProfiles(path string, period time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := writeHeapProfile(path); err != nil {
					fmt.Fprintln(os.Stderr, "nexmark child:", err)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// writeHeapProfile writes the heap profile to path through a temporary
// file, so that a reader never sees half of one.
func writeHeapProfile(path string) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
