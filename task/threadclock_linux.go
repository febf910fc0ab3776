//go:build linux

package task

import "golang.org/x/sys/unix"

// readThreadClock returns the CPU time of the thread running the caller,
// in ns: between two readings on a thread the goroutine is locked to
// (threadSpan), the time it ran — not the time other threads ran instead
// on a shared core, most of a wall clock's noise on a machine with fewer
// cores than busy threads. ok is false if the clock could not be read.
func readThreadClock() (ns int64, ok bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
