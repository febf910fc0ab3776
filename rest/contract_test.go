package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/rest/api"
	"github.com/weirstream/weir/sql/session"
)

// aggJob is a bounded SQL aggregation: 3,000 rows summed per key at
// parallelism 2, checkpoints every 100 ms.
const aggJob = `
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'agg';
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000', 'number-of-rows' = '3000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000');
CREATE TABLE sums (k BIGINT, n BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO sums SELECT MOD(id, 10), COUNT(*), SUM(id) FROM gen GROUP BY MOD(id, 10);`

// The REST contract on a SQL aggregation: a savepoint while it runs, then
// every endpoint's JSON checked against the job's real state once it
// finished (its plan, its record counts, its checkpoint directory).
func TestContractSQLAggregation(t *testing.T) {
	c := newCluster(t)
	id := c.submit(aggJob, nil)
	c.checkpointed(id)
	spDir := t.TempDir()
	cl := c.client("")
	trigger, err := cl.TriggerSavepoint(context.Background(), id, spDir, false)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := cl.AwaitSavepoint(context.Background(), id, trigger)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job to finish", func() bool { return c.state(id) == api.StateFinished })
	checkContract(t, c, id, planOf(t, aggJob, "agg"), contractWant{sourceRecords: 3000, savepoint: sp, name: "agg",
		ckDir: filepath.Join(c.dir, "checkpoints", id), minCompleted: 2})
}

// contractWant is what the contract check knows of the job beyond its plan.
type contractWant struct {
	name          string
	sourceRecords int64
	savepoint     string
	ckDir         string
	// minCompleted is the least number of completed checkpoints the job
	// must show: a paced source runs long enough for several; an unpaced
	// bounded one may finish within its first interval (one, the final).
	minCompleted int
}

// planOf plans script as the JobManager does.
func planOf(t *testing.T, script, name string) *graph.JobGraph {
	s := session.New()
	if err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	jg, _, err := s.Job(name)
	if err != nil {
		t.Fatal(err)
	}
	return jg
}

// get fetches path into v (decoded strictly) and returns the raw object.
func get(t testing.TB, c *cluster, path string, v any) map[string]any {
	t.Helper()
	code, body := c.call("GET", path, "", "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
	var raw map[string]any
	_ = json.Unmarshal(body, &raw)
	return raw
}

// hasKeys checks that obj has Flink's field names keys.
func hasKeys(t testing.TB, what string, obj any, keys ...string) {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Errorf("%s: %v is not an object", what, obj)
		return
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: no field %q (Flink's name) in %v", what, k, m)
		}
	}
}

func checkContract(t *testing.T, c *cluster, id string, jg *graph.JobGraph, want contractWant) {
	total := 0
	for _, v := range jg.Vertices {
		total += v.Parallelism
	}
	checkJobLists(t, c, id, want.name, total)
	d := checkJobDetails(t, c, id, jg, want)
	checkCheckpoints(t, c, id, d, total, want)
	checkVertexMetrics(t, c, id, d, jg)
	for _, v := range d.Vertices {
		var wms []api.Metric
		get(t, c, "/v1/jobs/"+id+"/vertices/"+v.ID+"/watermarks", &wms)
		if len(wms) != v.Parallelism {
			t.Errorf("watermarks of %s: %d, want one per subtask (%d)", v.Name, len(wms), v.Parallelism)
		}
		for i, w := range wms {
			if w.ID != fmt.Sprintf("%d.currentInputWatermark", i) || w.Value == "" {
				t.Errorf("watermark %d of %s: %+v", i, v.Name, w)
			}
		}
		var page []api.Metric
		get(t, c, "/v1/jobs/"+id+"/vertices/"+v.ID+"/watermarks?offset=1&limit=1", &page)
		if want := wms[1:min(2, len(wms))]; len(page) != len(want) || len(want) == 1 && page[0].ID != want[0].ID {
			t.Errorf("watermarks of %s ?offset=1&limit=1: %+v, want %+v", v.Name, page, want)
		}
	}
	var ex api.JobExceptions
	raw := get(t, c, "/v1/jobs/"+id+"/exceptions", &ex)
	hasKeys(t, "exceptions", raw, "all-exceptions", "truncated", "exceptionHistory")
	if len(ex.ExceptionHistory.Entries) != 0 || len(ex.AllExceptions) != 0 {
		t.Errorf("exceptions of a job that never failed: %+v", ex)
	}
}

