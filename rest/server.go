package rest

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir/jobmanager"
	"github.com/weirstream/weir/metrics/prom"
	"github.com/weirstream/weir/rest/api"
)

// Options configures a Server. Every field documents its default.
type Options struct {
	// Token, if set, must come with every request that changes state
	// (POST, PATCH, DELETE) as "Authorization: Bearer TOKEN"
	// (weir.rest.auth-token). Default "": none needed.
	Token string
	// Submit allows POST /jobs (Flink's web.submit.enable). Default false
	// here; FromConfig sets Flink's default, true.
	Submit bool
	// Cancel allows PATCH /jobs/:jobid (Flink's web.cancel.enable), and
	// stop and savepoints. Default false here; FromConfig: true.
	Cancel bool
}

// OptionsFromConfig reads the server's options from the JobManager's
// configuration.
func OptionsFromConfig(c jobmanager.Config) (Options, error) {
	submit, err := c.Bool(jobmanager.KeyWebSubmit, true)
	if err != nil {
		return Options{}, err
	}
	cancel, err := c.Bool(jobmanager.KeyWebCancel, true)
	return Options{Token: c[jobmanager.KeyAuthToken], Submit: submit, Cancel: cancel}, err
}

// Server serves a JobManager's REST API. Create it with NewServer; Close
// cancels the wait of the savepoint operations still running.
type Server struct {
	m      *jobmanager.Manager
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	mu     struct {
		sync.Mutex
		ops map[string]*operation // by trigger id
	}
	// fetched is nudged whenever a client fetches a completed operation's
	// result (AwaitFetched waits on it).
	fetched chan struct{}
}

// operation is one asynchronous savepoint request.
type operation struct {
	job      string
	done     bool
	location string
	err      error
	// fetched: a client has read the result since it completed.
	fetched bool
}

// NewServer returns a server for m's jobs.
func NewServer(m *jobmanager.Manager, opts Options) *Server {
	s := &Server{m: m, opts: opts}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mu.ops = map[string]*operation{}
	s.fetched = make(chan struct{}, 1)
	return s
}

// AwaitFetched waits until the result of every savepoint operation has
// been fetched by a client since it completed, or ctx ends. A weir run
// whose job a client stopped with a savepoint calls it before it closes
// its endpoint and exits, so that the client learns the savepoint's path
// (as Flink's per-job dispatcher waits for its job's result to be asked
// for before shutting down).
func (s *Server) AwaitFetched(ctx context.Context) {
	for !s.allFetched() {
		select {
		case <-s.fetched:
		case <-ctx.Done():
			return
		}
	}
}

func (s *Server) allFetched() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.mu.ops {
		if !o.fetched {
			return false
		}
	}
	return true
}

// nudge wakes AwaitFetched.
func (s *Server) nudge() {
	select {
	case s.fetched <- struct{}{}:
	default:
	}
}

// Close cancels the wait of every running operation (the savepoints
// themselves complete or fail in the job).
func (s *Server) Close() { s.cancel() }

// Collector exports the metrics of the JobManager's running jobs to
// Prometheus, labelled by the JobManager's job ids and names; a job that
// ends drops out at the next scrape.
func (s *Server) Collector() *prom.Collector {
	return prom.NewJobsCollector(func() []prom.Job {
		var out []prom.Job
		for _, j := range s.m.RunningMetrics() {
			out = append(out, prom.Job{ID: j.ID, Name: j.Name, Group: j.Group})
		}
		return out
	})
}

// route is one endpoint: method, Flink's path, handler, and for the
// OpenAPI document (docs/rest-openapi.yaml, generated from this table by
// TestOpenAPIDocument -rewrite) a summary, the request body and the reply.
type route struct {
	method, path string
	h            func(*Server, http.ResponseWriter, *http.Request)
	summary      string
	in, out      any
}

