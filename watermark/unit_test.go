package watermark

import (
	"errors"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
)

func TestStrategyValidate(t *testing.T) {
	if err := (Strategy{}).Validate(); err != nil {
		t.Fatalf("zero strategy: %v", err)
	}
	err := Strategy{IdleTimeout: -time.Second}.Validate()
	if !errors.Is(err, ErrInvalidStrategy) {
		t.Fatalf("negative idle timeout: %v", err)
	}
	if got, want := err.Error(), "watermark: invalid strategy: IdleTimeout is -1s; use 0 or a positive duration"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A timestamp so low that subtracting the delay would wrap around gives
// MinWatermark, not a huge positive watermark.
func TestBoundedOutOfOrdernessNoWrap(t *testing.T) {
	g := &BoundedOutOfOrderness{MaxOutOfOrderness: time.Second}
	g.OnEvent(event.MinWatermark+10, epoch)
	if wm, _ := g.OnPeriodicEmit(epoch); wm != event.MinWatermark {
		t.Fatalf("got %d", wm)
	}
	g = &BoundedOutOfOrderness{MaxOutOfOrderness: -time.Second}
	g.OnEvent(100, epoch)
	if wm, _ := g.OnPeriodicEmit(epoch); wm != 99 {
		t.Fatalf("negative delay: got %d, want 99", wm)
	}
}

func TestFutureSkewedThroughWrappers(t *testing.T) {
	g := Strategy{IdleTimeout: time.Second, MaxFutureSkew: time.Second}.NewGenerator()
	g.OnEvent(5000, epoch)
	if n := FutureSkewed(g); n != 1 {
		t.Fatalf("got %d, want 1", n)
	}
	if n := FutureSkewed(&BoundedOutOfOrderness{}); n != 0 {
		t.Fatalf("no guard: got %d", n)
	}
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"valve without channels": func() { NewValve(0) },
		"valve channel range":    func() { NewValve(2).OnIdle(2) },
		"split added twice": func() {
			m := NewMulti()
			m.AddSplit("a", &BoundedOutOfOrderness{})
			m.AddSplit("a", &BoundedOutOfOrderness{})
		},
		"unknown split": func() { NewMulti().OnEvent("a", 1, epoch) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}
