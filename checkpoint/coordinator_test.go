package checkpoint

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/weirstream/weir/event"
)

// epoch is time zero of the scripts: t=1500ms means epoch+1.5s.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// TestCoordinator runs the scripts in testdata. Commands:
//
//	new [interval= timeout= min-pause= max-concurrent= tolerable=] tasks=v/i,... sources=v/i,... [next=] [t=]
//	tick t=                     trigger t= [final]
//	savepoint t= type=(savepoint|suspend|terminate)
//	progress t= id= task= phase=(not-started|align|sync|async)   input: detail
//	ack t= id= task= [state=] [align= sync= async= bytes=]
//	decline t= id= task= phase=                                  input: reason
//	persisted t= id=            persist-failed t= id=            input: error
//	abort-all t=                                                 input: reason
//	pending                     latest                           stats [tasks]
//
// Each command prints the actions it returned, one per line.
func TestCoordinator(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{}
		datadriven.RunTest(t, path, h.run)
	})
}

type harness struct {
	c *Coordinator
}

func (h *harness) run(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd != "new" && h.c == nil {
		td.Fatalf(t, "%s before new", td.Cmd)
	}
	switch td.Cmd {
	case "new":
		h.c = newFromArgs(t, td)
		return "ok"
	case "tick":
		return printActions(h.c.Tick(at(t, td)))
	case "trigger":
		return printActions(h.c.TriggerNow(at(t, td), td.HasArg("final")))
	case "savepoint":
		return printActions(h.c.TriggerSavepoint(at(t, td), snapshotType(t, td)))
	case "progress":
		h.c.ProgressDetail(at(t, td), id(t, td), task(t, td), phase(t, td), strings.TrimSpace(td.Input))
		return "ok"
	case "ack":
		return printActions(h.c.Acknowledge(at(t, td), id(t, td), task(t, td), ackArgs(t, td)))
	case "decline":
		return printActions(h.c.Decline(at(t, td), id(t, td), task(t, td), phase(t, td), inputErr(td)))
	case "persisted":
		return printActions(h.c.Persisted(at(t, td), id(t, td)))
	case "persist-failed":
		return printActions(h.c.PersistFailed(at(t, td), id(t, td), inputErr(td)))
	case "abort-all":
		return printActions(h.c.AbortAll(at(t, td), inputErr(td)))
	case "pending":
		return printPending(h.c.Pending())
	case "latest":
		return printLatest(h.c)
	case "stats":
		return printStats(h.c.Stats(), td.HasArg("tasks"))
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

func newFromArgs(t *testing.T, td *datadriven.TestData) *Coordinator {
	var o Options
	o.Interval = durArg(t, td, "interval", 0)
	o.Timeout = durArg(t, td, "timeout", 0)
	o.MinPause = durArg(t, td, "min-pause", 0)
	o.MaxConcurrent = intArg(t, td, "max-concurrent", 0)
	o.TolerableFailures = intArg(t, td, "tolerable", 0)
	next := event.CheckpointID(intArg(t, td, "next", 1))
	return New(o, tasksArg(t, td, "tasks"), tasksArg(t, td, "sources"), next, at(t, td))
}

func at(t *testing.T, td *datadriven.TestData) time.Time {
	return epoch.Add(durArg(t, td, "t", 0))
}

func durArg(t *testing.T, td *datadriven.TestData, key string, def time.Duration) time.Duration {
	if !td.HasArg(key) {
		return def
	}
	var s string
	td.ScanArgs(t, key, &s)
	d, err := time.ParseDuration(s)
	if err != nil {
		td.Fatalf(t, "%s: %v", key, err)
	}
	return d
}

func intArg(t *testing.T, td *datadriven.TestData, key string, def int) int {
	td.MaybeScanArgs(t, key, &def)
	return def
}

func id(t *testing.T, td *datadriven.TestData) event.CheckpointID {
	var n int64
	td.ScanArgs(t, "id", &n)
	return event.CheckpointID(n)
}

func task(t *testing.T, td *datadriven.TestData) event.SubtaskID {
	var s string
	td.ScanArgs(t, "task", &s)
	return parseTask(t, s)
}

func tasksArg(t *testing.T, td *datadriven.TestData, key string) []event.SubtaskID {
	var s string
	td.ScanArgs(t, key, &s)
	var out []event.SubtaskID
	for f := range strings.SplitSeq(s, ",") {
		out = append(out, parseTask(t, f))
	}
	return out
}

// parseTask parses "vertex/index".
func parseTask(t *testing.T, s string) event.SubtaskID {
	v, i, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(i)
	if !ok || err != nil {
		t.Fatalf("task %q: want vertex/index", s)
	}
	return event.SubtaskID{Vertex: v, Index: n}
}

var phases = map[string]Phase{
	"not-started": PhaseNotStarted, "align": PhaseAlignment, "sync": PhaseSync,
	"async": PhaseAsync, "acked": PhaseAcked,
}

func phase(t *testing.T, td *datadriven.TestData) Phase {
	var s string
	td.ScanArgs(t, "phase", &s)
	p, ok := phases[s]
	if !ok {
		td.Fatalf(t, "unknown phase %q", s)
	}
	return p
}

func ackArgs(t *testing.T, td *datadriven.TestData) Ack {
	var a Ack
	if td.HasArg("state") {
		var s string
		td.ScanArgs(t, "state", &s)
		a.State = []byte(s)
	}
	a.Metrics.AlignmentDuration = durArg(t, td, "align", 0)
	a.Metrics.SyncDuration = durArg(t, td, "sync", 0)
	a.Metrics.AsyncDuration = durArg(t, td, "async", 0)
	a.Metrics.Bytes = int64(intArg(t, td, "bytes", 0))
	return a
}

func inputErr(td *datadriven.TestData) error {
	if s := strings.TrimSpace(td.Input); s != "" {
		return errors.New(s)
	}
	return nil
}

func rel(ts time.Time) time.Duration { return ts.Sub(epoch) }

func short(s event.SubtaskID) string { return fmt.Sprintf("%s/%d", s.Vertex, s.Index) }

func shortList(ids []event.SubtaskID) string {
	parts := make([]string, len(ids))
	for i, s := range ids {
		parts[i] = short(s)
	}
	return strings.Join(parts, ",")
}

func snapshotType(t *testing.T, td *datadriven.TestData) event.SnapshotType {
	var v string
	td.ScanArgs(t, "type", &v)
	switch v {
	case "savepoint":
		return event.SnapshotSavepoint
	case "suspend":
		return event.SnapshotSuspend
	case "terminate":
		return event.SnapshotTerminate
	}
	td.Fatalf(t, "unknown type %q", v)
	return 0
}

// typeSuffix prints a savepoint's type; a checkpoint prints nothing, so
// the older scripts read as before.
func typeSuffix(typ event.SnapshotType) string {
	if !typ.IsSavepoint() {
		return ""
	}
	return fmt.Sprintf(" type=%q", typ)
}

func printActions(acts []Action) string {
	if len(acts) == 0 {
		return "(no actions)"
	}
	var b strings.Builder
	for _, a := range acts {
		b.WriteString(formatAction(a) + "\n")
	}
	return b.String()
}

func formatAction(a Action) string {
	switch a := a.(type) {
	case TriggerCheckpoint:
		return fmt.Sprintf("trigger id=%d ts=%s final=%t sources=%s%s", a.ID, rel(a.Timestamp), a.Final, shortList(a.Sources), typeSuffix(a.Type))
	case PersistCheckpoint:
		return fmt.Sprintf("persist id=%d ts=%s final=%t states={%s}%s", a.ID, rel(a.Timestamp), a.Final, formatStates(a.States), typeSuffix(a.Type))
	case NotifyComplete:
		return fmt.Sprintf("notify-complete id=%d%s", a.ID, typeSuffix(a.Type))
	case AbortCheckpoint:
		return fmt.Sprintf("abort id=%d cause=%q: %v", a.ID, causeOf(a.Reason), a.Reason)
	case FailJob:
		return fmt.Sprintf("fail-job: %v", a.Err)
	}
	return fmt.Sprintf("unknown action %T", a)
}

func formatStates(states map[event.SubtaskID][]byte) string {
	keys := slices.SortedFunc(maps.Keys(states), compareTasks)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := "nil"
		if states[k] != nil {
			v = strconv.Quote(string(states[k]))
		}
		parts[i] = short(k) + ":" + v
	}
	return strings.Join(parts, " ")
}

// causeOf checks that err is a *FailedError and returns its cause's text.
func causeOf(err error) string {
	var fe *FailedError
	if !errors.As(err, &fe) || !errors.Is(err, fe.Cause) {
		return fmt.Sprintf("not a *FailedError: %T", err)
	}
	return fe.Cause.Error()
}

func printPending(ps []PendingInfo) string {
	if len(ps) == 0 {
		return "(none)"
	}
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "id=%d trigger=%s final=%t acked=%d/%d persisting=%t waiting=%s\n",
			p.ID, rel(p.TriggerTime), p.Final, p.Acked, p.Total, p.Persisting, shortList(p.Waiting))
	}
	return b.String()
}