var routes = []route{
	{"GET", "/overview", (*Server).overview, "The cluster at a glance: slots and jobs by state.", nil, api.Overview{}},
	{"GET", "/config", (*Server).config, "What the dashboard needs to know: version, time zone, features.", nil, api.Config{}},
	{"GET", "/jobmanager/config", (*Server).jobManagerConfig, "The JobManager's configuration (secrets hidden).", nil, []configEntry{}},
	{"GET", "/taskmanagers", (*Server).taskManagers, "The one TaskManager (its slots run in the JobManager's process), as /overview counts it.",
		nil, api.TaskManagers{}},
	{"GET", "/jobmanager/metrics", (*Server).jobManagerMetrics, "The JobManager's metrics by Flink's names (numRegisteredTaskManagers, " +
		"numRunningJobs, taskSlotsTotal, taskSlotsAvailable): their ids, or with ?get=id,id their values.", nil, []api.Metric{}},
	{"GET", "/jobs", (*Server).listJobs, "Every job's id and state.", nil, api.JobIDsWithStatus{}},
	{"POST", "/jobs", (*Server).submit, "Submit a Flink SQL script as a job (Weir's body; Flink's reply). Needs web.submit.enable and the token.",
		api.JobSubmitRequest{}, api.JobSubmitResponse{}},
	{"GET", "/jobs/overview", (*Server).jobsOverview, "Every job with its name, state, times and task counts.", nil, api.MultipleJobsDetails{}},
	{"GET", "/jobs/{jobid}", (*Server).jobDetails, "A job: its vertices with their task counts by status and record counts, and its plan; " +
		"?subtasks=all adds each vertex's subtasks (Weir's; page them with /vertices/:vertexid?offset=&limit=).", nil, api.JobDetails{}},
	{"PATCH", "/jobs/{jobid}", (*Server).cancelJob, "Cancel the job (?mode=cancel, optional). 409 if it is not running or being cancelled already.",
		nil, struct{}{}},
	{"GET", "/jobs/{jobid}/status", (*Server).jobStatus, "The job's state alone (what tools poll).", nil, api.JobStatus{}},
	{"GET", "/jobs/{jobid}/accumulators", (*Server).accumulators, "The job's accumulators: none (Weir's counts are metrics), in Flink's shape.",
		nil, api.JobAccumulators{}},
	{"GET", "/jobs/{jobid}/metrics", (*Server).jobMetrics, "The job-scope metrics (numRestarts, checkpoint counts, last checkpoint): " +
		"their ids, or with ?get=id,id their values (ids it does not have are left out).", nil, []api.Metric{}},
	{"GET", "/jobs/{jobid}/plan", (*Server).jobPlan, "The job's dataflow plan (as in /jobs/{jobid}).", nil, api.JobPlan{}},
	{"GET", "/jobs/{jobid}/exceptions", (*Server).exceptions, "The job's failures, newest first.", nil, api.JobExceptions{}},
	{"GET", "/jobs/{jobid}/checkpoints", (*Server).checkpoints, "Checkpoint counts, summary, latest and history.", nil, api.CheckpointingStatistics{}},
	{"GET", "/jobs/{jobid}/checkpoints/details/{checkpointid}", (*Server).checkpoint, "One checkpoint with its per-vertex parts.",
		nil, api.CheckpointStatistics{}},
	{"GET", "/jobs/{jobid}/checkpoints/details/{checkpointid}/subtasks/{vertexid}", (*Server).checkpointSubtasks,
		"One vertex's subtasks in one checkpoint: acknowledgement, sync/async time, alignment, start delay, bytes; " +
			"Weir's ?offset= and ?limit= page the subtasks (num_subtasks counts all).", nil, api.TaskCheckpointDetails{}},
	{"GET", "/jobs/{jobid}/checkpoints/details/{checkpointid}/timeline", (*Server).timeline,
		"Weir's: when each subtask received the barrier, aligned, finished sync and async, acknowledged; when the checkpoint completed. " +
			"?offset= and ?limit= page the subtasks (subtasks-total counts all).",
		nil, api.CheckpointTimeline{}},
	{"GET", "/jobs/{jobid}/checkpoints/details/{checkpointid}/slowest", (*Server).slowest,
		"Weir's: the ?n= (default 5) slowest subtasks of the checkpoint, unacknowledged first, then by latency.", nil, api.CheckpointTimeline{}},
	{"GET", "/jobs/{jobid}/checkpoints/details/{checkpointid}/phases", (*Server).phases,
		"Weir's: the checkpoint's timeline summarised per vertex — min/max/avg of each phase (start_delay, alignment, sync, async, " +
			"end to end) over the acknowledged subtasks, and those that did not acknowledge counted by the phase they reached " +
			"(the first 20 listed). A few rows at any parallelism.", nil, api.CheckpointPhases{}},
	{"GET", "/jobs/{jobid}/vertices/{vertexid}", (*Server).vertex, "A vertex's subtasks; Weir's ?offset= and ?limit= page them (subtasks-total counts all).", nil, api.VertexDetails{}},
	{"GET", "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}", (*Server).subtask,
		"One subtask of the vertex (its current attempt), as /vertices/{vertexid} lists it.", nil, api.Subtask{}},
	{"GET", "/jobs/{jobid}/vertices/{vertexid}/backpressure", (*Server).backPressure,
		"Back-pressure of a vertex's subtasks: the share of the last 5 s each was back-pressured (ratio), idle and busy, " +
			"and Flink's level (ok up to 0.1, low up to 0.5, high) over all of them. Status 'deprecated' until a subtask has measured 5 s. " +
			"Weir's ?offset= and ?limit= page the subtasks (subtasks-total counts all).",
		nil, api.BackPressure{}},
	{"GET", "/jobs/{jobid}/vertices/{vertexid}/metrics", (*Server).vertexMetrics,
		"The vertex's metrics, <subtask>.<name> (operators' <subtask>.<operator name>.<name>): their ids, or with " +
			"?get=id,id their values (ids it does not have are left out). Weir's ?offset= and ?limit= page the ids by subtask.", nil, []api.Metric{}},
	{"GET", "/jobs/{jobid}/vertices/{vertexid}/subtasks/metrics", (*Server).subtaskMetrics,
		"The vertex's metrics aggregated over its subtasks: their names, or with ?get=name,name their " +
			"?agg=min,max,avg,sum (default all) over ?subtasks=0,2-4 (default all).", nil, []api.AggregatedMetric{}},
	{"GET", "/jobs/{jobid}/vertices/{vertexid}/watermarks", (*Server).watermarks, "Each subtask's current input watermark, ms; Weir's ?offset= and ?limit= page the subtasks.", nil, []api.Metric{}},
	{"GET", "/jobs/{jobid}/vertices/{vertexid}/watermarks/summary", (*Server).watermarkSummary,
		"Weir's: the vertex's subtask watermarks summarised — how many have none, min/max/avg of the others (ms) and the ?n= " +
			"(default 10) lowest subtasks, those without a watermark first. A few hundred bytes at any parallelism.",
		nil, api.WatermarkSummary{}},
	{"GET", "/jobs/{jobid}/vertices/{vertexid}/tail", (*Server).tail,
		"Weir's live tail (text/event-stream): rows the vertex emits (a sink vertex: receives) with their RowKind, sampled at " +
			"most ?rate= (default 10, at most 1000) a second, until ?limit= rows; stats (seen, sampled, dropped) every second. " +
			"Never slows the job: samples beyond the rate are skipped, those the client is too slow for dropped and counted.",
		nil, api.TailEvent{}},
	{"GET", "/jobs/{jobid}/explain-analyze", (*Server).explainAnalyze,
		"Weir's EXPLAIN ANALYZE: the plan with each vertex's records and rates, busy and back-pressured ratios, " +
			"state size (last checkpoint), lowest watermark and source lag, from the subtasks' metrics; per operator too.",
		nil, api.ExplainAnalyze{}},
	{"GET", "/jobs/{jobid}/hot-subtasks", (*Server).hotSubtasks,
		"Weir's (FLINK-39489): the ?n= (default 10) hottest subtasks ranked ?by=busy (default), backpressure or lag, " +
			"over the last 5 s.", nil, api.HotSubtasks{}},
	{"POST", "/jobs/{jobid}/savepoints", (*Server).triggerSavepoint,
		"Trigger a savepoint (cancel-job: stop with it). Answers a trigger id at once; needs the token.", api.SavepointTriggerRequest{}, api.TriggerResponse{}},
	{"GET", "/jobs/{jobid}/savepoints/{triggerid}", (*Server).savepointStatus, "A savepoint operation's status, location or failure.",
		nil, api.SavepointStatus{}},
	{"POST", "/jobs/{jobid}/stop", (*Server).stop, "Stop the job with a savepoint (drain: end its input first); needs the token.",
		api.StopRequest{}, api.TriggerResponse{}},
}

