package clock

import (
	"context"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestFakeFiresInOrder: timers, tickers and delayed calls fire at their
// times, in time order then creation order, each seeing the clock at its
// own time; stopped timers do not fire and reset ones fire at their new
// time.
func TestFakeFiresInOrder(t *testing.T) {
	f := NewFake(epoch)
	var got []string
	record := func(name string) func() {
		return func() { got = append(got, name+"@"+f.Now().Sub(epoch).String()) }
	}
	f.AfterFunc(30*time.Millisecond, record("a"))
	f.AfterFunc(10*time.Millisecond, record("b"))
	f.AfterFunc(10*time.Millisecond, record("c"))
	stopped := f.AfterFunc(5*time.Millisecond, record("stopped"))
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop of an active timer must report true, then false")
	}
	moved := f.AfterFunc(1*time.Millisecond, record("moved"))
	moved.Reset(20 * time.Millisecond)
	tk := f.NewTicker(12 * time.Millisecond)
	f.Advance(25 * time.Millisecond)
	want := []string{"b@10ms", "c@10ms", "moved@20ms"}
	if len(got) != len(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fired %v, want %v", got, want)
		}
	}
	// The ticker fired at 12 and 24 ms; its channel holds one value, the
	// second was dropped.
	if at := <-tk.C(); !at.Equal(epoch.Add(12 * time.Millisecond)) {
		t.Errorf("tick at %v, want 12ms", at.Sub(epoch))
	}
	select {
	case at := <-tk.C():
		t.Errorf("a second tick %v was kept", at.Sub(epoch))
	default:
	}
	if next, ok := f.Next(); !ok || !next.Equal(epoch.Add(30*time.Millisecond)) {
		t.Errorf("Next = %v, %v; want 30ms (a), before the ticker's 36ms", next.Sub(epoch), ok)
	}
	if now := f.Now(); !now.Equal(epoch.Add(25 * time.Millisecond)) {
		t.Errorf("Now = %v after Advance(25ms)", now.Sub(epoch))
	}
}

// TestFakeSleep: Sleep on a Fake returns once the clock passed d, and
// early when the context ends.
func TestFakeSleep(t *testing.T) {
	f := NewFake(epoch)
	done := make(chan bool)
	go func() { done <- Sleep(context.Background(), f, time.Second) }()
	for {
		if _, ok := f.Next(); ok {
			break
		}
		time.Sleep(time.Millisecond) // until the sleeper armed its timer
	}
	f.Advance(time.Second)
	if !<-done {
		t.Error("Sleep reported an interrupted wait")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, f, time.Hour) {
		t.Error("Sleep with a cancelled context reported the whole wait")
	}
}

// TestReal: Real's timers fire.
func TestReal(t *testing.T) {
	if !Sleep(context.Background(), Or(nil), time.Millisecond) {
		t.Error("Sleep on Real did not complete")
	}
	tk := Real.NewTicker(time.Millisecond)
	defer tk.Stop()
	<-tk.C()
	if Since(Real, time.Now().Add(-time.Hour)) < time.Hour {
		t.Error("Since on Real")
	}
}
