package jobmanager

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/rest/api"
	"github.com/weirstream/weir/runtime"
)

// Job is one job of the JobManager: its graph of vertices (each with
// Parallelism subtasks), its current attempt (restarts so far), its
// checkpoint history and failures. Its record in the store outlives the
// process. Methods are safe for concurrent use: the runtime's listener
// updates it on the job's driver goroutine while REST handlers read it.
type Job struct {
	id     string
	name   string
	graph  *graph.JobGraph // nil for a job known from the store only
	client *runtime.JobClient
	// reg is the job's own metrics registry; group its job group.
	reg      *metrics.Registry
	group    *metrics.Job
	vertexID map[string]string // vertex name → id
	ckDir    string
	mu       struct {
		sync.Mutex
		rec       record
		attempt   int
		cancelled bool // Cancel was called
		suspended bool // the JobManager is shutting down: the job resumes at its next start
		// resumed: a restarted JobManager runs the job again; its first
		// restore is recorded as a JobManager failover.
		resumed     bool
		checkpoints checkpointHistory
	}
}

// ID is the job's id: 32 hex digits, as Flink's JobID.
func (j *Job) ID() string { return j.id }

// Name is the job's name.
func (j *Job) Name() string { return j.name }

// State is the job's state (api.StateRunning, …).
func (j *Job) State() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.mu.rec.State
}

// Client is the running job's handle, nil for a job from the store only.
func (j *Job) Client() *runtime.JobClient { return j.client }

// record returns a copy of the job's record that shares nothing with it:
// the store marshals it outside j.mu while the job's state moves on.
func (j *Job) record() record {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.mu.rec
	r.Settings = maps.Clone(r.Settings)
	r.Timestamps = maps.Clone(r.Timestamps)
	r.Exceptions = slices.Clone(r.Exceptions)
	return r
}

// vertexIDOf is a stable id for vertex v: 32 hex digits of a hash of its
// position and name, the same after a restart of the same plan.
func vertexIDOf(v *graph.Vertex) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%d/%s", v.ID, v.Name))
	return hex.EncodeToString(h[:16])
}

// setStateLocked moves the job to state s at now.
func (j *Job) setStateLocked(s string, now time.Time) {
	j.mu.rec.State = s
	if j.mu.rec.Timestamps == nil {
		j.mu.rec.Timestamps = map[string]int64{}
	}
	j.mu.rec.Timestamps[s] = now.UnixMilli()
	if api.Terminal(s) {
		j.mu.rec.EndTime = now.UnixMilli()
	}
}

// listen is the runtime's Listener: called on the job's driver goroutine.
func (j *Job) listen(e runtime.Event) {
	now := time.Now()
	j.mu.Lock()
	defer j.mu.Unlock()
	switch e.Kind {
	case runtime.EventCheckpointCompleted, runtime.EventSavepointCompleted:
		j.mu.checkpoints.completed(e, j.ckDir)
	case runtime.EventCheckpointFailed, runtime.EventSavepointFailed:
		j.mu.checkpoints.failed(e, now)
	case runtime.EventRestored:
		j.mu.checkpoints.restored(e, now)
		if j.mu.resumed && j.mu.attempt == 0 {
			j.mu.resumed = false
			j.noteExceptionLocked(failoverException(e, now))
		}
	case runtime.EventCheckpointPending:
		j.mu.checkpoints.pending(e)
	case runtime.EventFailover:
		j.mu.checkpoints.abandon("the job failed over", now)
		j.mu.attempt = e.Attempt
		j.noteExceptionLocked(exceptionOf(e.Err, now, j.graph, false))
		j.mu.rec.Timestamps[api.StateRestarting] = now.UnixMilli()
	}
}

// maxExceptions is how many failures a job keeps (Flink's
// web.exception-history-size default).
const maxExceptions = 16

// noteExceptionLocked puts x first in the job's exception history.
func (j *Job) noteExceptionLocked(x api.Exception) {
	j.mu.rec.Exceptions = append([]api.Exception{x}, j.mu.rec.Exceptions...)
	if len(j.mu.rec.Exceptions) > maxExceptions {
		j.mu.rec.Exceptions = j.mu.rec.Exceptions[:maxExceptions]
	}
}

