package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/session"
)

// metricsJob runs 15 s: 3000 rows at 200 a second, two thirds kept.
const metricsJob = `
SET 'execution.checkpointing.interval' = '1 s';
SET 'parallelism.default' = '2';
CREATE TABLE gen (id BIGINT, v INT) WITH ('connector' = 'datagen', 'rows-per-second' = '200',
  'number-of-rows' = '3000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000');
CREATE TABLE sunk (id BIGINT, v INT) WITH ('connector' = 'blackhole');
INSERT INTO sunk SELECT id, v FROM gen WHERE MOD(id, 3) <> 0;
`

// TestPrometheusScrapesRunningJob is the acceptance test of the metrics
// reporter: a real Prometheus server (started here, its own config and
// port, scraping every second) scrapes a job run as weir run runs it
// (script, -D metrics.reporter.prom.port, startMetrics) for its 15 s; then
// PromQL over what Prometheus stored returns the job's own final counts.
func TestPrometheusScrapesRunningJob(t *testing.T) {
	bin := testsvc.Prometheus(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "metrics_job.sql")
	if err := os.WriteFile(script, []byte(metricsJob), 0o644); err != nil {
		t.Fatal(err)
	}
	port := testsvc.FreePort(t)
	cmd := &cobra.Command{}
	cmd.SetOut(io.Discard)
	s, err := loadScript(cmd, script, []string{"metrics.reporter.prom.port=" + strconv.Itoa(port),
		"execution.checkpointing.dir=" + filepath.Join(dir, "ck")})
	if err != nil {
		t.Fatal(err)
	}
	jg, opts, err := s.Job(session.JobName(script))
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = logger(true)
	srv, err := startMetrics(s, "", &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	promAPI := testsvc.StartPrometheus(t, bin, fmt.Sprintf("127.0.0.1:%d", port), "/metrics")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := runtime.Run(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	var sink, source string
	for _, v := range jg.Vertices {
		for _, n := range v.Nodes {
			switch {
			case n.IsSink():
				sink = n.UID
			case v.IsSource() && n == v.Head():
				source = n.UID
			}
		}
	}
	lastID := lastCompleted(res.Checkpoints)
	wantSink, wantSource := res.Metrics[sink].RecordsIn, res.Metrics[source].RecordsOut
	if wantSink != 2000 || wantSource != 3000 || lastID == 0 {
		t.Fatalf("the job's own counts: sink %s in %d (want 2000), source %s out %d (want 3000), last checkpoint %d",
			sink, wantSink, source, wantSource, lastID)
	}
	// The registry keeps the final values after the job: wait (bounded)
	// until Prometheus has scraped them — the records and the final
	// checkpoint, which completes after the last record is in, so a scrape
	// between the two shows all records and the checkpoint before.
	sinkIn := fmt.Sprintf(`sum(weir_taskmanager_job_task_operator_numRecordsIn{operator_id=%q})`, sink)
	testsvc.PromWait(t, promAPI, sinkIn, float64(wantSink))
	testsvc.PromWait(t, promAPI, `weir_jobmanager_job_lastCompletedCheckpointId{job_name="metrics_job"}`, float64(lastID))

	for q, want := range map[string]int64{
		// The largest value Prometheus saw of each subtask's series, summed.
		fmt.Sprintf(`sum(max_over_time(weir_taskmanager_job_task_operator_numRecordsIn{operator_id=%q}[5m]))`, sink):    wantSink,
		fmt.Sprintf(`sum(max_over_time(weir_taskmanager_job_task_operator_numRecordsOut{operator_id=%q}[5m]))`, source): wantSource,
		`max_over_time(weir_jobmanager_job_lastCompletedCheckpointId{job_name="metrics_job"}[5m])`:                      int64(lastID),
		`max_over_time(weir_jobmanager_job_numRestarts{job_name="metrics_job"}[5m])`:                                    0,
	} {
		got, n := testsvc.PromValue(t, promAPI, q)
		if n != 1 || got != float64(want) {
			t.Errorf("%s = %v (%d series), want %d", q, got, n, want)
		}
	}
	samples, _ := testsvc.PromValue(t, promAPI, fmt.Sprintf(`count(count_over_time(weir_taskmanager_job_task_operator_numRecordsIn{operator_id=%q}[5m]))`, sink))
	seen, _ := testsvc.PromValue(t, promAPI, fmt.Sprintf(`sum(count_over_time(weir_taskmanager_job_task_operator_numRecordsIn{operator_id=%q}[5m]))`, sink))
	t.Logf("Prometheus stored %v samples over %v sink series", seen, samples)
}

func lastCompleted(stats []checkpoint.CheckpointStats) int64 {
	var id int64
	for _, s := range stats {
		if s.Status == checkpoint.StatusCompleted {
			id = int64(s.ID)
		}
	}
	return id
}

// TestMetricsPortFlag: --metrics-port turns the reporter on without any
// setting, on 127.0.0.1, serving the registry the job reports to; without
// flag or setting it is off; a bad port is refused naming the option.
func TestMetricsPortFlag(t *testing.T) {
	s := session.New()
	opts := runtime.Options{Logger: logger(true)}
	srv, err := startMetrics(s, "0", &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if ip := srv.Addr().(*net.TCPAddr).IP.String(); ip != "127.0.0.1" {
		t.Errorf("listening on %s, want 127.0.0.1", ip)
	}
	opts.Metrics.AddJob("j", "j").NumRestarts.Store(4)
	r, err := http.Get("http://" + srv.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if want := `weir_jobmanager_job_numRestarts{job_id="j",job_name="j"} 4`; !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s:\n%.2000s", want, body)
	}
	off := runtime.Options{Logger: logger(true)}
	if srv, err := startMetrics(s, "", &off); err != nil || srv != nil || off.Metrics != nil {
		t.Fatalf("without settings or flag: server %v, registry %v, err %v; want the reporter off", srv, off.Metrics, err)
	}
	if _, err := startMetrics(s, "http", &off); err == nil || !strings.Contains(err.Error(), "'metrics.reporter.prom.port' = 'http'") {
		t.Fatalf("--metrics-port http: err %v, want one naming metrics.reporter.prom.port", err)
	}
}
