package task

import (
	"fmt"
	"strings"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/watermark"
)

// StallThreshold is the threshold of the source's StallDetector, 0 for
// none. There is none without watermarks, when the warning is turned off,
// and for a bounded source: its end of input raises event time to MAX, so
// nothing stops for good, and a reader that does not report a split's end
// (operator.SplitListener) leaves the finished split at its last
// watermark, which looks exactly like a silent one. With an idle timeout
// the threshold is at least that timeout: a silent split turns idle and
// leaves the minimum by then, so the warning would only tell the user to
// set what they have set.
func StallThreshold(s *SourceSpec) time.Duration {
	if s.Watermarks == nil || s.StallWarning < 0 || s.Source.Bounded() {
		return 0
	}
	th := s.StallWarning
	if th == 0 {
		th = watermark.DefaultStallThreshold
	}
	return max(th, s.Watermarks.IdleTimeout)
}

// StallFix is the advice logged with a watermark stall.
const StallFix = "if the split may stay without records (an unused or newly added partition), " +
	"set 'table.exec.source.idle-timeout' in SQL or the watermark strategy's IdleTimeout in the Go API, " +
	"so that it turns idle and stops holding back event time; " +
	"'weir.source.watermark-stall-warning' = '0' turns this warning off"

// checkStall feeds the periodic emit at now to the stall detector, and
// logs and counts what it finds.
func (t *Subtask) checkStall(d *sourceDriver, now time.Time, wm event.Timestamp, advanced bool) {
	d.splits = d.multi.Splits(d.splits[:0])
	ev, s := d.stalls.Check(now, wm, advanced, d.splits)
	switch ev {
	case watermark.StallStarted:
		d.splitStalled = true
		d.spec.Metrics.WatermarkStalls++
		if c := t.spec.Counters; c != nil {
			c.WatermarkStalls.Add(1)
		}
		t.spec.Logger.Warn("event time stalled: a source split without records holds back the watermark, "+
			"so windows and event-time timers downstream do not fire",
			"operator", d.spec.Name, "split", strings.Join(s.Splits, ", "),
			"held", s.Held.Round(time.Millisecond), "watermark", FormatEventTime(s.Watermark),
			"ahead", s.Ahead+" at "+FormatEventTime(s.AheadWatermark), "fix", StallFix)
	case watermark.StallEnded:
		d.splitStalled = false
		t.spec.Logger.Info("event time moves again: the stalled source split no longer holds back the watermark",
			"operator", d.spec.Name, "split", strings.Join(s.Splits, ", "),
			"stalled", s.Held.Round(time.Millisecond), "watermark", FormatEventTime(s.Watermark))
	}
}

// FormatEventTime shows a watermark as a UTC time with its milliseconds.
// A stall's watermarks are never MAX: only the end of input makes that.
func FormatEventTime(wm event.Timestamp) string {
	if wm == event.MinWatermark {
		return "MIN (no watermark yet)"
	}
	return fmt.Sprintf("%s (%d)", time.UnixMilli(wm).UTC().Format("2006-01-02T15:04:05.000Z"), wm)
}

// publishSource hands the subtask's watermark view to the job driver, which
// looks for a subtask holding back the whole source (a split-level check
// cannot see a subtask whose only split is silent). The split ids come from
// checkStall's call to Multi.Splits just before.
func (t *Subtask) publishSource(d *sourceDriver, wm event.Timestamp, idle bool) {
	c := t.spec.Counters
	if c == nil {
		return
	}
	if old := c.source.Load(); old != nil && old.Watermark == wm && old.Idle == idle &&
		old.SplitStalled == d.splitStalled && sameSplits(old.Splits, d.splits) {
		return // unchanged: an idle source's every emit would allocate a copy
	}
	v := SourceView{Watermark: wm, Idle: idle, SplitStalled: d.splitStalled, Splits: make([]string, len(d.splits))}
	for i, s := range d.splits {
		v.Splits[i] = s.ID
	}
	c.source.Store(&v)
}

func sameSplits(ids []string, splits []watermark.SplitStatus) bool {
	if len(ids) != len(splits) {
		return false
	}
	for i, s := range splits {
		if ids[i] != s.ID {
			return false
		}
	}
	return true
}
