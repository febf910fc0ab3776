package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/rest"
	"github.com/weirstream/weir/rest/api"
)

// jobManagerProc is a weir jobmanager child process (the test binary
// acting as weir, see TestMain).
type jobManagerProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
}

// lockedBuffer is the child's stderr: written by exec's copying goroutine,
// read by the test (String) while the child runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startJobManager starts a JobManager keeping its store in dir, on a free
// port, with extra arguments (-D key=value), and waits for its REST address.
func startJobManager(t *testing.T, dir string, extra ...string) *jobManagerProc {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr := filepath.Join(dir, jobManagerAddressFile)
	_ = os.Remove(addr) // left by a SIGKILLed one
	p := &jobManagerProc{t: t, stderr: &lockedBuffer{}}
	p.cmd = exec.Command(self, append([]string{"jobmanager", "-D", "rest.port=0", "-D", "weir.jobmanager.dir=" + dir}, extra...)...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	waitForFile(t, addr)
	b, err := os.ReadFile(addr)
	if err != nil {
		t.Fatal(err)
	}
	p.url = strings.TrimSpace(string(b))
	return p
}

// weir runs a CLI verb against the JobManager and returns its output.
func (p *jobManagerProc) weir(args ...string) string {
	p.t.Helper()
	var out bytes.Buffer
	root := newRootCommand()
	root.SetOut(&out)
	root.SetArgs(append(args, "--jobmanager", p.url))
	if err := root.Execute(); err != nil {
		p.t.Fatalf("weir %s: %v\nJobManager log:\n%s", strings.Join(args, " "), err, p.stderr)
	}
	return out.String()
}

var submitted = regexp.MustCompile(`^Job has been submitted with JobID ([0-9a-f]{32})\n$`)

func (p *jobManagerProc) submit(script string, args ...string) string {
	p.t.Helper()
	out := p.weir(append([]string{"submit", script}, args...)...)
	m := submitted.FindStringSubmatch(out)
	if m == nil {
		p.t.Fatalf("weir submit printed %q", out)
	}
	return m[1]
}

func (p *jobManagerProc) client() *rest.Client { return &rest.Client{Base: p.url} }

// waitState waits until job id is in state.
func (p *jobManagerProc) waitState(id, state string) {
	p.t.Helper()
	last := "unknown"
	for deadline := time.Now().Add(2 * time.Minute); last != state; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.t.Fatalf("job %s is %s, want %s; JobManager log:\n%s", id, last, state, p.stderr)
		}
		jobs, err := p.client().Jobs(context.Background())
		if err != nil {
			continue
		}
		for _, j := range jobs {
			if j.ID == id {
				last = j.Status
			}
		}
		if api.Terminal(last) && last != state {
			p.t.Fatalf("job %s is %s, want %s; JobManager log:\n%s", id, last, state, p.stderr)
		}
	}
}

