package watermark

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/weirstream/weir/event"
)

// epoch is t=0 of the scripts: the Unix epoch, so that processing time t and
// event time ts are both milliseconds on the same axis.
var epoch = time.UnixMilli(0)

// TestDataDriven runs the scripts in testdata. Commands:
//
//	valve channels=N                    a new Valve
//	wm ch=C ts=T | idle ch=C | active ch=C | end ch=C
//	strategy [ooo=D] [idle-timeout=D] [skew=D]   a new single generator
//	multi                               a new Multi
//	add split=S [ooo=D] [idle-timeout=D] [skew=D] | remove split=S
//	event [split=S] ts=T [t=D]          t: processing time since epoch
//	emit [t=D]                          with a Multi, also the split statuses
//	stall threshold=D                   a StallDetector checked after every
//	                                    emit of the Multi (prints its events)
//
// ts may be MIN or MAX. t stays put when omitted.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &script{now: epoch}
		datadriven.RunTest(t, path, s.run)
	})
}

type script struct {
	valve *Valve
	gen   Generator
	multi *Multi
	stall *StallDetector
	now   time.Time
}

func (s *script) run(t *testing.T, td *datadriven.TestData) string {
	s.advanceClock(t, td)
	switch td.Cmd {
	case "valve":
		var n int
		td.ScanArgs(t, "channels", &n)
		s.valve = NewValve(n)
		return s.valve.String() + "\n"
	case "wm":
		out, adv := s.valve.OnWatermark(scanInt(t, td, "ch"), scanTs(t, td))
		return fmt.Sprintf("out=%s advanced=%v\n%v\n", Format(out), adv, s.valve)
	case "idle", "active", "end":
		return s.status(t, td)
	case "strategy":
		s.gen, s.multi = scanStrategy(t, td).NewGenerator(), nil
		return "ok\n"
	case "multi":
		s.gen, s.multi, s.stall = nil, NewMulti(), nil
		return "ok\n"
	case "stall":
		s.stall = NewStallDetector(scanDuration(t, td, "threshold"))
		return "ok\n"
	case "add":
		s.multi.AddSplit(scanString(t, td, "split"), scanStrategy(t, td).NewGenerator())
		return "ok\n"
	case "remove":
		s.multi.RemoveSplit(scanString(t, td, "split"))
		return "ok\n"
	case "event":
		return s.event(t, td)
	case "emit":
		return s.emit()
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

func (s *script) status(t *testing.T, td *datadriven.TestData) string {
	ch := scanInt(t, td, "ch")
	f := map[string]func(int) (event.Timestamp, bool, bool){
		"idle": s.valve.OnIdle, "active": s.valve.OnActive, "end": s.valve.OnEndOfInput,
	}[td.Cmd]
	out, adv, allIdle := f(ch)
	return fmt.Sprintf("out=%s advanced=%v all-idle=%v\n%v\n", Format(out), adv, allIdle, s.valve)
}

func (s *script) event(t *testing.T, td *datadriven.TestData) string {
	ts := scanTs(t, td)
	if s.multi != nil {
		s.multi.OnEvent(scanString(t, td, "split"), ts, s.now)
		return fmt.Sprintf("skewed=%d\n", s.multi.FutureSkewed())
	}
	s.gen.OnEvent(ts, s.now)
	return fmt.Sprintf("skewed=%d\n", FutureSkewed(s.gen))
}

func (s *script) emit() string {
	if s.multi != nil {
		wm, idle, adv := s.multi.OnPeriodicEmit(s.now)
		out := fmt.Sprintf("wm=%s idle=%v advanced=%v skewed=%d\n", Format(wm), idle, adv, s.multi.FutureSkewed())
		if s.stall != nil {
			out += s.checkStall(wm, adv)
		}
		return out
	}
	wm, idle := s.gen.OnPeriodicEmit(s.now)
	return fmt.Sprintf("wm=%s idle=%v\n", Format(wm), idle)
}

// checkStall prints the split statuses and what the StallDetector says.
func (s *script) checkStall(wm event.Timestamp, adv bool) string {
	var b strings.Builder
	splits := s.multi.Splits(nil)
	for _, sp := range splits {
		fmt.Fprintf(&b, "  %s: wm=%s idle=%v records=%d\n", sp.ID, Format(sp.Watermark), sp.Idle, sp.Records)
	}
	switch ev, st := s.stall.Check(s.now, wm, adv, splits); ev {
	case StallStarted:
		fmt.Fprintf(&b, "stall started: splits=%s held=%v wm=%s ahead=%s@%s\n",
			strings.Join(st.Splits, ","), st.Held, Format(st.Watermark), st.Ahead, Format(st.AheadWatermark))
	case StallEnded:
		fmt.Fprintf(&b, "stall ended: splits=%s held=%v wm=%s\n", strings.Join(st.Splits, ","), st.Held, Format(st.Watermark))
	}
	return b.String()
}

func (s *script) advanceClock(t *testing.T, td *datadriven.TestData) {
	if td.HasArg("t") {
		s.now = epoch.Add(scanDuration(t, td, "t"))
	}
}

func scanStrategy(t *testing.T, td *datadriven.TestData) Strategy {
	return Strategy{
		MaxOutOfOrderness: scanDuration(t, td, "ooo"),
		IdleTimeout:       scanDuration(t, td, "idle-timeout"),
		MaxFutureSkew:     scanDuration(t, td, "skew"),
	}
}

func scanInt(t *testing.T, td *datadriven.TestData, key string) int {
	var v int
	td.ScanArgs(t, key, &v)
	return v
}

func scanString(t *testing.T, td *datadriven.TestData, key string) string {
	var v string
	td.ScanArgs(t, key, &v)
	return v
}

// scanDuration reads an optional duration argument; absent means 0.
func scanDuration(t *testing.T, td *datadriven.TestData, key string) time.Duration {
	var v string
	if !td.MaybeScanArgs(t, key, &v) {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		td.Fatalf(t, "%s=%q: %v", key, v, err)
	}
	return d
}

func scanTs(t *testing.T, td *datadriven.TestData) event.Timestamp {
	v := scanString(t, td, "ts")
	switch v {
	case "MIN":
		return event.MinWatermark
	case "MAX":
		return event.MaxWatermark
	}
	ts, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		td.Fatalf(t, "ts=%q: %v", v, err)
	}
	return ts
}
