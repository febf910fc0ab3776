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
		true, 300*time.Millisecond)
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
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}
