package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
