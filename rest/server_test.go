package rest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeJob records the calls and answers as told.
type fakeJob struct {
	done  chan struct{}
	calls chan string
	err   error
}

func (f *fakeJob) JobID() string         { return "j1" }
func (f *fakeJob) Done() <-chan struct{} { return f.done }
func (f *fakeJob) TriggerSavepoint(_ context.Context, dir string) (string, error) {
	f.calls <- "savepoint " + dir
	return dir + "/savepoint-j1-000000000001", f.err
}
func (f *fakeJob) StopWithSavepoint(_ context.Context, dir string, drain bool) (string, error) {
	if drain {
		f.calls <- "stop --drain " + dir
	} else {
		f.calls <- "stop " + dir
	}
	return dir + "/savepoint-j1-000000000002", f.err
}

func TestSavepointOperations(t *testing.T) {
	job := &fakeJob{done: make(chan struct{}), calls: make(chan string, 10)}
	srv := NewServer(job)
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	c := &Client{Base: hs.URL, Poll: time.Millisecond}
	ctx := context.Background()

	jobs, err := c.Jobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0] != (JobStatus{ID: "j1", Status: "RUNNING"}) {
		t.Fatalf("jobs: %+v, %v", jobs, err)
	}
	for _, tc := range []struct {
		start func() (string, error)
		call  string
		loc   string
	}{
		{func() (string, error) { return c.TriggerSavepoint(ctx, "j1", "/sp", false) }, "savepoint /sp", "/sp/savepoint-j1-000000000001"},
		{func() (string, error) { return c.TriggerSavepoint(ctx, "j1", "/sp", true) }, "stop /sp", "/sp/savepoint-j1-000000000002"},
		{func() (string, error) { return c.Stop(ctx, "j1", "/x", true) }, "stop --drain /x", "/x/savepoint-j1-000000000002"},
	} {
		trigger, err := tc.start()
		if err != nil {
			t.Fatal(err)
		}
		loc, err := c.AwaitSavepoint(ctx, "j1", trigger)
		if err != nil || loc != tc.loc {
			t.Fatalf("%s: location %q, %v; want %q", tc.call, loc, err, tc.loc)
		}
		if got := <-job.calls; got != tc.call {
			t.Fatalf("job called with %q; want %q", got, tc.call)
		}
	}
	job.err = errors.New("runtime: savepoint 7 of job \"j1\" failed: disk full")
	trigger, err := c.TriggerSavepoint(ctx, "j1", "/sp", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AwaitSavepoint(ctx, "j1", trigger); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("failed savepoint: %v; want the job's error", err)
	}
	if _, err := c.TriggerSavepoint(ctx, "nope", "/sp", false); err == nil || !strings.Contains(err.Error(), `job "nope" not found`) {
		t.Fatalf("unknown job: %v", err)
	}
	if _, err := c.SavepointStatus(ctx, "j1", "0000"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("unknown trigger: %v", err)
	}
}

// Flink's JSON shapes, field by field, under /v1 as well.
func TestFlinkJSONShapes(t *testing.T) {
	job := &fakeJob{done: make(chan struct{}), calls: make(chan string, 1)}
	srv := NewServer(job)
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	resp, err := http.Post(hs.URL+"/v1/jobs/j1/stop", "application/json", strings.NewReader(`{"targetDirectory": "/d", "drain": true}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || !strings.HasPrefix(string(body), `{"request-id":"`) {
		t.Fatalf("POST /v1/jobs/j1/stop: %s %s", resp.Status, body)
	}
	<-job.calls
	trigger := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(body)), `{"request-id":"`), `"}`)
	c := &Client{Base: hs.URL + "/v1", Poll: time.Millisecond}
	if _, err := c.AwaitSavepoint(context.Background(), "j1", trigger); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(hs.URL + "/jobs/j1/savepoints/" + trigger)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `{"status":{"id":"COMPLETED"},"operation":{"location":"/d/savepoint-j1-000000000002"}}`
	if strings.TrimSpace(string(body)) != want {
		t.Fatalf("status body %s; want %s", body, want)
	}
}
