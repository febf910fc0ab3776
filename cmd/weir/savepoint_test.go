package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/internal/testsvc"
)

// weir savepoint against a running weir run, then weir run
// --savepoint-on-stop on SIGTERM (exit 143, the path printed), then weir
// run --restore of that path: with the savepoints in a local directory,
// and in the S3 test server's bucket (s3.* options given with -D). The job
// is a child process (the test binary acting as weir, see TestMain).
func TestSavepointCommands(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		dir := t.TempDir()
		savepointCommands(t, dir, dir, nil, func(t *testing.T, path string) {
			if _, err := os.Stat(filepath.Join(path, "_metadata")); err != nil {
				t.Fatalf("savepoint %s: %v", path, err)
			}
		})
	})
	t.Run("s3", func(t *testing.T) {
		srv := testsvc.S3(t)
		target := fmt.Sprintf("s3://%s/weir-cli/%d", srv.Bucket, time.Now().UnixNano())
		opts := checkpointstorage.Options{S3: checkpointstorage.S3Options{Endpoint: srv.Endpoint, Region: srv.Region,
			AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}}
		set := []string{"-D", "s3.endpoint=" + srv.Endpoint, "-D", "s3.access-key=" + srv.AccessKey, "-D", "s3.secret-key=" + srv.SecretKey}
		savepointCommands(t, t.TempDir(), target, set, func(t *testing.T, path string) {
			s, err := checkpointstorage.Open(target, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			m, st, _, err := s.Resolve(path)
			if err != nil || !m.Savepoint {
				t.Fatalf("savepoint %s: %+v, %v", path, m, err)
			}
			if st != s {
				_ = st.Close()
			}
		})
	})
}

