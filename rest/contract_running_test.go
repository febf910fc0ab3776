package rest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/internal/billgen"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/rest/api"
)

// runningAggJob sums per key the numbers of a Kafka topic that is never
// bounded: once it has read the topic, it runs on, idle but for its
// checkpoints.
const runningAggJob = `
SET 'execution.checkpointing.interval' = '300 ms';
SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'agg';
CREATE TABLE nums (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '${TOPIC}', 'properties.bootstrap.servers' = '${BROKERS}',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE sums (k BIGINT, n BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO sums SELECT MOD(id, 10), COUNT(*), SUM(id) FROM nums GROUP BY MOD(id, 10);`

// runningJob is one job of TestContractRunningJobs and what the test
// knows of it.
type runningJob struct {
	id, name string
	jg       *graph.JobGraph
	ckDir    string
	produced int64
	// maxTs is the greatest event time per partition of the source's
	// topic (ms), for the watermarks; nil: the job has none.
	maxTs map[int32]int64
	// lateness is the source's WATERMARK delay.
	lateness time.Duration
}

// The REST contract on two RUNNING jobs, both reading Kafka topics that
// are never bounded: the billing job (examples/billing/billing.sql
// without its bounded mode) on the real Kafka and MariaDB, and a SQL
// aggregation. Each read its topic and waits for more — paused by the
// broker, whose topic holds no more records — so its counts stand still
// while every endpoint's JSON is checked against its real state: the
// plan, its subtasks RUNNING, record counts equal to what was produced,
// checkpoints equal to the checkpoint directory (read between two equal
// REST answers: checkpoints go on), metrics and back-pressure equal to
// the job's metric groups (read between two equal reads of the groups:
// rates move every 5 s), watermarks equal to the greatest event time each
// source subtask read minus the WATERMARK delay, a savepoint's status.
func TestContractRunningJobs(t *testing.T) {
	recordContractTest(t) // before the services: a skip here leaves the route check out
	brokers, dsn := testsvc.Kafka(t), testsvc.MySQL(t)
	suffix := fmt.Sprint(time.Now().UnixNano())
	c := newCluster(t)
	bill, truth, db, table := startRunningBilling(t, c, brokers, dsn, suffix)
	agg := startRunningAgg(t, c, brokers, "rest-nums-"+suffix)
	jobs := []*runningJob{bill, agg}
	for _, j := range jobs {
		settle(t, c, j)
	}
	checkRunningLists(t, c, jobs)
	for _, j := range jobs {
		t.Run(j.name, func(t *testing.T) { checkRunning(t, c, j) })
	}
	checkTotals(t, db, table, truth)
	checkRunningSavepoint(t, c, agg)
	checkStopAndCancel(t, c, agg, bill)
}

func startRunningBilling(t *testing.T, c *cluster, brokers, dsn, suffix string) (*runningJob, map[string]billgen.Total, *sql.DB, string) {
	topic, dlq, table := "rest-run-bills-"+suffix, "rest-run-bills-dlq-"+suffix, "rest_run_totals_"+suffix
	events, _ := billgen.Generate(billgen.GenOptions{Bills: 2000, Accounts: 40, DupRate: 0.05, DupDelay: 500,
		Spread: time.Second, Seed: 15})
	recs := produceBills(t, brokers, topic, dlq, events)
	db := openTable(t, dsn, table)
	ck := t.TempDir()
	script := billingScript(t, billingNames{brokers: brokers, dsn: dsn, checkpoints: ck, topic: topic, dlq: dlq, table: table,
		unbounded: true})
	maxTs := map[int32]int64{}
	for i, r := range recs {
		maxTs[r.Partition] = max(maxTs[r.Partition], events[i].TS.UnixMilli())
	}
	id := c.submit(script, map[string]string{"execution.checkpointing.interval": "300 ms"})
	return &runningJob{id: id, name: "billing", jg: planOf(t, script, "billing"), ckDir: filepath.Join(ck, id),
		produced: int64(len(recs)), maxTs: maxTs, lateness: 5 * time.Second}, billgen.Truth(events), db, table
}

func startRunningAgg(t *testing.T, c *cluster, brokers, topic string) *runningJob {
	kc, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	testsvc.CreateTopic(t, kadm.NewClient(kc), topic, 2, nil)
	var recs []*kgo.Record
	for i := 1; i <= 3000; i++ {
		recs = append(recs, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf(`{"id": %d}`, i))})
	}
	if err := kc.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	script := strings.NewReplacer("${TOPIC}", topic, "${BROKERS}", brokers).Replace(runningAggJob)
	id := c.submit(script, nil)
	return &runningJob{id: id, name: "agg", jg: planOf(t, script, "agg"), ckDir: filepath.Join(c.dir, "checkpoints", id),
		produced: int64(len(recs))}
}

