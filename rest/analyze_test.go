package rest

import (
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/datagen"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/rest/api"
	"github.com/weirstream/weir/types"
)

// EXPLAIN ANALYZE of the finished SQL aggregation equals the job's own
// counters exactly: records per vertex and operator as its metric
// groups hold them (the source's 3,000), state size as the last
// completed checkpoint's per vertex, the watermark as /watermarks' lowest.
func TestContractExplainAnalyze(t *testing.T) {
	c := newCluster(t)
	id := c.submit(aggJob, nil)
	waitFor(t, "the job to finish", func() bool { return c.state(id) == api.StateFinished })
	var ea api.ExplainAnalyze
	raw := get(t, c, "/v1/jobs/"+id+"/explain-analyze", &ea)
	hasKeys(t, "explain-analyze", raw, "jid", "name", "state", "now", "plan", "vertices")
	hasKeys(t, "explain-analyze vertex", raw["vertices"].([]any)[0], "id", "name", "parallelism", "inputs", "read-records",
		"write-records", "read-records-per-second", "write-records-per-second", "busyRatio", "maxBusyRatio", "backPressuredRatio",
		"maxBackPressuredRatio", "idleRatio", "backpressureLevel", "state-size", "watermark", "source-lag", "operators")
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+id, &d)
	if ea.JID != id || ea.Name != "agg" || ea.State != api.StateFinished || len(ea.Vertices) != len(d.Vertices) {
		t.Fatalf("explain-analyze %+v; job %+v", ea, d)
	}
	var st api.CheckpointingStatistics
	get(t, c, "/v1/jobs/"+id+"/checkpoints", &st)
	var last api.CheckpointStatistics
	get(t, c, fmt.Sprintf("/v1/jobs/%s/checkpoints/details/%d", id, st.Latest.Completed.ID), &last)
	j, _ := c.m.Job(id)
	for i, v := range ea.Vertices {
		dv := d.Vertices[i]
		if v.ID != dv.ID || v.Name != dv.Name || v.ReadRecords != dv.Metrics.ReadRecords || v.WriteRecords != dv.Metrics.WriteRecords {
			t.Errorf("vertex %d: %+v; job details %+v", i, v, dv.Metrics)
		}
		if v.StateSize != last.Tasks[v.ID].StateSize {
			t.Errorf("%s: state-size %d, the last checkpoint (%d) has %d", v.Name, v.StateSize, last.ID, last.Tasks[v.ID].StateSize)
		}
		if wm := lowestWatermark(t, c, id, v.ID); v.Watermark != wm {
			t.Errorf("%s: watermark %d, /watermarks' lowest %d", v.Name, v.Watermark, wm)
		}
		for k, o := range v.Operators {
			var in, out, size int64
			for s := range v.Parallelism {
				g := subtaskGroup(t, j, v.Name, s).Operators[k]
				in, out, size = in+g.RecordsIn.Load(), out+g.RecordsOut.Load(), size+g.StateSize.Load()
			}
			if o.ReadRecords != in || o.WriteRecords != out || o.LiveStateSize != size {
				t.Errorf("%s operator %s: %d in, %d out, %d bytes live; its groups %d, %d, %d", v.Name, o.Name, o.ReadRecords, o.WriteRecords,
					o.LiveStateSize, in, out, size)
			}
		}
		line := fmt.Sprintf("[%d] %s (parallelism %d)\n", i, v.Name, v.Parallelism)
		if !strings.Contains(ea.Plan, line) || !strings.Contains(ea.Plan, fmt.Sprintf("rows out %d ", v.WriteRecords)) {
			t.Errorf("plan text lacks %q with rows out %d:\n%s", line, v.WriteRecords, ea.Plan)
		}
	}
	if src := ea.Vertices[0]; src.WriteRecords != 3000 || src.Operators[0].WriteRecords != 3000 {
		t.Errorf("source %+v, want 3000 rows out", src)
	}
	if agg := ea.Vertices[1]; agg.ReadRecords != 3000 || agg.Inputs[0] != ea.Vertices[0].ID || agg.StateSize == 0 || agg.LiveStateSize == 0 {
		t.Errorf("aggregation %+v, want 3000 rows in from the source and state", agg)
	}
}

func lowestWatermark(t testing.TB, c *cluster, job, vertex string) int64 {
	var wms []api.Metric
	get(t, c, "/v1/jobs/"+job+"/vertices/"+vertex+"/watermarks", &wms)
	lo := int64(math.MaxInt64)
	for _, w := range wms {
		n, err := strconv.ParseInt(w.Value, 10, 64)
		if err != nil {
			t.Fatalf("watermark %+v: %v", w, err)
		}
		lo = min(lo, n)
	}
	return lo
}

