package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// captureStderr runs fn with os.Stderr going to a pipe and returns what
// was written.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old, oldDefault := os.Stderr, slog.Default()
	os.Stderr = w
	got := make(chan string)
	go func() { b, _ := io.ReadAll(r); got <- string(b) }()
	defer func() {
		os.Stderr = old
		slog.SetDefault(oldDefault)
		logs = logConfig{format: "text", level: "info"}
	}()
	fn()
	w.Close()
	return <-got
}

// TestLogFormatJSON: with --log-format json every line weir run logs is
// one JSON object — weir run's own and a library's that logs to the
// default logger (a SET the engine does not read) alike; --log-level warn
// leaves out info lines. Bad values are refused naming the flag.
func TestLogFormatJSON(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "logjob.sql")
	sql := `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE sunk (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sunk SELECT id FROM gen;
`
	if err := os.WriteFile(script, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var err error
		out := captureStderr(t, func() {
			root := newRootCommand()
			root.SetOut(io.Discard)
			root.SetErr(io.Discard)
			root.SetArgs(append([]string{"run", script, "-D", "execution.checkpointing.dir=" + filepath.Join(dir, "ck"),
				"-D", "pipeline.no-such-option=1"}, args...))
			err = root.Execute()
		})
		return out, err
	}
	out, err := run("--log-format", "json", "--log-level", "info")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("--log-format json wrote a line that is not JSON: %q (%v)\nall:\n%s", line, err, out)
		}
		msg, _ := rec["msg"].(string)
		msgs = append(msgs, msg)
	}
	joined := strings.Join(msgs, "\n")
	for _, want := range []string{"SET of an option Weir does not read", "REST endpoint"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %q line among:\n%s", want, out)
		}
	}
	out, err = run("--log-level", "error")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("--log-level error: err %v, logged:\n%s", err, out)
	}
	for args, want := range map[string]string{"--log-format=xml": `--log-format "xml": want text or json`,
		"--log-level=loud": `--log-level "loud": want debug, info, warn or error`} {
		if _, err := run(args); err == nil || err.Error() != want {
			t.Errorf("%s: err %v, want %q", args, err, want)
		}
	}
}
