package barrier

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/weirstream/weir/event"
)

// epoch is the time t=0 of the scripts.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// TestHandler runs the scripts in testdata. Commands:
//
//	new mode=(exactly-once|at-least-once) channels=N [unaligned] [timeout=DUR]
//	barrier ch=C id=I [t=DUR] [trigger=DUR] [final] [savepoint]
//	cancel ch=C id=I [t=DUR]
//	end ch=C [t=DUR]
//	abort id=I
//	tick t=DUR
//	overtakes id=I [t=DUR] [trigger=DUR] [savepoint]
//	state
//
// t is the time since the script's epoch and stays put when omitted;
// trigger is the checkpoint's trigger time carried by the barrier (since the
// epoch; none when omitted). Every
// command prints the decision, one action a line, then the handler's state.
func TestHandler(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &script{now: epoch}
		datadriven.RunTest(t, path, s.run)
	})
}

type script struct {
	h   *Handler
	n   int
	now time.Time
}

func (s *script) run(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd == "new" {
		return s.create(t, td)
	}
	s.advanceClock(t, td)
	var d Decision
	switch td.Cmd {
	case "barrier":
		b := event.CheckpointBarrier{ID: scanID(t, td), Final: td.HasArg("final")}
		if td.HasArg("savepoint") {
			b.Type = event.SnapshotSavepoint
		}
		b.Timestamp = scanTrigger(t, td)
		d = s.h.OnBarrier(s.now, scanCh(t, td), b)
	case "cancel":
		d = s.h.OnCancelBarrier(s.now, scanCh(t, td), scanID(t, td))
	case "end":
		d = s.h.OnEndOfInput(s.now, scanCh(t, td))
	case "abort":
		d = s.h.OnAbort(scanID(t, td))
	case "tick":
		d = s.h.Tick(s.now)
	case "state":
		return s.state()
	case "overtakes":
		b := event.CheckpointBarrier{ID: scanID(t, td), Timestamp: scanTrigger(t, td)}
		if td.HasArg("savepoint") {
			b.Type = event.SnapshotSavepoint
		}
		return fmt.Sprintf("%v\n", s.h.Overtakes(s.now, b))
	default:
		td.Fatalf(t, "unknown command %q", td.Cmd)
	}
	return s.render(d) + s.state()
}

func (s *script) create(t *testing.T, td *datadriven.TestData) string {
	var mode string
	td.ScanArgs(t, "mode", &mode)
	td.ScanArgs(t, "channels", &s.n)
	o := Options{Unaligned: td.HasArg("unaligned")}
	var timeout string
	if td.MaybeScanArgs(t, "timeout", &timeout) {
		var err error
		if o.AlignedTimeout, err = time.ParseDuration(timeout); err != nil {
			td.Fatalf(t, "bad timeout=%q: %v", timeout, err)
		}
	}
	switch mode {
	case "exactly-once":
		s.h = NewWithOptions(ExactlyOnce, s.n, o)
	case "at-least-once":
		s.h = NewWithOptions(AtLeastOnce, s.n, o)
	default:
		td.Fatalf(t, "unknown mode %q", mode)
	}
	s.now = epoch
	return s.state()
}

func (s *script) advanceClock(t *testing.T, td *datadriven.TestData) {
	var at string
	if !td.MaybeScanArgs(t, "t", &at) {
		return
	}
	d, err := time.ParseDuration(at)
	if err != nil {
		td.Fatalf(t, "bad t=%q: %v", at, err)
	}
	s.now = epoch.Add(d)
}

func scanTrigger(t *testing.T, td *datadriven.TestData) event.Timestamp {
	var at string
	if !td.MaybeScanArgs(t, "trigger", &at) {
		return 0
	}
	d, err := time.ParseDuration(at)
	if err != nil {
		td.Fatalf(t, "bad trigger=%q: %v", at, err)
	}
	return epoch.Add(d).UnixMilli()
}

func scanCh(t *testing.T, td *datadriven.TestData) int {
	var ch int
	td.ScanArgs(t, "ch", &ch)
	return ch
}

func scanID(t *testing.T, td *datadriven.TestData) event.CheckpointID {
	var id int64
	td.ScanArgs(t, "id", &id)
	return event.CheckpointID(id)
}

func (s *script) render(d Decision) string {
	if d.IsZero() {
		return "(nothing)\n"
	}
	var b strings.Builder
	for _, a := range d.Abort {
		fmt.Fprintf(&b, "abort %d: %v\n", a.ID, a.Reason)
	}
	if d.Snapshot != nil {
		fmt.Fprintf(&b, "snapshot %d", d.Snapshot.ID)
		if d.Snapshot.Final {
			b.WriteString(" final")
		}
		if d.Unaligned {
			fmt.Fprintf(&b, " unaligned, persist %v", d.Persist)
		}
		fmt.Fprintf(&b, " (aligned in %v)\n", s.h.LastAlignmentDuration())
	}
	if len(d.Persisted) > 0 {
		fmt.Fprintf(&b, "persisted %v\n", d.Persisted)
	}
	if d.ChannelStateDone != 0 {
		fmt.Fprintf(&b, "channel state %d done\n", d.ChannelStateDone)
	}
	if d.Unblock {
		b.WriteString("unblock all\n")
	}
	if len(d.Block) > 0 {
		fmt.Fprintf(&b, "block %v\n", d.Block)
	}
	return b.String()
}

func (s *script) state() string {
	var blocked []int
	for ch := 0; ch < s.n; ch++ {
		if s.h.Blocked(ch) {
			blocked = append(blocked, ch)
		}
	}
	id, arrived, missing, since, ok := s.h.Pending()
	if !ok {
		return fmt.Sprintf("state: idle; blocked %v\n", blocked)
	}
	return fmt.Sprintf("state: pending %d since %v, arrived %v, missing %v; blocked %v\n",
		id, since.Sub(epoch), arrived, missing, blocked)
}
