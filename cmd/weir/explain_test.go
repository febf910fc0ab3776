package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// weir run --explain and weir explain print the same plan: each INSERT's
// operators with changelog modes, then the operator chains.
func TestExplainOneCodePath(t *testing.T) {
	script := planScript(t, "plan.sql", "n")
	outputs := map[string]string{}
	for _, args := range [][]string{{"explain", script}, {"run", "--explain", script}} {
		var out bytes.Buffer
		root := newRootCommand()
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		outputs[args[0]] = out.String()
	}
	if outputs["explain"] != outputs["run"] {
		t.Errorf("weir explain printed\n%s\nweir run --explain printed\n%s", outputs["explain"], outputs["run"])
	}
	for _, want := range []string{"== Optimized Physical Plan ==", "changelogMode=[I,UB,UA]", `== Job "plan": `} {
		if !strings.Contains(outputs["run"], want) {
			t.Errorf("the plan lacks %q:\n%s", want, outputs["run"])
		}
	}
}

// weir run --help says where checkpoints go by default.
func TestRunHelpNamesDefaultCheckpointDir(t *testing.T) {
	var out bytes.Buffer
	root := newRootCommand()
	root.SetOut(&out)
	root.SetArgs([]string{"run", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"checkpoints go to\n.weir/checkpoints/<job> under the current directory", "default .weir/checkpoints/<job>", "exit status 130 or 143"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("weir run --help lacks %q:\n%s", want, out.String())
		}
	}
}

// weir explain and weir run --explain of a script that does not plan print
// nothing on stdout, only the error.
func TestExplainFailurePrintsNoPlan(t *testing.T) {
	script := planScript(t, "bad.sql", "nn")
	for _, args := range [][]string{{"explain", script}, {"run", "--explain", script}} {
		var out bytes.Buffer
		root := newRootCommand()
		root.SetOut(&out)
		root.SetErr(&bytes.Buffer{})
		root.SetArgs(args)
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "unknown column `nn`") {
			t.Errorf("%v: %v; want the unknown column", args, err)
		}
		if out.Len() != 0 {
			t.Errorf("%v printed %q on stdout; want nothing", args, out.String())
		}
	}
}

// planScript writes a script summing column sum (n exists) by key.
func planScript(t *testing.T, name, sum string) string {
	script := filepath.Join(t.TempDir(), name)
	err := os.WriteFile(script, []byte(`
CREATE TABLE gen (k STRING, n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
CREATE TABLE out (k STRING, total BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, SUM(`+sum+`) FROM gen GROUP BY k;`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return script
}

// A setting without '=' or with a bad value is named as -D/--set, the two
// spellings of the flag, whichever the user typed.
func TestBadSettingNamesTheFlag(t *testing.T) {
	script := planScript(t, "job.sql", "n")
	for _, c := range []struct{ arg, want string }{
		{"parallelism.default", `-D/--set "parallelism.default": want key=value`},
		{"parallelism.default=zero", "-D/--set parallelism.default=zero: "},
	} {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		root.SetArgs([]string{"explain", script, "-D", c.arg})
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-D %s: got %v, want an error containing %q", c.arg, err, c.want)
		}
	}
}

// weir submit --restore latest is refused before anything is sent: a job
// submitted to a JobManager has a new checkpoint directory, so "latest"
// would find nothing (it used to become the path ./latest).
func TestSubmitRestoreLatestRefused(t *testing.T) {
	script := planScript(t, "job.sql", "n")
	for _, restore := range []string{"latest", "latest-or-empty"} {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		root.SetArgs([]string{"submit", script, "--restore", restore, "--jobmanager", "http://127.0.0.1:1"})
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), "is weir run's") {
			t.Errorf("--restore %s: got %v, want the refusal", restore, err)
		}
	}
}
