package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/rest/api"
	"github.com/weirstream/weir/runtime"
)

// Flink's exception class names, which tools group failures by; a Go
// type name (*fmt.wrapErrors) tells a user nothing.
const (
	exJob            = "org.apache.flink.runtime.JobException"
	exInitialization = "org.apache.flink.runtime.client.JobInitializationException"
	exRuntime        = "org.apache.flink.util.FlinkRuntimeException"
	exIO             = "java.io.IOException"
	exTimeout        = "java.util.concurrent.TimeoutException"
)

// exceptionOf is err as an entry of the exception history. jg, when
// known, gives a subtask's failure its taskName "Name (i/n)", as Flink;
// starting says the job failed before it ran (it could not be planned or
// resumed).
func exceptionOf(err error, now time.Time, jg *graph.JobGraph, starting bool) api.Exception {
	e := api.Exception{ExceptionName: exceptionName(err, starting), Stacktrace: err.Error(), Timestamp: now.UnixMilli(),
		FailureLabels: map[string]string{}, ConcurrentExceptions: []api.Exception{}}
	var sf *runtime.SubtaskFailedError
	if errors.As(err, &sf) {
		e.TaskName = taskName(sf, jg)
		e.Location, e.Endpoint, e.TaskManagerID = localTaskManager.location(), localTaskManager.location(), localTaskManager.id()
	}
	return e
}

// exceptionName is the Flink class name closest to err: the restart
// strategy giving up is Flink's JobException, a job that cannot start its
// JobInitializationException; otherwise the cause decides.
func exceptionName(err error, starting bool) string {
	var pe *fs.PathError
	switch {
	case starting:
		return exInitialization
	case errors.Is(err, runtime.ErrJobFailed):
		return exJob
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return exTimeout
	case errors.As(err, &pe):
		return exIO
	}
	return exRuntime
}

// taskName is Flink's "Name (i/n)", i counted from 1.
func taskName(sf *runtime.SubtaskFailedError, jg *graph.JobGraph) string {
	if jg != nil {
		for _, v := range jg.Vertices {
			if v.Name == sf.Subtask.Vertex {
				return fmt.Sprintf("%s (%d/%d)", v.Name, sf.Subtask.Index+1, v.Parallelism)
			}
		}
	}
	return fmt.Sprintf("%s (%d)", sf.Subtask.Vertex, sf.Subtask.Index+1)
}

// taskManager is the one TaskManager of a JobManager: its slots run in
// the JobManager's process.
type taskManager struct{ host string }

var localTaskManager = func() taskManager {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "localhost"
	}
	return taskManager{host: h}
}()

// location is where its subtasks run, as Flink's "host:port" (here the
// process: no data port of its own).
func (t taskManager) location() string { return fmt.Sprintf("%s:%d", t.host, os.Getpid()) }

// id is its ResourceID, as Flink's "host:port-suffix".
func (t taskManager) id() string { return t.location() + "-local" }

// failoverException records that a restarted JobManager recovered the job
// from checkpoint e.Checkpoint. Flink does not count this as a restart of
// the job (a new JobMaster starts from the checkpoint; numRestarts starts
// again at 0), and neither does Weir; the entry makes the recovery
// visible in the history.
func failoverException(e runtime.Event, now time.Time) api.Exception {
	return api.Exception{ExceptionName: exJob, Timestamp: now.UnixMilli(),
		Stacktrace: fmt.Sprintf("the JobManager failed over (it stopped or crashed and was restarted): "+
			"the job was recovered from checkpoint %d (%s)", e.Checkpoint, e.Path),
		FailureLabels: map[string]string{"type": "JobManagerFailover"}, ConcurrentExceptions: []api.Exception{}}
}

// TaskManager is the JobManager's one TaskManager (its slots run in this
// process): its id, as exceptions name it, and its location.
func TaskManager() (id, location string) { return localTaskManager.id(), localTaskManager.location() }
