package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// flinkResult is RunQuery's JSON line (bench/flink/README.md).
type flinkResult struct {
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	PeakRSS     int64   `json:"peak_rss_bytes"`
	PlanSeconds float64 `json:"plan_seconds"`
	Checkpoints int     `json:"checkpoints"`
}

// runFlink runs one query with bench/flink's RunQuery on the script this
// package generates for Flink (so both engines run the same text, apart
// from the rewrites Script documents).
func (r *runner) runFlink(ctx context.Context, suite *Suite, q string, cfg RunConfig) *Measured {
	cfg.Engine = "flink"
	sc, err := suite.Script(q, cfg.Params)
	if err != nil {
		return &Measured{Err: err.Error()}
	}
	text := sc.Text()
	for name, class := range sc.Functions {
		text = fmt.Sprintf("CREATE FUNCTION %s AS '%s';\n\n", name, class) + text
	}
	file := filepath.Join(cfg.Dir, q+"-flink.sql")
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return &Measured{Err: err.Error()}
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return &Measured{Err: err.Error()}
	}
	args := []string{"RunQuery", "--script", file, "--query", q, "--events", strconv.FormatInt(cfg.Events, 10),
		"--checkpoint-interval", strconv.FormatInt(cfg.Checkpoint.Milliseconds(), 10),
		"--parallelism", strconv.Itoa(cfg.Parallelism), "--tps", strconv.FormatInt(cfg.TPS, 10)}
	out, ru, wall, err := childCommand(ctx, r.f.timeout, r.f.flinkDir, filepath.Join(r.f.flinkDir, "run.sh"), args...)
	m := &Measured{ProcessCPUSeconds: cpuOf(ru), WallSeconds: wall.Seconds()}
	if err != nil {
		m.Err = flinkError(err.Error())
		return m
	}
	var fr flinkResult
	if err := json.Unmarshal(lastJSONLine(out), &fr); err != nil {
		m.Err = fmt.Sprintf("reading RunQuery's result: %v", err)
		return m
	}
	m.CPUSeconds, m.WallSeconds, m.PeakRSS, m.Checkpoints = fr.CPUSeconds, fr.WallSeconds, fr.PeakRSS, fr.Checkpoints
	return m
}

// flinkError picks the most telling line of a Java stack trace: the last
// "Caused by", else the first line that names an exception.
func flinkError(s string) string {
	best := ""
	for _, line := range splitLines(s) {
		switch {
		case strings.HasPrefix(line, "Caused by:"):
			best = line
		case best == "" && strings.Contains(line, "Exception"):
			best = line
		}
	}
	if best == "" {
		best = firstLine(s)
	}
	if len(best) > 300 {
		best = best[:300] + "…"
	}
	return best
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
