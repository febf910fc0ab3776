//go:build linux

package task

import "golang.org/x/sys/unix"

// threadClock returns the id of the thread running the caller and its CPU
// time, in ns: between two readings on one thread, the time that thread
// ran — not the time another thread ran instead on a shared core, which
// on a machine with fewer cores than busy threads is most of a wall
// clock's noise. ok is false if the clock could not be read, or the
// goroutine changed threads while it was (each system call may).
func threadClock() (tid int, ns int64, ok bool) {
	var ts unix.Timespec
	tid = unix.Gettid()
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, 0, false
	}
	return tid, ts.Nano(), unix.Gettid() == tid
}
