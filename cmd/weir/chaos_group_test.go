package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The kill reaches the whole process group: a wrapper's child (the job
// under `go run`, under a shell script) dies with the wrapper.
func TestChaosKillsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	killed, err := runOnce(context.Background(), "sh", []string{"-c", "sleep 60 >/dev/null 2>&1 & echo $! > " + pidFile + "; wait"},
		os.Stderr, &killPlan{delay: 300 * time.Millisecond})
	if err != nil || !killed {
		t.Fatalf("runOnce: killed %v, %v", killed, err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second) // a failure guard, not a timing assertion
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the wrapper's child %d survived the kill", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie waiting to be reaped is dead).
func alive(pid int) bool {
	s := procState(pid)
	return s != "" && s != "Z"
}

// A kill held by killPlan.when asks while the command is stopped
// (SIGSTOP), resumes it after each refusal, and kills once allowed. The
// command counts a busy loop, so it would be seen running (R) if not
// stopped.
func TestChaosKillWhenAsksWhileStopped(t *testing.T) {
	var states []string
	var pid int
	when := func() bool {
		states = append(states, procState(pid))
		return len(states) == 3
	}
	ctx := context.Background()
	cmd, done, err := startGroup(ctx, "sh", []string{"-c", "while :; do :; done"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	pid = cmd.Process.Pid
	time.Sleep(100 * time.Millisecond) // let it run first; not a timing assertion
	killed, err := (&killPlan{when: when}).carryOut(pid, "sh", done)
	if err != nil || !killed {
		t.Fatalf("carryOut: killed %v, %v", killed, err)
	}
	if strings.Join(states, ",") != "T,T,T" {
		t.Fatalf("the command was in states %v when asked, want stopped (T) each time", states)
	}
}

func TestChaosRunArgsCycleParallelism(t *testing.T) {
	f := chaosFlags{parallelism: []int{2, 3, 1}}
	cmd := []string{"weir", "run", "job.sql"}
	var got []string
	for run := range 4 {
		got = append(got, strings.Join(f.runArgs(cmd, run), " "))
	}
	want := []string{
		"run job.sql -D parallelism.default=2",
		"run job.sql -D parallelism.default=3 --restore latest-or-empty",
		"run job.sql -D parallelism.default=1 --restore latest-or-empty",
		"run job.sql -D parallelism.default=2 --restore latest-or-empty",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("runs' arguments:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := (chaosFlags{parallelism: []int{2, 0}}).validateRuns(); err == nil {
		t.Fatal("--parallelism 2,0 was accepted")
	}
}
