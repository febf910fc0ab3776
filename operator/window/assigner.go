package window

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Assigner maps an element's timestamp to the windows it belongs to
// (Flink's WindowAssigner, event time only).
type Assigner interface {
	// AssignWindows returns the windows of an element with timestamp ts
	// (ms), ordered by start.
	AssignWindows(ts int64) []Window
	// Validate reports an assigner that cannot assign windows.
	Validate() error
	fmt.Stringer
}

// MergingAssigner is an Assigner whose windows of one key merge when they
// overlap (Flink's MergingWindowAssigner).
type MergingAssigner interface {
	Assigner
	// MergeWindows partitions ws into groups that merge: each Merge names
	// the window that covers its members. Groups of one window are listed
	// too.
	MergeWindows(ws []Window) []Merge
}

// Merge is one group of windows that merge into Result.
type Merge struct {
	Result  Window
	Members []Window
}

// WindowStart is the start of the window of size size, shifted by offset,
// that holds ts (Flink's TimeWindow.getWindowStartWithOffset). The
// remainder is taken towards negative infinity, so that ts = -1 with size
// 10 lies in [-10, 0).
func WindowStart(ts, offset, size int64) int64 {
	rem := (ts - offset) % size
	if rem < 0 {
		rem += size
	}
	return ts - rem
}

// Tumbling assigns each element to the one window of Size that holds it
// (Flink's TumblingEventTimeWindows). Windows start at Offset + k·Size, so
// Offset -8h gives days that start at midnight UTC+8.
type Tumbling struct {
	// Size is the window length; whole milliseconds, at least 1ms.
	Size time.Duration
	// Offset shifts the windows' starts; |Offset| < Size. Default 0.
	Offset time.Duration
}

// AssignWindows implements Assigner.
func (t Tumbling) AssignWindows(ts int64) []Window {
	size := t.Size.Milliseconds()
	start := WindowStart(ts, t.Offset.Milliseconds(), size)
	return []Window{{Start: start, End: start + size}}
}

// Validate implements Assigner.
func (t Tumbling) Validate() error {
	if err := validDuration("Tumbling.Size", t.Size, time.Millisecond); err != nil {
		return err
	}
	return validOffset("Tumbling", t.Offset, t.Size, "Size")
}

// String implements fmt.Stringer.
func (t Tumbling) String() string {
	if t.Offset == 0 {
		return fmt.Sprintf("TumblingEventTimeWindows(%v)", t.Size)
	}
	return fmt.Sprintf("TumblingEventTimeWindows(%v, offset %v)", t.Size, t.Offset)
}

// Sliding assigns each element to the Size/Slide windows of length Size
// that hold it; a window starts every Slide, at Offset + k·Slide (Flink's
// SlidingEventTimeWindows).
type Sliding struct {
	// Size is the window length; whole milliseconds, at least 1ms.
	Size time.Duration
	// Slide is the distance between window starts; whole milliseconds, at
	// least 1ms.
	Slide time.Duration
	// Offset shifts the windows' starts; |Offset| < Slide. Default 0.
	Offset time.Duration
}

// AssignWindows implements Assigner.
func (s Sliding) AssignWindows(ts int64) []Window {
	size, slide := s.Size.Milliseconds(), s.Slide.Milliseconds()
	var ws []Window
	for start := WindowStart(ts, s.Offset.Milliseconds(), slide); start > ts-size; start -= slide {
		ws = append(ws, Window{Start: start, End: start + size})
	}
	slices.Reverse(ws)
	return ws
}

// Validate implements Assigner.
func (s Sliding) Validate() error {
	if err := validDuration("Sliding.Size", s.Size, time.Millisecond); err != nil {
		return err
	}
	if err := validDuration("Sliding.Slide", s.Slide, time.Millisecond); err != nil {
		return err
	}
	return validOffset("Sliding", s.Offset, s.Slide, "Slide")
}

// String implements fmt.Stringer.
func (s Sliding) String() string {
	if s.Offset == 0 {
		return fmt.Sprintf("SlidingEventTimeWindows(%v, %v)", s.Size, s.Slide)
	}
	return fmt.Sprintf("SlidingEventTimeWindows(%v, %v, offset %v)", s.Size, s.Slide, s.Offset)
}

// Session gives each element the window [ts, ts+Gap); the windows of a key
// that overlap or touch merge, so a session ends after a Gap without
// elements (Flink's EventTimeSessionWindows).
type Session struct {
	// Gap is the inactivity that ends a session; whole milliseconds, at
	// least 1ms.
	Gap time.Duration
}

// AssignWindows implements Assigner.
func (s Session) AssignWindows(ts int64) []Window {
	return []Window{{Start: ts, End: ts + s.Gap.Milliseconds()}}
}

// Validate implements Assigner.
func (s Session) Validate() error { return validDuration("Session.Gap", s.Gap, time.Millisecond) }

// String implements fmt.Stringer.
func (s Session) String() string { return fmt.Sprintf("EventTimeSessionWindows(%v)", s.Gap) }

// MergeWindows implements MergingAssigner: windows are sorted by start and
// each one that intersects the growing cover joins it.
func (s Session) MergeWindows(ws []Window) []Merge {
	sorted := slices.Clone(ws)
	slices.SortFunc(sorted, func(a, b Window) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
	})
	var out []Merge
	for _, w := range sorted {
		if n := len(out); n > 0 && out[n-1].Result.Intersects(w) {
			out[n-1].Result = out[n-1].Result.Cover(w)
			out[n-1].Members = append(out[n-1].Members, w)
			continue
		}
		out = append(out, Merge{Result: w, Members: []Window{w}})
	}
	return out
}

func validDuration(name string, d, least time.Duration) error {
	if d < least {
		return fmt.Errorf("%w: %s is %v; it must be at least %v", ErrInvalidOptions, name, d, least)
	}
	if d%time.Millisecond != 0 {
		return fmt.Errorf("%w: %s is %v; use whole milliseconds", ErrInvalidOptions, name, d)
	}
	return nil
}

func validOffset(kind string, offset, period time.Duration, periodName string) error {
	if offset%time.Millisecond != 0 {
		return fmt.Errorf("%w: %s.Offset is %v; use whole milliseconds", ErrInvalidOptions, kind, offset)
	}
	if offset <= -period || offset >= period {
		return fmt.Errorf("%w: %s.Offset %v must lie strictly between -%s and %s (%v)",
			ErrInvalidOptions, kind, offset, periodName, periodName, period)
	}
	return nil
}
