package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"
)

// reportHeader describes the run for results.md.
func reportHeader(f suiteFlags) string {
	load, _ := os.ReadFile("/proc/loadavg")
	flinkHeap := "the JVM's default max heap"
	if f.flinkXmx != "" {
		flinkHeap = "-Xmx" + f.flinkXmx
	}
	return fmt.Sprintf("Nexmark on Weir (state backends %s) vs Flink (%s), %s. %d events per query, ${TPS} = %d, parallelism %d, %d CPUs, load average %s.\n"+
		"Heap caps: Weir GOMEMLIMIT %s (GOGC %d), Flink %s (each run's effective cap is in results.csv).\n"+
		"events/s/core = events ÷ CPU seconds (user + sys): Weir's from the child process's rusage (the whole process), "+
		"Flink's from RunQuery (process CPU from job submission to its end; JVM start and planning excluded). "+
		"Steady = events ÷ CPU seconds from the first %s sample past the warm-up (%d events) to the end of the run, "+
		"from both engines' own samples (the JIT's warm-up and Weir's first heap growth are left out). "+
		"Peak RSS: Weir's child maxrss, Flink's JVM VmHWM (MiniCluster in one JVM).\n",
		f.backend, f.flinkBackend, time.Now().Format("2006-01-02 15:04 MST"), f.events, f.tps, f.parallelism, goruntime.NumCPU(),
		strings.TrimSpace(string(load)), bytesHuman(f.memoryLimit), f.gogc, flinkHeap, f.sample, f.warmup)
}

