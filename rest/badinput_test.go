package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir/rest/api"
)

// Bad input gets Flink's JSON error with the right status, and nothing
// crashes: malformed bodies, unknown job ids, unknown paths and methods, a
// script that does not parse, a second cancel, a savepoint into a
// directory that cannot be written.
func TestBadInput(t *testing.T) {
	c := newCluster(t)
	id := c.submit(endlessJob, nil)
	unknown := strings.Repeat("ab", 16)
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+id, &d)
	vertex := "/v1/jobs/" + id + "/vertices/" + d.Vertices[0].ID
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", "/v1/jobs", `{"script": `, 400, "not valid JSON"},
		{"POST", "/v1/jobs", `{"scrip": "INSERT"}`, 400, `unknown field "scrip"`},
		{"POST", "/v1/jobs", ``, 400, "not valid JSON"},
		{"POST", "/v1/jobs", `{"script": "  "}`, 400, "has no script"},
		{"POST", "/v1/jobs", `{"script": "CREATE TABLE t (a INT) WITH ('connector' = 'datagen');\nINSERT INTO nowhere SELECT a FROM t;"}`, 400, "nowhere"},
		{"POST", "/v1/jobs", `{"script": "SELEC 1"}`, 400, "line 1"},
		{"POST", "/v1/jobs/" + id + "/savepoints", `{"target-directory": 5}`, 400, "not valid JSON"},
		{"POST", "/v1/jobs/" + id + "/stop", `[1, 2]`, 400, "not valid JSON"},
		{"POST", "/v1/jobs/" + id + "/savepoints", `{"formatType": "NATIVE"}`, 400, `formatType "NATIVE": Weir writes savepoints in the CANONICAL format only`},
		{"POST", "/v1/jobs/" + id + "/stop", `{"triggerId": "t1"}`, 400, `triggerId "t1" is not a valid id`},
		{"GET", "/v1/jobs/" + unknown, "", 404, "no job with id"},
		{"GET", "/v1/jobs/" + unknown + "/checkpoints", "", 404, "no job with id"},
		{"PATCH", "/v1/jobs/" + unknown + "?mode=cancel", "", 404, "no job with id"},
		{"POST", "/v1/jobs/" + unknown + "/savepoints", `{"target-directory": "/tmp"}`, 404, "no job with id"},
		{"GET", "/v1/jobs/" + id + "/checkpoints/details/999999", "", 404, "no checkpoint 999999"},
		{"GET", "/v1/jobs/" + id + "/vertices/" + unknown, "", 404, "has no vertex"},
		{"GET", "/v1/jobs/" + id + "/savepoints/" + unknown, "", 404, "no savepoint operation"},
		{"GET", "/v1/jobs/" + id + "/vertices/" + unknown + "/backpressure", "", 404, "has no vertex"},
		{"GET", "/v1/jobs/" + id + "/vertices/" + unknown + "/metrics?get=0.numRecordsIn", "", 404, "has no vertex"},
		{"GET", "/v1/jobs/" + id + "/vertices/" + unknown + "/subtasks/metrics", "", 404, "has no vertex"},
		{"GET", "/v1/jobs/" + id + "/vertices/Source/metrics", "", 400, `vertexid "Source" is not a valid id`},
		{"GET", "/v1/jobs/" + unknown + "/vertices/" + d.Vertices[0].ID + "/backpressure", "", 404, "no job with id"},
		{"GET", vertex + "/subtasks/metrics?get=numRecordsIn&agg=skew", "", 400, `agg "skew": want one of min, max, avg, sum`},
		{"GET", vertex + "/subtasks/metrics?get=numRecordsIn&subtasks=0-x", "", 400, `subtasks "0-x": want subtask indexes and ranges`},
		{"GET", vertex + "/subtasks/metrics?get=numRecordsIn&subtasks=3-1", "", 400, `subtasks "3-1"`},
		{"GET", vertex + "/subtasks/metrics?get=numRecordsIn&subtasks=0,7", "", 400, "subtask 7 of vertex"},
		{"GET", "/v1/jobs/" + id + "/checkpoints/details/1/slowest?n=-3", "", 400, "positive number"},
		{"PATCH", "/v1/jobs/" + id + "?mode=stop", "", 400, "want cancel"},
		{"GET", "/v1/jobs/" + id + "?subtasks=some", "", 400, `subtasks "some": want all`},
		{"GET", vertex + "?offset=-1", "", 400, `offset "-1": want a number of subtasks`},
		{"GET", vertex + "/backpressure?limit=x", "", 400, `limit "x": want a number of subtasks`},
		{"GET", "/v1/nonsense", "", 404, "Not found"},
		{"DELETE", "/v1/jobs/" + id, "", 404, "Not found"},
	} {
		code, body := c.call(tc.method, tc.path, tc.body, "")
		wantError(t, tc.method+" "+tc.path+" "+tc.body, code, body, tc.code, tc.want)
	}

	// A savepoint into a directory that cannot be written: the operation
	// completes with a failure cause naming it; the job runs on.
	// (Its parent is a file: root, who writes anywhere, cannot either.)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(file, "savepoints")
	c.checkpointed(id)
	cl := &Client{Base: c.ep.URL()}
	trigger, err := cl.TriggerSavepoint(context.Background(), id, ro, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.AwaitSavepoint(context.Background(), id, trigger); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("savepoint into %s: %v, want a failure naming it", ro, err)
	}
	if st := c.state(id); st != api.StateRunning {
		t.Fatalf("after a failed savepoint the job is %s, want RUNNING", st)
	}

	// Cancel twice: the second is a 409 conflict, as is a cancel of an
	// ended job.
	if code, body := c.call("PATCH", "/v1/jobs/"+id+"?mode=cancel", "", ""); code != http.StatusAccepted || string(body) != "{}\n" {
		t.Fatalf("first cancel: %d %s", code, body)
	}
	code, body := c.call("PATCH", "/v1/jobs/"+id+"?mode=cancel", "", "")
	wantError(t, "second cancel", code, body, http.StatusConflict, "")
	waitFor(t, "the job to be CANCELED", func() bool { return c.state(id) == api.StateCanceled })
	code, body = c.call("PATCH", "/v1/jobs/"+id, "", "")
	wantError(t, "cancel of a cancelled job", code, body, http.StatusConflict, "is CANCELED")
	code, body = c.call("POST", "/v1/jobs/"+id+"/stop", `{}`, "")
	wantError(t, "stop of a cancelled job", code, body, http.StatusConflict, "is CANCELED")
	var ex api.JobExceptions
	if code, body := c.call("GET", "/v1/jobs/"+id+"/exceptions", "", ""); code != 200 || json.Unmarshal(body, &ex) != nil {
		t.Fatalf("exceptions: %d %s", code, body)
	}
}