func checkJobLists(t *testing.T, c *cluster, id, name string, total int) {
	var jobs api.JobIDsWithStatus
	get(t, c, "/v1/jobs", &jobs)
	if !slices.Contains(jobs.Jobs, api.JobIDStatus{ID: id, Status: api.StateFinished}) {
		t.Errorf("GET /jobs: %+v, want %s FINISHED", jobs, id)
	}
	var ov api.MultipleJobsDetails
	raw := get(t, c, "/v1/jobs/overview", &ov)
	hasKeys(t, "jobs/overview entry", raw["jobs"].([]any)[0], "jid", "name", "state", "start-time", "end-time", "duration", "last-modification", "tasks")
	for _, j := range ov.Jobs {
		if j.JID != id {
			continue
		}
		if j.Name != name || j.State != api.StateFinished || j.EndTime < j.StartTime || j.Duration != j.EndTime-j.StartTime ||
			j.Tasks.Total != total || j.Tasks.Finished != total || j.LastModification != j.EndTime {
			t.Errorf("jobs/overview: %+v; want %s FINISHED with %d finished tasks", j, name, total)
		}
	}
	var o api.Overview
	raw = get(t, c, "/v1/overview", &o)
	hasKeys(t, "overview", raw, "taskmanagers", "slots-total", "slots-available", "jobs-running", "jobs-finished", "jobs-cancelled", "jobs-failed", "flink-version")
	if o.JobsFinished < 1 || o.SlotsTotal != 32 || o.TaskManagers != 1 || o.JobsRunning+o.JobsFinished+o.JobsCancelled+o.JobsFailed != len(ov.Jobs) {
		t.Errorf("overview: %+v", o)
	}
	checkConfig(t, c)
}

// checkConfig checks /config and /jobmanager/config against the
// cluster's configuration.
func checkConfig(t *testing.T, c *cluster) {
	var cfg api.Config
	raw := get(t, c, "/v1/config", &cfg)
	hasKeys(t, "config", raw, "refresh-interval", "timezone-name", "timezone-offset", "flink-version", "features")
	if !cfg.Features.WebSubmit || !cfg.Features.WebCancel {
		t.Errorf("config features: %+v", cfg.Features)
	}
	var entries []configEntry
	get(t, c, "/v1/jobmanager/config", &entries)
	if !slices.Contains(entries, configEntry{"rest.port", "0"}) || !slices.Contains(entries, configEntry{"weir.jobmanager.dir", c.dir}) {
		t.Errorf("jobmanager/config: %+v, want rest.port 0", entries)
	}
}

