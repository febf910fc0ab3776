package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
)

// weir run stopped by SIGINT or SIGTERM exits with 128 + the signal's
// number (130, 143), as shells expect, after saying so. The job is a child
// process (the test binary acting as weir, see TestMain); the signal is
// sent once the job has printed its first row, so it is running.
func TestRunExitStatusOnSignal(t *testing.T) {
	script := filepath.Join(t.TempDir(), "endless.sql")
	err := os.WriteFile(script, []byte(`
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT n FROM gen;`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		says string
	}{{syscall.SIGINT, 130, "job endless stopped by SIGINT\n"}, {syscall.SIGTERM, 143, "job endless stopped by SIGTERM\n"}} {
		cmd := exec.Command(self, "run", "-q", script)
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
			t.Fatalf("%v: the job printed nothing: %s", tc.sig, stderr.String())
		}
		if err := cmd.Process.Signal(tc.sig); err != nil {
			t.Fatal(err)
		}
		for out.Scan() {
		}
		err = cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != tc.code {
			t.Errorf("%v: got %v, want exit status %d", tc.sig, err, tc.code)
		}
		if got := stderr.String(); got != tc.says {
			t.Errorf("%v: stderr %q, want %q", tc.sig, got, tc.says)
		}
	}
}

// The status line is ended with a newline before the message that follows
// it, so the two do not run into each other.
func TestStatusLineEndsBeforeStopMessage(t *testing.T) {
	var w bytes.Buffer
	s := newStatusLine(&w)
	s.update(runtime.Progress{RecordsRead: 10, RecordsWritten: 10})
	s.end()
	_ = jobEnded(&w, "j", nil, nil, syscall.SIGINT)
	want := "\r\033[K10 in (10/s) · 10 out (10/s) · no checkpoint yet · 0 restarts\njob j stopped by SIGINT\n"
	if w.String() != want {
		t.Errorf("got  %q\nwant %q", w.String(), want)
	}
	var none *statusLine // not a terminal: no status line, nothing to end
	none.end()

	// A log line clears the status line first; the next update redraws it.
	w.Reset()
	s.update(runtime.Progress{RecordsRead: 10, RecordsWritten: 10})
	fmt.Fprint(s.clearing(), "level=WARN msg=x\n")
	want = "\r\033[K10 in (0/s) · 10 out (0/s) · no checkpoint yet · 0 restarts\r\033[Klevel=WARN msg=x\n"
	if w.String() != want {
		t.Errorf("log line: got  %q\nwant %q", w.String(), want)
	}
}

// Late records dropped and records too far in the future show on the
// status line and in the closing message, so a user sees that windows
// left records out.
func TestLateDropsShown(t *testing.T) {
	got := statusText(runtime.Progress{RecordsRead: 7, RecordsWritten: 3, LateDropped: 2, FutureSkewed: 1}, runtime.Progress{}, 1)
	want := "7 in (7/s) · 3 out (3/s) · no checkpoint yet · 0 restarts · 2 late records dropped · 1 record too far in the future (see the log)"
	if got != want {
		t.Errorf("status line\ngot  %q\nwant %q", got, want)
	}
	var w bytes.Buffer
	res := &runtime.Result{Metrics: map[string]operator.Metrics{"src": {FutureSkewed: 1}, "window": {LateDropped: 2}}}
	if err := jobEnded(&w, "j", res, nil, nil); err != nil {
		t.Fatal(err)
	}
	want = "job j finished: 0 checkpoints, 0 restarts, 2 late records dropped, 1 record too far in the future to move the watermark (see the log)\n"
	if w.String() != want {
		t.Errorf("closing message\ngot  %q\nwant %q", w.String(), want)
	}
}