// savepointCommands runs TestSavepointCommands with the job's files in
// dir, savepoints under target, set passed to every weir run, and
// assertSavepoint checking a savepoint's path.
func savepointCommands(t *testing.T, dir, target string, set []string, assertSavepoint func(*testing.T, string)) {
	script := filepath.Join(dir, "endless.sql")
	ckDir := filepath.Join(dir, "checkpoints")
	self := writeEndless(t, script)
	start := func(args ...string) (*exec.Cmd, *bytes.Buffer, *bufio.Scanner) {
		args = append(append([]string{"run", script, "--checkpoint-dir", ckDir}, set...), args...)
		cmd := exec.Command(self, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out := bufio.NewScanner(stdout)
		if !out.Scan() {
			t.Fatalf("the job printed nothing: %s", stderr.String())
		}
		return cmd, &stderr, out
	}
	under := func(dir string) *regexp.Regexp {
		return regexp.MustCompile("^" + regexp.QuoteMeta(dir) + `/savepoint-endles-[0-9a-f]{12}$`)
	}
	onStop := target + "/on-stop"
	cmd, stderr, out := start("-q", "--savepoint-on-stop", onStop)
	waitForFile(t, filepath.Join(ckDir, restAddressFile))

	var got bytes.Buffer
	root := newRootCommand()
	root.SetOut(&got)
	root.SetArgs([]string{"savepoint", script, target + "/manual", "--checkpoint-dir", ckDir})
	if err := root.Execute(); err != nil {
		t.Fatalf("weir savepoint: %v", err)
	}
	manual := regexp.MustCompile(`^Savepoint completed\. Path: (\S+)\n$`).FindStringSubmatch(got.String())
	if manual == nil || !under(target+"/manual").MatchString(manual[1]) {
		t.Fatalf("weir savepoint printed %q; want the path of a savepoint under %s", got.String(), target+"/manual")
	}
	assertSavepoint(t, manual[1])

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for out.Scan() {
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 143 {
		t.Fatalf("weir run --savepoint-on-stop on SIGTERM: %v, want exit status 143; stderr: %s", err, stderr)
	}
	said := regexp.MustCompile(`^job endless stopped by SIGTERM with a savepoint: (\S+)\n$`).FindStringSubmatch(stderr.String())
	if said == nil || !under(onStop).MatchString(said[1]) {
		t.Fatalf("stderr %q; want the savepoint's path under %s", stderr.String(), onStop)
	}
	assertSavepoint(t, said[1])
	if _, err := os.Stat(filepath.Join(ckDir, restAddressFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left behind after the job ended: %v", restAddressFile, err)
	}

	cmd, stderr, _ = start("--restore", said[1], "-D", "parallelism.default=2")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !strings.Contains(stderr.String(), `msg="restoring savepoint"`) || !strings.Contains(stderr.String(), said[1]) {
		t.Errorf("restore of the savepoint: stderr does not say it restored %s:\n%s", said[1], stderr)
	}
}

// writeEndless writes to path a job that checkpoints every 100 ms and
// prints rows for ever, and returns the test binary, which runs it as weir
// (see TestMain).
func writeEndless(t *testing.T, path string) (self string) {
	t.Helper()
	err := os.WriteFile(path, []byte(`
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT n FROM gen;`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if self, err = os.Executable(); err != nil {
		t.Fatal(err)
	}
	return self
}

func waitForFile(t *testing.T, p string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(p); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", p)
		}
	}
}

// weir savepoint cannot find the REST address of a job that checkpoints
// into a bucket: it says so and names --address.
func TestSavepointCommandBucketNeedsAddress(t *testing.T) {
	script := filepath.Join(t.TempDir(), "job.sql")
	if err := os.WriteFile(script, []byte("SET 'execution.checkpointing.interval' = '1 s';\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := newRootCommand()
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	root.SetArgs([]string{"savepoint", script, "--checkpoint-dir", "s3://bucket/checkpoints"})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "s3://bucket/checkpoints, a bucket") || !strings.Contains(err.Error(), "--address") {
		t.Fatalf("weir savepoint with a bucket checkpoint directory: %v; want the bucket named and --address suggested", err)
	}
}

// weir savepoint --stop against a running weir run exits 0 and prints the
// savepoint's path, though the job (and its REST endpoint) ends before the
// client asks for the result: weir run waits until it has been fetched.
// It finds the run by the checkpoint directory both are given, or, with
// none given, by the job's name: 'pipeline.name' when the script SETs it.
func TestSavepointStopCommand(t *testing.T) {
	t.Run("checkpoint-dir", func(t *testing.T) {
		dir := t.TempDir()
		ckDir := filepath.Join(dir, "checkpoints")
		savepointStop(t, dir, "", ckDir, "--checkpoint-dir", ckDir)
	})
	t.Run("pipeline.name", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir) // the default checkpoint directory is relative, for weir run (Dir below) and weir savepoint
		savepointStop(t, dir, "SET 'pipeline.name' = 'pcdc-h10';\n", filepath.Join(dir, ".weir", "checkpoints", "pcdc-h10"))
	})
}

// savepointStop runs TestSavepointStopCommand's case: the endless script
// (set prepended) runs in dir with args and writes its REST address into
// ckDir; weir savepoint --stop is given the same args.
func savepointStop(t *testing.T, dir, set, ckDir string, args ...string) {
	script := filepath.Join(dir, "stopme.sql")
	self := writeEndless(t, script)
	body, _ := os.ReadFile(script)
	if err := os.WriteFile(script, append([]byte(set), body...), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(self, append([]string{"run", "-q", script}, args...)...)
	run.Dir, run.Stdout = dir, io.Discard
	var stderr bytes.Buffer
	run.Stderr = &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	waitForFile(t, filepath.Join(ckDir, restAddressFile))

	var got bytes.Buffer
	root := newRootCommand()
	root.SetOut(&got)
	root.SetArgs(append([]string{"savepoint", script, filepath.Join(dir, "sp"), "--stop"}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("weir savepoint --stop: %v", err)
	}
	said := regexp.MustCompile(`^Savepoint completed\. Path: (\S+)\n$`).FindStringSubmatch(got.String())
	if said == nil || !strings.HasPrefix(said[1], filepath.Join(dir, "sp", "savepoint-")) {
		t.Fatalf("weir savepoint --stop printed %q; want the path of a savepoint under %s", got.String(), filepath.Join(dir, "sp"))
	}
	if _, err := os.Stat(filepath.Join(said[1], "_metadata")); err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("weir run stopped with a savepoint: %v; stderr: %s", err, stderr.String())
	}
}

// weir run --restore latest on a checkpoint directory that does not exist
// says so, naming it, in runtime's words (not as a JobManager refusal).
func TestRunRestoreLatestMissingDir(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "endless.sql")
	writeEndless(t, script)
	missing := filepath.Join(dir, "nope")
	root := newRootCommand()
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	root.SetArgs([]string{"run", "-q", script, "--restore", "latest", "--checkpoint-dir", missing})
	err := root.Execute()
	want := `runtime: restore "latest": checkpointstorage: no usable checkpoint in ` + missing + `: the directory does not exist`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("weir run --restore latest of a missing directory: %v\nwant an error starting %q", err, want)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused restore created %s: %v", missing, err)
	}
}