// Flink's savepoint body fields carry over: formatType CANONICAL is
// taken, and a POST repeated with the same triggerId (a client retrying)
// starts no second savepoint and answers the same id, whose status is the
// one savepoint taken; the id cannot be reused for another job.
func TestSavepointTriggerID(t *testing.T) {
	c := newCluster(t)
	id := c.submit(endlessJob, nil)
	other := c.submit(endlessJob, map[string]string{"pipeline.name": "other"})
	c.checkpointed(id)
	dir := t.TempDir()
	trigger := strings.Repeat("0f", 16)
	body := `{"target-directory": "` + dir + `", "formatType": "CANONICAL", "triggerId": "` + trigger + `"}`
	for range 2 {
		code, got := c.call("POST", "/v1/jobs/"+id+"/savepoints", body, "")
		var tr api.TriggerResponse
		if code != 202 || json.Unmarshal(got, &tr) != nil || tr.RequestID != trigger {
			t.Fatalf("POST savepoints with triggerId: %d %s, want 202 and request-id %s", code, got, trigger)
		}
	}
	awaitSavepoint(t, c, id, trigger, dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("%d entries in the savepoint directory, want the one savepoint: %v", len(entries), entries)
	}
	code, got := c.call("POST", "/v1/jobs/"+other+"/savepoints", body, "")
	wantError(t, "the same triggerId for another job", code, got, 400, "already in use for another job")
}