func checkJobDetails(t *testing.T, c *cluster, id string, jg *graph.JobGraph, want contractWant) api.JobDetails {
	var d api.JobDetails
	raw := get(t, c, "/v1/jobs/"+id, &d)
	hasKeys(t, "job", raw, "jid", "name", "isStoppable", "state", "start-time", "end-time", "duration", "now", "timestamps", "vertices", "status-counts", "plan")
	hasKeys(t, "vertex", raw["vertices"].([]any)[0], "id", "name", "maxParallelism", "parallelism", "status", "start-time", "end-time", "duration", "tasks", "metrics")
	if _, ok := raw["vertices"].([]any)[0].(map[string]any)["subtasks"]; ok {
		t.Errorf("job details list subtasks without ?subtasks=all")
	}
	d = api.JobDetails{}
	get(t, c, "/v1/jobs/"+id+"?subtasks=all", &d)
	if d.JID != id || d.Name != want.name || d.State != api.StateFinished || d.IsStoppable || d.Timestamps[api.StateRunning] == 0 ||
		d.Timestamps[api.StateFinished] != d.EndTime || len(d.Vertices) != len(jg.Vertices) || d.StatusCounts.Finished != len(jg.Vertices) {
		t.Fatalf("job details: %+v", d)
	}
	// Flink's job-level maxParallelism is the configured
	// pipeline.max-parallelism (-1: unset); each vertex has its key groups.
	if d.MaxParallelism != -1 || d.Vertices[0].MaxParallelism != 128 {
		t.Errorf("maxParallelism: job %d, first vertex %d; want -1 (unset) and 128", d.MaxParallelism, d.Vertices[0].MaxParallelism)
	}
	var st api.JobStatus
	hasKeys(t, "status", get(t, c, "/jobs/"+id+"/status", &st), "status")
	if st.Status != api.StateFinished {
		t.Errorf("/jobs/:id/status: %+v, want FINISHED", st)
	}
	var ov api.Overview
	get(t, c, "/overview", &ov)
	var tms api.TaskManagers
	hasKeys(t, "taskmanager", get(t, c, "/taskmanagers", &tms)["taskmanagers"].([]any)[0],
		"id", "path", "dataPort", "jmxPort", "timeSinceLastHeartbeat", "slotsNumber", "freeSlots", "hardware")
	if len(tms.TaskManagers) != ov.TaskManagers || tms.TaskManagers[0].SlotsNumber != ov.SlotsTotal ||
		tms.TaskManagers[0].FreeSlots != ov.SlotsAvailable || tms.TaskManagers[0].ID == "" {
		t.Errorf("/taskmanagers %+v disagrees with /overview %+v", tms, ov)
	}
	acc := get(t, c, "/jobs/"+id+"/accumulators", &api.JobAccumulators{})
	if fmt.Sprint(acc) != "map[job-accumulators:[] serialized-user-task-accumulators:map[] user-task-accumulators:[]]" {
		t.Errorf("/jobs/:id/accumulators: %v", acc)
	}
	var ms []api.Metric
	get(t, c, "/jobs/"+id+"/metrics", &ms)
	if fmt.Sprint(ms) != "[{numRestarts } {fullRestarts } {lastCheckpointRestoreTimestamp } {numberOfCompletedCheckpoints } "+
		"{numberOfFailedCheckpoints } {lastCheckpointDuration } {lastCheckpointSize }]" {
		t.Errorf("/jobs/:id/metrics: %v", ms)
	}
	ms = nil
	get(t, c, "/jobs/"+id+"/metrics?get=numRestarts,noSuchMetric", &ms)
	if len(ms) != 1 || ms[0] != (api.Metric{ID: "numRestarts", Value: "0"}) {
		t.Errorf("/jobs/:id/metrics?get=numRestarts,noSuchMetric: %v", ms)
	}
	ms = nil // json reuses a slice's elements
	get(t, c, "/jobmanager/metrics", &ms)
	if fmt.Sprint(ms) != "[{numRegisteredTaskManagers } {numRunningJobs } {taskSlotsTotal } {taskSlotsAvailable }]" {
		t.Errorf("/jobmanager/metrics: %v", ms)
	}
	ms = nil
	get(t, c, "/jobmanager/metrics?get=taskSlotsTotal,numRegisteredTaskManagers", &ms)
	if fmt.Sprint(ms) != fmt.Sprintf("[{numRegisteredTaskManagers %d} {taskSlotsTotal %d}]", ov.TaskManagers, ov.SlotsTotal) {
		t.Errorf("/jobmanager/metrics?get=taskSlotsTotal,numRegisteredTaskManagers: %v, /overview %+v", ms, ov)
	}
	var sub api.Subtask
	v0 := d.Vertices[0]
	hasKeys(t, "subtask", get(t, c, "/jobs/"+id+"/vertices/"+v0.ID+"/subtasks/0", &sub), "subtask", "status", "attempt")
	if !reflect.DeepEqual(sub, v0.Subtasks[0]) {
		t.Errorf("/subtasks/0: %+v, want %+v", sub, v0.Subtasks[0])
	}
	if code, body := c.call("GET", fmt.Sprintf("/jobs/%s/vertices/%s/subtasks/%d", id, v0.ID, len(v0.Subtasks)), "", ""); code != http.StatusNotFound ||
		!strings.Contains(string(body), fmt.Sprintf("has subtasks 0 to %d", len(v0.Subtasks)-1)) {
		t.Errorf("a subtask past the last: %d %s", code, body)
	}
	if code, _ := c.call("GET", "/jobs/"+id+"/vertices/"+v0.ID+"/subtasks/x", "", ""); code != http.StatusBadRequest {
		t.Errorf("subtask x: %d, want 400", code)
	}
	var plan api.JobPlan
	hasKeys(t, "plan", get(t, c, "/v1/jobs/"+id+"/plan", &plan), "plan")
	if !reflect.DeepEqual(plan.Plan, d.Plan) {
		t.Errorf("/jobs/:id/plan: %+v, want the plan of /jobs/:id %+v", plan.Plan, d.Plan)
	}
	ids := map[string]bool{}
	var sourceOut int64
	for i, v := range d.Vertices {
		g := jg.Vertices[i]
		if v.Name != g.Name || v.Parallelism != g.Parallelism || v.MaxParallelism != g.Head().MaxParallelism || len(v.Subtasks) != g.Parallelism || !hexID.MatchString(v.ID) || ids[v.ID] {
			t.Errorf("vertex %d: %+v, want %s at parallelism %d (max %d) with a unique hex id", i, v, g.Name, g.Parallelism, g.Head().MaxParallelism)
		}
		ids[v.ID] = true
		var sum int64
		for j, s := range v.Subtasks {
			if s.Subtask != j || s.Status != api.StateFinished || !s.Metrics.WriteRecordsComplete {
				t.Errorf("vertex %s subtask %d: %+v", v.Name, j, s)
			}
			sum += s.Metrics.WriteRecords
		}
		if sum != v.Metrics.WriteRecords || v.Tasks.Finished != g.Parallelism {
			t.Errorf("vertex %s: write-records %d, its subtasks' sum %d; tasks %+v", v.Name, v.Metrics.WriteRecords, sum, v.Tasks)
		}
		if g.IsSource() {
			sourceOut += v.Metrics.WriteRecords
		}
		var vd api.VertexDetails
		get(t, c, "/v1/jobs/"+id+"/vertices/"+v.ID, &vd)
		if vd.Name != v.Name || len(vd.Subtasks) != len(v.Subtasks) || vd.Subtasks[0].Metrics != v.Subtasks[0].Metrics {
			t.Errorf("vertex endpoint %s: %+v, want the job's %+v", v.ID, vd, v)
		}
		var pg api.VertexDetails
		get(t, c, "/v1/jobs/"+id+"/vertices/"+v.ID+"?offset=1&limit=1", &pg)
		if want := min(1, len(v.Subtasks)-1); pg.SubtasksTotal != len(v.Subtasks) || len(pg.Subtasks) != want ||
			(want == 1 && pg.Subtasks[0] != v.Subtasks[1]) {
			t.Errorf("vertex endpoint %s ?offset=1&limit=1: %d of %d subtasks %+v, want subtask 1 of %d", v.ID, len(pg.Subtasks), pg.SubtasksTotal, pg.Subtasks, len(v.Subtasks))
		}
	}
	if sourceOut != want.sourceRecords {
		t.Errorf("the sources wrote %d records, want %d", sourceOut, want.sourceRecords)
	}
	checkPlan(t, d, jg)
	return d
}

