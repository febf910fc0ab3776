package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/weirstream/weir/state/backends"
)

// keyProcessMemory is Flink's total memory of a TaskManager process; in
// weir run and weir jobmanager, the processes that run the tasks, it is
// the Go runtime's soft memory limit (GOMEMLIMIT).
const keyProcessMemory = "taskmanager.memory.process.size"

// gcPercentUnderLimit is the GOGC a process with a memory limit runs at
// (unless the GOGC variable says otherwise). Go's default, 100, collects
// each time the heap doubles: a job whose state grows collects over and
// over (17–19 % of the CPU of Nexmark q9/q18/q20 at 4 M events). With a
// limit to bound the heap, the collector may wait until the heap is five
// times what it keeps; near the limit it collects as often as it must,
// the same with either setting. bench/nexmark runs Weir so.
const gcPercentUnderLimit = 400

// minProcessMemory is the smallest limit accepted: below it the collector
// would run all the time.
const minProcessMemory = 64 << 20

// applyProcessMemory sets the soft memory limit (and GOGC) from the
// settings' taskmanager.memory.process.size, if set, and says what it did
// ("" when nothing).
func applyProcessMemory(settings map[string]string) (string, error) {
	v, ok := settings[keyProcessMemory]
	if !ok {
		return "", nil
	}
	n, err := backends.ParseMemorySize(v)
	if err == nil && n < minProcessMemory {
		err = fmt.Errorf("under the %d MiB minimum", minProcessMemory>>20)
	}
	if err != nil {
		return "", fmt.Errorf("'%s' = '%s': %w", keyProcessMemory, v, err)
	}
	debug.SetMemoryLimit(n)
	gc := "GOGC from the environment"
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercentUnderLimit)
		gc = fmt.Sprintf("GOGC %d", gcPercentUnderLimit)
	}
	return fmt.Sprintf("memory limit %d MiB ('%s' = '%s'), %s", n>>20, keyProcessMemory, v, gc), nil
}