// settle waits until job j's sources have read every record produced,
// its record counts stand still across two completed checkpoints (a
// checkpoint completes once its barrier passed every record before it
// through every vertex) and every subtask has measured a back-pressure
// window.
func settle(t *testing.T, c *cluster, j *runningJob) {
	t.Helper()
	waitFor(t, j.name+" to read its topic", func() bool {
		var d api.JobDetails
		get(t, c, "/v1/jobs/"+j.id, &d)
		return d.State == api.StateRunning && sourceOut(d, j.jg) == j.produced
	})
	counts := func() string {
		var d api.JobDetails
		get(t, c, "/v1/jobs/"+j.id, &d)
		var s []string
		for _, v := range d.Vertices {
			s = append(s, fmt.Sprint(v.Metrics))
		}
		return strings.Join(s, " ")
	}
	for before := ""; ; {
		c.checkpointsAfter(j.id, 2)
		now := counts()
		if now == before {
			break
		}
		before = now
	}
	waitFor(t, j.name+"'s back-pressure measured", func() bool {
		for _, v := range j.vertexIDs(t, c) {
			var bp api.BackPressure
			get(t, c, "/v1/jobs/"+j.id+"/vertices/"+v+"/backpressure", &bp)
			if bp.Status != "ok" {
				return false
			}
		}
		return true
	})
}

func (j *runningJob) vertexIDs(t testing.TB, c *cluster) []string {
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+j.id, &d)
	var out []string
	for _, v := range d.Vertices {
		out = append(out, v.ID)
	}
	return out
}

func sourceOut(d api.JobDetails, jg *graph.JobGraph) int64 {
	var n int64
	for i, gv := range jg.Vertices {
		if gv.IsSource() && i < len(d.Vertices) {
			n += d.Vertices[i].Metrics.WriteRecords
		}
	}
	return n
}

// checkpointsAfter waits until n more checkpoints of job id completed.
func (c *cluster) checkpointsAfter(id string, n int) {
	c.t.Helper()
	var st api.CheckpointingStatistics
	get(c.t, c, "/v1/jobs/"+id+"/checkpoints", &st)
	from := st.Counts.Completed
	waitFor(c.t, fmt.Sprintf("%d more checkpoints of %s", n, id), func() bool {
		get(c.t, c, "/v1/jobs/"+id+"/checkpoints", &st)
		return st.Counts.Completed >= from+n
	})
}

func checkRunningLists(t *testing.T, c *cluster, jobs []*runningJob) {
	var list api.JobIDsWithStatus
	get(t, c, "/v1/jobs", &list)
	var ov api.MultipleJobsDetails
	get(t, c, "/v1/jobs/overview", &ov)
	var o api.Overview
	get(t, c, "/v1/overview", &o)
	if o.JobsRunning != len(jobs) || o.JobsFinished+o.JobsCancelled+o.JobsFailed != 0 || len(list.Jobs) != len(jobs) || len(ov.Jobs) != len(jobs) {
		t.Errorf("overview %+v, jobs %+v: want %d running", o, list, len(jobs))
	}
	checkConfig(t, c)
	total, free := c.m.Slots()
	if o.SlotsTotal != total || o.SlotsAvailable != free || free >= total {
		t.Errorf("overview slots %d/%d, want the JobManager's %d/%d with some taken", o.SlotsAvailable, o.SlotsTotal, free, total)
	}
	for _, j := range jobs {
		if !slices.Contains(list.Jobs, api.JobIDStatus{ID: j.id, Status: api.StateRunning}) {
			t.Errorf("GET /jobs: %+v, want %s RUNNING", list, j.id)
		}
		n := 0
		for _, v := range j.jg.Vertices {
			n += v.Parallelism
		}
		i := slices.IndexFunc(ov.Jobs, func(o api.JobOverview) bool { return o.JID == j.id })
		if i < 0 {
			t.Fatalf("jobs/overview: no %s", j.id)
		}
		o := ov.Jobs[i]
		if o.Name != j.name || o.State != api.StateRunning || o.EndTime != -1 || o.Duration < 0 || o.Tasks.Total != n ||
			o.Tasks.Running != n || o.LastModification < o.StartTime {
			t.Errorf("jobs/overview: %+v; want %s RUNNING with %d running tasks, no end", o, j.name, n)
		}
	}
}

