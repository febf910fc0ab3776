package watermark

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/event"
)

// Multi combines the generators of the splits one source subtask reads into
// the subtask's output watermark, as Flink's SourceOperator does for
// per-split watermarks: the minimum over the splits that are not idle,
// never decreasing; idle when every split is idle. A subtask with no splits
// at all is idle, so it never holds back the watermark downstream.
type Multi struct {
	splits  []splitGen // in the order added, so calls are deterministic
	out     event.Timestamp
	retired int64 // FutureSkewed of removed splits
}

type splitGen struct {
	id  string
	gen Generator
	// What the last OnPeriodicEmit saw, and the records read: for
	// Splits, so a StallDetector can tell which split holds the output.
	wm      event.Timestamp
	idle    bool
	records int64
}

// SplitStatus is one split as Multi last saw it.
type SplitStatus struct {
	ID string
	// Watermark and Idle are what the split's generator returned at the
	// last OnPeriodicEmit (MinWatermark and false before the first).
	Watermark event.Timestamp
	Idle      bool
	// Records counts the records passed to OnEvent for the split since it
	// was added.
	Records int64
	// FutureSkewed counts the split's records too far in the future to
	// advance its watermark, FirstFuture is the first one's timestamp
	// (NoTimestamp when none); see FutureSkewGuard.
	FutureSkewed int64
	FirstFuture  event.Timestamp
}

// NewMulti returns a Multi with no splits.
func NewMulti() *Multi { return &Multi{out: event.MinWatermark} }

// AddSplit starts tracking split id with generator g. A new split starts at
// its generator's watermark (usually MinWatermark), so it holds back the
// output until it catches up. It panics if id is already tracked.
func (m *Multi) AddSplit(id string, g Generator) {
	if m.find(id) >= 0 {
		panic(fmt.Sprintf("watermark: split %q added twice", id))
	}
	m.splits = append(m.splits, splitGen{id: id, gen: g, wm: event.MinWatermark})
}

// Tracks reports whether split id has a generator here.
func (m *Multi) Tracks(id string) bool { return m.find(id) >= 0 }

// RemoveSplit stops tracking split id, e.g. when it is finished; the output
// may advance at the next emit. Unknown ids are ignored.
func (m *Multi) RemoveSplit(id string) {
	i := m.find(id)
	if i < 0 {
		return
	}
	m.retired += FutureSkewed(m.splits[i].gen)
	m.splits = slices.Delete(m.splits, i, i+1)
}

// OnEvent passes a record's timestamp to the generator of its split. It
// panics if the split is not tracked: the caller adds a split before reading
// from it.
func (m *Multi) OnEvent(split string, ts event.Timestamp, now time.Time) {
	i := m.find(split)
	if i < 0 {
		panic(fmt.Sprintf("watermark: record for unknown split %q", split))
	}
	m.splits[i].gen.OnEvent(ts, now)
	m.splits[i].records++
}

// OnPeriodicEmit asks every split for its watermark and returns the
// subtask's: wm is the output watermark, idle is true when no split is
// active (or there are none), and advanced tells whether wm rose, i.e.
// whether to emit it downstream.
func (m *Multi) OnPeriodicEmit(now time.Time) (wm event.Timestamp, idle bool, advanced bool) {
	low, active := event.MaxWatermark, false
	for i := range m.splits {
		s := &m.splits[i]
		s.wm, s.idle = s.gen.OnPeriodicEmit(now)
		if !s.idle {
			low, active = min(low, s.wm), true
		}
	}
	if !active {
		return m.out, true, false
	}
	if low <= m.out {
		return m.out, false, false
	}
	m.out = low
	return m.out, false, true
}

// FutureSkewed returns how many records, over all splits ever added, were
// too far in the future to advance a watermark.
func (m *Multi) FutureSkewed() int64 {
	n := m.retired
	for _, s := range m.splits {
		n += FutureSkewed(s.gen)
	}
	return n
}

// Splits appends the status of every tracked split to dst, in the order
// they were added, and returns the extended slice.
func (m *Multi) Splits(dst []SplitStatus) []SplitStatus {
	for _, s := range m.splits {
		dst = append(dst, SplitStatus{ID: s.id, Watermark: s.wm, Idle: s.idle, Records: s.records,
			FutureSkewed: FutureSkewed(s.gen), FirstFuture: FirstFutureSkewed(s.gen)})
	}
	return dst
}

// find is a loop rather than slices.IndexFunc: it runs once per record,
// and the call per split it saves was 2 % of a pass-through query's CPU.
func (m *Multi) find(id string) int {
	for i := range m.splits {
		if m.splits[i].id == id {
			return i
		}
	}
	return -1
}
