package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Config is one run.
type Config struct {
	Records     int64
	Keys        int
	Payload     int
	Parallelism int
	// RescaleTo, when set, is the parallelism of every attempt after the
	// first: each restore rescales the checkpoint.
	RescaleTo   int
	Budget      string // fixed-per-slot, as given
	BudgetBytes int64
	Kills       int
	Interval    time.Duration
	S3          bool
	// CheckpointDir overrides where checkpoints go (a path or a URL).
	CheckpointDir string
	Incremental   bool
	Dir           string
	Keep          bool
	Seed          uint64
	Timeout       time.Duration
	// Rate limits the source to this many records per second per
	// process (0: as fast as it goes).
	Rate int
	// Child is the command that runs one attempt, the JSON config
	// appended. Default: this program with childArg.
	Child []string
	// Log receives progress lines; default os.Stderr.
	Log io.Writer
}

// Run runs the job to its end through cfg.Kills SIGKILLs and checks its
// output. The report is returned whenever the run got that far.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	if cfg.Child == nil {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cfg.Child = []string{self, childArg}
	}
	cc, env, err := childSetup(cfg)
	if err != nil {
		return nil, err
	}
	rep := &Report{Cfg: cfg, CheckpointTo: cc.CheckpointD}
	rng := rand.New(rand.NewPCG(cfg.Seed, 11))
	start := time.Now()
	for attempt := 0; ; attempt++ {
		cc.Restore = attempt > 0
		if cc.Restore && cfg.RescaleTo > 0 {
			cc.Parallelism = cfg.RescaleTo // the splits stay: 4 × the first parallelism
		}
		a, err := runAttempt(ctx, cfg, cc, env, rep, rng)
		rep.Attempts = append(rep.Attempts, a)
		if err != nil {
			return rep, err
		}
		if a.Finished {
			break
		}
	}
	rep.Wall = time.Since(start)
	if err := rep.check(cc.OutDir); err != nil {
		return rep, err
	}
	return rep, nil
}

// childSetup makes the work directories and the child's configuration
// and environment.
func childSetup(cfg Config) (childConfig, []string, error) {
	cc := childConfig{Records: cfg.Records, Keys: cfg.Keys, Payload: cfg.Payload, Parallelism: cfg.Parallelism,
		Splits: 4 * cfg.Parallelism, Interval: cfg.Interval, LocalDir: filepath.Join(cfg.Dir, "local"),
		OutDir: filepath.Join(cfg.Dir, "out"), Budget: cfg.Budget, Incremental: cfg.Incremental, Rate: cfg.Rate,
		CheckpointD: filepath.Join(cfg.Dir, "checkpoints")}
	env := os.Environ()
	if cfg.S3 {
		get := func(k string) string { return os.Getenv("WEIR_S3_" + k) }
		if get("ENDPOINT") == "" {
			return cc, nil, errors.New("-s3: WEIR_S3_ENDPOINT is not set; run eval \"$(bash scripts/services.sh env)\" first")
		}
		q := url.Values{"endpoint": {get("ENDPOINT")}, "region": {get("REGION")}, "use_path_style": {"true"}}
		cc.CheckpointD = fmt.Sprintf("s3://%s/largestate/%s?%s", get("BUCKET"), filepath.Base(cfg.Dir), q.Encode())
		env = append(env, "AWS_ACCESS_KEY_ID="+get("ACCESS_KEY"), "AWS_SECRET_ACCESS_KEY="+get("SECRET_KEY"))
	}
	if cfg.CheckpointDir != "" {
		if cfg.S3 {
			return cc, nil, errors.New("-s3 and -checkpoint-dir: give one")
		}
		cc.CheckpointD = cfg.CheckpointDir
	}
	for _, d := range []string{cc.LocalDir, cc.OutDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return cc, nil, err
		}
	}
	return cc, env, nil
}

// Attempt is one run of the job process.
type Attempt struct {
	Restored     bool
	Killed       bool
	Finished     bool
	Duration     time.Duration
	RestoredAt   time.Duration // EventRestored, from process start
	FirstRecord  time.Duration // first record in the keyed function, from process start
	Phases       []Phases      // of each keyed subtask's restore
	PeakRSS      int64
	AtFirst      FirstRecordIO // what the process had done by its first record
	AtRestored   FirstRecordIO // … and when every keyed subtask had restored
	Checkpoints  []Checkpoint
	KilledAtRecs int64
}

// Checkpoint is one completed checkpoint.
type Checkpoint struct {
	ID       int64
	Duration time.Duration
	Bytes    int64
	Emitted  int64
}