func checkRunning(t *testing.T, c *cluster, j *runningJob) {
	d := checkRunningDetails(t, c, j)
	checkRunningCheckpoints(t, c, j, d)
	stably(t, c, j, "metrics and back-pressure", func(t testing.TB) { checkVertexMetrics(t, c, j.id, d, j.jg) })
	checkRunningWatermarks(t, c, j, d)
	stably(t, c, j, "explain-analyze and hot subtasks", func(t testing.TB) { checkRunningAnalyze(t, c, j, d) })
	var ex api.JobExceptions
	get(t, c, "/v1/jobs/"+j.id+"/exceptions", &ex)
	if len(ex.ExceptionHistory.Entries) != 0 || len(ex.AllExceptions) != 0 || ex.RootException != "" {
		t.Errorf("exceptions of a job that never failed: %+v", ex)
	}
}

func checkRunningDetails(t *testing.T, c *cluster, j *runningJob) api.JobDetails {
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+j.id+"?subtasks=all", &d)
	if d.JID != j.id || d.Name != j.name || d.State != api.StateRunning || !d.IsStoppable || d.EndTime != -1 ||
		d.Duration != d.Now-d.StartTime || d.Timestamps[api.StateRunning] == 0 || d.Timestamps[api.StateFinished] != 0 ||
		len(d.Vertices) != len(j.jg.Vertices) || d.StatusCounts.Running != len(j.jg.Vertices) {
		t.Fatalf("job details: %+v", d)
	}
	for i, v := range d.Vertices {
		g := j.jg.Vertices[i]
		if v.Name != g.Name || v.Parallelism != g.Parallelism || v.MaxParallelism != g.Head().MaxParallelism || len(v.Subtasks) != g.Parallelism ||
			!hexID.MatchString(v.ID) || v.Status != api.StateRunning || v.EndTime != -1 || v.Tasks.Running != g.Parallelism {
			t.Errorf("vertex %d: %+v, want %s RUNNING at parallelism %d", i, v, g.Name, g.Parallelism)
		}
		for k, s := range v.Subtasks {
			if s.Subtask != k || s.Status != api.StateRunning || s.EndTime != -1 || s.Metrics.WriteRecordsComplete {
				t.Errorf("vertex %s subtask %d: %+v, want RUNNING, its counts not complete", v.Name, k, s)
			}
		}
		var vd api.VertexDetails
		get(t, c, "/v1/jobs/"+j.id+"/vertices/"+v.ID, &vd)
		if vd.ID != v.ID || vd.Name != v.Name || vd.Parallelism != v.Parallelism || vd.MaxParallelism != v.MaxParallelism || len(vd.Subtasks) != len(v.Subtasks) ||
			vd.Subtasks[0].Metrics != v.Subtasks[0].Metrics || vd.Subtasks[0].Status != api.StateRunning {
			t.Errorf("vertex endpoint %s: %+v, want the job's %+v", v.ID, vd, v)
		}
	}
	if n := sourceOut(d, j.jg); n != j.produced {
		t.Errorf("the sources wrote %d records, want the %d produced", n, j.produced)
	}
	checkPlan(t, d, j.jg)
	return d
}

// checkRunningCheckpoints checks the checkpoint statistics against the
// checkpoint directory: read between two REST answers with the same
// latest checkpoint, so no checkpoint completed meanwhile.
func checkRunningCheckpoints(t *testing.T, c *cluster, j *runningJob, d api.JobDetails) {
	total := 0
	for _, v := range d.Vertices {
		total += v.Parallelism
	}
	stably(t, c, j, "checkpoints", func(t testing.TB) {
		var st, again api.CheckpointingStatistics
		get(t, c, "/v1/jobs/"+j.id+"/checkpoints", &st)
		onDisk := chkDirs(t, j.ckDir)
		get(t, c, "/v1/jobs/"+j.id+"/checkpoints", &again)
		if st.Counts != again.Counts {
			t.Fatalf("a checkpoint moved on between two reads: %+v, %+v", st.Counts, again.Counts)
		}
		completed, failed, pending := 0, 0, 0
		for _, h := range st.History {
			switch h.Status {
			case api.CheckpointCompleted:
				completed++
			case api.CheckpointFailed:
				failed++
			default:
				pending++
			}
		}
		// The history keeps the newest checkpoints; the counts all.
		if st.Counts.Completed < completed || st.Counts.Failed < failed || st.Counts.InProgress != pending ||
			st.Counts.Total != st.Counts.Completed+st.Counts.Failed+st.Counts.InProgress || st.Counts.Completed < 2 {
			t.Fatalf("counts %+v; the history has %d completed, %d failed, %d in progress", st.Counts, completed, failed, pending)
		}
		l := st.Latest.Completed
		if l == nil || len(onDisk) != 1 || onDisk[0] != fmt.Sprintf("chk-%d", l.ID) || l.ExternalPath != filepath.Join(j.ckDir, onDisk[0]) {
			t.Fatalf("latest completed %+v; on disk %v", l, onDisk)
		}
		checkSizes(t, l.ExternalPath, l.ID, l.StateSize, l.CheckpointedSize)
		for _, h := range st.History {
			if h.Status == api.CheckpointCompleted && h.ID == l.ID {
				checkCompleted(t, c, j.id, d, h, total)
			}
		}
	})
}

