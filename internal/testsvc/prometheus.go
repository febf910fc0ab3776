package testsvc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// StartPrometheus runs a Prometheus server of the test's own (binary bin,
// from Prometheus) that scrapes http://target/path every second, and
// returns its API's base URL. It is killed when the test ends; its log is
// printed if the test failed.
func StartPrometheus(t testing.TB, bin, target, path string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"+
		"scrape_configs:\n  - job_name: weir\n    metrics_path: %s\n    static_configs:\n      - targets: ['%s']\n", path, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(FreePort(t))
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

// FreePort returns a port of 127.0.0.1 free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// PromSample is one series of an instant query's answer.
type PromSample struct {
	Labels map[string]string
	Value  float64
}

// PromQuery runs an instant PromQL query against the Prometheus at base,
// evaluated at at (now when zero), and returns its series.
func PromQuery(t testing.TB, base, q string, at time.Time) []PromSample {
	t.Helper()
	v := url.Values{"query": {q}}
	if !at.IsZero() {
		v.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
	}
	r, err := http.Get(base + "/api/v1/query?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if body.Status != "success" {
		t.Fatalf("%s: %s", q, body.Error)
	}
	var out []PromSample
	for _, s := range body.Data.Result {
		str, _ := s.Value[1].(string)
		f, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("%s: value %q: %v", q, str, err)
		}
		out = append(out, PromSample{Labels: s.Metric, Value: f})
	}
	return out
}

// PromValue runs an instant query that answers one series and returns its
// value and the number of series (0, with value 0, when there is none).
func PromValue(t testing.TB, base, q string) (float64, int) {
	t.Helper()
	s := PromQuery(t, base, q, time.Time{})
	if len(s) == 0 {
		return 0, 0
	}
	return s[0].Value, len(s)
}

// PromWait polls q until its value is want, for at most 20 s (Prometheus
// scrapes every second).
func PromWait(t testing.TB, base, q string, want float64) {
	t.Helper()
	PromWaitUntil(t, base, q, func(v float64) bool { return v == want }, fmt.Sprint(want))
}

// PromWaitUntil polls q until ok holds for its value, for at most 20 s.
func PromWaitUntil(t testing.TB, base, q string, ok func(float64) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := PromValue(t, base, q)
		if ok(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v after 20 s, want %s", q, got, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
