package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Report is what a run measured and what the check found.
type Report struct {
	Cfg          Config
	CheckpointTo string
	Attempts     []Attempt
	PeakDisk     int64
	Wall         time.Duration
	// Check: keys with the exact line, and the problems found (at most a
	// few listed).
	KeysOK   int
	Problems []string
	Checked  bool
}

// OK reports whether every requested kill happened and the output was
// checked and exact (a job that ended before its last kill was not tested
// under the faults asked for).
func (r *Report) OK() bool {
	return r.Checked && len(r.Problems) == 0 && r.KeysOK == r.Cfg.Keys && r.kills() == r.Cfg.Kills
}

func (r *Report) kills() int {
	n := 0
	for _, a := range r.Attempts {
		if a.Killed {
			n++
		}
	}
	return n
}

// expected recomputes every key's line from the input alone.
func expected(cfg Config) map[int64]string {
	type acc struct{ count, sum, psum int64 }
	accs := make([]acc, cfg.Keys)
	var buf []byte
	for n := range cfg.Records {
		a := &accs[keyOf(n, cfg.Keys)]
		a.count++
		a.sum += n
		buf = payload(buf, n, cfg.Payload)
		a.psum += payloadSum(buf)
	}
	out := map[int64]string{}
	for k, a := range accs {
		if a.count > 0 {
			out[int64(k)] = fmt.Sprintf("%d,%d,%d,%d,%d", k, a.count, a.sum, a.count, a.psum)
		}
	}
	return out
}

// check compares the committed output (visible part files) with the
// expected lines: each key once, exact.
func (r *Report) check(outDir string) error {
	want := expected(r.Cfg)
	got := map[int64]int{}
	problem := func(format string, args ...any) {
		if len(r.Problems) < 20 {
			r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
		}
	}
	files, err := os.ReadDir(outDir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if strings.HasPrefix(f.Name(), ".") || f.IsDir() {
			continue
		}
		if err := r.checkFile(filepath.Join(outDir, f.Name()), want, got, problem); err != nil {
			return err
		}
	}
	for k := range want {
		if got[k] == 0 {
			problem("key %d: no output (lost)", k)
		}
	}
	r.Checked = true
	if len(want) != r.Cfg.Keys {
		problem("the input has %d keys of %d (use fewer keys or more records)", len(want), r.Cfg.Keys)
	}
	return nil
}

func (r *Report) checkFile(path string, want map[int64]string, got map[int64]int, problem func(string, ...any)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		k, err := strconv.ParseInt(strings.SplitN(text, ",", 2)[0], 10, 64)
		switch {
		case err != nil:
			problem("%s:%d: not a result line: %q", path, line, text)
		case got[k] > 0:
			problem("%s:%d: key %d again (duplicate): %q", path, line, k, text)
		case want[k] != text:
			problem("%s:%d: key %d: got %q, want %q", path, line, k, text, want[k])
		default:
			r.KeysOK++
		}
		got[k]++
	}
	return sc.Err()
}

// Print writes the report.
func (r *Report) Print(w io.Writer) {
	c := r.Cfg
	rescale := ""
	if c.RescaleTo > 0 {
		rescale = fmt.Sprintf(" (restores at %d)", c.RescaleTo)
	}
	fmt.Fprintf(w, "largestate: %d records × %d B payload, %d keys, parallelism %d%s, checkpoints every %s to %s (incremental %v)\n",
		c.Records, c.Payload, c.Keys, c.Parallelism, rescale, c.Interval, r.CheckpointTo, c.Incremental)
	budget := c.BudgetBytes * int64(max(c.Parallelism, c.RescaleTo)) // the larger of the attempts' parallelisms
	var peakRSS int64
	var cps []Checkpoint
	for _, a := range r.Attempts {
		peakRSS = max(peakRSS, a.PeakRSS)
		cps = append(cps, a.Checkpoints...)
	}
	fmt.Fprintf(w, "  state on disk (peak, local dir): %s = %.1f× the budget (%s per subtask, %s in all)\n",
		mb(r.PeakDisk), float64(r.PeakDisk)/float64(budget), mb(c.BudgetBytes), mb(budget))
	fmt.Fprintf(w, "  peak RSS of the job process: %s = budget + %s\n", mb(peakRSS), mb(peakRSS-budget))
	fmt.Fprintf(w, "  attempts: %d, SIGKILLs: %d, wall %s\n", len(r.Attempts), r.kills(), r.Wall.Round(time.Second))
	for i, a := range r.Attempts {
		fmt.Fprintf(w, "    %d: %s, %d checkpoints, peak RSS %s%s\n", i, a.outcome(), len(a.Checkpoints), mb(a.PeakRSS), restoreText(a))
		for _, p := range a.Phases {
			fmt.Fprintf(w, "       restore: %s\n", p)
		}
		if a.Restored {
			for _, io := range []struct {
				when string
				FirstRecordIO
			}{{"the first record", a.AtFirst}, {"the last subtask's restore", a.AtRestored}} {
				fmt.Fprintf(w, "       by %s: read %s (from disk %s), wrote %s (to disk %s); local state %s, of it not linked %s\n",
					io.when, mb(io.RChar), mb(io.ReadBytes), mb(io.WChar), mb(io.WriteBytes), mb(io.Disk), mb(io.DiskOwn))
			}
		}
		if a.Restored && len(a.Checkpoints) > 0 {
			fmt.Fprintf(w, "       first checkpoint after the restore uploaded %s (the attempt's median %s)\n",
				mb(a.Checkpoints[0].Bytes), mb(medianBytes(a.Checkpoints)))
		}
	}
	if len(cps) > 0 {
		ds := make([]time.Duration, len(cps))
		var maxBytes, last int64
		for i, cp := range cps {
			ds[i] = cp.Duration
			maxBytes = max(maxBytes, cp.Bytes)
			last = cp.Bytes
		}
		slices.Sort(ds)
		q := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
		fmt.Fprintf(w, "  checkpoints: %d completed, duration p50 %s p99 %s max %s; size last %s max %s\n",
			len(cps), q(0.5), q(0.99), ds[len(ds)-1], mb(last), mb(maxBytes))
	}
	if k := r.kills(); k != c.Kills {
		fmt.Fprintf(w, "  only %d of %d SIGKILLs happened before the job ended\n", k, c.Kills)
	}
	if !r.Checked {
		fmt.Fprintln(w, "  output: not checked")
		return
	}
	fmt.Fprintf(w, "  output: %d of %d keys exact\n", r.KeysOK, c.Keys)
	for _, p := range r.Problems {
		fmt.Fprintln(w, "    "+p)
	}
	if r.OK() {
		fmt.Fprintln(w, "VERDICT: OK")
	} else {
		fmt.Fprintln(w, "VERDICT: FAIL")
	}
}

// medianBytes is the median size of cps.
func medianBytes(cps []Checkpoint) int64 {
	bs := make([]int64, len(cps))
	for i, cp := range cps {
		bs[i] = cp.Bytes
	}
	slices.Sort(bs)
	return bs[len(bs)/2]
}
