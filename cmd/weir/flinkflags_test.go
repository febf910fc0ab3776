package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/weirstream/weir/rest/api"
)

// Flink's `flink run -s PATH` and `--fromSavepoint PATH` restore as
// --restore does, on weir run and weir submit.
func TestFlinkRestoreFlagNames(t *testing.T) {
	for name, mk := range map[string]func() *cobra.Command{"run": newRunCommand, "submit": newSubmitCommand} {
		for _, args := range [][]string{{"-s", "/sp/savepoint-1"}, {"--fromSavepoint", "/sp/savepoint-1"}, {"--restore", "/sp/savepoint-1"}} {
			cmd := mk()
			if err := cmd.ParseFlags(args); err != nil {
				t.Fatalf("%s %v: %v", name, args, err)
			}
			got, err := cmd.Flags().GetString("restore")
			if err != nil {
				t.Fatal(err)
			}
			if got != "/sp/savepoint-1" {
				t.Errorf("%s %v: --restore is %q", name, args, got)
			}
		}
	}
}

// A restore of a script that takes no checkpoints is refused before the
// job runs, naming the path and the option to set: the job would start
// empty and drop the state asked for. latest-or-empty starts empty anyway.
func TestRestoreWithoutCheckpointingRefused(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "nock.sql")
	err := os.WriteFile(script, []byte(`
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE out (k BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k FROM gen;
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(dir, "savepoint-1")
	for _, args := range [][]string{{"--restore", sp}, {"-s", "latest"}, {"-D", "execution.savepoint.path=" + sp}} {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		root.SetArgs(append([]string{"run", script, "-q"}, args...))
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), "checkpointing is off") ||
			!strings.Contains(err.Error(), "execution.checkpointing.interval") || !strings.Contains(err.Error(), "nock.sql") {
			t.Errorf("run %v: %v; want the restore refused, checkpointing off", args, err)
		}
	}
	root := newRootCommand()
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	root.SetArgs([]string{"run", script, "-q", "--restore", "latest-or-empty"})
	if err := root.Execute(); err != nil {
		t.Errorf("run --restore latest-or-empty: %v; want it to start empty", err)
	}
}

// A --rest-port that is no port is refused before the job runs (the
// bounded job writes nothing), naming the flag once, not rest.port.
func TestRunRestPortOutOfRange(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	script := filepath.Join(dir, "ports.sql")
	err := os.WriteFile(script, []byte(`
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE sink (k BIGINT) WITH ('connector' = 'filesystem', 'path' = '`+out+`', 'format' = 'csv');
INSERT INTO sink SELECT k FROM gen;
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for port, want := range map[string]string{
		"99999": "--rest-port: 99999 is not a port (0..65535; 0 picks a free one)",
		"-1":    "--rest-port: -1 is not a port (0..65535; 0 picks a free one)",
	} {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		root.SetArgs([]string{"run", script, "-q", "--rest-port", port})
		if err := root.Execute(); err == nil || err.Error() != want {
			t.Errorf("run --rest-port %s: %v; want %q", port, err, want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("run --rest-port %s: the job ran (%s: %v)", port, out, err)
		}
	}
	// A port in use fails the run before the job starts, with one hint.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	root := newRootCommand()
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	root.SetArgs([]string{"run", script, "-q", "--rest-port", port})
	err = root.Execute()
	if err == nil || !strings.HasPrefix(err.Error(), "--rest-port "+port+": ") ||
		!strings.HasSuffix(err.Error(), "(choose another --rest-port; 0 picks a free one)") || strings.Contains(err.Error(), "rest.port") {
		t.Errorf("run --rest-port %s (in use): %v; want it refused naming --rest-port once", port, err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("run --rest-port %s (in use): the job ran (%s: %v)", port, out, err)
	}
}

// weir submit --restore (or -D execution.savepoint.path) of a script
// without checkpointing is refused by the JobManager as weir run refuses
// it, and no job starts; latest-or-empty starts empty.
func TestSubmitRestoreWithoutCheckpointingRefused(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "nock.sql")
	err := os.WriteFile(script, []byte(`
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5');
CREATE TABLE out (k BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k FROM gen;
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	m, ep := testJobManager(t, dir)
	sp := filepath.Join(dir, "savepoint-1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--restore", sp}, `savepointPath "` + sp + `": checkpointing is off`},
		{[]string{"-s", sp}, `savepointPath "` + sp + `": checkpointing is off`},
		{[]string{"-D", "execution.savepoint.path=" + sp}, `'execution.savepoint.path' "` + sp + `": checkpointing is off`},
	} {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		root.SetArgs(append([]string{"submit", script, "--jobmanager", ep.URL()}, c.args...))
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "execution.checkpointing.interval") {
			t.Errorf("weir submit %v: %v; want the restore refused: %q", c.args, err, c.want)
		}
		if n := len(m.Jobs()); n != 0 {
			t.Fatalf("weir submit %v: %d jobs started, want none", c.args, n)
		}
	}
	j, err := m.SubmitSQL(api.JobSubmitRequest{Script: "CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5');\n" +
		"CREATE TABLE out (k BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO out SELECT k FROM gen;", SavepointPath: "latest-or-empty"})
	if err != nil {
		t.Fatalf("submit restoring latest-or-empty: %v; want it to start empty", err)
	}
	j.Client().Cancel()
	_, _ = j.Client().Wait()
}
