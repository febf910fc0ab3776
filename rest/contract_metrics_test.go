package rest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/rest/api"
)

// checkVertexMetrics checks, for every vertex of an ended job, the
// back-pressure, vertex metrics and aggregated subtask metrics endpoints
// against the job's metric groups, which hold their final values: field
// by field, exactly.
func checkVertexMetrics(t testing.TB, c *cluster, id string, d api.JobDetails, jg *graph.JobGraph) {
	j, err := c.m.Job(id)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range d.Vertices {
		var subtasks []*metrics.Subtask
		for k := range v.Parallelism {
			subtasks = append(subtasks, subtaskGroup(t, j, v.Name, k))
		}
		checkIO(t, v, subtasks)
		checkBackPressure(t, c, id, v, subtasks)
		checkMetricIDs(t, c, id, v, jg.Vertices[i], subtasks)
		checkAggregated(t, c, id, v, subtasks)
	}
}

// checkIO: the job's vertex and subtask records and bytes are the groups'
// counters, complete once the vertex ended.
func checkIO(t testing.TB, v api.JobVertex, subtasks []*metrics.Subtask) {
	var sum api.IOMetrics
	done := api.Terminal(v.Status)
	for k, g := range subtasks {
		want := api.IOMetrics{ReadRecords: g.RecordsIn.Load(), WriteRecords: g.RecordsOut.Load(), ReadBytes: g.BytesIn.Load(),
			WriteBytes: g.BytesOut.Load(), ReadRecordsComplete: done, WriteRecordsComplete: done, ReadBytesComplete: done, WriteBytesComplete: done}
		if v.Subtasks[k].Metrics != want {
			t.Errorf("%s[%d] metrics %+v, its group's %+v", v.Name, k, v.Subtasks[k].Metrics, want)
		}
		sum.ReadRecords, sum.WriteRecords = sum.ReadRecords+want.ReadRecords, sum.WriteRecords+want.WriteRecords
		sum.ReadBytes, sum.WriteBytes = sum.ReadBytes+want.ReadBytes, sum.WriteBytes+want.WriteBytes
	}
	if m := v.Metrics; m.ReadRecords != sum.ReadRecords || m.WriteRecords != sum.WriteRecords || m.ReadBytes != sum.ReadBytes ||
		m.WriteBytes != sum.WriteBytes || m.ReadBytesComplete != done || m.WriteBytesComplete != done {
		t.Errorf("%s metrics %+v, its subtasks' sum %+v", v.Name, m, sum)
	}
}

func checkBackPressure(t testing.TB, c *cluster, id string, v api.JobVertex, subtasks []*metrics.Subtask) {
	var bp api.BackPressure
	raw := get(t, c, "/v1/jobs/"+id+"/vertices/"+v.ID+"/backpressure", &bp)
	hasKeys(t, "backpressure", raw, "status", "backpressureLevel", "backpressure-level", "end-timestamp", "subtasks")
	if bp.Status != "ok" || len(bp.Subtasks) != v.Parallelism {
		t.Fatalf("backpressure of %s: %+v, want status ok (every subtask measured a window at its end) and %d subtasks", v.Name, bp, v.Parallelism)
	}
	hasKeys(t, "backpressure subtask", raw["subtasks"].([]any)[0], "subtask", "attempt-number", "backpressureLevel",
		"backpressure-level", "ratio", "idleRatio", "busyRatio")
	worst := 0.0
	for k, s := range bp.Subtasks {
		g := subtasks[k]
		ratio, idle, busy := g.BackPressuredMsPerSecond.Load()/1000, g.IdleMsPerSecond.Load()/1000, g.BusyMsPerSecond.Load()/1000
		want := api.SubtaskBackPressure{Subtask: k, BackpressureLevel: api.BackPressureLevel(ratio),
			BackpressureLevelOld: api.BackPressureLevel(ratio), Ratio: ratio, IdleRatio: idle, BusyRatio: busy}
		if s != want || s.Ratio+s.IdleRatio+s.BusyRatio < 0.999999 || s.Ratio+s.IdleRatio+s.BusyRatio > 1.000001 {
			t.Errorf("backpressure of %s[%d]: %+v, want %+v (its group's ratios, adding up to 1)", v.Name, k, s, want)
		}
		worst = max(worst, ratio)
	}
	if bp.BackpressureLevel != api.BackPressureLevel(worst) || bp.BackpressureLevelOld != bp.BackpressureLevel {
		t.Errorf("backpressure of %s: level %q/%q, want its worst subtask's %q", v.Name, bp.BackpressureLevel, bp.BackpressureLevelOld,
			api.BackPressureLevel(worst))
	}
}

// firstOf returns the first object of the array path answers.
func firstOf(t testing.TB, c *cluster, path string) any {
	t.Helper()
	_, body := c.call("GET", path, "", "")
	var list []any
	if err := json.Unmarshal(body, &list); err != nil || len(list) == 0 {
		t.Fatalf("GET %s: %s is not a non-empty array: %v", path, body, err)
	}
	return list[0]
}