// checkRunningWatermarks: a source subtask's watermark is the least, over
// its partitions, of the greatest event time it read there minus the
// WATERMARK delay and 1 ms (Flink's bounded out-of-orderness); every
// other subtask's input watermark is the least of the sources' (their
// edges connect every subtask). A job without watermarks shows
// Long.MIN_VALUE everywhere, as Flink.
func checkRunningWatermarks(t *testing.T, c *cluster, j *runningJob, d api.JobDetails) {
	least := int64(math.MinInt64)
	want := map[string][]int64{}
	if j.maxTs != nil {
		least = math.MaxInt64
	}
	for i, v := range d.Vertices {
		if j.maxTs == nil || !j.jg.Vertices[i].IsSource() {
			continue
		}
		owned := partitionsBySubtask(t, c, j, d)
		for k := range v.Parallelism {
			wm := int64(math.MaxInt64)
			for _, p := range owned[k] {
				wm = min(wm, j.maxTs[p]-j.lateness.Milliseconds()-1)
			}
			want[v.ID] = append(want[v.ID], wm)
			least = min(least, wm)
		}
	}
	for _, v := range d.Vertices {
		var wms []api.Metric
		get(t, c, "/v1/jobs/"+j.id+"/vertices/"+v.ID+"/watermarks", &wms)
		if len(wms) != v.Parallelism {
			t.Fatalf("watermarks of %s: %+v, want one per subtask", v.Name, wms)
		}
		for k, w := range wms {
			exp := least
			if ws, ok := want[v.ID]; ok {
				exp = ws[k]
			}
			if w.ID != fmt.Sprintf("%d.currentInputWatermark", k) || w.Value != strconv.FormatInt(exp, 10) {
				t.Errorf("watermark of %s[%d]: %+v, want %d", v.Name, k, w, exp)
			}
		}
		checkWatermarkSummary(t, c, j.id, v)
	}
}

var partitionID = regexp.MustCompile(`^(\d+)\..*\.KafkaSourceReader\.topic\..*\.partition\.(\d+)\.currentOffset$`)

