package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/rest/api"
)

// runJobManagerToEnd runs weir jobmanager on dir with extra arguments and
// returns its error and output; it must exit by itself (a minute at most,
// which only a regression reaches).
func runJobManagerToEnd(t *testing.T, dir string, extra ...string) (error, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, append([]string{"jobmanager", "-D", "weir.jobmanager.dir=" + dir}, extra...)...)
	out, err := cmd.CombinedOutput()
	return err, string(out)
}

// snapshotDir lists every file under dir with its content's size (only
// the checkpoints moved aside, with live; not the lock a JobManager takes
// and releases), and jobs.json whole: what a
// JobManager that must not start must not change.
func snapshotDir(t *testing.T, dir string, live bool) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if live && errors.Is(err, fs.ErrNotExist) {
			return nil // a checkpoint the running JobManager retired while we walked
		}
		if err != nil || (fi.IsDir() && !strings.HasSuffix(p, ".corrupt")) {
			return err
		}
		if (!live || strings.Contains(p, ".corrupt")) && fi.Name() != "jobmanager.lock" {
			fmt.Fprintf(&b, "%s %d\n", strings.TrimPrefix(p, dir), fi.Size())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := os.ReadFile(filepath.Join(dir, "jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b.String() + string(jobs)
}

// A second weir jobmanager on the directory of a running one exits at
// once naming the first (pid, host, REST address), and touches neither
// jobs.json nor the job's checkpoints — also when it would not get the
// port either. After the first is SIGKILLed, one that cannot bind its
// port resumes nothing; the next one resumes the job from its checkpoint.
func TestSecondJobManagerOnOneDirRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jm")
	script := filepath.Join(t.TempDir(), "endless-h9.sql")
	if err := os.WriteFile(script, []byte(`
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT n FROM gen;`), 0o644); err != nil {
		t.Fatal(err)
	}
	jm := startJobManager(t, dir, "-D", "execution.checkpointing.interval=100ms")
	id := jm.submit(script)
	jm.waitCheckpoint(id)
	before := snapshotDir(t, dir, true)
	u, err := url.Parse(jm.url)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	for _, port := range []string{"0", u.Port()} {
		err, out := runJobManagerToEnd(t, dir, "-D", "rest.port="+port)
		want := fmt.Sprintf("weir.jobmanager.dir %s is in use by the JobManager with pid %d on %s (REST %s, since ", dir, jm.cmd.Process.Pid, host, jm.url)
		if err == nil || !strings.Contains(out, want) {
			t.Fatalf("second JobManager (rest.port %s): %v, printed:\n%s\nwant it to say %q", port, err, out, want)
		}
		if after := snapshotDir(t, dir, true); after != before {
			t.Fatalf("second JobManager (rest.port %s) changed the directory:\nbefore:\n%s\nafter:\n%s", port, before, after)
		}
	}

	if err := jm.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = jm.cmd.Wait()
	_ = os.Remove(filepath.Join(dir, jobManagerAddressFile))
	before = snapshotDir(t, dir, false)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, port, _ := net.SplitHostPort(taken.Addr().String())
	if err, out := runJobManagerToEnd(t, dir, "-D", "rest.port="+port); err == nil || !strings.Contains(out, "listen on 127.0.0.1:"+port) {
		t.Fatalf("JobManager on a taken port: %v, printed:\n%s", err, out)
	} else if bytes.Contains([]byte(out), []byte("resuming job")) {
		t.Fatalf("JobManager on a taken port resumed a job:\n%s", out)
	}
	if after := snapshotDir(t, dir, false); after != before {
		t.Fatalf("a JobManager that could not bind its port changed the directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	jm = startJobManager(t, dir, "-D", "execution.checkpointing.interval=100ms")
	jm.waitState(id, api.StateRunning)
	waitUntil(t, "job "+id+" restored", func() bool {
		st, err := jm.client().Checkpoints(context.Background(), id)
		return err == nil && st.Latest.Restored != nil
	})
}
