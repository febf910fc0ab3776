package jobmanager

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/rest/api"
)

const endless = `
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT n FROM gen;`

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// The store keeps every job across a restart of the JobManager: ended jobs
// with their state and exceptions, and running ones, which resume from
// their latest checkpoints.
func TestHistoryAndResumeAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	m, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	running, err := m.SubmitSQL(api.JobSubmitRequest{Script: endless, Name: "runs"})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, err := m.SubmitSQL(api.JobSubmitRequest{Script: endless, Name: "cancelled"})
	if err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(dir, "a-file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	failing, err := m.SubmitSQL(api.JobSubmitRequest{Name: "fails", Script: `
SET 'restart-strategy.type' = 'none';
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'filesystem', 'path' = '` + blocker + `/out', 'format' = 'csv');
INSERT INTO out SELECT n FROM gen;`})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a checkpoint of "+running.ID(), func() bool { return running.Checkpoints().Counts.Completed > 0 })
	if err := m.Cancel(cancelled.ID()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ends of two jobs", func() bool {
		return cancelled.State() == api.StateCanceled && failing.State() == api.StateFailed
	})
	cause := failing.Exceptions().ExceptionHistory.Entries
	if len(cause) != 1 || !strings.Contains(cause[0].Stacktrace, blocker) {
		t.Fatalf("the failed job's exceptions: %+v", cause)
	}
	// Flink's shape: a class name (never a Go type), the failing subtask
	// as "Name (i/n)", and where it ran.
	if c := cause[0]; c.ExceptionName != "org.apache.flink.runtime.JobException" ||
		c.TaskName != "Source: gen -> Calc -> Sink: out (1/1)" ||
		c.Location == "" || c.Location != c.Endpoint || c.TaskManagerID != c.Location+"-local" {
		t.Fatalf("the failed job's exception: name %q, task %q, location %q, endpoint %q, taskManagerId %q",
			c.ExceptionName, c.TaskName, c.Location, c.Endpoint, c.TaskManagerID)
	}
	m.Close()

	m, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got := map[string]string{}
	for _, j := range m.Jobs() {
		got[j.Name()] = j.State()
	}
	if len(got) != 3 || got["runs"] != api.StateRunning || got["cancelled"] != api.StateCanceled || got["fails"] != api.StateFailed {
		t.Fatalf("after the restart: %v", got)
	}
	f, err := m.Job(failing.ID())
	if err != nil || f.Exceptions().RootException != cause[0].Stacktrace || f.Overview().EndTime != failing.Overview().EndTime {
		t.Fatalf("the failed job after the restart: %+v, %v", f.Exceptions(), err)
	}
	r, err := m.Job(running.ID())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the resumed job's restore", func() bool { return r.Checkpoints().Latest.Restored != nil })
	restored := r.Checkpoints().Latest.Restored
	if !strings.HasPrefix(restored.ExternalPath, filepath.Join(dir, "checkpoints", running.ID())+"/chk-") || restored.IsSavepoint {
		t.Errorf("the resumed job restored %+v, want a checkpoint of its own", restored)
	}
	// The recovery shows in the history; it is no restart of the job.
	h := r.Exceptions().ExceptionHistory.Entries
	want := fmt.Sprintf("the job was recovered from checkpoint %d (%s)", restored.ID, restored.ExternalPath)
	if len(h) != 1 || !strings.HasSuffix(h[0].Stacktrace, want) || h[0].FailureLabels["type"] != "JobManagerFailover" {
		t.Errorf("the resumed job's exception history: %+v, want one entry ending %q", h, want)
	}
	if err := m.Cancel(cancelled.ID()); err == nil {
		t.Error("cancelling a job cancelled before the restart worked")
	}
}

// A second Open of a directory a Manager holds is refused naming the
// holder (this process), with its REST address once it set one, and
// resumes nothing; after Close the directory is free.
func TestOpenRefusesHeldDir(t *testing.T) {
	dir := t.TempDir()
	m, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetRESTAddress("http://127.0.0.1:18882"); err != nil {
		t.Fatal(err)
	}
	_, err = Open(Options{Dir: dir})
	var le *DirLockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrDirLocked) {
		t.Fatalf("second Open: %v, want a *DirLockedError", err)
	}
	host, _ := os.Hostname()
	if le.Holder.PID != os.Getpid() || le.Holder.Host != host || le.Holder.REST != "http://127.0.0.1:18882" {
		t.Fatalf("holder %+v", le.Holder)
	}
	want := fmt.Sprintf("is in use by the JobManager with pid %d on %s (REST http://127.0.0.1:18882, since ", os.Getpid(), host)
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
	m.Close()
	m, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	m.Close()
}