// partitionsBySubtask reads which partitions each source subtask reads
// from the source's metric ids.
func partitionsBySubtask(t *testing.T, c *cluster, j *runningJob, d api.JobDetails) map[int][]int32 {
	out := map[int][]int32{}
	for i, v := range d.Vertices {
		if !j.jg.Vertices[i].IsSource() {
			continue
		}
		var list []api.Metric
		get(t, c, "/v1/jobs/"+j.id+"/vertices/"+v.ID+"/metrics", &list)
		for _, m := range list {
			if g := partitionID.FindStringSubmatch(m.ID); g != nil {
				k, _ := strconv.Atoi(g[1])
				p, _ := strconv.Atoi(g[2])
				out[k] = append(out[k], int32(p))
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no source subtask lists a partition")
	}
	return out
}

// checkRunningSavepoint triggers a savepoint of the running job: its
// status is IN_PROGRESS or COMPLETED with the location, which holds the
// savepoint and which the checkpoint statistics name as the latest
// savepoint; the job runs on.
func checkRunningSavepoint(t *testing.T, c *cluster, j *runningJob) {
	dir := t.TempDir()
	code, body := c.call("POST", "/v1/jobs/"+j.id+"/savepoints", fmt.Sprintf(`{"target-directory": %q}`, dir), "")
	var tr api.TriggerResponse
	if code != 202 || json.Unmarshal(body, &tr) != nil || !hexID.MatchString(tr.RequestID) {
		t.Fatalf("POST savepoints: %d %s", code, body)
	}
	st := awaitSavepoint(t, c, j.id, tr.RequestID, dir)
	var cs api.CheckpointingStatistics
	get(t, c, "/v1/jobs/"+j.id+"/checkpoints", &cs)
	if sp := cs.Latest.Savepoint; sp == nil || sp.ExternalPath != st.Operation.Location || !sp.IsSavepoint || sp.Status != api.CheckpointCompleted {
		t.Errorf("latest savepoint %+v, want %s", sp, st.Operation.Location)
	}
	if s := c.state(j.id); s != api.StateRunning {
		t.Errorf("after its savepoint the job is %s, want RUNNING", s)
	}
}

// stably runs check until one run passes, at most 20 times: a run that
// read values moving under it (a checkpoint completing, a 5-s rate
// window closing) fails and the next reads them again. The last run's
// failures are the test's.
func stably(t *testing.T, c *cluster, j *runningJob, what string, check func(testing.TB)) {
	t.Helper()
	for i := 0; ; i++ {
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			check(r)
		}()
		<-done
		if !r.failed() {
			if i > 0 {
				t.Logf("%s of %s: read %d times before the values stood still", what, j.name, i+1)
			}
			return
		}
		if i == 19 {
			t.Errorf("%s of %s never read stable values; the last read:\n%s", what, j.name, strings.Join(r.msgs, "\n"))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// recorder is a testing.TB that keeps failures instead of reporting them
// (Fatal ends the run's goroutine).
type recorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(f, args...))
}
func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(f string, args ...any) {
	r.Errorf(f, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs) > 0
}

// openTable creates table in MariaDB, dropped when the test ends.
func openTable(t *testing.T, dsn, table string) *sql.DB {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("CREATE TABLE " + table + " (account_id VARCHAR(64) PRIMARY KEY, total DECIMAL(38,2) NOT NULL, bill_count BIGINT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + table) })
	return db
}

// awaitSavepoint polls the status of savepoint operation req of job id
// until it completed, and checks its location: in dir, holding the
// savepoint's _metadata.
func awaitSavepoint(t *testing.T, c *cluster, id, req, dir string) api.SavepointStatus {
	t.Helper()
	var st api.SavepointStatus
	waitFor(t, "the savepoint", func() bool {
		get(t, c, "/v1/jobs/"+id+"/savepoints/"+req, &st)
		if st.Status.ID != "IN_PROGRESS" && st.Status.ID != "COMPLETED" {
			t.Fatalf("savepoint status %+v", st)
		}
		return st.Status.ID == "COMPLETED"
	})
	if st.Operation == nil || st.Operation.FailureCause != nil || !strings.HasPrefix(st.Operation.Location, dir) {
		t.Fatalf("savepoint: %+v, want a location in %s", st.Operation, dir)
	}
	if _, err := os.Stat(filepath.Join(strings.TrimPrefix(st.Operation.Location, "file://"), "_metadata")); err != nil {
		t.Errorf("the savepoint the API reports: %v", err)
	}
	return st
}

// checkStopAndCancel ends the running jobs through the API: stop (POST
// /stop) with a savepoint — the savepoint completes where its status
// says and the job FINISHED —, and cancel (PATCH): 202 with {} and the
// job CANCELED.
func checkStopAndCancel(t *testing.T, c *cluster, stop, cancel *runningJob) {
	dir := t.TempDir()
	code, body := c.call("POST", "/v1/jobs/"+stop.id+"/stop", fmt.Sprintf(`{"targetDirectory": %q}`, dir), "")
	var tr api.TriggerResponse
	if code != 202 || json.Unmarshal(body, &tr) != nil || !hexID.MatchString(tr.RequestID) {
		t.Fatalf("POST stop: %d %s", code, body)
	}
	awaitSavepoint(t, c, stop.id, tr.RequestID, dir)
	waitFor(t, "the stopped job to finish", func() bool { return c.state(stop.id) == api.StateFinished })
	if code, body := c.call("PATCH", "/v1/jobs/"+cancel.id+"?mode=cancel", "", ""); code != 202 || string(body) != "{}\n" {
		t.Fatalf("PATCH cancel: %d %s", code, body)
	}
	waitFor(t, "the cancelled job to end", func() bool { return c.state(cancel.id) == api.StateCanceled })
}