// slowJob runs a fast source of the numbers 1, 2, … into a keyed reduce
// and a slow sink, which sleeps a millisecond per row: the source then
// waits for credits most of the time (back-pressured), the sink's
// subtask is busy.
func slowJob(t *testing.T, c *cluster) (string, *slowSink) {
	env := weir.NewEnvironment().SetParallelism(1).EnableCheckpointing(time.Hour, weir.ExactlyOnce, filepath.Join(t.TempDir(), "ck"))
	gen, err := datagen.FromOptions([]types.Field{{Name: "n", Type: types.Type{Kind: types.BigInt}}},
		map[string]string{"rows-per-second": "100000", "fields.n.kind": "sequence", "fields.n.start": "1", "fields.n.end": "100000000"})
	if err != nil {
		t.Fatal(err)
	}
	rows := weir.FromSource[event.Row](env, gen, "gen", weir.WithUID("gen"))
	sink := &slowSink{got: map[int64]bool{}}
	weir.SinkTo(weir.Reduce(weir.KeyBy(rows, func(event.Row) int { return 0 }), func(_, b event.Row) event.Row { return b }).UID("last"),
		sink, "slow").UID("slow")
	jg, err := env.JobGraph("slow")
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.m.SubmitGraph(jg, *env.RuntimeOptions())
	if err != nil {
		t.Fatal(err)
	}
	return job.ID(), sink
}

// slowSink's writer sleeps a millisecond per row and keeps the numbers it
// received.
type slowSink struct {
	mu  sync.Mutex
	got map[int64]bool
}

func (s *slowSink) received(n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[n]
}

func (s *slowSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return slowWriter{s}, nil
}
func (s *slowSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type slowWriter struct{ s *slowSink }

func (w slowWriter) Write(r event.Record) error {
	time.Sleep(time.Millisecond)
	w.s.mu.Lock()
	w.s.got[r.Value.(event.Row).Fields[0].(int64)] = true
	w.s.mu.Unlock()
	return nil
}
func (slowWriter) Flush(bool) error                                   { return nil }
func (slowWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (slowWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (slowWriter) Close() error                                       { return nil }

// The hottest subtasks of a job whose sink is slow: by busy time the
// sink's subtask, by back-pressure the source's (each over 90 % of its
// last 5-s window once a window closed); by lag every
// subtask at 0 (datagen has no backlog). EXPLAIN ANALYZE shows the same
// ratios for the vertices. Bad parameters are 400s, an unknown job 404.
func TestContractHotSubtasks(t *testing.T) {
	c := newCluster(t)
	id, _ := slowJob(t, c)
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+id, &d)
	src, snk := d.Vertices[0], d.Vertices[1]
	var busy, bp api.HotSubtasks
	waitFor(t, "a 5-s window of the slow sink", func() bool {
		get(t, c, "/v1/jobs/"+id+"/hot-subtasks", &busy)
		get(t, c, "/v1/jobs/"+id+"/hot-subtasks?by=backpressure&n=1", &bp)
		return len(busy.Subtasks) == 2 && busy.Subtasks[0].BusyRatio > 0.9 && len(bp.Subtasks) == 1 && bp.Subtasks[0].BackPressuredRatio > 0.9
	})
	if busy.By != api.HotByBusy || busy.Subtasks[0].VertexID != snk.ID || busy.Subtasks[1].VertexID != src.ID {
		t.Errorf("hottest by busy time: %+v, want %s first", busy, snk.Name)
	}
	if bp.By != api.HotByBackPressure || bp.Subtasks[0].VertexID != src.ID || bp.Subtasks[0].VertexName != src.Name {
		t.Errorf("hottest by back-pressure: %+v, want %s", bp, src.Name)
	}
	var lag api.HotSubtasks
	get(t, c, "/v1/jobs/"+id+"/hot-subtasks?by=lag&n=5", &lag)
	if len(lag.Subtasks) != 2 || lag.Subtasks[0].SourceLag != 0 || lag.Subtasks[1].SourceLag != 0 {
		t.Errorf("hottest by lag: %+v, want both subtasks at 0", lag)
	}
	var ea api.ExplainAnalyze
	get(t, c, "/v1/jobs/"+id+"/explain-analyze", &ea)
	if v := ea.Vertices[0]; v.MaxBackPressuredRatio < 0.9 || v.BackpressureLevel != api.BackPressureHigh || ea.State != api.StateRunning {
		t.Errorf("explain-analyze of %s: %+v, want back-pressured high", v.Name, v)
	}
	if v := ea.Vertices[1]; v.MaxBusyRatio < 0.9 {
		t.Errorf("explain-analyze of %s: %+v, want busy", v.Name, v)
	}
	code, body := c.call("GET", "/v1/jobs/"+id+"/hot-subtasks?by=heat", "", "")
	wantError(t, "by=heat", code, body, http.StatusBadRequest, `by "heat": want busy, backpressure or lag`)
	code, body = c.call("GET", "/v1/jobs/"+id+"/hot-subtasks?n=0", "", "")
	wantError(t, "n=0", code, body, http.StatusBadRequest, `n "0": want a positive number`)
	code, body = c.call("GET", "/v1/jobs/"+strings.Repeat("0", 32)+"/explain-analyze", "", "")
	wantError(t, "unknown job", code, body, http.StatusNotFound, "")
}
