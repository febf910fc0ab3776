package runtime

import (
	"testing"
	"time"

	"github.com/weirstream/weir/task"
)

func TestRestartStrategies(t *testing.T) {
	f := FixedDelay{Attempts: 2, Delay: time.Second}
	for i, want := range []bool{true, true, false} {
		if d, ok := f.Next(i + 1); ok != want || d != time.Second {
			t.Fatalf("fixed delay attempt %d: %v %v", i+1, d, ok)
		}
	}
	e := ExponentialDelay{Initial: 100 * time.Millisecond, Max: time.Second, Attempts: -1}
	var got []time.Duration
	for i := 1; i <= 6; i++ {
		d, ok := e.Next(i)
		if !ok {
			t.Fatal("unlimited exponential delay gave up")
		}
		got = append(got, d)
	}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("exponential delays %v", got)
		}
	}
	if _, ok := (NoRestart{}).Next(1); ok {
		t.Fatal("NoRestart restarts")
	}
}

func TestOptionsValidate(t *testing.T) {
	o := Options{Mode: task.ExactlyOnce}
	o.EnsureDefaults("job")
	if err := o.Validate(); err == nil {
		t.Fatal("exactly-once without a checkpoint directory validated")
	}
	o = Options{Mode: task.AtMostOnce}
	o.EnsureDefaults("job")
	if err := o.Validate(); err != nil || o.JobID != "job" || o.Retained != 1 || o.BatchSize != 256 {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
}
