package task

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/watermark"
)

// TestSourceSplitWatermarks runs the scripts in testdata/source: a source
// subtask whose reader adds and finishes splits by itself (as Kafka's does
// with partition discovery), stepped by hand on a fake clock. Commands:
//
//	open splits=a,b [ooo=D] [idle-timeout=D] [stall-warning=D] [max-future-skew=D] [bounded]
//	              a subtask with these splits
//	poll [t=D]    the reader's next Poll does the input lines, in order:
//	              "add S", "finish S", or "S TS" (a record of split S at TS)
//	emit [t=D]    a periodic watermark emit, and what it logged
//	stalls        the watermark-stall count: metric and live counter
//	skewed        the future-skewed count: metric and live counter
//
// t is processing time since the epoch and stays put when omitted.
func TestSourceSplitWatermarks(t *testing.T) {
	datadriven.Walk(t, "testdata/source", func(t *testing.T, path string) {
		h := &splitHarness{}
		datadriven.RunTest(t, path, h.run)
	})
}

type splitHarness struct {
	st    *Subtask
	rd    *scriptReader
	probe *wmProbe
	now   time.Time
	names []string // every split named so far, for listing the tracked ones
	log   strings.Builder
}

func (h *splitHarness) run(t *testing.T, td *datadriven.TestData) string {
	var d string
	if td.MaybeScanArgs(t, "t", &d) {
		dur, err := time.ParseDuration(d)
		if err != nil {
			td.Fatalf(t, "t=%q: %v", d, err)
		}
		h.now = time.UnixMilli(0).Add(dur)
	}
	switch td.Cmd {
	case "open":
		return h.open(t, td)
	case "poll":
		return h.poll(t, td)
	case "emit":
		h.st.emitSourceWatermark(h.st.src)
		out := fmt.Sprintf("out=%s emitted=%v idle=%v\n%s", watermark.Format(h.probe.last), h.probe.take(), h.st.idleOut, h.log.String())
		h.log.Reset()
		return out
	case "stalls":
		return fmt.Sprintf("metric=%d counter=%d\n", h.st.src.spec.Metrics.WatermarkStalls, h.st.spec.Counters.WatermarkStalls.Load())
	case "skewed":
		return fmt.Sprintf("metric=%d counter=%d\n", h.st.src.spec.Metrics.FutureSkewed, h.st.spec.Counters.FutureSkewed.Load())
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

func (h *splitHarness) open(t *testing.T, td *datadriven.TestData) string {
	var splits, ooo, idle, stall, skew string
	td.ScanArgs(t, "splits", &splits)
	td.MaybeScanArgs(t, "max-future-skew", &skew)
	td.MaybeScanArgs(t, "ooo", &ooo)
	td.MaybeScanArgs(t, "idle-timeout", &idle)
	td.MaybeScanArgs(t, "stall-warning", &stall)
	strategy := watermark.Strategy{MaxOutOfOrderness: parseDur(t, td, ooo), IdleTimeout: parseDur(t, td, idle),
		MaxFutureSkew: parseDur(t, td, skew)}
	h.names = strings.Split(splits, ",")
	h.log.Reset()
	h.rd = &scriptReader{ready: make(chan struct{})}
	close(h.rd.ready)
	h.probe = &wmProbe{last: event.MinWatermark}
	id := event.SubtaskID{Vertex: "src"}
	opCtx := &operator.Context{Subtask: id, UID: "probe", Parallelism: 1, MaxParallelism: 128, Metrics: &operator.Metrics{}}
	// The log as a user reads it, without the time of day.
	logger := slog.New(slog.NewTextHandler(&h.log, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	h.st = New(Spec{ID: id, Mail: make(chan Mail, 1), Now: func() time.Time { return h.now },
		Chain:    []ChainedOperator{{UID: "probe", Op: h.probe, Ctx: opCtx}},
		Counters: &Counters{}, Logger: logger,
		Source: &SourceSpec{UID: "src", Name: "Source: orders", Parallelism: 1,
			Source:     &scriptSource{splits: h.names, reader: h.rd, bounded: td.HasArg("bounded")},
			Watermarks: &strategy, StallWarning: parseDur(t, td, stall)}})
	h.st.ctx = context.Background()
	if err := h.st.open(); err != nil {
		td.Fatalf(t, "open: %v", err)
	}
	return h.tracked()
}

func parseDur(t *testing.T, td *datadriven.TestData, s string) time.Duration {
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		td.Fatalf(t, "%q: %v", s, err)
	}
	return d
}

// poll queues the input's actions for the reader and runs one source step.
func (h *splitHarness) poll(t *testing.T, td *datadriven.TestData) string {
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			td.Fatalf(t, "want \"add S\", \"finish S\" or \"S TS\", got %q", line)
		}
		a := splitAction{verb: f[0], split: f[1]}
		if f[0] != "add" && f[0] != "finish" {
			ts, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				td.Fatalf(t, "%q: %v", line, err)
			}
			a = splitAction{verb: "record", split: f[0], ts: ts}
		}
		if !slices.Contains(h.names, a.split) {
			h.names = append(h.names, a.split)
		}
		h.rd.queue = append(h.rd.queue, a)
	}
	before := h.st.src.spec.Metrics.RecordsOut
	if _, err := h.st.sourceStep(h.st.src); err != nil {
		td.Fatalf(t, "poll: %v", err)
	}
	out := fmt.Sprintf("read %d\n%s%s", h.st.src.spec.Metrics.RecordsOut-before, h.tracked(), h.log.String())
	h.log.Reset()
	return out
}

