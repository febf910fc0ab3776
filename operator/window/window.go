package window

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Window is the event-time interval [Start, End) in milliseconds (Flink's
// TimeWindow).
type Window struct {
	Start int64
	End   int64 // exclusive
}

// MaxTimestamp is the last millisecond that belongs to the window, End-1:
// the window fires when the watermark reaches it.
func (w Window) MaxTimestamp() int64 { return w.End - 1 }

// Intersects reports whether w and o overlap or touch, as Flink's
// TimeWindow.intersects does: session windows [0, 10) and [10, 20) merge.
func (w Window) Intersects(o Window) bool { return w.Start <= o.End && w.End >= o.Start }

// Cover is the smallest window that spans w and o.
func (w Window) Cover(o Window) Window {
	return Window{Start: min(w.Start, o.Start), End: max(w.End, o.End)}
}

// Namespace is the window's name in keyed state and in timers: "start:end".
func (w Window) Namespace() string {
	return strconv.FormatInt(w.Start, 10) + ":" + strconv.FormatInt(w.End, 10)
}

// String prints the window as an interval, e.g. "[0, 10)".
func (w Window) String() string { return fmt.Sprintf("[%d, %d)", w.Start, w.End) }

// ParseNamespace is the inverse of Window.Namespace.
func ParseNamespace(ns string) (Window, error) {
	a, b, ok := strings.Cut(ns, ":")
	if !ok {
		return Window{}, fmt.Errorf("%w: namespace %q is not start:end", ErrCorruptNamespace, ns)
	}
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		return Window{}, fmt.Errorf("%w: namespace %q is not start:end", ErrCorruptNamespace, ns)
	}
	return Window{Start: start, End: end}, nil
}

// addClamped returns a+b (b >= 0), or math.MaxInt64 when that overflows.
func addClamped(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
