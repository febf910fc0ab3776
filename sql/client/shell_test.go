package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// fakeCluster records the jobs submitted to it and prints them.
type fakeCluster struct {
	out  *strings.Builder
	jobs []JobInfo
}

func (c *fakeCluster) Submit(_ context.Context, j Job) (string, error) {
	id := fmt.Sprintf("%032d", len(c.jobs)+1)
	fmt.Fprintf(c.out, "(cluster: job %q, settings %v, script:\n%s)\n", j.Name, slices.Sorted(maps.Keys(j.Settings)), j.Script)
	c.jobs = append(c.jobs, JobInfo{ID: id, Name: j.Name, Status: "RUNNING", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	return id, nil
}

func (c *fakeCluster) Jobs(context.Context) ([]JobInfo, error) { return c.jobs, nil }

func (c *fakeCluster) ExplainAnalyze(_ context.Context, job string) (string, error) {
	for _, j := range c.jobs {
		if j.ID == job {
			return fmt.Sprintf("== Job %q (%s): its plan ==", j.Name, j.Status), nil
		}
	}
	return "", fmt.Errorf("no job %s", job)
}

// TestScripts runs scripts as weir sql -f does, with a cluster that
// prints what is submitted to it. Command:
//
//	run [settings=(k=v, …)]   run the input as the script "s.sql" and print
//	                          what the client prints, then the outcome
//
// One shell runs every script of a file, in order, so later scripts see
// the tables earlier ones created.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/scripts", func(t *testing.T, path string) {
		var out strings.Builder
		cluster := &fakeCluster{out: &out}
		var sh *Shell
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if td.Cmd != "run" {
				t.Fatalf("unknown command %q", td.Cmd)
			}
			if sh == nil {
				settings := map[string]string{}
				for _, a := range td.CmdArgs {
					for _, kv := range a.Vals {
						k, v, _ := strings.Cut(kv, "=")
						settings[k] = v
					}
				}
				sh = New(Options{Out: &out, Cluster: cluster, Settings: settings})
			}
			out.Reset()
			err := sh.RunScript(context.Background(), "s.sql", td.Input)
			var se *ScriptError
			switch {
			case errors.As(err, &se):
				fmt.Fprintf(&out, "=> failed at %s:%d:%d\n", se.File, se.Pos.Line, se.Pos.Col)
			case err != nil:
				t.Fatalf("not a ScriptError: %v", err)
			default:
				out.WriteString("=> ok\n")
			}
			return out.String()
		})
	})
}

// interruptingWriter presses Ctrl-C once the first row is printed.
type interruptingWriter struct {
	out       strings.Builder
	interrupt chan os.Signal
	sent      bool
}

func (w *interruptingWriter) Write(p []byte) (int, error) {
	if !w.sent && strings.Contains(string(p), "| +I |") {
		w.interrupt <- os.Interrupt
		w.sent = true
	}
	return w.out.Write(p)
}

// Ctrl-C cancels an endless SELECT: its job ends, the result's box is
// closed, and the script goes on with the next statement.
func TestInterruptCancelsQuery(t *testing.T) {
	w := &interruptingWriter{interrupt: make(chan os.Signal, 1)}
	sh := New(Options{Out: w, Cluster: &fakeCluster{out: &strings.Builder{}}, Interrupt: w.interrupt})
	err := sh.RunScript(context.Background(), "s.sql", `
SET 'sql-client.execution.result-mode' = 'tableau';
CREATE TABLE gen (id INT NOT NULL) WITH ('connector' = 'datagen', 'fields.id.min' = '7', 'fields.id.max' = '7');
SELECT id FROM gen;
SHOW TABLES;`)
	if err != nil {
		t.Fatal(err)
	}
	out := w.out.String()
	end := regexp.MustCompile(`(?s)\| \+I \|           7 \|\n.*\+----\+-------------\+\nQuery terminated, received a total of \d+ rows?\n\n\+------------\+\n\| table name \|`)
	if !end.MatchString(out) {
		t.Fatalf("output:\n%s", out)
	}
}
