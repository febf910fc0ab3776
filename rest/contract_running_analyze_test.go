package rest

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/rest/api"
)

// checkRunningAnalyze checks EXPLAIN ANALYZE and the hottest subtasks of
// a running job field by field against its metric groups, read before
// and after the REST answers (stably retries when a rate window closed
// between them): records, rates, ratios, the last checkpoint's and the
// live state size (every keyed operator holds some), watermarks as
// /watermarks' lowest, source lag 0 (the sources read their topics to
// the end).
func checkRunningAnalyze(t testing.TB, c *cluster, j *runningJob, d api.JobDetails) {
	before := groupValues(t, c, j, d)
	var ea api.ExplainAnalyze
	get(t, c, "/v1/jobs/"+j.id+"/explain-analyze", &ea)
	var hot api.HotSubtasks
	get(t, c, fmt.Sprintf("/v1/jobs/%s/hot-subtasks?n=%d", j.id, len(before)), &hot)
	if after := groupValues(t, c, j, d); !slices.Equal(before, after) {
		t.Fatalf("a rate window closed between the reads")
	}
	if ea.JID != j.id || ea.Name != j.name || ea.State != api.StateRunning || len(ea.Vertices) != len(d.Vertices) {
		t.Fatalf("explain-analyze %+v", ea)
	}
	groups := jobGroups(t, c, j, d)
	keyed := 0
	for i, v := range ea.Vertices {
		keyed += checkAnalyzedVertex(t, c, j, d.Vertices[i], v, groups[i])
	}
	if keyed == 0 {
		t.Errorf("%s: no operator shows live state", j.name)
	}
	checkRunningHot(t, j, d, hot, groups)
}

// jobGroups are the metric groups of d's subtasks, by vertex.
func jobGroups(t testing.TB, c *cluster, j *runningJob, d api.JobDetails) [][]*metrics.Subtask {
	job, err := c.m.Job(j.id)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]*metrics.Subtask, len(d.Vertices))
	for i, v := range d.Vertices {
		for k := range v.Parallelism {
			out[i] = append(out[i], subtaskGroup(t, job, v.Name, k))
		}
	}
	return out
}

// groupValues is every value EXPLAIN ANALYZE and hot-subtasks read, in
// one list, to tell whether they moved.
func groupValues(t testing.TB, c *cluster, j *runningJob, d api.JobDetails) []float64 {
	var out []float64
	for _, gs := range jobGroups(t, c, j, d) {
		for _, g := range gs {
			out = append(out, float64(g.RecordsIn.Load()), float64(g.RecordsOut.Load()), g.RecordsInPerSecond.Load(),
				g.RecordsOutPerSecond.Load(), g.BusyMsPerSecond.Load(), g.BackPressuredMsPerSecond.Load(), g.IdleMsPerSecond.Load(),
				float64(g.CheckpointSize.Load()))
			for _, o := range g.Operators {
				out = append(out, float64(o.StateSize.Load()), float64(o.RecordsIn.Load()), float64(o.RecordsOut.Load()))
			}
		}
	}
	return out
}