// waitCheckpoint waits until job id completed a checkpoint and returns
// its statistics.
func (p *jobManagerProc) waitCheckpoint(id string) api.CheckpointingStatistics {
	p.t.Helper()
	var st api.CheckpointingStatistics
	waitUntil(p.t, "a checkpoint of "+id, func() bool {
		var err error
		st, err = p.client().Checkpoints(context.Background(), id)
		return err == nil && st.Counts.Completed > 0
	})
	return st
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// unbounded makes the billing script read on past the topic's end.
func unbounded(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "'scan.bounded.mode' = 'latest-offset',", "", 1)
	out := strings.TrimSuffix(path, ".sql") + "-unbounded.sql"
	if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

var savepointLine = regexp.MustCompile(`^Savepoint completed\. Path: (\S+)\n$`)

// The CLI against a JobManager, end to end on the real Kafka and MariaDB:
// submit the billing job and an endless one, list them, cancel the
// endless one, take a savepoint of the billing job, stop it with a
// savepoint, then weir run --restore that savepoint to the end of the
// topic: the totals equal the ground truth exactly and no XA transaction
// is left behind.
func TestJobManagerCLIEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := newBillingRun(t, 20000, "mysql")
	r.produce(ctx)
	script := r.script()
	jm := startJobManager(t, filepath.Join(r.dir, "jm"))

	billing := jm.submit(unbounded(t, script), "-D", "execution.checkpointing.interval=200ms")
	endless := filepath.Join(r.dir, "endless.sql")
	if err := os.WriteFile(endless, []byte(`
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT n FROM gen;`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := jm.submit(endless)
	list := jm.weir("list")
	for _, want := range []string{" : " + billing + " : billing (RUNNING)\n", " : " + other + " : endless (RUNNING)\n"} {
		if !strings.Contains(list, want) {
			t.Fatalf("weir list:\n%s\nwant a line with %q", list, want)
		}
	}
	if out := jm.weir("cancel", other); out != "Cancelled job "+other+".\n" {
		t.Fatalf("weir cancel printed %q", out)
	}
	jm.waitState(other, api.StateCanceled)

	jm.waitCheckpoint(billing)
	if out := jm.weir("checkpoints", billing); !regexp.MustCompile(`(?m)^completed [1-9]\d*, failed \d+`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^\d+\s+COMPLETED\s+CHECKPOINT\s`).MatchString(out) {
		t.Fatalf("weir checkpoints printed:\n%s", out)
	}
	sp := savepointLine.FindStringSubmatch(jm.weir("savepoint", billing, filepath.Join(r.dir, "manual")))
	if sp == nil {
		t.Fatal("weir savepoint printed no path")
	}
	hasMetadata(t, sp[1])
	stop := savepointLine.FindStringSubmatch(jm.weir("stop", billing, "--savepoint-path", filepath.Join(r.dir, "stopped")))
	if stop == nil || filepath.Dir(stop[1]) != filepath.Join(r.dir, "stopped") {
		t.Fatalf("weir stop printed no path under %s", filepath.Join(r.dir, "stopped"))
	}
	hasMetadata(t, stop[1])
	jm.waitState(billing, api.StateFinished)
	list = jm.weir("list")
	if !strings.Contains(list, billing+" : billing (FINISHED)") || !strings.Contains(list, other+" : endless (CANCELED)") {
		t.Fatalf("weir list after stop and cancel:\n%s", list)
	}

	restoreToTruth(t, ctx, r, stop[1])
}

// A JobManager SIGKILLed with two billing jobs running comes back and both
// resume from their checkpoints: the second half of the bills, produced
// while it was down, is read, and each table equals its ground truth
// exactly once both are stopped with a savepoint (which commits the last
// transactions); XA RECOVER is empty.
func TestJobManagerSIGKILLResumesTwoJobs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	runs := []*billingRun{newBillingRun(t, 10000, "mysql"), newBillingRun(t, 10000, "mysql")}
	jm := startJobManager(t, filepath.Join(dir, "jm"))
	var ids []string
	for i, r := range runs {
		half := len(r.events) / 2
		if err := ProduceBills(ctx, r.brokers, r.dlq, 1, nil); err != nil {
			t.Fatal(err)
		}
		if err := ProduceBills(ctx, r.brokers, r.topic, 3, r.events[:half]); err != nil {
			t.Fatal(err)
		}
		r.flags.job = "billing-" + string(rune('a'+i))
		ids = append(ids, jm.submit(unbounded(t, r.script()), "-D", "execution.checkpointing.interval=200ms",
			"-D", "pipeline.name="+r.flags.job))
	}
	for _, id := range ids {
		jm.waitCheckpoint(id)
	}
	if err := jm.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = jm.cmd.Wait()
	for _, r := range runs {
		if err := ProduceBills(ctx, r.brokers, r.topic, 3, r.events[len(r.events)/2:]); err != nil {
			t.Fatal(err)
		}
	}

	jm = startJobManager(t, filepath.Join(dir, "jm"))
	for i, id := range ids {
		jm.waitState(id, api.StateRunning)
		waitUntil(t, "job "+id+" restored", func() bool {
			st, err := jm.client().Checkpoints(ctx, id)
			return err == nil && st.Latest.Restored != nil
		})
		r := runs[i]
		waitForTotals(t, r, func() string { return "JobManager log:\n" + jm.stderr.String() })
		if savepointLine.FindStringSubmatch(jm.weir("stop", id, "--savepoint-path", filepath.Join(dir, "sp"))) == nil {
			t.Fatal("weir stop printed no savepoint path")
		}
		jm.waitState(id, api.StateFinished)
		var verdict bytes.Buffer
		if err := verifyTotals(&verdict, r.flags); err != nil {
			t.Fatalf("job %s: %v\n%s", id, err, verdict.String())
		}
	}
}

// waitForTotals waits until r's table holds its ground truth (committed
// output only: the check that it stays so, with no transaction left, is
// verifyTotals after the job stopped).
func waitForTotals(t *testing.T, r *billingRun, logs func() string) {
	t.Helper()
	want, err := readTruth(r.truth)
	if err != nil {
		t.Fatal(err)
	}
	db, err := openVerifyDB(r.flags)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		got, err := queryTotals(db, r.table)
		if err == nil && equalTotals(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached the ground truth (%d of %d accounts, err %v); %s", r.table, len(got), len(want), err, logs())
		}
	}
}

func equalTotals(got, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func hasMetadata(t *testing.T, savepoint string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(savepoint, "_metadata")); err != nil {
		t.Fatalf("savepoint %s: %v", savepoint, err)
	}
}
