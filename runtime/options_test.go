package runtime

import (
	"testing"
	"time"

	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/task"
)

func TestOptionsValidate(t *testing.T) {
	o := Options{Mode: task.ExactlyOnce}
	o.EnsureDefaults("job")
	if err := o.Validate(); err == nil {
		t.Fatal("exactly-once without a checkpoint directory validated")
	}
	o = Options{Mode: task.AtMostOnce}
	o.EnsureDefaults("job")
	if err := o.Validate(); err != nil || o.JobID != "job" || o.Retained != 1 || o.BatchSize != 256 || o.MaxBuffersPerChannel != 1 {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	o.MaxBuffersPerChannel = -1
	want := "runtime: MaxBuffersPerChannel is -1; want at least 1 (taskmanager.network.memory.max-buffers-per-channel)"
	if err := o.Validate(); err == nil || err.Error() != want {
		t.Errorf("MaxBuffersPerChannel -1: %v, want %s", err, want)
	}
}

// TestOptionsCacheNow: operators share readings of the clock only when
// the job runs on the real clock; a caller's clock or Now is read on
// every call (tests and simulations set the time between calls).
func TestOptionsCacheNow(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
		want bool
	}{
		{"defaults", Options{}, true},
		{"the real clock", Options{Clock: clock.Real}, true},
		{"a fake clock", Options{Clock: clock.NewFake(time.Unix(0, 0))}, false},
		{"a Now of the caller's", Options{Now: time.Now}, false},
	} {
		c.o.EnsureDefaults("job")
		if c.o.cacheNow != c.want {
			t.Errorf("%s: cacheNow %v, want %v", c.name, c.o.cacheNow, c.want)
		}
	}
}
