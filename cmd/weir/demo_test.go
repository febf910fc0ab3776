package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary act as the weir binary when the demo
// starts it as a child process (os.Executable is the test binary here).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "run" || os.Args[1] == "jobmanager" || os.Args[1] == "sql" || (len(os.Args) > 2 && os.Args[1] == "demo" && os.Args[2] == "billing-child")) {
		root := newRootCommand()
		root.SetArgs(os.Args[1:])
		os.Exit(exitCode(root.Execute()))
	}
	os.Exit(m.Run())
}

// The demo, end to end: real child processes, a real SIGKILL, and a verdict
// computed from the SQLite table against the ground truth.
func TestBillingDemoSurvivesSIGKILL(t *testing.T) {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := runBillingDemo(ctx, &out, demoFlags{bills: 8000, accounts: 40, dupRate: 0.05, seed: 7, kills: 1})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"killed the job with SIGKILL", "restored checkpoint", "lost: 0, double-counted: 0, accounts wrong: 0", "VERDICT: OK"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}