func checkPlan(t testing.TB, d api.JobDetails, jg *graph.JobGraph) {
	if len(d.Plan.Nodes) != len(jg.Vertices) {
		t.Fatalf("plan: %d nodes, want %d", len(d.Plan.Nodes), len(jg.Vertices))
	}
	for i, n := range d.Plan.Nodes {
		in := jg.InEdges(jg.Vertices[i])
		if n.ID != d.Vertices[i].ID || len(n.Inputs) != len(in) {
			t.Errorf("plan node %d: %+v", i, n)
			continue
		}
		for k, e := range in {
			if n.Inputs[k].ShipStrategy != e.Edge.Partitioning.String() || n.Inputs[k].ID != d.Vertices[slices.Index(jg.Vertices, e.From)].ID {
				t.Errorf("plan node %d input %d: %+v, want from %s by %s", i, k, n.Inputs[k], e.From.Name, e.Edge.Partitioning)
			}
		}
	}
}

func checkCheckpoints(t *testing.T, c *cluster, id string, d api.JobDetails, total int, want contractWant) {
	var st api.CheckpointingStatistics
	raw := get(t, c, "/v1/jobs/"+id+"/checkpoints", &st)
	hasKeys(t, "checkpoints", raw, "counts", "summary", "latest", "history")
	hasKeys(t, "checkpoints.counts", raw["counts"], "restored", "total", "in_progress", "completed", "failed")
	hasKeys(t, "checkpoints.history[0]", raw["history"].([]any)[0], "className", "id", "status", "is_savepoint", "trigger_timestamp",
		"latest_ack_timestamp", "checkpointed_size", "state_size", "end_to_end_duration", "alignment_buffered", "processed_data",
		"persisted_data", "num_subtasks", "num_acknowledged_subtasks", "checkpoint_type", "discarded")
	completed, failed := 0, 0
	for i, h := range st.History {
		if i > 0 && h.ID >= st.History[i-1].ID {
			t.Errorf("history not newest first: %d after %d", h.ID, st.History[i-1].ID)
		}
		switch h.Status {
		case api.CheckpointCompleted:
			completed++
			checkCompleted(t, c, id, d, h, total)
		case api.CheckpointFailed:
			failed++
		}
	}
	if st.Counts.Completed != completed || st.Counts.Failed != failed || st.Counts.Total != completed+failed || completed < want.minCompleted {
		t.Errorf("counts %+v; the history has %d completed, %d failed; want %d completed or more", st.Counts, completed, failed, want.minCompleted)
	}
	l := st.Latest
	if want.savepoint != "" && (l.Savepoint == nil || l.Savepoint.ExternalPath != want.savepoint || !l.Savepoint.IsSavepoint || l.Savepoint.CheckpointType != api.TypeSavepoint) {
		t.Errorf("latest savepoint %+v, want %s", l.Savepoint, want.savepoint)
	}
	if _, err := os.Stat(filepath.Join(want.savepoint, "_metadata")); want.savepoint != "" && err != nil {
		t.Errorf("the savepoint the API reports: %v", err)
	}
	// The checkpoint directory keeps the newest completed checkpoint
	// (state.checkpoints.num-retained 1): the one the API calls latest,
	// with the bytes it reports.
	onDisk := chkDirs(t, want.ckDir)
	if l.Completed == nil || len(onDisk) != 1 || l.Completed.ExternalPath != filepath.Join(want.ckDir, onDisk[0]) ||
		onDisk[0] != fmt.Sprintf("chk-%d", l.Completed.ID) {
		t.Fatalf("latest completed %+v; on disk %v", l.Completed, onDisk)
	}
	checkStartDelays(t, c, id, d, l.Completed.ID)
	checkSizes(t, l.Completed.ExternalPath, l.Completed.ID, l.Completed.StateSize, l.Completed.CheckpointedSize)
	if st.Summary.StateSize.Max < l.Completed.StateSize || st.Summary.EndToEndDuration.Min < 0 {
		t.Errorf("summary %+v", st.Summary)
	}
}