// checkpointHistory is the job's checkpoints as the runtime reported them
// (in this JobManager process: not kept in the store).
type checkpointHistory struct {
	stats                      []checkpoint.CheckpointStats // trigger order, newest HistorySize
	paths                      map[int64]string             // external path by id
	nCompleted, nFailed        int
	restoredN                  int
	lastRestored               *api.RestoredCheckpoint
	lastCompleted, lastSavepnt int64
	lastFailed                 int64
	failedAt                   map[int64]int64
}

func (h *checkpointHistory) add(s *checkpoint.CheckpointStats) {
	if s == nil {
		return
	}
	for i := range h.stats {
		if h.stats[i].ID == s.ID {
			h.stats[i] = *s
			return
		}
	}
	if len(h.stats) == checkpoint.HistorySize {
		h.stats = h.stats[1:]
	}
	h.stats = append(h.stats, *s)
}

// pending records a checkpoint in progress; one that a newer checkpoint
// subsumed leaves the history (it is no failure, and never completed).
func (h *checkpointHistory) pending(e runtime.Event) {
	if e.Stats == nil {
		return
	}
	if e.Stats.Status == checkpoint.StatusPending {
		h.add(e.Stats)
		return
	}
	h.stats = slices.DeleteFunc(h.stats, func(s checkpoint.CheckpointStats) bool { return s.ID == e.Stats.ID })
}

// abandon fails the checkpoints still in progress at now, when the job
// ended or failed over (why): they will never complete (Flink aborts an
// attempt's pending checkpoints when it ends, and counts them failed).
func (h *checkpointHistory) abandon(why string, now time.Time) {
	for i := range h.stats {
		s := &h.stats[i]
		if s.Status != checkpoint.StatusPending {
			continue
		}
		s.Status, s.Duration = checkpoint.StatusFailed, now.Sub(s.TriggerTime)
		s.Failure = fmt.Errorf("checkpoint %d never completed: %s", s.ID, why)
		h.nFailed++
		h.lastFailed = int64(s.ID)
		if h.failedAt == nil {
			h.failedAt = map[int64]int64{}
		}
		h.failedAt[int64(s.ID)] = now.UnixMilli()
	}
}

// inProgress counts the checkpoints in progress.
func (h *checkpointHistory) inProgress() int {
	n := 0
	for _, s := range h.stats {
		if s.Status == checkpoint.StatusPending {
			n++
		}
	}
	return n
}

func (h *checkpointHistory) completed(e runtime.Event, ckDir string) {
	h.add(e.Stats)
	h.nCompleted++
	if h.paths == nil {
		h.paths = map[int64]string{}
	}
	if e.Kind == runtime.EventSavepointCompleted {
		h.lastSavepnt = e.Checkpoint
		h.paths[e.Checkpoint] = e.Path
		return
	}
	h.lastCompleted = e.Checkpoint
	if ckDir != "" {
		h.paths[e.Checkpoint] = fmt.Sprintf("%s/chk-%d", ckDir, e.Checkpoint)
	}
}

func (h *checkpointHistory) failed(e runtime.Event, now time.Time) {
	h.add(e.Stats)
	h.nFailed++
	h.lastFailed = e.Checkpoint
	if h.failedAt == nil {
		h.failedAt = map[int64]int64{}
	}
	h.failedAt[e.Checkpoint] = now.UnixMilli()
}

func (h *checkpointHistory) restored(e runtime.Event, now time.Time) {
	h.restoredN++
	h.lastRestored = &api.RestoredCheckpoint{ID: e.Checkpoint, RestoreTimestamp: now.UnixMilli(),
		IsSavepoint: !isChkDir(e.Path), ExternalPath: e.Path}
}

// isChkDir reports whether path names a chk-N checkpoint directory.
func isChkDir(path string) bool {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			var n int
			_, err := fmt.Sscanf(path[i+1:], "chk-%d", &n)
			return err == nil
		}
	}
	return false
}
