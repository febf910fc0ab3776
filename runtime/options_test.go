package runtime

import (
	"testing"

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
