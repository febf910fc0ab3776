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
	return fmt.Sprintf("Nexmark on Weir (state backend %s) vs Flink, %s. %d events per query, ${TPS} = %d, parallelism %d, %d CPUs, load average %s.\n"+
		"events/s/core = events ÷ CPU seconds (user + sys): Weir's from the child process's rusage (the whole process), "+
		"Flink's from RunQuery (process CPU from job submission to its end; JVM start and planning excluded). "+
		"Peak RSS: Weir's child maxrss, Flink's JVM VmHWM (MiniCluster in one JVM).\n",
		f.backend, time.Now().Format("2006-01-02 15:04 MST"), f.events, f.tps, f.parallelism, goruntime.NumCPU(), strings.TrimSpace(string(load)))
}

func writeReport(dir string, rows []Row, header string) error {
	if err := writeCSV(filepath.Join(dir, "results.csv"), rows); err != nil {
		return err
	}
	md := header + "\n" + markdownTable(rows)
	if err := os.WriteFile(filepath.Join(dir, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	if err := writeChart(filepath.Join(dir, "chart.png"), rows); err != nil {
		return err
	}
	fmt.Printf("\n%s\nwritten to %s/{results.csv,results.md,chart.png}\n", markdownTable(rows), dir)
	return nil
}

func writeCSV(path string, rows []Row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"query", "checkpoint", "events",
		"weir_events_per_core_s", "weir_cpu_s", "weir_wall_s", "weir_peak_rss_bytes", "weir_checkpoints", "weir_error",
		"flink_events_per_core_s", "flink_cpu_s", "flink_wall_s", "flink_peak_rss_bytes", "flink_process_cpu_s", "flink_checkpoints", "flink_error",
		"ratio"})
	for _, r := range rows {
		rec := []string{r.Query, r.Checkpoint, strconv.FormatInt(r.Events, 10)}
		rec = append(rec, csvMeasured(r.Weir, r.Events, false)...)
		rec = append(rec, csvMeasured(r.Flink, r.Events, true)...)
		rec = append(rec, fmtFloat(r.Ratio(), 3))
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

func fmtFloat(x float64, prec int) string {
	if x == 0 {
		return ""
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// markdownTable is the per-query table, with failures in a list below.
func markdownTable(rows []Row) string {
	var b strings.Builder
	b.WriteString("| query | checkpoint | Weir events/s/core | Flink events/s/core | Weir ÷ Flink | Weir peak RSS | Flink peak RSS |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|\n")
	var notes []string
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Query, r.Checkpoint,
			cell(r.Weir, r.Events), cell(r.Flink, r.Events), ratioCell(r.Ratio()), rssCell(r.Weir), rssCell(r.Flink))
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
		b.WriteString("\nDid not run:\n\n" + strings.Join(notes, "\n") + "\n")
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
