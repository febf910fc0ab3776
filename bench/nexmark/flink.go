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
	// Written by RunQuery since issue 16 (Sampler.java).
	CheckpointList []CheckpointInfo `json:"checkpoint_list"`
	Samples        []Sample         `json:"samples"`
	Rows           *int64           `json:"rows"`
	Changes        *int64           `json:"changes"`
	MaxHeap        int64            `json:"max_heap_bytes"`
}

// runFlink runs one query with bench/flink's RunQuery on the script this
// package generates for Flink (so both engines run the same text, apart
// from the rewrites Script documents).
func (r *runner) runFlink(ctx context.Context, suite *Suite, q string, cfg RunConfig) *Measured {
	cfg.Engine = "flink"
	cfg.ensureDefaults()
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
		"--parallelism", strconv.Itoa(cfg.Parallelism), "--tps", strconv.FormatInt(cfg.TPS, 10),
		"--state-backend", cfg.FlinkBackend, "--incremental", strconv.FormatBool(cfg.FlinkBackend == "rocksdb"),
		"--sample-ms", strconv.FormatInt(r.sample().Milliseconds(), 10)}
	out, ru, wall, err := childCommandEnv(ctx, r.f.timeout, r.f.flinkDir, flinkEnv(r.f.flinkXmx), filepath.Join(r.f.flinkDir, "run.sh"), args...)
	m := &Measured{ProcessCPUSeconds: cpuOf(ru), WallSeconds: wall.Seconds(), Backend: flinkBackendLabel(cfg.FlinkBackend), Rows: -1, Changes: -1}
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
	m.CheckpointList, m.Samples, m.HeapCap = fr.CheckpointList, fr.Samples, fr.MaxHeap
	if fr.Rows != nil && fr.Changes != nil && strings.Contains(text, "'blackhole'") {
		m.Rows, m.Changes = *fr.Rows, *fr.Changes
	}
	return m
}

// flinkEnv gives run.sh the JVM's heap cap (-flink-xmx) through
// WEIR_FLINK_JAVA_OPTS, keeping what the caller's environment sets there.
func flinkEnv(xmx string) []string {
	if xmx == "" {
		return nil
	}
	opts := strings.TrimSpace(os.Getenv("WEIR_FLINK_JAVA_OPTS") + " -Xmx" + xmx)
	return append(os.Environ(), "WEIR_FLINK_JAVA_OPTS="+opts)
}

// flinkBackendLabel names Flink's backend as it runs: rocksdb always
// with incremental checkpoints, as Nexmark runs it.
func flinkBackendLabel(b string) string {
	if b == "rocksdb" {
		return "rocksdb+incremental"
	}
	return b
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
