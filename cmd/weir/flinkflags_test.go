package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
