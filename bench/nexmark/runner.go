package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// runner runs the suite.
type runner struct {
	f           suiteFlags
	queriesFile string
	out         string
}

// Row is one query at one checkpoint setting.
type Row struct {
	Query      string
	Checkpoint string
	Events     int64
	// Backends is the pair of state backends, "weir/flink".
	Backends string
	// Warmup is the events the steady-state rate leaves out.
	Warmup int64
	Weir   *Measured // nil when not run
	Flink  *Measured // nil when not run
	// RowsDiffer says how the engines' result row counts differ ("" when
	// equal or not both counted).
	RowsDiffer string
}

// SteadyRatio is Ratio of the steady-state rates (0 when either run
// was too short to have one).
func (r Row) SteadyRatio() float64 {
	w, f := SteadyRate(samplesOf(r.Weir), r.Warmup), SteadyRate(samplesOf(r.Flink), r.Warmup)
	if w == 0 || f == 0 {
		return 0
	}
	return w / f
}

func samplesOf(m *Measured) []Sample {
	if m == nil || m.Err != "" {
		return nil
	}
	return m.Samples
}

// Ratio is Weir's events/s/core over Flink's (0 when either did not run).
func (r Row) Ratio() float64 {
	w, f := r.Weir.EventsPerCoreSecond(r.Events), r.Flink.EventsPerCoreSecond(r.Events)
	if w == 0 || f == 0 {
		return 0
	}
	return w / f
}

func (r *runner) runAll(ctx context.Context, suite *Suite, queries []string, intervals []time.Duration, pairs [][2]string) []Row {
	var rows []Row
	for _, iv := range intervals {
		for _, pair := range pairs {
			for _, q := range queries {
				row := r.runOne(ctx, suite, q, iv, pair)
				printRow(row)
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// runOne runs query q on both engines (as the flags say) with one
// checkpoint setting and one pair of state backends.
func (r *runner) runOne(ctx context.Context, suite *Suite, q string, iv time.Duration, pair [2]string) Row {
	row := Row{Query: q, Checkpoint: checkpointLabel(iv), Events: r.f.events, Backends: pair[0] + "/" + flinkBackendLabel(pair[1]),
		Warmup: r.f.warmup}
	cfg := RunConfig{Params: Params{Events: r.f.events, TPS: r.f.tps}, Checkpoint: iv, Parallelism: r.f.parallelism,
		StateBackend: pair[0], FlinkBackend: pair[1]}
	if !r.f.flinkOnly {
		row.Weir = r.measure(ctx, q, cfg, func(c RunConfig) *Measured {
			prof := ""
			if r.f.profileDir != "" {
				prof = filepath.Join(r.f.profileDir, fmt.Sprintf("%s-%s-%s.pprof", q, row.Checkpoint, pair[0]))
			}
			return r.runWeirChild(ctx, q, c, prof)
		})
	}
	if r.f.flink {
		row.Flink = r.measure(ctx, q, cfg, func(c RunConfig) *Measured { return r.runFlink(ctx, suite, q, c) })
	}
	row.RowsDiffer = rowsDiffer(q, row.Weir, row.Flink)
	return row
}

// measure runs one engine -repeat times, each in a fresh scratch
// directory, and keeps the run with the least CPU time.
func (r *runner) measure(ctx context.Context, q string, cfg RunConfig, f func(RunConfig) *Measured) *Measured {
	var best *Measured
	for i := 0; i < max(r.f.repeat, 1); i++ {
		m := r.measureOnce(q, cfg, f)
		if m.Err != "" {
			return m
		}
		if best == nil || m.CPUSeconds < best.CPUSeconds {
			best = m
		}
	}
	return best
}

func (r *runner) measureOnce(q string, cfg RunConfig, f func(RunConfig) *Measured) *Measured {
	dir, err := os.MkdirTemp("", "weir-nexmark-"+q+"-")
	if err != nil {
		return &Measured{Err: err.Error()}
	}
	defer os.RemoveAll(dir)
	cfg.Dir = dir
	m := f(cfg)
	if m.Err == "" && m.Rows < 0 {
		n, ok, err := fileRows(filepath.Join(dir, "data", "output"))
		switch {
		case err != nil:
			m.Err = fmt.Sprintf("counting the rows of its files: %v", err)
		case ok:
			m.Rows, m.Changes = n, n
		}
	}
	return m
}

// fileRows counts the result rows of a query that writes files (q10, an
// insert-only CSV sink): the lines of the finished part files under out.
// Both engines keep a part file hidden (its name starts with a dot) while
// they write it and until a checkpoint's commit (without checkpoints, the
// commit at the end of the input) finishes it, so what is counted is what
// the engine committed; hidden directories are skipped. ok is false when the query wrote
// no files (out does not exist).
func fileRows(out string) (n int64, ok bool, err error) {
	if _, err := os.Stat(out); errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != out && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir // Weir's markers; a staging directory
			}
			return nil
		}
		if !strings.HasPrefix(d.Name(), "part-") {
			return nil // a hidden file, a success file
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n += int64(bytes.Count(data, []byte{'\n'}))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			n++
		}
		return nil
	})
	return n, true, err
}

// printRow prints a row as soon as it is measured.
func printRow(r Row) {
	fmt.Printf("%-4s ckpt=%-4s %s weir %s | flink %s", r.Query, r.Checkpoint, r.Backends, r.Weir.short(r.Events), r.Flink.short(r.Events))
	if x := r.Ratio(); x > 0 {
		fmt.Printf(" | ratio %.2f", x)
	}
	if r.RowsDiffer != "" {
		fmt.Printf(" | ERROR: %s", r.RowsDiffer)
	}
	fmt.Println()
	for _, e := range []struct {
		name string
		m    *Measured
	}{{"weir", r.Weir}, {"flink", r.Flink}} {
		if e.m != nil && e.m.Err == "" {
			fmt.Printf("     %-5s %s\n", e.name, e.m.details(r.Warmup, r.Events))
			if e.name == "weir" && os.Getenv("WEIR_NEXMARK_CHECKPOINTS") != "" {
				fmt.Print(e.m.checkpointLines())
			}
		}
	}
}

func (m *Measured) short(events int64) string {
	switch {
	case m == nil:
		return "-"
	case m.Err != "":
		return "FAILED: " + m.Err
	}
	return fmt.Sprintf("%s ev/s/core (cpu %.2fs, rss %s)", human(m.EventsPerCoreSecond(events)), m.CPUSeconds, bytesHuman(m.PeakRSS))
}

func human(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fK", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

func bytesHuman(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%d MB", (b+(1<<19))>>20)
}
