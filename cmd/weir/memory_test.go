package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// taskmanager.memory.process.size becomes the Go runtime's soft memory
// limit, with GOGC raised unless the environment sets it; a bad size is
// named by the option.
func TestProcessMemorySetsTheLimit(t *testing.T) {
	limit, gc := debug.SetMemoryLimit(-1), debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	t.Cleanup(func() { debug.SetMemoryLimit(limit); debug.SetGCPercent(gc) })
	t.Setenv("GOGC", "")

	if msg, err := applyProcessMemory(map[string]string{}); msg != "" || err != nil || debug.SetMemoryLimit(-1) != limit {
		t.Fatalf("without the option: %q, %v, limit %d; want nothing done", msg, err, debug.SetMemoryLimit(-1))
	}
	msg, err := applyProcessMemory(map[string]string{keyProcessMemory: "3g"})
	if err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Errorf("limit %d, want %d", got, 3<<30)
	}
	if got := debug.SetGCPercent(gcPercentUnderLimit); got != gcPercentUnderLimit {
		t.Errorf("GOGC %d, want %d", got, gcPercentUnderLimit)
	}
	if !strings.Contains(msg, "memory limit 3072 MiB") {
		t.Errorf("message %q", msg)
	}

	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	if _, err := applyProcessMemory(map[string]string{keyProcessMemory: "1024m"}); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("GOGC %d with GOGC=150 in the environment, want it kept", got)
	}

	for _, bad := range []string{"lots", "1m", "-5g"} {
		_, err := applyProcessMemory(map[string]string{keyProcessMemory: bad})
		if err == nil || !strings.Contains(err.Error(), "'taskmanager.memory.process.size' = '"+bad+"'") {
			t.Errorf("%q: got %v, want an error naming the option", bad, err)
		}
	}
}