// checkAnalyzedVertex checks one vertex of EXPLAIN ANALYZE against its
// subtasks' groups gs and returns how many of its operators hold live
// state.
func checkAnalyzedVertex(t testing.TB, c *cluster, j *runningJob, dv api.JobVertex, v api.AnalyzedVertex, gs []*metrics.Subtask) int {
	want := api.AnalyzedVertex{ID: dv.ID, Name: dv.Name, Parallelism: dv.Parallelism, Watermark: lowestWatermark(t, c, j.id, dv.ID)}
	for _, g := range gs {
		want.ReadRecords += g.RecordsIn.Load()
		want.WriteRecords += g.RecordsOut.Load()
		want.ReadRecordsPerSecond += g.RecordsInPerSecond.Load()
		want.WriteRecordsPerSecond += g.RecordsOutPerSecond.Load()
		busy, bp := g.BusyMsPerSecond.Load()/1000, g.BackPressuredMsPerSecond.Load()/1000
		want.BusyRatio, want.BackPressuredRatio = want.BusyRatio+busy, want.BackPressuredRatio+bp
		want.IdleRatio += g.IdleMsPerSecond.Load() / 1000
		want.MaxBusyRatio, want.MaxBackPressuredRatio = max(want.MaxBusyRatio, busy), max(want.MaxBackPressuredRatio, bp)
		want.StateSize += g.CheckpointFullSize.Load()
	}
	n := float64(len(gs))
	want.BusyRatio, want.BackPressuredRatio, want.IdleRatio = want.BusyRatio/n, want.BackPressuredRatio/n, want.IdleRatio/n
	want.BackpressureLevel = api.BackPressureLevel(want.MaxBackPressuredRatio)
	if v.ReadRecords != dv.Metrics.ReadRecords || v.WriteRecords != dv.Metrics.WriteRecords {
		t.Errorf("%s: records %d in, %d out; job details %+v", v.Name, v.ReadRecords, v.WriteRecords, dv.Metrics)
	}
	got := v
	got.Inputs, got.Operators, got.LiveStateSize, got.SourceLag = nil, nil, 0, 0
	if !closeVertex(got, want) {
		t.Errorf("explain-analyze vertex %+v,\nits groups give %+v", got, want)
	}
	if v.SourceLag != 0 {
		t.Errorf("%s: source-lag %d; the sources read their topics to the end", v.Name, v.SourceLag)
	}
	keyed, live := 0, int64(0)
	for k, o := range v.Operators {
		var in, out, size int64
		for _, g := range gs {
			in, out, size = in+g.Operators[k].RecordsIn.Load(), out+g.Operators[k].RecordsOut.Load(), size+g.Operators[k].StateSize.Load()
		}
		if o.ReadRecords != in || o.WriteRecords != out || o.LiveStateSize != size {
			t.Errorf("%s operator %s: %+v; its groups: %d in, %d out, %d bytes of state", v.Name, o.Name, o, in, out, size)
		}
		if size > 0 {
			keyed++
		}
		live += size
	}
	if v.LiveStateSize != live {
		t.Errorf("%s: live-state-size %d, its operators' sum %d", v.Name, v.LiveStateSize, live)
	}
	return keyed
}

// closeVertex compares two vertices, their float sums within rounding.
func closeVertex(a, b api.AnalyzedVertex) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*max(1, math.Abs(y)) }
	floats := func(v *api.AnalyzedVertex) []*float64 {
		return []*float64{&v.ReadRecordsPerSecond, &v.WriteRecordsPerSecond, &v.BusyRatio, &v.MaxBusyRatio, &v.BackPressuredRatio,
			&v.MaxBackPressuredRatio, &v.IdleRatio}
	}
	fa, fb := floats(&a), floats(&b)
	for i := range fa {
		if !near(*fa[i], *fb[i]) {
			return false
		}
		*fa[i] = *fb[i]
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// checkRunningHot: asked for as many as there are, the hottest subtasks
// are every subtask once, each with its group's values, ranked by busy
// ratio then back-pressure.
func checkRunningHot(t testing.TB, j *runningJob, d api.JobDetails, hot api.HotSubtasks, groups [][]*metrics.Subtask) {
	var want []api.HotSubtask
	for i, v := range d.Vertices {
		for k, g := range groups[i] {
			want = append(want, api.HotSubtask{VertexID: v.ID, VertexName: v.Name, Subtask: k,
				BusyRatio: g.BusyMsPerSecond.Load() / 1000, BackPressuredRatio: g.BackPressuredMsPerSecond.Load() / 1000,
				IdleRatio: g.IdleMsPerSecond.Load() / 1000, ReadRecordsPerSecond: g.RecordsInPerSecond.Load(),
				WriteRecordsPerSecond: g.RecordsOutPerSecond.Load()})
		}
	}
	slices.SortStableFunc(want, func(a, b api.HotSubtask) int {
		return cmp.Or(cmp.Compare(b.BusyRatio, a.BusyRatio), cmp.Compare(b.BackPressuredRatio, a.BackPressuredRatio))
	})
	if hot.By != api.HotByBusy || !slices.Equal(hot.Subtasks, want) {
		t.Errorf("%s hot-subtasks by %s:\n%+v\nthe groups rank:\n%+v", j.name, hot.By, hot.Subtasks, want)
	}
}