// expectedIDs lists subtask k's metric names, as the vertex metrics
// endpoint names them, with their values.
func expectedIDs(k int, gv *graph.Vertex, g *metrics.Subtask) ([]string, map[string]float64) {
	var ids []string
	vals := map[string]float64{}
	add := func(name string, v float64) {
		id := fmt.Sprintf("%d.%s", k, name)
		ids, vals[id] = append(ids, id), v
	}
	for _, d := range metrics.TaskDefs {
		add(d.Name, d.Read(g))
	}
	wm := g.Operators[0].InputWatermark.Load()
	if gv.IsSource() {
		wm = g.Operators[0].OutputWatermark.Load()
	}
	add("currentInputWatermark", float64(wm))
	for _, o := range g.Operators {
		for _, d := range metrics.OperatorDefs {
			add(o.Name+"."+d.Name, d.Read(o))
		}
		for _, cg := range o.Gauges() {
			add(o.Name+"."+cg.Identifier(), float64(cg.Load()))
		}
	}
	return ids, vals
}

func metricIDsOf(ms []api.Metric) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func checkMetricIDs(t testing.TB, c *cluster, id string, v api.JobVertex, gv *graph.Vertex, subtasks []*metrics.Subtask) {
	path := "/v1/jobs/" + id + "/vertices/" + v.ID + "/metrics"
	var list []api.Metric
	get(t, c, path, &list)
	var want []string
	vals := map[string]float64{}
	for k, g := range subtasks {
		ids, vs := expectedIDs(k, gv, g)
		want = append(want, ids...)
		for i, x := range vs {
			vals[i] = x
		}
	}
	var got []string
	for _, m := range list {
		if m.Value != "" {
			t.Errorf("%s lists %+v with a value: without ?get= Flink lists ids only", path, m)
		}
		got = append(got, m.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s lists\n%v\nwant\n%v", path, got, want)
	}
	// A page of subtasks lists their ids only: those of subtask 1.
	var page []api.Metric
	get(t, c, path+"?offset=1&limit=1", &page)
	var wantPage []string
	if len(subtasks) > 1 {
		wantPage, _ = expectedIDs(1, gv, subtasks[1])
	}
	if got := metricIDsOf(page); !slices.Equal(got, wantPage) {
		t.Errorf("%s?offset=1&limit=1 lists\n%v\nwant\n%v", path, got, wantPage)
	}
	// Every id's value, asked for all at once, is its group's; an id the
	// vertex lacks is left out.
	q := url.Values{"get": {strings.Join(append(slices.Clone(want), "0.noSuchMetric"), ",")}}
	var values []api.Metric
	get(t, c, path+"?"+q.Encode(), &values)
	if len(values) != len(want) {
		t.Fatalf("%s?get=…: %d values, want %d (0.noSuchMetric left out)", path, len(values), len(want))
	}
	for i, m := range values {
		if w := strconv.FormatFloat(vals[want[i]], 'f', -1, 64); m.ID != want[i] || m.Value != w {
			t.Errorf("%s: %+v, want %s = %s", path, m, want[i], w)
		}
	}
}

func checkAggregated(t testing.TB, c *cluster, id string, v api.JobVertex, subtasks []*metrics.Subtask) {
	path := "/v1/jobs/" + id + "/vertices/" + v.ID + "/subtasks/metrics"
	var names []api.AggregatedMetric
	get(t, c, path, &names)
	if len(names) < len(metrics.TaskDefs) || names[0].ID != metrics.TaskDefs[0].Name || names[0].Sum != nil {
		t.Errorf("%s lists %+v, want the task's metrics first, names only", path, names)
	}
	var agg []api.AggregatedMetric
	get(t, c, path+"?get=numRecordsOut,numBytesIn", &agg)
	hasKeys(t, "aggregated metric", firstOf(t, c, path+"?get=numRecordsOut"), "id", "min", "max", "avg", "sum")
	if len(agg) != 2 || agg[0].ID != "numRecordsOut" || *agg[0].Sum != float64(v.Metrics.WriteRecords) || *agg[1].Sum != float64(v.Metrics.ReadBytes) {
		t.Fatalf("%s?get=numRecordsOut,numBytesIn: %+v, want sums %d, %d (the vertex's write-records, read-bytes)", path, agg,
			v.Metrics.WriteRecords, v.Metrics.ReadBytes)
	}
	lo, hi := float64(subtasks[0].RecordsOut.Load()), float64(subtasks[0].RecordsOut.Load())
	for _, g := range subtasks {
		lo, hi = min(lo, float64(g.RecordsOut.Load())), max(hi, float64(g.RecordsOut.Load()))
	}
	if *agg[0].Min != lo || *agg[0].Max != hi || *agg[0].Avg != *agg[0].Sum/float64(len(subtasks)) {
		t.Errorf("%s numRecordsOut: %+v, want min %v max %v", path, agg[0], lo, hi)
	}
	last := len(subtasks) - 1
	var one []api.AggregatedMetric
	get(t, c, fmt.Sprintf("%s?get=numRecordsIn&agg=max&subtasks=%d", path, last), &one)
	if len(one) != 1 || one[0].Max == nil || *one[0].Max != float64(subtasks[last].RecordsIn.Load()) || one[0].Min != nil || one[0].Sum != nil {
		t.Errorf("%s numRecordsIn of subtask %d, max only: %+v, want %d", path, last, one, subtasks[last].RecordsIn.Load())
	}
}
