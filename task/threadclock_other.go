//go:build !linux

package task

import "time"

var clockStart = time.Now()

// threadClock is the monotonic wall clock where no thread CPU clock is
// read (see the Linux one); tid is always 0.
func threadClock() (tid int, ns int64, ok bool) { return 0, int64(time.Since(clockStart)), true }
