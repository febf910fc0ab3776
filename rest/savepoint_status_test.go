package rest

import (
	"errors"
	"testing"
)

// A failed savepoint operation reports Flink's failure class and the
// error's message, never a Go type name.
func TestFailedSavepointStatus(t *testing.T) {
	o := &operation{done: true, err: errors.New("checkpointstorage: /ro/sp: permission denied")}
	st := o.status()
	if st.Status.ID != "COMPLETED" || st.Operation == nil || st.Operation.FailureCause == nil {
		t.Fatalf("status %+v", st)
	}
	fc := st.Operation.FailureCause
	if fc.Class != "org.apache.flink.runtime.checkpoint.CheckpointException" || fc.StackTrace != "checkpointstorage: /ro/sp: permission denied" {
		t.Fatalf("failure-cause %+v", fc)
	}
}
