package runtime

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/task"
	"github.com/weirstream/weir/watermark"
)

// TestSourceStallDataDriven runs testdata/source_stall: the stall check
// across the subtasks of one source, with a fake clock. Commands:
//
//	stalls threshold=D        a new check
//	check t=D                 one check at processing time t since the epoch;
//	                          one input line per subtask, in index order:
//	                            I: wm=TS records=N splits=A,B [idle] [split-stalled]
//	                            I: -        (not published yet)
//
// TS may be MIN. The output is the event, or "ok".
func TestSourceStallDataDriven(t *testing.T) {
	var s *sourceStalls
	datadriven.RunTest(t, "testdata/source_stall", func(t *testing.T, td *datadriven.TestData) string {
		switch td.Cmd {
		case "stalls":
			var th string
			td.ScanArgs(t, "threshold", &th)
			s = newSourceStalls("Source: orders", mustDuration(t, th))
			return "ok\n"
		case "check":
			var at string
			td.ScanArgs(t, "t", &at)
			ev, st := s.check(time.UnixMilli(0).Add(mustDuration(t, at)), parseSubtasks(t, td.Input))
			return formatSourceStall(ev, st)
		}
		td.Fatalf(t, "unknown command %s", td.Cmd)
		return ""
	})
}

func formatSourceStall(ev watermark.StallEvent, st sourceStall) string {
	switch ev {
	case watermark.StallStarted:
		return fmt.Sprintf("stall started: subtasks=%v splits=%s held=%v wm=%s ahead=%d@%s\n", st.Subtasks,
			strings.Join(st.Splits, ","), st.Held, watermark.Format(st.Watermark), st.Ahead,
			watermark.Format(st.AheadWatermark))
	case watermark.StallEnded:
		return fmt.Sprintf("stall ended: subtasks=%v splits=%s held=%v wm=%s\n", st.Subtasks,
			strings.Join(st.Splits, ","), st.Held, watermark.Format(st.Watermark))
	}
	return "ok\n"
}

func parseSubtasks(t *testing.T, input string) []*subtaskView {
	var subs []*subtaskView
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		_, rest, _ := strings.Cut(line, ":")
		fields := strings.Fields(rest)
		if len(fields) == 1 && fields[0] == "-" {
			subs = append(subs, nil)
			continue
		}
		v := &subtaskView{}
		for _, f := range fields {
			k, val, _ := strings.Cut(f, "=")
			switch k {
			case "wm":
				v.Watermark = event.MinWatermark
				if val != "MIN" {
					v.Watermark = mustInt(t, val)
				}
			case "records":
				v.Records = mustInt(t, val)
			case "splits":
				v.Splits = strings.Split(val, ",")
			case "idle":
				v.Idle = true
			case "split-stalled":
				v.SplitStalled = true
			default:
				t.Fatalf("unknown field %q in %q", f, line)
			}
		}
		subs = append(subs, v)
	}
	return subs
}

func mustInt(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustDuration(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The driver reads what a source subtask published: nothing before its
// first periodic emit, then its latest view.
func TestCountersSourceView(t *testing.T) {
	var c task.Counters
	if c.Source() != nil {
		t.Fatal("a fresh Counters has a source view")
	}
	c.PublishSource(task.SourceView{Watermark: 7, Splits: []string{"orders-1"}})
	if v := c.Source(); v == nil || v.Watermark != 7 || v.Splits[0] != "orders-1" {
		t.Fatalf("Source() = %+v", v)
	}
}
