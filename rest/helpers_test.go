package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/jobmanager"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/rest/api"
)

// endlessJob runs until cancelled: 50 rows a second into a blackhole,
// checkpoints every 100 ms.
const endlessJob = `
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT n FROM gen;`

// cluster is a JobManager in this process with its REST endpoint.
type cluster struct {
	t   *testing.T
	m   *jobmanager.Manager
	ep  *Endpoint
	dir string
}

// newCluster starts a JobManager in a temporary directory, configured by
// kvs (key=value), on a free port of 127.0.0.1.
func newCluster(t *testing.T, kvs ...string) *cluster {
	dir := t.TempDir()
	cfg, err := jobmanager.LoadConfig("", append([]string{"rest.port=0", "weir.jobmanager.dir=" + dir}, kvs...))
	if err != nil {
		t.Fatal(err)
	}
	m, err := jobmanager.Open(jobmanager.Options{Dir: dir, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := Listen(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, m: m, ep: ep, dir: dir}
	recordContractTest(t)
	t.Cleanup(func() {
		_ = ep.Close()
		for _, j := range m.Jobs() {
			_ = m.Cancel(j.ID())
		}
		m.Close()
	})
	return c
}

// call sends a request with an optional raw body and token and returns
// the status and body.
func (c *cluster) call(method, path, body, token string) (int, []byte) {
	c.t.Helper()
	return call(c.t, http.DefaultClient, c.ep.URL(), method, path, body, token)
}

func call(t *testing.T, hc *http.Client, base, method, path, body, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	recordCall(t, req, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// wantError checks a Flink error reply: the status and one message
// containing want.
func wantError(t *testing.T, what string, code int, body []byte, wantCode int, want string) {
	t.Helper()
	var e api.ErrorResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || len(e.Errors) != 1 {
		t.Errorf("%s: body %s is not Flink's {\"errors\": [msg]}: %v", what, body, err)
		return
	}
	if code != wantCode || !strings.Contains(e.Errors[0], want) {
		t.Errorf("%s: %d %q, want %d and a message with %q", what, code, e.Errors[0], wantCode, want)
	}
}

// submit submits script and returns the job id.
func (c *cluster) submit(script string, settings map[string]string) string {
	c.t.Helper()
	cl := c.client(c.m.Config()[jobmanager.KeyAuthToken])
	id, err := cl.Submit(context.Background(), api.JobSubmitRequest{Script: script, Settings: settings})
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

// waitFor polls cond every 20 ms until it holds, for at most a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// subtaskGroup is the metric group of j's subtask task[index], waited
// for: a job's subtasks register their groups when they are deployed,
// which may be after its REST details first list the vertex.
func subtaskGroup(t testing.TB, j *jobmanager.Job, task string, index int) *metrics.Subtask {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if g := j.Metrics().Subtask(task, index); g != nil {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for the metric group of %s[%d]", task, index)
		}
	}
}

// state returns job id's state through GET /v1/jobs/:id.
func (c *cluster) state(id string) string {
	c.t.Helper()
	code, body := c.call("GET", "/v1/jobs/"+id, "", "")
	var d api.JobDetails
	if code != http.StatusOK || json.Unmarshal(body, &d) != nil {
		c.t.Fatalf("GET /v1/jobs/%s: %d %s", id, code, body)
	}
	return d.State
}

// checkpointed waits until job id has completed a checkpoint.
func (c *cluster) checkpointed(id string) {
	c.t.Helper()
	cl := c.client("")
	waitFor(c.t, "a completed checkpoint of "+id, func() bool {
		st, err := cl.Checkpoints(context.Background(), id)
		return err == nil && st.Counts.Completed > 0
	})
}
