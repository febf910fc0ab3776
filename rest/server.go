package rest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
)

// Job is what the handlers need of a job: runtime.JobClient implements it.
type Job interface {
	JobID() string
	// Done is closed when the job has ended.
	Done() <-chan struct{}
	TriggerSavepoint(ctx context.Context, dir string) (string, error)
	StopWithSavepoint(ctx context.Context, dir string, drain bool) (string, error)
}

// Server serves the REST API of a set of jobs. Create it with NewServer;
// Close cancels the operations still running.
type Server struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     struct {
		sync.Mutex
		jobs map[string]Job
		ops  map[string]*operation // by trigger id
	}
}

// operation is one asynchronous savepoint request.
type operation struct {
	job      string
	done     bool
	location string
	err      error
}

// NewServer returns a server for jobs.
func NewServer(jobs ...Job) *Server {
	s := &Server{}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mu.jobs, s.mu.ops = map[string]Job{}, map[string]*operation{}
	for _, j := range jobs {
		s.mu.jobs[j.JobID()] = j
	}
	return s
}

// Close cancels the wait of every running operation (the savepoints
// themselves complete or fail in the job).
func (s *Server) Close() { s.cancel() }

// Handler routes Flink's paths, with and without the /v1 prefix.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"", "/v1"} {
		mux.HandleFunc("GET "+p+"/jobs", s.listJobs)
		mux.HandleFunc("POST "+p+"/jobs/{jobid}/savepoints", s.triggerSavepoint)
		mux.HandleFunc("GET "+p+"/jobs/{jobid}/savepoints/{triggerid}", s.savepointStatus)
		mux.HandleFunc("POST "+p+"/jobs/{jobid}/stop", s.stop)
	}
	return mux
}

// JobStatus is one entry of GET /jobs.
type JobStatus struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// JobList is the body of GET /jobs.
type JobList struct {
	Jobs []JobStatus `json:"jobs"`
}

func (s *Server) listJobs(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	var out JobList
	for id, j := range s.mu.jobs {
		st := "RUNNING"
		select {
		case <-j.Done():
			st = "FINISHED"
		default:
		}
		out.Jobs = append(out.Jobs, JobStatus{ID: id, Status: st})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// SavepointRequest is the body of POST /jobs/:jobid/savepoints.
type SavepointRequest struct {
	TargetDirectory string `json:"target-directory,omitempty"`
	// CancelJob stops the job with the savepoint (Flink's cancel-with-
	// savepoint, which is a stop here).
	CancelJob bool `json:"cancel-job,omitempty"`
}

// StopRequest is the body of POST /jobs/:jobid/stop.
type StopRequest struct {
	TargetDirectory string `json:"targetDirectory,omitempty"`
	Drain           bool   `json:"drain,omitempty"`
}

// TriggerResponse answers a POST that started an operation.
type TriggerResponse struct {
	RequestID string `json:"request-id"`
}

func (s *Server) triggerSavepoint(w http.ResponseWriter, r *http.Request) {
	var req SavepointRequest
	if !readJSON(w, r, &req) {
		return
	}
	s.start(w, r.PathValue("jobid"), func(ctx context.Context, j Job) (string, error) {
		if req.CancelJob {
			return j.StopWithSavepoint(ctx, req.TargetDirectory, false)
		}
		return j.TriggerSavepoint(ctx, req.TargetDirectory)
	})
}

func (s *Server) stop(w http.ResponseWriter, r *http.Request) {
	var req StopRequest
	if !readJSON(w, r, &req) {
		return
	}
	s.start(w, r.PathValue("jobid"), func(ctx context.Context, j Job) (string, error) {
		return j.StopWithSavepoint(ctx, req.TargetDirectory, req.Drain)
	})
}

// start runs op on job id in the background and answers with its trigger id.
func (s *Server) start(w http.ResponseWriter, id string, op func(context.Context, Job) (string, error)) {
	s.mu.Lock()
	j, ok := s.mu.jobs[id]
	if !ok {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %q not found", id))
		return
	}
	trigger := newTriggerID()
	o := &operation{job: id}
	s.mu.ops[trigger] = o
	s.mu.Unlock()
	go func() {
		loc, err := op(s.ctx, j)
		s.mu.Lock()
		o.done, o.location, o.err = true, loc, err
		s.mu.Unlock()
	}()
	writeJSON(w, http.StatusAccepted, TriggerResponse{RequestID: trigger})
}

// QueueStatus is Flink's {"id": "IN_PROGRESS" | "COMPLETED"}.
type QueueStatus struct {
	ID string `json:"id"`
}

// FailureCause says why an operation failed (Flink's serialized
// throwable, as text).
type FailureCause struct {
	Class      string `json:"class"`
	StackTrace string `json:"stack-trace"`
}

// SavepointInfo is the result of a completed savepoint operation: its
// location, or why it failed.
type SavepointInfo struct {
	Location     string        `json:"location,omitempty"`
	FailureCause *FailureCause `json:"failure-cause,omitempty"`
}

// SavepointStatus is the body of GET /jobs/:jobid/savepoints/:triggerid.
type SavepointStatus struct {
	Status    QueueStatus    `json:"status"`
	Operation *SavepointInfo `json:"operation,omitempty"`
}

func (s *Server) savepointStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	o, ok := s.mu.ops[r.PathValue("triggerid")]
	var out SavepointStatus
	if ok && o.job == r.PathValue("jobid") {
		out = o.status()
	}
	s.mu.Unlock()
	if !ok || o.job != r.PathValue("jobid") {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no savepoint operation %q for job %q", r.PathValue("triggerid"), r.PathValue("jobid")))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (o *operation) status() SavepointStatus {
	if !o.done {
		return SavepointStatus{Status: QueueStatus{ID: "IN_PROGRESS"}}
	}
	info := &SavepointInfo{Location: o.location}
	if o.err != nil {
		info = &SavepointInfo{FailureCause: &FailureCause{Class: fmt.Sprintf("%T", o.err), StackTrace: o.err.Error()}}
	}
	return SavepointStatus{Status: QueueStatus{ID: "COMPLETED"}, Operation: info}
}

func newTriggerID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// ErrorResponse is Flink's error body.
type ErrorResponse struct {
	Errors []string `json:"errors"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorResponse{Errors: []string{msg}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client went away: nothing to do
}

// readJSON decodes the request body into v; an empty body leaves v as is.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.ContentLength == 0 {
		return true
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "request body is not valid JSON: "+err.Error())
		return false
	}
	return true
}
