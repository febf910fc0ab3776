package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// row is one mode's outcome on one engine, as the side-by-side table shows it.
type row struct {
	completed, failed, pending int
	p50, p99                   time.Duration
	persisted                  string
	sinkRate                   float64
	delay50, delay99           time.Duration
}

// flinkLine is the part of bench/flink Backpressure's JSON line the table uses
// (durations in ms, bytes as Flink's REST API reports persisted_data).
type flinkLine struct {
	Mode             string  `json:"mode"`
	Unaligned        bool    `json:"unaligned"`
	AlignedTimeoutMs int64   `json:"aligned_timeout_ms"`
	Debloat          bool    `json:"debloat"`
	Completed        int     `json:"completed"`
	Failed           int     `json:"failed"`
	InProgress       int     `json:"in_progress"`
	DurationsMs      []int64 `json:"durations_ms"`
	PersistedBytes   []int64 `json:"persisted_bytes"`
	StartDelaysMs    []int64 `json:"start_delays_ms"`
	SinkRate         float64 `json:"sink_records_per_s"`
}

// flinkArgs are Backpressure's arguments for c: the same job, in whole
// milliseconds (and microseconds for the sink's time per record).
func flinkArgs(c config) ([]string, error) {
	for name, d := range map[string]time.Duration{"duration": c.duration, "interval": c.interval,
		"timeout": c.timeout, "pause": c.pause, "debloat-target": c.debloatTarget} {
		if d%time.Millisecond != 0 {
			return nil, fmt.Errorf("-%s %v: Flink's side takes whole milliseconds", name, d)
		}
	}
	if c.sinkSleep%time.Microsecond != 0 {
		return nil, fmt.Errorf("-sink-sleep %v: Flink's side takes whole microseconds", c.sinkSleep)
	}
	return []string{"Backpressure", "--duration-ms", fmt.Sprint(c.duration.Milliseconds()),
		"--interval-ms", fmt.Sprint(c.interval.Milliseconds()), "--timeout-ms", fmt.Sprint(c.timeout.Milliseconds()),
		"--burst", fmt.Sprint(c.burst), "--pause-ms", fmt.Sprint(c.pause.Milliseconds()),
		"--sink-sleep-us", fmt.Sprint(c.sinkSleep.Microseconds()),
		"--debloat-target-ms", fmt.Sprint(c.debloatTarget.Milliseconds()), "--segment-size", c.flinkSegment}, nil
}

// runFlink runs every mode on Flink and returns its rows in the order of ms.
func runFlink(c config, ms []mode) ([]row, error) {
	args, err := flinkArgs(c)
	if err != nil {
		return nil, err
	}
	script := filepath.Join(c.flinkDir, "run.sh")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("%v: run from the repository's root or set -flink-dir", err)
	}
	fmt.Printf("\nFlink (%s %s)…\n", script, strings.Join(args, " "))
	cmd := exec.Command(script, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// Echo each mode's JSON line as it comes (a mode takes its duration
	// plus a MiniCluster's start).
	var out bytes.Buffer
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fmt.Println(sc.Text())
		out.Write(sc.Bytes())
		out.WriteByte('\n')
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", script, err, lastLines(stderr.String(), 15))
	}
	return flinkRows(out.Bytes(), ms)
}

// flinkRows matches Flink's JSON lines to the modes by their settings.
func flinkRows(out []byte, ms []mode) ([]row, error) {
	rows := make([]row, len(ms))
	found := make([]bool, len(ms))
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("{")) {
			continue
		}
		var l flinkLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("flink output %q: %v", line, err)
		}
		for i, m := range ms {
			if m.unaligned == l.Unaligned && m.timeout.Milliseconds() == l.AlignedTimeoutMs && m.debloat == l.Debloat {
				rows[i], found[i] = l.row(), true
			}
		}
	}
	for i, m := range ms {
		if !found[i] {
			return nil, fmt.Errorf("flink printed no line for mode %q", m.name)
		}
	}
	return rows, nil
}

func (l flinkLine) row() row {
	var persisted int64
	for _, b := range l.PersistedBytes {
		persisted += b
	}
	return row{completed: l.Completed, failed: l.Failed, pending: l.InProgress, p50: pct(millis(l.DurationsMs), 50),
		p99: pct(millis(l.DurationsMs), 99), persisted: bytesPer(persisted, len(l.PersistedBytes)), sinkRate: l.SinkRate,
		delay50: pct(millis(l.StartDelaysMs), 50), delay99: pct(millis(l.StartDelaysMs), 99)}
}

func millis(ms []int64) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * time.Millisecond
	}
	return out
}

func printSideBySide(ms []mode, weir, flink []row) {
	fmt.Printf("\n%-30s %-6s %14s %9s %9s %12s %10s %21s\n", "mode", "engine", "done/fail/pend", "p50", "p99",
		"persisted/cp", "sink rec/s", "barrier p50/p99 sink")
	for i, m := range ms {
		for _, e := range []struct {
			name string
			r    row
		}{{"weir", weir[i]}, {"flink", flink[i]}} {
			r := e.r
			fmt.Printf("%-30s %-6s %14s %9v %9v %12s %10.0f %21s\n", m.name, e.name,
				fmt.Sprintf("%d/%d/%d", r.completed, r.failed, r.pending), r.p50, r.p99, r.persisted, r.sinkRate,
				fmt.Sprintf("%v / %v", r.delay50, r.delay99))
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
