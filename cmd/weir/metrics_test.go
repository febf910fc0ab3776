package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
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
	port := freePort(t)
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
	promAPI := startPrometheus(t, bin, port)

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
			case strings.HasPrefix(n.Name, "Sink"):
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
	waitFor(t, promAPI, sinkIn, float64(wantSink))
	waitFor(t, promAPI, `weir_jobmanager_job_lastCompletedCheckpointId{job_name="metrics_job"}`, float64(lastID))

	for q, want := range map[string]int64{
		// The largest value Prometheus saw of each subtask's series, summed.
		fmt.Sprintf(`sum(max_over_time(weir_taskmanager_job_task_operator_numRecordsIn{operator_id=%q}[5m]))`, sink):    wantSink,
		fmt.Sprintf(`sum(max_over_time(weir_taskmanager_job_task_operator_numRecordsOut{operator_id=%q}[5m]))`, source): wantSource,
		`max_over_time(weir_jobmanager_job_lastCompletedCheckpointId{job_name="metrics_job"}[5m])`:                      int64(lastID),
		`max_over_time(weir_jobmanager_job_numRestarts{job_name="metrics_job"}[5m])`:                                    0,
	} {
		got, n := query(t, promAPI, q)
		if n != 1 || got != float64(want) {
			t.Errorf("%s = %v (%d series), want %d", q, got, n, want)
		}
	}
	samples, _ := query(t, promAPI, fmt.Sprintf(`count(count_over_time(weir_taskmanager_job_task_operator_numRecordsIn{operator_id=%q}[5m]))`, sink))
	seen, _ := query(t, promAPI, fmt.Sprintf(`sum(count_over_time(weir_taskmanager_job_task_operator_numRecordsIn{operator_id=%q}[5m]))`, sink))
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

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startPrometheus runs a Prometheus server of its own that scrapes
// 127.0.0.1:target every second, and returns its API's base URL. It is
// killed when the test ends.
func startPrometheus(t *testing.T, bin string, target int) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"+
		"scrape_configs:\n  - job_name: weir\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	var log bytes.Buffer
	p := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+listen)
	p.Stdout, p.Stderr = &log, &log
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Process.Kill()
		_ = p.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", log.String())
		}
	})
	base := "http://" + listen
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := http.Get(base + "/-/ready")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s not ready after 30 s: %v", listen, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// query runs an instant PromQL query and returns the value of its one
// series (and how many series there were).
func query(t *testing.T, base, q string) (float64, int) {
	t.Helper()
	r, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if body.Status != "success" {
		t.Fatalf("%s: %s", q, body.Error)
	}
	if len(body.Data.Result) == 0 {
		return 0, 0
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s: value %q: %v", q, s, err)
	}
	return v, len(body.Data.Result)
}

// waitFor polls q until it returns want, for at most 20 s (Prometheus
// scrapes every second).
func waitFor(t *testing.T, base, q string, want float64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := query(t, base, q)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v after 20 s, want %v", q, got, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
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