// tracked lists the splits that have a watermark generator.
func (h *splitHarness) tracked() string {
	var out []string
	for _, n := range h.names {
		if h.st.src.multi.Tracks(n) {
			out = append(out, n)
		}
	}
	return fmt.Sprintf("tracking: %s\n", strings.Join(out, " "))
}

// wmProbe is the chain's only operator: it keeps the watermarks it gets.
type wmProbe struct {
	operator.Base
	last    event.Timestamp
	emitted bool
}

func (p *wmProbe) ProcessWatermark(wm event.Timestamp) error {
	p.last, p.emitted = wm, true
	return nil
}

// take reports whether a watermark arrived since the last call.
func (p *wmProbe) take() bool {
	e := p.emitted
	p.emitted = false
	return e
}

type splitAction struct {
	verb  string // add, finish, record
	split string
	ts    event.Timestamp
}

// scriptSource enumerates fixed splits and hands out one scripted reader.
type scriptSource struct {
	splits  []string
	reader  *scriptReader
	bounded bool
}

func (s *scriptSource) Bounded() bool { return s.bounded }

func (s *scriptSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, len(s.splits))
	for i, id := range s.splits {
		out[i] = operator.SplitState{ID: id}
	}
	return out, nil
}

func (s *scriptSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return s.reader, nil
}

// scriptReader does its queued actions at the next Poll, telling the
// output about added and finished splits the way a real reader does.
type scriptReader struct {
	queue []splitAction
	ready chan struct{} // closed: always available
}

func (r *scriptReader) AddSplits([]operator.SplitState) error { return nil }

func (r *scriptReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	l := out.(operator.SplitListener)
	for _, a := range r.queue {
		switch a.verb {
		case "add":
			l.SplitAdded(a.split)
		case "finish":
			l.SplitFinished(a.split)
		default:
			out.Collect(a.split, event.Record{Value: a.ts, Timestamp: a.ts})
		}
	}
	r.queue = nil
	return operator.NothingAvailable, nil
}

func (r *scriptReader) Available() <-chan struct{} { return r.ready }

func (r *scriptReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	return nil, nil
}

func (r *scriptReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *scriptReader) Close() error                                      { return nil }
