package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// weir savepoint against a running weir run, then weir run
// --savepoint-on-stop on SIGTERM (exit 143, the path printed), then weir
// run --restore of that path. The job is a child process (the test binary
// acting as weir, see TestMain).
func TestSavepointCommands(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "endless.sql")
	ckDir := filepath.Join(dir, "checkpoints")
	err := os.WriteFile(script, []byte(`
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT n FROM gen;`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	start := func(args ...string) (*exec.Cmd, *bytes.Buffer, *bufio.Scanner) {
		cmd := exec.Command(self, append([]string{"run", script, "--checkpoint-dir", ckDir}, args...)...)
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
	onStop := filepath.Join(dir, "on-stop")
	cmd, stderr, out := start("-q", "--savepoint-on-stop", onStop)
	waitForFile(t, filepath.Join(ckDir, restAddressFile))

	var got bytes.Buffer
	root := newRootCommand()
	root.SetOut(&got)
	root.SetArgs([]string{"savepoint", script, filepath.Join(dir, "manual"), "--checkpoint-dir", ckDir})
	if err := root.Execute(); err != nil {
		t.Fatalf("weir savepoint: %v", err)
	}
	manual := regexp.MustCompile(`^Savepoint completed\. Path: (\S+)\n$`).FindStringSubmatch(got.String())
	if manual == nil || filepath.Dir(manual[1]) != filepath.Join(dir, "manual") {
		t.Fatalf("weir savepoint printed %q; want the path of a savepoint under %s", got.String(), filepath.Join(dir, "manual"))
	}
	assertSavepoint(t, manual[1])

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for out.Scan() {
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 143 {
		t.Fatalf("weir run --savepoint-on-stop on SIGTERM: %v, want exit status 143; stderr: %s", err, stderr)
	}
	said := regexp.MustCompile(`^job endless stopped by SIGTERM with a savepoint: (\S+)\n$`).FindStringSubmatch(stderr.String())
	if said == nil || filepath.Dir(said[1]) != onStop {
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

func assertSavepoint(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(path, "_metadata")); err != nil {
		t.Fatalf("savepoint %s: %v", path, err)
	}
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