func writeReport(dir string, rows []Row, header string) error {
	if err := writeCSV(filepath.Join(dir, "results.csv"), rows); err != nil {
		return err
	}
	if err := writeTimeline(filepath.Join(dir, "timeline.csv"), rows); err != nil {
		return err
	}
	md := header + "\n" + markdownTable(rows) + "\n" + detailTables(rows)
	if err := os.WriteFile(filepath.Join(dir, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	if err := writeChart(filepath.Join(dir, "chart.png"), rows); err != nil {
		return err
	}
	fmt.Printf("\n%s\nwritten to %s/{results.csv,results.md,chart.png,timeline.csv}\n", markdownTable(rows), dir)
	return nil
}

func writeCSV(path string, rows []Row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	head := []string{"query", "checkpoint", "events", "backends", "warmup_events"}
	for _, e := range []string{"weir", "flink"} {
		head = append(head, e+"_events_per_core_s", e+"_cpu_s", e+"_wall_s", e+"_peak_rss_bytes")
		if e == "flink" {
			head = append(head, "flink_process_cpu_s")
		}
		head = append(head, e+"_checkpoints", e+"_error", e+"_steady_events_per_core_s", e+"_state_backend", e+"_heap_cap_bytes",
			e+"_checkpoint_mean_ms", e+"_checkpoint_p50_ms", e+"_checkpoint_p99_ms", e+"_checkpoint_max_ms", e+"_checkpoint_mean_bytes", e+"_checkpoint_max_bytes",
			e+"_rows", e+"_changes", e+"_growth_early_events_per_core_s", e+"_growth_late_events_per_core_s")
	}
	w.Write(append(head, "ratio", "steady_ratio", "rows_differ"))
	for _, r := range rows {
		rec := []string{r.Query, r.Checkpoint, strconv.FormatInt(r.Events, 10), r.Backends, strconv.FormatInt(r.Warmup, 10)}
		rec = append(rec, csvMeasured(r.Weir, r.Events, false)...)
		rec = append(rec, csvExtra(r.Weir, r.Warmup, r.Events)...)
		rec = append(rec, csvMeasured(r.Flink, r.Events, true)...)
		rec = append(rec, csvExtra(r.Flink, r.Warmup, r.Events)...)
		rec = append(rec, fmtFloat(r.Ratio(), 3), fmtFloat(r.SteadyRatio(), 3), r.RowsDiffer)
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return f.Close()
}

func csvMeasured(m *Measured, events int64, process bool) []string {
	n := 6
	if process {
		n = 7
	}
	if m == nil {
		return make([]string, n)
	}
	out := []string{fmtFloat(m.EventsPerCoreSecond(events), 0), fmtFloat(m.CPUSeconds, 3), fmtFloat(m.WallSeconds, 3),
		strconv.FormatInt(m.PeakRSS, 10)}
	if process {
		out = append(out, fmtFloat(m.ProcessCPUSeconds, 3))
	}
	return append(out, strconv.Itoa(m.Checkpoints), m.Err)
}

// csvExtra are the columns issue 16 added.
func csvExtra(m *Measured, warmup, events int64) []string {
	if m == nil {
		return make([]string, 13)
	}
	c := m.checkpointSummary()
	rows, changes := "", ""
	if m.Rows >= 0 {
		rows, changes = strconv.FormatInt(m.Rows, 10), strconv.FormatInt(m.Changes, 10)
	}
	early, late, _ := StateGrowth(m.Samples, events) // empty cells when it cannot be read (the report says why)
	return []string{fmtFloat(SteadyRate(m.Samples, warmup), 0), m.Backend, strconv.FormatInt(m.HeapCap, 10),
		fmtFloat(c.MeanMs, 1), fmtFloat(c.P50Ms, 0), fmtFloat(c.P99Ms, 0), fmtFloat(c.MaxMs, 0), fmtFloat(c.MeanBytes, 0), fmtFloat(c.MaxBytes, 0), rows, changes,
		fmtFloat(early, 0), fmtFloat(late, 0)}
}

func fmtFloat(x float64, prec int) string {
	if x == 0 {
		return ""
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// markdownTable is the per-query table, with failures in a list below.
func markdownTable(rows []Row) string {
	var b strings.Builder
	b.WriteString("| query | checkpoint | backends | Weir events/s/core | Flink events/s/core | Weir ÷ Flink | Weir steady | Flink steady | steady ÷ | Weir peak RSS | Flink peak RSS |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var notes []string
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Query, r.Checkpoint, r.Backends,
			cell(r.Weir, r.Events), cell(r.Flink, r.Events), ratioCell(r.Ratio()),
			steadyCell(r.Weir, r.Warmup), steadyCell(r.Flink, r.Warmup), ratioCell(r.SteadyRatio()), rssCell(r.Weir), rssCell(r.Flink))
		if r.RowsDiffer != "" {
			notes = append(notes, fmt.Sprintf("- %s (%s, %s): ERROR: %s", r.Query, r.Checkpoint, r.Backends, r.RowsDiffer))
		}
		for _, e := range []struct {
			name string
			m    *Measured
		}{{"Weir", r.Weir}, {"Flink", r.Flink}} {
			if e.m != nil && e.m.Err != "" {
				notes = append(notes, fmt.Sprintf("- %s (%s) on %s: %s", r.Query, r.Checkpoint, e.name, e.m.Err))
			}
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nFailed or did not run:\n\n" + strings.Join(notes, "\n") + "\n")
	}
	return b.String()
}

func cell(m *Measured, events int64) string {
	switch {
	case m == nil:
		return "–"
	case m.Err != "":
		return "fails"
	}
	return human(m.EventsPerCoreSecond(events))
}

func ratioCell(x float64) string {
	if x == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", x)
}

func rssCell(m *Measured) string {
	if m == nil || m.Err != "" {
		return "–"
	}
	return bytesHuman(m.PeakRSS)
}

// detailTables are the checkpoints, result rows and heap caps of every
// run, and its throughput over time.
func detailTables(rows []Row) string {
	var b strings.Builder
	b.WriteString("Checkpoints (completed: count, mean and max duration, mean and max size), result rows (net) and heap caps:\n\n")
	b.WriteString("| query | checkpoint | backends | Weir checkpoints | Flink checkpoints | Weir rows | Flink rows | Weir heap cap | Flink heap cap |\n")
	b.WriteString("|---|---|---|---|---|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Query, r.Checkpoint, r.Backends,
			ckptCell(r.Weir), ckptCell(r.Flink), rowsCell(r.Weir), rowsCell(r.Flink), capCell(r.Weir), capCell(r.Flink))
	}
	b.WriteString("\nThroughput as state grows (events/s/core over the sources' " + growthSpansText() + " of the run):\n\n")
	b.WriteString("| query | checkpoint | backends | Weir | Flink |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Query, r.Checkpoint, r.Backends, growthCell(r.Weir, r.Events), growthCell(r.Flink, r.Events))
	}
	b.WriteString("\nThroughput over time (events/s in each sampling interval, wall clock; timeline.csv has events/s/core too):\n\n")
	for _, r := range rows {
		for _, e := range []struct {
			name string
			m    *Measured
		}{{"Weir", r.Weir}, {"Flink", r.Flink}} {
			if e.m == nil || e.m.Err != "" {
				continue
			}
			var rates []string
			for _, iv := range Intervals(e.m.Samples) {
				rates = append(rates, human(iv.EventsPerSecond))
			}
			fmt.Fprintf(&b, "- %s %s %s %s: %s\n", r.Query, r.Checkpoint, e.name, e.m.Backend, strings.Join(rates, " "))
		}
	}
	return b.String()
}

func ckptCell(m *Measured) string {
	if m == nil || m.Err != "" {
		return "–"
	}
	return m.checkpointSummary().String()
}

func capCell(m *Measured) string {
	if m == nil || m.Err != "" {
		return "–"
	}
	return bytesHuman(m.HeapCap)
}
