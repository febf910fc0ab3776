package checkpoint

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
)

func TestOptionsDefaults(t *testing.T) {
	var o Options
	o.EnsureDefaults()
	want := Options{Timeout: 10 * time.Minute, MaxConcurrent: 1}
	if o != want {
		t.Fatalf("EnsureDefaults() = %+v, want %+v", o, want)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	o := Options{Interval: -1, MinPause: -1, TolerableFailures: -2}
	err := o.Validate()
	for _, field := range []string{"Interval", "Timeout", "MinPause", "MaxConcurrent", "TolerableFailures"} {
		if err == nil || !strings.Contains(err.Error(), "Options."+field) {
			t.Errorf("Validate() = %v, want it to name Options.%s", err, field)
		}
	}
}

func TestNewPanicsOnMisuse(t *testing.T) {
	src := event.SubtaskID{Vertex: "src"}
	other := event.SubtaskID{Vertex: "other"}
	cases := map[string]func(){
		"bad options":     func() { New(Options{MaxConcurrent: -1}, []event.SubtaskID{src}, []event.SubtaskID{src}, 1, epoch) },
		"no tasks":        func() { New(Options{}, nil, nil, 1, epoch) },
		"source not task": func() { New(Options{}, []event.SubtaskID{src}, []event.SubtaskID{other}, 1, epoch) },
		"id zero":         func() { New(Options{}, []event.SubtaskID{src}, []event.SubtaskID{src}, 0, epoch) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("New did not panic")
				}
			}()
			f()
		})
	}
}

// TestDeclineErrorMatches checks that an abort reason matches both its
// cause and the error the task handed in.
func TestDeclineErrorMatches(t *testing.T) {
	src := event.SubtaskID{Vertex: "src"}
	errDisk := errors.New("disk full")
	c := New(Options{}, []event.SubtaskID{src}, []event.SubtaskID{src}, 1, epoch)
	c.TriggerNow(epoch, false)
	acts := c.Decline(epoch, 1, src, PhaseSync, errDisk)
	if len(acts) != 2 {
		t.Fatalf("Decline returned %d actions, want abort and fail-job", len(acts))
	}
	reason := acts[0].(AbortCheckpoint).Reason
	var fe *FailedError
	if !errors.As(reason, &fe) || fe.ID != 1 || !errors.Is(reason, ErrDeclined) || !errors.Is(reason, errDisk) {
		t.Fatalf("reason %#v does not match ErrDeclined, errDisk and id 1", reason)
	}
	fail := acts[1].(FailJob).Err
	if !errors.Is(fail, ErrTooManyFailures) || !errors.Is(fail, ErrDeclined) || !errors.Is(fail, errDisk) {
		t.Fatalf("FailJob.Err %v does not wrap its causes", fail)
	}
}

func TestStatsKeepsNewestHistorySize(t *testing.T) {
	src := event.SubtaskID{Vertex: "src"}
	c := New(Options{}, []event.SubtaskID{src}, []event.SubtaskID{src}, 1, epoch)
	for range HistorySize + 50 {
		c.TriggerNow(epoch, false)
		c.AbortAll(epoch, nil)
	}
	s := c.Stats()
	if len(s) != HistorySize || s[0].ID != 51 || s[len(s)-1].ID != HistorySize+50 {
		t.Fatalf("Stats() has %d entries, ids %d..%d; want %d, 51..%d",
			len(s), s[0].ID, s[len(s)-1].ID, HistorySize, HistorySize+50)
	}
}
