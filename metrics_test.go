package weir_test

import (
	"errors"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/checkpoint"
)

// scrape reads the handler's exposition into metric families by name.
func scrape(t *testing.T, env *weir.Environment) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	env.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// sumOf adds the values of metric name over the series whose labels
// include want.
func sumOf(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, int) {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
	var sum float64
	var n int
next:
	for _, m := range f.Metric {
		for _, l := range m.Label {
			if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
				continue next
			}
		}
		sum += m.GetGauge().GetValue()
		n++
	}
	return sum, n
}

// TestMetricsAfterBoundedJob runs a bounded job whose counts are known and
// reads them from the Prometheus handler: exact values, equal to the job's
// own result, with Flink's names and labels under weir_.
func TestMetricsAfterBoundedJob(t *testing.T) {
	env := apiEnv(t, 2)
	env.MetricsHandler() // creates the registry the job reports to
	src := weir.FromSlice(env, seqInts(1000), "ints", weir.WithUID("ints"))
	odd := weir.Filter(src, func(i int) bool { return i%2 == 1 }).UID("odd")
	sums := weir.Reduce(weir.KeyBy(odd, func(i int) int { return i % 10 }), func(a, b int) int { return a + b }).UID("sum")
	sink := &apiSink[int]{}
	weir.SinkTo(sums, sink, "out").UID("out")
	res := runJob(t, env)
	fams := scrape(t, env)

	op := "weir_taskmanager_job_task_operator_"
	job := map[string]string{"job_id": t.Name(), "job_name": t.Name()}
	for _, c := range []struct {
		uid, metric string
		want        int64
	}{
		{"ints", "numRecordsIn", 1000}, // read by the source (0 before sources counted it)
		{"ints", "numRecordsOut", 1000},
		{"odd", "numRecordsIn", 1000},
		{"odd", "numRecordsOut", 500},
		{"sum", "numRecordsIn", 500},
		{"sum", "numRecordsOut", 500},
		{"out", "numRecordsIn", 500},
		{"sum", "numLateRecordsDropped", 0},
	} {
		got, n := sumOf(t, fams, op+c.metric, map[string]string{"operator_id": c.uid, "job_id": t.Name()})
		if n != 2 {
			t.Errorf("%s{operator_id=%q}: %d series, want one per subtask (2)", c.metric, c.uid, n)
		}
		if int64(got) != c.want {
			t.Errorf("%s{operator_id=%q} = %v, want %d", c.metric, c.uid, got, c.want)
		}
		m := res.Metrics[c.uid]
		own := map[string]int64{"numRecordsIn": m.RecordsIn, "numRecordsOut": m.RecordsOut, "numLateRecordsDropped": m.LateDropped}[c.metric]
		if int64(got) != own {
			t.Errorf("%s{operator_id=%q} = %v, but the job's own count is %d", c.metric, c.uid, got, own)
		}
	}
	// Task scope: the source vertex read 1000 records, the vertex reading
	// the exchange took 500 in.
	in, _ := sumOf(t, fams, "weir_taskmanager_job_task_numRecordsIn", job)
	if in != 1500 {
		t.Errorf("task numRecordsIn summed over the job = %v, want 1500 (1000 read by the source, 500 through the exchange)", in)
	}
	// Every operator saw the end of input's watermark.
	wm, n := sumOf(t, fams, op+"currentInputWatermark", map[string]string{"operator_id": "out", "subtask_index": "1"})
	if n != 1 || wm != float64(math.MaxInt64) {
		t.Errorf("sink subtask 1 currentInputWatermark = %v (%d series), want MAX %v", wm, n, float64(math.MaxInt64))
	}

	var last checkpoint.CheckpointStats
	completed, failed := 0, 0
	for _, s := range res.Checkpoints {
		switch {
		case s.Status == checkpoint.StatusCompleted:
			last, completed = s, completed+1
		case s.Status == checkpoint.StatusFailed && !errors.Is(s.Failure, checkpoint.ErrSubsumed):
			failed++
		}
	}
	var size, buffered int64
	for _, ts := range last.Tasks {
		size, buffered = size+ts.Metrics.Bytes, buffered+ts.Metrics.AlignmentBuffered
	}
	jm := "weir_jobmanager_job_"
	for name, want := range map[string]int64{
		"lastCompletedCheckpointId":       int64(last.ID),
		"numberOfCompletedCheckpoints":    int64(completed),
		"numberOfFailedCheckpoints":       int64(failed),
		"lastCheckpointDuration":          last.Duration.Milliseconds(),
		"lastCheckpointSize":              size,
		"numRestarts":                     int64(res.Restarts),
		"fullRestarts":                    int64(res.Restarts),
		"lastCheckpointAlignmentBuffered": buffered,
		"lastCheckpointRestoreTimestamp":  -1, // started empty
	} {
		got, n := sumOf(t, fams, jm+name, job)
		if n != 1 || int64(got) != want {
			t.Errorf("%s = %v (%d series), want %d", name, got, n, want)
		}
	}
	// Each subtask's share of the last checkpoint: its state size.
	if got, n := sumOf(t, fams, "weir_taskmanager_job_task_lastCheckpointSize", job); n != 4 || int64(got) != size {
		t.Errorf("task lastCheckpointSize summed = %v (%d series), want %d over 4 subtasks", got, n, size)
	}
	if last.ID == 0 || size == 0 {
		t.Errorf("the job completed no checkpoint with state (last %d, %d bytes): the test proves nothing", last.ID, size)
	}
}