// Handler routes Flink's paths, with and without the /v1 prefix, and
// serves GET /metrics: every running job's metrics in Prometheus's text
// format, named as Flink's Prometheus reporter names them (weir_ prefix).
// Every path parameter is checked before use (ids are hex, numbers
// numbers); unknown paths and methods answer Flink's JSON error.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range routes {
		h := s.guard(r)
		mux.HandleFunc(r.method+" "+r.path, h)
		mux.HandleFunc(r.method+" /v1"+r.path, h)
	}
	mux.Handle("GET /metrics", prom.CollectorHandler(s.Collector()))
	mountDashboard(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "Not found: "+r.URL.Path)
	})
	return recoverPanics(mux)
}

// guard checks the token of a state-changing request and the path's
// parameters, then calls the route's handler.
func (s *Server) guard(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if rt.method != http.MethodGet && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="weir"`)
			writeError(w, http.StatusUnauthorized, "this request changes state and needs the JobManager's token: "+
				"send 'Authorization: Bearer <token>' (weir --token, or WEIR_REST_TOKEN)")
			return
		}
		if msg := checkParams(r); msg != "" {
			writeError(w, http.StatusBadRequest, msg)
			return
		}
		rt.h(s, w, r)
	}
}

func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1
}

var hexID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// checkParams validates the path parameters: job, vertex and trigger ids
// are 32 lower-case hex digits, a checkpoint id a positive number.
func checkParams(r *http.Request) string {
	for _, p := range []string{"jobid", "vertexid", "triggerid"} {
		if v := r.PathValue(p); v != "" && !hexID.MatchString(v) {
			return fmt.Sprintf("%s %q is not a valid id: want 32 hex digits", p, v)
		}
	}
	if v := r.PathValue("subtaskindex"); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return fmt.Sprintf("subtaskindex %q is not a subtask index: want a number from 0", v)
		}
	}
	if v := r.PathValue("checkpointid"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 1 {
			return fmt.Sprintf("checkpointid %q is not a checkpoint id: want a positive number", v)
		}
	}
	return ""
}

// recoverPanics answers a handler's panic with a 500 instead of dropping
// the connection, without the stack (it stays out of the answer).
func recoverPanics(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				writeError(w, http.StatusInternalServerError, fmt.Sprintf("internal error: %v", p))
			}
		}()
		h.ServeHTTP(w, r)
	})
}

// version is Weir's version as the API reports it.
const version = "weir-0.1"

func (s *Server) overview(w http.ResponseWriter, _ *http.Request) {
	total, free := s.m.Slots()
	o := api.Overview{TaskManagers: 1, SlotsTotal: total, SlotsAvailable: free, FlinkVersion: version, FlinkCommit: "weir"}
	for _, j := range s.m.Jobs() {
		switch j.State() {
		case api.StateFinished:
			o.JobsFinished++
		case api.StateCanceled:
			o.JobsCancelled++
		case api.StateFailed:
			o.JobsFailed++
		default:
			o.JobsRunning++
		}
	}
	writeJSON(w, http.StatusOK, o)
}

func (s *Server) config(w http.ResponseWriter, _ *http.Request) {
	name, offset := time.Now().Zone()
	writeJSON(w, http.StatusOK, api.Config{RefreshInterval: 3000, TimezoneName: name, TimezoneOffset: int64(offset) * 1000,
		FlinkVersion: version, FlinkRevision: "weir",
		Features: api.Features{WebSubmit: s.opts.Submit, WebCancel: s.opts.Cancel}})
}

// configEntry is one {"key", "value"} of GET /jobmanager/config.
type configEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func (s *Server) jobManagerConfig(w http.ResponseWriter, _ *http.Request) {
	out := []configEntry{}
	for _, e := range s.m.Config().Entries() {
		out = append(out, configEntry{e[0], e[1]})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listJobs(w http.ResponseWriter, _ *http.Request) {
	out := api.JobIDsWithStatus{Jobs: []api.JobIDStatus{}}
	for _, j := range s.m.Jobs() {
		out.Jobs = append(out.Jobs, api.JobIDStatus{ID: j.ID(), Status: j.State()})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) jobsOverview(w http.ResponseWriter, _ *http.Request) {
	out := api.MultipleJobsDetails{Jobs: []api.JobOverview{}}
	for _, j := range s.m.Jobs() {
		out.Jobs = append(out.Jobs, j.Overview())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	if !s.opts.Submit {
		writeError(w, http.StatusForbidden, "job submission is switched off on this JobManager (web.submit.enable: false)")
		return
	}
	var req api.JobSubmitRequest
	if !readJSON(w, r, &req, true) {
		return
	}
	if msg := checkTarget("savepointPath", req.SavepointPath); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	j, err := s.m.SubmitSQL(req)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, api.JobSubmitResponse{JobURL: "/jobs/" + j.ID(), JID: j.ID()})
}

// job finds the request's job, or answers 404.
func (s *Server) job(w http.ResponseWriter, r *http.Request) (*jobmanager.Job, bool) {
	j, err := s.m.Job(r.PathValue("jobid"))
	if err != nil {
		writeErr(w, err)
		return nil, false
	}
	return j, true
}

func (s *Server) jobDetails(w http.ResponseWriter, r *http.Request) {
	all := r.URL.Query().Get("subtasks")
	if all != "" && all != "all" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("subtasks %q: want all (each vertex's subtasks), or leave it out", all))
		return
	}
	if j, ok := s.job(w, r); ok {
		d := j.Details()
		if all == "" {
			d = withoutSubtasks(d)
		}
		writeJSON(w, http.StatusOK, d)
	}
}

// cancelJob is Flink's PATCH /jobs/:jobid?mode=cancel (mode may be left
// out; Flink's only other mode, stop, is POST /jobs/:jobid/stop here).
func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) {
	if !s.opts.Cancel {
		writeError(w, http.StatusForbidden, "cancelling jobs is switched off on this JobManager (web.cancel.enable: false)")
		return
	}
	if mode := r.URL.Query().Get("mode"); mode != "" && mode != "cancel" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("mode %q: want cancel (stop with a savepoint is POST /jobs/:jobid/stop)", mode))
		return
	}
	if err := s.m.Cancel(r.PathValue("jobid")); err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, struct{}{})
}

func (s *Server) taskManagers(w http.ResponseWriter, _ *http.Request) {
	total, free := s.m.Slots()
	id, path := jobmanager.TaskManager()
	tm := api.TaskManagerInfo{ID: id, Path: path, JmxPort: -1, SlotsNumber: total, FreeSlots: free,
		Hardware: api.TaskManagerHardware{CPUCores: goruntime.NumCPU()}}
	writeJSON(w, http.StatusOK, api.TaskManagers{TaskManagers: []api.TaskManagerInfo{tm}})
}

func (s *Server) accumulators(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.job(w, r); ok {
		writeJSON(w, http.StatusOK, api.JobAccumulators{JobAccumulators: []any{}, UserTaskAccumulators: []any{},
			SerializedUserTaskAccumulators: map[string]any{}})
	}
}

func (s *Server) jobMetrics(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		writeJSON(w, http.StatusOK, j.JobMetrics(listParam(r, "get")))
	}
}

// jobManagerMetrics serves Flink's JobManager-scope metrics that Weir
// has, counted as /overview counts them.
func (s *Server) jobManagerMetrics(w http.ResponseWriter, r *http.Request) {
	total, free := s.m.Slots()
	running := 0
	for _, j := range s.m.Jobs() {
		if !api.Terminal(j.State()) {
			running++
		}
	}
	all := []api.Metric{{ID: "numRegisteredTaskManagers", Value: "1"}, {ID: "numRunningJobs", Value: strconv.Itoa(running)},
		{ID: "taskSlotsTotal", Value: strconv.Itoa(total)}, {ID: "taskSlotsAvailable", Value: strconv.Itoa(free)}}
	get := listParam(r, "get")
	out := []api.Metric{}
	for _, m := range all {
		switch {
		case len(get) == 0:
			out = append(out, api.Metric{ID: m.ID})
		case slices.Contains(get, m.ID):
			out = append(out, m)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) jobStatus(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		writeJSON(w, http.StatusOK, api.JobStatus{Status: j.State()})
	}
}

func (s *Server) jobPlan(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		writeJSON(w, http.StatusOK, api.JobPlan{Plan: j.Details().Plan})
	}
}

func (s *Server) exceptions(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		writeJSON(w, http.StatusOK, j.Exceptions())
	}
}

func (s *Server) checkpoints(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		writeJSON(w, http.StatusOK, j.Checkpoints())
	}
}

func checkpointID(r *http.Request) int64 {
	n, _ := strconv.ParseInt(r.PathValue("checkpointid"), 10, 64) // checked by guard
	return n
}

func (s *Server) checkpoint(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		reply(w)(j.Checkpoint(checkpointID(r)))
	}
}

func (s *Server) checkpointSubtasks(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		paged(w, r, func(win window) (any, error) {
			d, err := j.CheckpointSubtasks(checkpointID(r), r.PathValue("vertexid"))
			d.Subtasks = pageOf(d.Subtasks, win)
			return d, err
		})
	}
}

func (s *Server) timeline(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		paged(w, r, func(win window) (any, error) {
			tl, err := j.Timeline(checkpointID(r), 0)
			tl.SubtasksTotal, tl.Subtasks = len(tl.Subtasks), pageOf(tl.Subtasks, win)
			return tl, err
		})
	}
}

// slowest is GET .../slowest?n=N (default 5): the N slowest subtasks.
func (s *Server) slowest(w http.ResponseWriter, r *http.Request) {
	n, ok := positiveParam(w, r, "n", 5)
	if !ok {
		return
	}
	if j, ok := s.job(w, r); ok {
		reply(w)(j.Timeline(checkpointID(r), n))
	}
}

func (s *Server) phases(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		reply(w)(j.CheckpointPhases(checkpointID(r)))
	}
}

func (s *Server) watermarkSummary(w http.ResponseWriter, r *http.Request) {
	n, ok := positiveParam(w, r, "n", 10)
	if !ok {
		return
	}
	if j, ok := s.job(w, r); ok {
		reply(w)(j.WatermarkSummary(r.PathValue("vertexid"), n))
	}
}

func (s *Server) vertex(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		paged(w, r, func(win window) (any, error) {
			d, err := j.Vertex(r.PathValue("vertexid"))
			d.SubtasksTotal, d.Subtasks = len(d.Subtasks), pageOf(d.Subtasks, win)
			return d, err
		})
	}
}

func (s *Server) subtask(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	d, err := j.Vertex(r.PathValue("vertexid"))
	if err != nil {
		writeErr(w, err)
		return
	}
	i, _ := strconv.Atoi(r.PathValue("subtaskindex")) // checked by guard
	if i >= len(d.Subtasks) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("subtaskindex %d: vertex %q has subtasks 0 to %d", i, d.Name, len(d.Subtasks)-1))
		return
	}
	writeJSON(w, http.StatusOK, d.Subtasks[i])
}

func (s *Server) backPressure(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		paged(w, r, func(win window) (any, error) {
			d, err := j.BackPressure(r.PathValue("vertexid"))
			d.SubtasksTotal, d.Subtasks = len(d.Subtasks), pageOf(d.Subtasks, win)
			return d, err
		})
	}
}

// vertexMetrics answers the values of ?get='s ids, or without it the ids,
// of the subtasks in Weir's ?offset=&limit= (default: all, as Flink).
func (s *Server) vertexMetrics(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	if get := listParam(r, "get"); len(get) > 0 {
		reply(w)(j.VertexMetrics(r.PathValue("vertexid"), get))
		return
	}
	paged(w, r, func(win window) (any, error) { return j.MetricIDs(r.PathValue("vertexid"), win.offset, win.limit) })
}

func (s *Server) subtaskMetrics(w http.ResponseWriter, r *http.Request) {
	aggs := listParam(r, "agg")
	for _, a := range aggs {
		if !slices.Contains(jobmanager.Aggregations, a) {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("agg %q: want one of %s", a, strings.Join(jobmanager.Aggregations, ", ")))
			return
		}
	}
	subtasks, msg := subtaskRanges(listParam(r, "subtasks"))
	if msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	if j, ok := s.job(w, r); ok {
		reply(w)(j.SubtaskMetrics(r.PathValue("vertexid"), listParam(r, "get"), aggs, subtasks))
	}
}

// listParam reads a query parameter that lists values, as Flink's:
// comma-separated (get=a,b), repeated (get=a&get=b), or both.
func listParam(r *http.Request, name string) []string {
	var out []string
	for _, v := range r.URL.Query()[name] {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
	}
	return out
}

// subtaskRanges parses Flink's subtasks parameter: indexes and ranges,
// "0,2-4"; nil when it is empty (every subtask).
func subtaskRanges(parts []string) ([]int, string) {
	var out []int
	for _, p := range parts {
		a, b, isRange := strings.Cut(p, "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || lo < 0 || hi < lo || hi-lo > 1<<16 {
			return nil, fmt.Sprintf("subtasks %q: want subtask indexes and ranges, such as 0,2-4", p)
		}
		for i := lo; i <= hi; i++ {
			out = append(out, i)
		}
	}
	return out, ""
}

func (s *Server) watermarks(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		paged(w, r, func(win window) (any, error) {
			wms, err := j.Watermarks(r.PathValue("vertexid"))
			return pageOf(wms, win), err
		})
	}
}

// reply answers a view's value, or its error.
func reply(w http.ResponseWriter) func(any, error) {
	return func(v any, err error) {
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

func (s *Server) triggerSavepoint(w http.ResponseWriter, r *http.Request) {
	var req api.SavepointTriggerRequest
	if !s.savepointAllowed(w) || !readJSON(w, r, &req, false) || !targetOK(w, "target-directory", req.TargetDirectory) ||
		!savepointBodyOK(w, req.FormatType, req.TriggerID) {
		return
	}
	s.start(w, r.PathValue("jobid"), req.TriggerID, func(ctx context.Context, id string) (string, error) {
		return s.m.Savepoint(ctx, id, req.TargetDirectory, req.CancelJob, false)
	})
}

func (s *Server) stop(w http.ResponseWriter, r *http.Request) {
	var req api.StopRequest
	if !s.savepointAllowed(w) || !readJSON(w, r, &req, false) || !targetOK(w, "targetDirectory", req.TargetDirectory) ||
		!savepointBodyOK(w, req.FormatType, req.TriggerID) {
		return
	}
	s.start(w, r.PathValue("jobid"), req.TriggerID, func(ctx context.Context, id string) (string, error) {
		return s.m.Savepoint(ctx, id, req.TargetDirectory, true, req.Drain)
	})
}

func (s *Server) savepointAllowed(w http.ResponseWriter) bool {
	if !s.opts.Cancel {
		writeError(w, http.StatusForbidden, "stopping jobs and savepoints are switched off on this JobManager (web.cancel.enable: false)")
	}
	return s.opts.Cancel
}

// savepointBodyOK checks Flink's formatType and triggerId fields of a
// savepoint or stop request.
func savepointBodyOK(w http.ResponseWriter, format, trigger string) bool {
	msg := ""
	switch {
	case format != "" && format != "CANONICAL":
		msg = fmt.Sprintf("formatType %q: Weir writes savepoints in the CANONICAL format only (restorable on either state backend); send CANONICAL or leave it out", format)
	case trigger != "" && !hexID.MatchString(trigger):
		msg = fmt.Sprintf("triggerId %q is not a valid id: want 32 lower-case hex digits", trigger)
	}
	if msg != "" {
		writeError(w, http.StatusBadRequest, msg)
	}
	return msg == ""
}

func targetOK(w http.ResponseWriter, field, dir string) bool {
	if msg := checkTarget(field, dir); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return false
	}
	return true
}

// checkTarget refuses a directory from a request that is relative (to
// what? the server's working directory is no business of the client's),
// holds a ".." element or a NUL, so a request cannot walk out of the
// directory it names (Flink's CVE-2020-17518 wrote an upload wherever a
// "../" in its name pointed). "" means the job's default.
func checkTarget(field, dir string) string {
	if dir == "" {
		return ""
	}
	if strings.ContainsRune(dir, 0) {
		return fmt.Sprintf("%s holds a NUL character", field)
	}
	p := dir
	if scheme, rest, ok := strings.Cut(dir, "://"); ok {
		if scheme != "file" && scheme != "s3" {
			return fmt.Sprintf("%s %q: want an absolute path, file:///path or s3://bucket/prefix", field, dir)
		}
		p = "/" + strings.TrimPrefix(rest, "/")
	}
	if !strings.HasPrefix(p, "/") {
		return fmt.Sprintf("%s %q is not an absolute path", field, dir)
	}
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return fmt.Sprintf("%s %q has a '..' element: give the directory itself", field, dir)
		}
	}
	return ""
}

// start runs op on job id in the background and answers with its trigger
// id (trigger, or a new id when empty); a job that is unknown or not
// running is refused at once. A trigger already known for the job starts
// nothing and answers the same id, as Flink's idempotent triggerId does
// (also once the job has stopped with it).
func (s *Server) start(w http.ResponseWriter, id, trigger string, op func(context.Context, string) (string, error)) {
	if s.answerKnown(w, id, trigger) {
		return
	}
	j, err := s.m.Job(id)
	if err == nil && api.Terminal(j.State()) {
		err = fmt.Errorf("%w: job %s is %s", jobmanager.ErrJobNotRunning, id, j.State())
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	if trigger == "" {
		trigger = newTriggerID()
	}
	o := &operation{job: id}
	s.mu.Lock()
	if _, raced := s.mu.ops[trigger]; raced {
		s.mu.Unlock()
		s.answerKnown(w, id, trigger)
		return
	}
	s.mu.ops[trigger] = o
	s.mu.Unlock()
	go func() {
		loc, err := op(s.ctx, id)
		s.mu.Lock()
		o.done, o.location, o.err = true, loc, err
		s.mu.Unlock()
		s.nudge()
	}()
	writeJSON(w, http.StatusAccepted, api.TriggerResponse{RequestID: trigger})
}

// answerKnown answers a request whose trigger id is already in use: the
// same id when it is job id's operation, an error when another job's.
func (s *Server) answerKnown(w http.ResponseWriter, id, trigger string) bool {
	if trigger == "" {
		return false
	}
	s.mu.Lock()
	o, known := s.mu.ops[trigger]
	s.mu.Unlock()
	switch {
	case !known:
		return false
	case o.job != id:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("triggerId %q is already in use for another job", trigger))
	default:
		writeJSON(w, http.StatusAccepted, api.TriggerResponse{RequestID: trigger})
	}
	return true
}

func (s *Server) savepointStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	o, ok := s.mu.ops[r.PathValue("triggerid")]
	ok = ok && o.job == r.PathValue("jobid")
	var out api.SavepointStatus
	if ok {
		out = o.status()
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no savepoint operation %q for job %q", r.PathValue("triggerid"), r.PathValue("jobid")))
		return
	}
	writeJSON(w, http.StatusOK, out)
	// Fetched once the answer is written: AwaitFetched's caller may close
	// the endpoint as soon as it learns this.
	s.mu.Lock()
	o.fetched = o.fetched || out.Status.ID == "COMPLETED"
	s.mu.Unlock()
	s.nudge()
}

// savepointFailureClass is the class Flink reports for a savepoint that
// failed (its CheckpointException): tools that read failure-cause.class
// see Flink's value, never a Go type; the message is the stack-trace.
const savepointFailureClass = "org.apache.flink.runtime.checkpoint.CheckpointException"

func (o *operation) status() api.SavepointStatus {
	if !o.done {
		return api.SavepointStatus{Status: api.QueueStatus{ID: "IN_PROGRESS"}}
	}
	info := &api.SavepointInfo{Location: o.location}
	if o.err != nil {
		info = &api.SavepointInfo{FailureCause: &api.FailureCause{Class: savepointFailureClass, StackTrace: o.err.Error()}}
	}
	return api.SavepointStatus{Status: api.QueueStatus{ID: "COMPLETED"}, Operation: info}
}

func newTriggerID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// writeErr answers err with the status its kind calls for.
func writeErr(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, jobmanager.ErrJobNotFound):
		code = http.StatusNotFound
	case errors.Is(err, jobmanager.ErrJobNotRunning):
		code = http.StatusConflict
	case errors.Is(err, jobmanager.ErrBadJob), errors.Is(err, jobmanager.ErrBadRequest):
		code = http.StatusBadRequest
	}
	writeError(w, code, err.Error())
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, api.ErrorResponse{Errors: []string{msg}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client went away: nothing to do
}

// readJSON decodes the request body into v, refusing unknown fields; an
// empty body leaves v as is unless required.
func readJSON(w http.ResponseWriter, r *http.Request, v any, required bool) bool {
	if r.ContentLength == 0 && !required {
		return true
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "request body is not valid JSON for this call: "+err.Error())
		return false
	}
	return true
}
