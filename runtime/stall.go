package runtime

import (
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/task"
	"github.com/weirstream/weir/watermark"
)

// sourceStalls notices a source subtask that holds back the watermark of
// its whole source: the common case of parallelism equal to the partition
// count, where the subtask reading an empty partition stays at the minimum,
// every downstream subtask takes the minimum over its inputs, and windows
// stop firing. The subtask's own StallDetector cannot see it: it has no
// other split that is ahead.
//
// It is watermark.StallDetector one level up — subtasks in place of splits,
// the lowest watermark of the source's active subtasks in place of the
// subtask's output, and records read by the subtask in place of the split's
// — so a stall means the same at both levels: an active subtask at the
// minimum, another one above it, and no record read by the first for the
// threshold. A subtask whose own detector reported a stall that has not
// ended counts as idle here: that warning already names its silent split.
//
// check is pure, with time passed in; the driver feeds it the subtasks'
// published views on its ticks and logs what it returns.
type sourceStalls struct {
	name    string // the source's name in logs
	det     *watermark.StallDetector
	low     event.Timestamp         // the lowest active watermark at the last check
	view    []watermark.SplitStatus // reused by check
	metrics *operator.Metrics       // the driver's share of the source's metrics
}

// subtaskView is one source subtask as check sees it.
type subtaskView struct {
	task.SourceView
	// Records counts the records the subtask read.
	Records int64
}

// sourceStall is a stall across subtasks, as check reports it.
type sourceStall struct {
	watermark.Stall
	// Subtasks are the held-back subtasks (Stall.Splits as indexes), and
	// Splits the ids of their splits; Ahead is the index of the subtask
	// furthest ahead.
	Subtasks []int
	Splits   []string
	Ahead    int
}

func newSourceStalls(name string, threshold time.Duration) *sourceStalls {
	return &sourceStalls{name: name, det: watermark.NewStallDetector(threshold), low: event.MinWatermark,
		metrics: &operator.Metrics{}}
}

// check looks at the source's subtasks at now; subs[i] is subtask i, nil
// when it has not published a view yet (it then takes no part). The
// returned sourceStall is set for StallStarted and StallEnded.
func (s *sourceStalls) check(now time.Time, subs []*subtaskView) (watermark.StallEvent, sourceStall) {
	s.view = s.view[:0]
	low, active := event.MaxWatermark, false
	for i, v := range subs {
		if v == nil {
			continue
		}
		idle := v.Idle || v.SplitStalled
		s.view = append(s.view, watermark.SplitStatus{ID: strconv.Itoa(i), Watermark: v.Watermark, Idle: idle,
			Records: v.Records})
		if !idle {
			low, active = min(low, v.Watermark), true
		}
	}
	if !active {
		low = s.low
	}
	adv := low > s.low
	s.low = low
	ev, st := s.det.Check(now, low, adv, s.view)
	if ev == watermark.NoStallEvent {
		return ev, sourceStall{}
	}
	out := sourceStall{Stall: st, Ahead: -1}
	for _, id := range st.Splits {
		i, _ := strconv.Atoi(id)
		out.Subtasks = append(out.Subtasks, i)
		if subs[i] != nil {
			out.Splits = append(out.Splits, subs[i].Splits...)
		}
	}
	if st.Ahead != "" {
		out.Ahead, _ = strconv.Atoi(st.Ahead)
	}
	return ev, out
}

// checkSourceStalls runs every source's check on the subtasks' published
// views, and logs and counts what it finds.
func (dr *driver) checkSourceStalls(now time.Time) {
	for _, w := range dr.d.stalls {
		subs := make([]*subtaskView, len(w.counters))
		for i, c := range w.counters {
			if v := c.Source(); v != nil {
				subs[i] = &subtaskView{SourceView: *v, Records: c.Out.Load()}
			}
		}
		ev, st := w.check(now, subs)
		dr.logSourceStall(w, ev, st)
	}
}

func (dr *driver) logSourceStall(w *sourceWatch, ev watermark.StallEvent, st sourceStall) {
	log := dr.j.opts.Logger
	switch ev {
	case watermark.StallStarted:
		w.metrics.WatermarkStalls++
		w.counters[st.Subtasks[0]].WatermarkStalls.Add(1)
		log.Warn("event time stalled: a source subtask whose splits have no records holds back the watermark "+
			"of the source, so windows and event-time timers downstream do not fire",
			"operator", w.name, "subtask", joinInts(st.Subtasks), "split", strings.Join(st.Splits, ", "),
			"held", st.Held.Round(time.Millisecond), "watermark", task.FormatEventTime(st.Watermark),
			"ahead", "subtask "+strconv.Itoa(st.Ahead)+" at "+task.FormatEventTime(st.AheadWatermark),
			"fix", task.StallFix)
	case watermark.StallEnded:
		log.Info("event time moves again: the stalled source subtask no longer holds back the watermark",
			"operator", w.name, "subtask", joinInts(st.Subtasks), "split", strings.Join(st.Splits, ", "),
			"stalled", st.Held.Round(time.Millisecond), "watermark", task.FormatEventTime(st.Watermark))
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// sourceWatch is a source's check with the counters of its subtasks, in
// subtask order.
type sourceWatch struct {
	*sourceStalls
	uid      string
	counters []*task.Counters
}
