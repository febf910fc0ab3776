package operator

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
)

// fired logs callbacks as "name@now".
type fired []string

func (f *fired) cb(name string) ProcessingTimeCallback {
	return func(now event.Timestamp) error {
		*f = append(*f, fmt.Sprintf("%s@%d", name, now))
		return nil
	}
}

func (f *fired) take() []string {
	out := *f
	*f = nil
	return out
}

func expectFired(t *testing.T, f *fired, want ...string) {
	t.Helper()
	if got := f.take(); !slices.Equal(got, want) {
		t.Fatalf("fired %q, want %q", got, want)
	}
}

func TestProcessingTimeServiceFiresOnceInOrder(t *testing.T) {
	s := NewProcessingTimeService()
	var f fired
	s.RegisterTimer(200, f.cb("b"))
	s.RegisterTimer(100, f.cb("a"))
	s.RegisterTimer(200, f.cb("c")) // a tie fires in registration order
	s.RegisterTimer(300, f.cb("d"))
	if s.Next() != 100 || s.Len() != 4 {
		t.Fatalf("Next %d Len %d, want 100 and 4", s.Next(), s.Len())
	}
	mustAdvance(t, s, 99)
	expectFired(t, &f)
	mustAdvance(t, s, 250) // a late wake-up runs everything due, with its time
	expectFired(t, &f, "a@250", "b@250", "c@250")
	mustAdvance(t, s, 250)
	expectFired(t, &f)
	mustAdvance(t, s, 300)
	expectFired(t, &f, "d@300")
	if s.Next() != event.MaxWatermark || s.Len() != 0 {
		t.Fatalf("Next %d Len %d, want none", s.Next(), s.Len())
	}
}

func TestProcessingTimeServiceCancel(t *testing.T) {
	s := NewProcessingTimeService()
	var f fired
	a := s.RegisterTimer(100, f.cb("a"))
	s.RegisterTimer(150, f.cb("b"))
	a.Cancel()
	a.Cancel() // twice: nothing
	if s.Next() != 150 || s.Len() != 1 {
		t.Fatalf("Next %d Len %d after cancel, want 150 and 1", s.Next(), s.Len())
	}
	// A callback that cancels one due in the same Advance stops it.
	var d *ProcessingTimer
	s.RegisterTimer(200, func(event.Timestamp) error { d.Cancel(); return nil })
	d = s.RegisterTimer(200, f.cb("d"))
	mustAdvance(t, s, 200)
	expectFired(t, &f, "b@200")
	b := s.RegisterTimer(300, f.cb("late"))
	mustAdvance(t, s, 300)
	b.Cancel() // after it fired: nothing
	expectFired(t, &f, "late@300")
	var none *ProcessingTimer
	none.Cancel()
}

// A callback registered while Advance runs waits for the next wake-up, even
// when due: one that re-registers itself for now cannot spin the mailbox.
func TestProcessingTimeServiceRegisterDuringAdvance(t *testing.T) {
	s := NewProcessingTimeService()
	var f fired
	var again ProcessingTimeCallback
	again = func(now event.Timestamp) error {
		f = append(f, fmt.Sprintf("again@%d", now))
		s.RegisterTimer(now, again)
		return nil
	}
	s.RegisterTimer(10, again)
	mustAdvance(t, s, 10)
	expectFired(t, &f, "again@10")
	mustAdvance(t, s, 11)
	expectFired(t, &f, "again@11")
}

func TestProcessingTimeServiceErrorStops(t *testing.T) {
	s := NewProcessingTimeService()
	var f fired
	boom := errors.New("boom")
	s.RegisterTimer(10, func(event.Timestamp) error { return boom })
	s.RegisterTimer(10, f.cb("after"))
	if err := s.Advance(10); !errors.Is(err, boom) {
		t.Fatalf("Advance = %v, want boom", err)
	}
	expectFired(t, &f)
	if s.Len() != 1 {
		t.Fatalf("Len %d after the error, want the one that did not run", s.Len())
	}
}

func TestProcessingTimeServiceQuiesce(t *testing.T) {
	s := NewProcessingTimeService()
	var f fired
	a := s.RegisterTimer(10, f.cb("a"))
	s.Quiesce()
	s.RegisterTimer(5, f.cb("b"))
	a.Cancel()
	mustAdvance(t, s, 100)
	expectFired(t, &f)
	if s.Len() != 0 || s.Next() != event.MaxWatermark {
		t.Fatalf("Len %d Next %d after Quiesce, want none", s.Len(), s.Next())
	}
}

// trigger logs the keyed timers that fire as "key:time".
type trigger struct{ fired }

func (tr *trigger) OnTimer(t Timer) error {
	tr.fired = append(tr.fired, fmt.Sprintf("%v:%d", t.Key, t.Timestamp))
	return nil
}

// A keyed timer service on a ProcessingTimeService keeps one callback
// there, at its earliest processing-time timer.
func TestTimerServiceUsesProcessingTime(t *testing.T) {
	kb, err := heap.New(heap.Options{KeyGroupRange: keygroup.Range{Start: 0, End: 127}, MaxParallelism: 128,
		KeyCodec: state.AnyCodec{}})
	if err != nil {
		t.Fatal(err)
	}
	pts := NewProcessingTimeService()
	ts := NewTimerService(kb, state.AnyCodec{}, 128)
	tr := &trigger{}
	ts.SetTriggerable(tr)
	ts.UseProcessingTime(pts)
	register := func(key string, at event.Timestamp) {
		kb.SetCurrentKey(key, keygroup.ForKey(key, 128))
		ts.Register(ProcessingTime, at, "")
	}
	register("a", 300)
	register("b", 100)
	register("c", 200)
	ts.Register(EventTime, 50, "") // event time does not wake the subtask
	if pts.Len() != 1 || pts.Next() != 100 {
		t.Fatalf("callbacks %d at %d, want 1 at 100", pts.Len(), pts.Next())
	}
	kb.SetCurrentKey("b", keygroup.ForKey("b", 128))
	ts.Delete(ProcessingTime, 100, "")
	if pts.Len() != 1 || pts.Next() != 200 {
		t.Fatalf("after Delete: callbacks %d at %d, want 1 at 200", pts.Len(), pts.Next())
	}
	// Restored timers arm a service too (the subtask calls
	// UseProcessingTime before Open restores them).
	blob, err := ts.Snapshot().Write()
	if err != nil {
		t.Fatal(err)
	}
	pts2 := NewProcessingTimeService()
	ts2 := NewTimerService(kb, state.AnyCodec{}, 128)
	ts2.UseProcessingTime(pts2)
	if err := ts2.Restore([][]byte{blob}); err != nil {
		t.Fatal(err)
	}
	if pts2.Len() != 1 || pts2.Next() != 200 {
		t.Fatalf("after Restore: callbacks %d at %d, want 1 at 200", pts2.Len(), pts2.Next())
	}
	mustAdvance(t, pts, 250)
	expectFired(t, &tr.fired, "c:200")
	if pts.Len() != 1 || pts.Next() != 300 {
		t.Fatalf("after firing: callbacks %d at %d, want 1 at 300", pts.Len(), pts.Next())
	}
	mustAdvance(t, pts, 300)
	expectFired(t, &tr.fired, "a:300")
	if pts.Len() != 0 {
		t.Fatalf("callbacks %d with no timer left, want 0", pts.Len())
	}
}

func mustAdvance(t *testing.T, s *ProcessingTimeService, now event.Timestamp) {
	t.Helper()
	if err := s.Advance(now); err != nil {
		t.Fatal(err)
	}
}