// runAttempt starts the child, samples it, kills it when its progress
// passes the next kill point (while kills are left), and waits for it.
func runAttempt(ctx context.Context, cfg Config, cc childConfig, env []string, rep *Report, rng *rand.Rand) (Attempt, error) {
	a := Attempt{Restored: cc.Restore}
	js, _ := json.Marshal(cc)
	cmd := exec.CommandContext(ctx, cfg.Child[0], append(append([]string(nil), cfg.Child[1:]...), string(js))...)
	cmd.Env = env
	var stderr tail
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return a, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return a, err
	}
	stopSampling := sample(cmd.Process.Pid, cc.LocalDir, &a.PeakRSS, &rep.PeakDisk)
	killAt := int64(-1)
	if done := rep.kills(); done < cfg.Kills {
		killAt = cfg.Records * int64(done+1) / int64(cfg.Kills+1)
	}
	var once sync.Once
	var killed atomic.Bool
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "EVENT" {
			continue
		}
		switch f[1] {
		case "checkpoint":
			cp := Checkpoint{ID: atoi(f, 2), Duration: time.Duration(atoi(f, 3)) * time.Millisecond, Bytes: atoi(f, 4), Emitted: atoi(f, 5)}
			a.Checkpoints = append(a.Checkpoints, cp)
			if killAt >= 0 && cp.Emitted >= killAt {
				delay := time.Duration(rng.Int64N(int64(cfg.Interval)*3/2 + 1))
				once.Do(func() {
					a.KilledAtRecs = cp.Emitted
					time.AfterFunc(delay, func() { killed.Store(true); _ = cmd.Process.Signal(syscall.SIGKILL) })
				})
			}
		case "restored":
			a.RestoredAt = time.Duration(atoi(f, 3)) * time.Millisecond
		case "restore-phases":
			a.Phases = append(a.Phases, parsePhases(f))
			if len(a.Phases) == cc.Parallelism {
				a.AtRestored = firstRecordIO(cmd.Process.Pid, cc.LocalDir)
			}
		case "first-record":
			a.FirstRecord = time.Duration(atoi(f, 2)) * time.Millisecond
			a.AtFirst = firstRecordIO(cmd.Process.Pid, cc.LocalDir)
		case "finished":
			a.Finished = true
		}
	}
	err = cmd.Wait()
	a.Duration = time.Since(start)
	a.Killed = killed.Load()
	stopSampling()
	fmt.Fprintf(cfg.Log, "largestate: attempt %d: %s, %d checkpoints, peak RSS %s, state on disk peak %s%s\n",
		len(rep.Attempts), a.outcome(), len(a.Checkpoints), mb(a.PeakRSS), mb(rep.PeakDisk), restoreText(a))
	switch {
	case ctx.Err() != nil:
		return a, ctx.Err()
	case a.Finished:
		// The job ended (its output committed) before a kill landed.
		a.Killed = false
		return a, nil
	case a.Killed:
		return a, nil
	case err != nil:
		return a, fmt.Errorf("job process failed: %v\n%s", err, stderr.String())
	}
	return a, fmt.Errorf("job process exited without finishing\n%s", stderr.String())
}

func (a Attempt) outcome() string {
	switch {
	case a.Killed:
		return fmt.Sprintf("SIGKILLed after %s (at %d records)", a.Duration.Round(time.Millisecond), a.KilledAtRecs)
	case a.Finished:
		return fmt.Sprintf("finished in %s", a.Duration.Round(time.Millisecond))
	}
	return "ended"
}

func restoreText(a Attempt) string {
	if !a.Restored {
		return ""
	}
	return fmt.Sprintf(", restored at %s, first record at %s", a.RestoredAt, a.FirstRecord)
}

func atoi(f []string, i int) int64 {
	if i >= len(f) {
		return 0
	}
	n, _ := strconv.ParseInt(f[i], 10, 64)
	return n
}

// sample polls the process's VmRSS every 50 ms and the size of dir every
// second, keeping the peaks, until the returned function is called.
func sample(pid int, dir string, rss, disk *int64) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			if r := vmRSS(pid); r > *rss {
				*rss = r
			}
			if i%20 == 0 {
				if d := dirSize(dir); d > *disk {
					*disk = d
				}
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(stop); <-done }
}

// vmRSS reads a process's resident set size in bytes (0 when gone).
func vmRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// FirstRecordIO is the job process's I/O from its start to its first
// record, or to the end of its last keyed subtask's restore (/proc/<pid>/io: rchar/wchar count every read and write call,
// read_bytes/write_bytes what reached the block device), and its local
// state directory then: all of it, and the part not hard-linked from
// elsewhere (a restore links the SSTs of a local checkpoint, which then
// take no new disk space).
type FirstRecordIO struct {
	RChar, WChar, ReadBytes, WriteBytes int64
	Disk, DiskOwn                       int64
}

func firstRecordIO(pid int, dir string) FirstRecordIO {
	var io FirstRecordIO
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ": ")
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			switch k {
			case "rchar":
				io.RChar = n
			case "wchar":
				io.WChar = n
			case "read_bytes":
				io.ReadBytes = n
			case "write_bytes":
				io.WriteBytes = n
			}
		}
	}
	io.Disk, io.DiskOwn = dirSizes(dir)
	return io
}

// dirSize adds up the sizes of the regular files under dir, each inode
// once (a Pebble checkpoint hard-links the database's SSTs next to it).
func dirSize(dir string) int64 {
	n, _ := dirSizes(dir)
	return n
}

// dirSizes is dirSize and, of it, the files with one link only.
func dirSizes(dir string) (n, own int64) {
	seen := map[uint64]bool{}
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
			if st.Nlink == 1 {
				own += info.Size()
			}
		}
		n += info.Size()
		return nil
	})
	return n, own
}

// tail keeps the last 8 KiB written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 8<<10 {
		t.buf = t.buf[len(t.buf)-8<<10:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func mb(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