// checkStartDelays: each subtask's start_delay in checkpoint ck, the
// latest completed, is the start delay the subtask measured for it (its
// metric group's checkpointStartDelayNanos, in ms), not derived from the
// other durations.
func checkStartDelays(t testing.TB, c *cluster, id string, d api.JobDetails, ck int64) {
	j, err := c.m.Job(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range d.Vertices {
		var sd api.TaskCheckpointDetails
		get(t, c, fmt.Sprintf("/v1/jobs/%s/checkpoints/details/%d/subtasks/%s", id, ck, v.ID), &sd)
		var delays []int64
		for _, s := range sd.Subtasks {
			want := time.Duration(subtaskGroup(t, j, v.Name, s.Index).CheckpointStartDelayNanos.Load()).Milliseconds()
			if s.StartDelay != want {
				t.Errorf("checkpoint %d %s[%d]: start_delay %d ms, the subtask measured %d ms", ck, v.Name, s.Index, s.StartDelay, want)
			}
			delays = append(delays, s.StartDelay)
		}
		if sum := sd.Summary.StartDelay; len(delays) > 0 && (sum.Min != slices.Min(delays) || sum.Max != slices.Max(delays)) {
			t.Errorf("checkpoint %d %s: start_delay summary %+v, subtasks %v", ck, v.Name, sum, delays)
		}
	}
}

func chkDirs(t testing.TB, dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.HasPrefix(e.Name(), "chk-") && e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// checkSizes checks a completed checkpoint's state_size against the
// files it names — its own in chk-N (besides _metadata) and the shared files
// of incremental checkpoints — and that its checkpointed_size (what it
// wrote) is some of that.
func checkSizes(t testing.TB, chkDir string, id, stateSize, checkpointed int64) {
	t.Helper()
	m, _, err := checkpointstorage.Resolve("", chkDir)
	if err != nil {
		t.Errorf("checkpoint %d: %v", id, err)
		return
	}
	own, shared := dirSize(t, chkDir), int64(0)
	for _, h := range m.Handles {
		if strings.HasPrefix(h.Path, "shared/") {
			shared += h.Size
		}
	}
	if own+shared != stateSize || checkpointed <= 0 || checkpointed > stateSize {
		t.Errorf("checkpoint %d: state_size %d, checkpointed_size %d; its files hold %d bytes besides _metadata, and the shared files it names %d",
			id, stateSize, checkpointed, own, shared)
	}
}

func dirSize(t testing.TB, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Name() == "_metadata" {
			return err
		}
		info, err := e.Info()
		n += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkCompleted checks a completed checkpoint's details, per-vertex and
// per-subtask, timeline and slowest subtasks against each other.
func checkCompleted(t testing.TB, c *cluster, id string, d api.JobDetails, h api.CheckpointStatistics, total int) {
	if h.NumSubtasks != total || h.NumAcknowledgedSubtasks != total || h.LatestAckTimestamp < h.TriggerTimestamp {
		t.Errorf("checkpoint %d: %+v", h.ID, h)
	}
	path := fmt.Sprintf("/v1/jobs/%s/checkpoints/details/%d", id, h.ID)
	var det api.CheckpointStatistics
	get(t, c, path, &det)
	if len(det.Tasks) != len(d.Vertices) {
		t.Fatalf("checkpoint %d: tasks %v, want one per vertex", h.ID, det.Tasks)
	}
	var size int64
	acks := map[string]int64{} // "vertex/index" → end-to-end
	for _, v := range d.Vertices {
		ts := det.Tasks[v.ID]
		var sd api.TaskCheckpointDetails
		raw := get(t, c, path+"/subtasks/"+v.ID, &sd)
		hasKeys(t, "subtask checkpoint", raw["subtasks"].([]any)[0], "index", "status", "ack_timestamp", "end_to_end_duration",
			"state_size", "checkpoint", "alignment", "start_delay", "unaligned_checkpoint", "aborted")
		if ts.NumSubtasks != v.Parallelism || ts.NumAcknowledgedSubtasks != v.Parallelism || len(sd.Subtasks) != v.Parallelism {
			t.Errorf("checkpoint %d vertex %s: %+v, %d subtasks", h.ID, v.Name, ts, len(sd.Subtasks))
		}
		var vsize int64
		for _, s := range sd.Subtasks {
			m := s.Checkpoint.Sync + s.Checkpoint.Async + s.Alignment.Duration + s.StartDelay
			if s.Status != "completed" || s.AckTimestamp-h.TriggerTimestamp-s.EndToEndDuration > 1 || m > s.EndToEndDuration+3 {
				t.Errorf("checkpoint %d %s[%d]: %+v", h.ID, v.Name, s.Index, s)
			}
			vsize += s.StateSize
			acks[fmt.Sprintf("%s/%d", v.ID, s.Index)] = s.EndToEndDuration
		}
		if vsize != ts.StateSize || sd.StateSize != ts.StateSize {
			t.Errorf("checkpoint %d %s: state_size %d, subtasks' sum %d", h.ID, v.Name, ts.StateSize, vsize)
		}
		size += ts.StateSize
	}
	if size != h.StateSize {
		t.Errorf("checkpoint %d: state_size %d, its vertices' sum %d", h.ID, h.StateSize, size)
	}
	checkTimeline(t, c, path, h, acks)
	checkPhases(t, c, path, d)
}

func checkTimeline(t testing.TB, c *cluster, path string, h api.CheckpointStatistics, acks map[string]int64) {
	var tl api.CheckpointTimeline
	get(t, c, path+"/timeline", &tl)
	if tl.ID != h.ID || len(tl.Subtasks) != len(acks) || tl.SubtasksTotal != len(acks) || tl.EndToEndDuration != h.EndToEndDuration {
		t.Fatalf("timeline of %d: %+v", h.ID, tl)
	}
	var page api.CheckpointTimeline
	get(t, c, path+"/timeline?offset=1&limit=2", &page)
	if want := tl.Subtasks[1:min(3, len(tl.Subtasks))]; page.SubtasksTotal != len(acks) || !slices.Equal(page.Subtasks, want) {
		t.Errorf("timeline of %d ?offset=1&limit=2: %d of %d subtasks %+v, want %+v", h.ID, len(page.Subtasks), page.SubtasksTotal, page.Subtasks, want)
	}
	for _, e := range tl.Subtasks {
		ok := 0 <= e.BarrierIn && e.BarrierIn <= e.Aligned && e.Aligned <= e.SyncDone && e.SyncDone <= e.AsyncDone &&
			e.AsyncDone == e.Acknowledged && e.Acknowledged <= e.Completed && e.Completed == h.EndToEndDuration
		if !ok || e.Acknowledged != acks[fmt.Sprintf("%s/%d", e.VertexID, e.Subtask)] || e.Phase != "acknowledged" {
			t.Errorf("timeline of %d: %+v (the subtask's end_to_end_duration %d)", h.ID, e, acks[fmt.Sprintf("%s/%d", e.VertexID, e.Subtask)])
		}
	}
	var slow api.CheckpointTimeline
	get(t, c, path+"/slowest?n=2", &slow)
	sorted := slices.Clone(tl.Subtasks)
	slices.SortStableFunc(sorted, func(a, b api.TimelineEntry) int { return int(b.Acknowledged - a.Acknowledged) })
	if len(slow.Subtasks) != 2 || slow.Subtasks[0].Acknowledged != sorted[0].Acknowledged || slow.Subtasks[1].Acknowledged != sorted[1].Acknowledged {
		t.Errorf("slowest 2 of %d: %+v; all by latency: %+v", h.ID, slow.Subtasks, sorted)
	}
}