func printLatest(c *Coordinator) string {
	id, ok := c.LatestCompleted()
	return fmt.Sprintf("latest=%d ok=%t next=%d", id, ok, c.NextID())
}

func printStats(stats []CheckpointStats, withTasks bool) string {
	if len(stats) == 0 {
		return "(none)"
	}
	var b strings.Builder
	for _, s := range stats {
		fmt.Fprintf(&b, "id=%d %s final=%t trigger=%s duration=%s acked=%d/%d",
			s.ID, s.Status, s.Final, rel(s.TriggerTime), s.Duration, s.Acked, s.Total)
		if s.Failure != nil {
			fmt.Fprintf(&b, " failure=%q", causeOf(s.Failure))
		}
		b.WriteString("\n")
		for _, ts := range s.Tasks {
			if withTasks {
				b.WriteString("  " + formatTaskStats(ts) + "\n")
			}
		}
	}
	return b.String()
}

func formatTaskStats(ts TaskStats) string {
	m := ts.Metrics
	return fmt.Sprintf("%s phase=%q ack-latency=%s align=%s sync=%s async=%s bytes=%d",
		short(ts.Task), ts.Phase, ts.AckLatency, m.AlignmentDuration, m.SyncDuration, m.AsyncDuration, m.Bytes)
}
