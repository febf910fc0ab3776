package jobmanager

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/rest/api"
)

// The methods here serve Weir's views beyond Flink's API: EXPLAIN
// ANALYZE of a job (its plan with each vertex's live figures) and the
// hottest subtasks. Like metrics.go they read the subtasks' metric
// groups only.

// ExplainAnalyze renders GET /jobs/:jobid/explain-analyze.
func (j *Job) ExplainAnalyze() api.ExplainAnalyze {
	out := api.ExplainAnalyze{JID: j.id, Name: j.name, State: j.State(), Now: time.Now().UnixMilli(), Vertices: []api.AnalyzedVertex{}}
	if j.graph == nil {
		out.Plan = fmt.Sprintf("== Job %q (%s): no plan (known from the job store only) ==\n", j.name, out.State)
		return out
	}
	for _, v := range j.graph.Vertices {
		out.Vertices = append(out.Vertices, j.analyzeVertex(v))
	}
	out.Plan = planText(out)
	return out
}

func (j *Job) analyzeVertex(v *graph.Vertex) api.AnalyzedVertex {
	av := api.AnalyzedVertex{ID: j.vertexID[v.Name], Name: v.Name, Parallelism: v.Parallelism, Inputs: []string{},
		Watermark: math.MinInt64, Operators: []api.AnalyzedOperator{}}
	for _, e := range j.graph.InEdges(v) {
		av.Inputs = append(av.Inputs, j.vertexID[e.From.Name])
	}
	for _, n := range v.Nodes {
		av.Operators = append(av.Operators, api.AnalyzedOperator{Name: n.Name, UID: n.UID,
			CurrentInputWatermark: math.MinInt64, CurrentOutputWatermark: math.MinInt64})
	}
	measured := 0
	for i := range v.Parallelism {
		if g := j.subtaskGroup(v, i); g != nil {
			addSubtask(&av, v, g, measured == 0)
			measured++
		}
	}
	if measured > 0 {
		n := float64(measured)
		av.BusyRatio, av.BackPressuredRatio, av.IdleRatio = av.BusyRatio/n, av.BackPressuredRatio/n, av.IdleRatio/n
	}
	av.BackpressureLevel = api.BackPressureLevel(av.MaxBackPressuredRatio)
	return av
}

// lowest is the minimum of watermarks, wm itself for the first.
func lowest(cur, wm int64, first bool) int64 {
	if first {
		return wm
	}
	return min(cur, wm)
}

// addSubtask adds subtask g's values to av (ratios summed, averaged by
// the caller; watermarks the lowest, first the first subtask's).
func addSubtask(av *api.AnalyzedVertex, v *graph.Vertex, g *metrics.Subtask, first bool) {
	av.ReadRecords += g.RecordsIn.Load()
	av.WriteRecords += g.RecordsOut.Load()
	av.ReadRecordsPerSecond += g.RecordsInPerSecond.Load()
	av.WriteRecordsPerSecond += g.RecordsOutPerSecond.Load()
	busy, bp := g.BusyMsPerSecond.Load()/1000, g.BackPressuredMsPerSecond.Load()/1000
	av.BusyRatio += busy
	av.BackPressuredRatio += bp
	av.IdleRatio += g.IdleMsPerSecond.Load() / 1000
	av.MaxBusyRatio, av.MaxBackPressuredRatio = max(av.MaxBusyRatio, busy), max(av.MaxBackPressuredRatio, bp)
	av.StateSize += g.CheckpointFullSize.Load()
	av.Watermark = lowest(av.Watermark, inputWatermark(v, g), first)
	av.SourceLag += sourceLag(v, g)
	for k, o := range g.Operators {
		if k >= len(av.Operators) {
			break
		}
		ao := &av.Operators[k]
		ao.ReadRecords += o.RecordsIn.Load()
		ao.WriteRecords += o.RecordsOut.Load()
		ao.LateRecordsDropped += o.LateRecordsDropped.Load()
		live := o.StateSize.Load()
		ao.LiveStateSize += live
		av.LiveStateSize += live
		ao.CurrentInputWatermark = lowest(ao.CurrentInputWatermark, o.InputWatermark.Load(), first)
		ao.CurrentOutputWatermark = lowest(ao.CurrentOutputWatermark, o.OutputWatermark.Load(), first)
	}
}

// sourceLag is a source subtask's pendingRecords (FLIP-33: the records
// behind the end of its splits, which the Kafka reader publishes), 0 for
// any other subtask or a source that does not publish it.
func sourceLag(v *graph.Vertex, g *metrics.Subtask) int64 {
	if !v.IsSource() || len(g.Operators) == 0 {
		return 0
	}
	n, _ := g.Operators[0].Find("pendingRecords")
	return n
}

// planText prints the plan with each vertex's figures.
func planText(a api.ExplainAnalyze) string {
	var b strings.Builder
	fmt.Fprintf(&b, "== Job %q (%s): %d operator chains ==\n", a.Name, a.State, len(a.Vertices))
	index := map[string]int{}
	for i, v := range a.Vertices {
		index[v.ID] = i
	}
	for i, v := range a.Vertices {
		fmt.Fprintf(&b, "[%d] %s (parallelism %d)\n", i, v.Name, v.Parallelism)
		for _, in := range v.Inputs {
			fmt.Fprintf(&b, "    <- [%d]\n", index[in])
		}
		fmt.Fprintf(&b, "    rows in %d (%.1f/s), rows out %d (%.1f/s)\n", v.ReadRecords, v.ReadRecordsPerSecond, v.WriteRecords, v.WriteRecordsPerSecond)
		fmt.Fprintf(&b, "    busy %.0f%% (max %.0f%%), back-pressured %.0f%% (max %.0f%%, %s), idle %.0f%%\n", 100*v.BusyRatio, 100*v.MaxBusyRatio,
			100*v.BackPressuredRatio, 100*v.MaxBackPressuredRatio, v.BackpressureLevel, 100*v.IdleRatio)
		fmt.Fprintf(&b, "    state %d bytes live, %d checkpointed, watermark %s", v.LiveStateSize, v.StateSize, WatermarkText(v.Watermark))
		if v.SourceLag > 0 {
			fmt.Fprintf(&b, ", source lag %d records", v.SourceLag)
		}
		b.WriteString("\n")
		for _, o := range v.Operators {
			if o.LiveStateSize > 0 {
				fmt.Fprintf(&b, "    · %s: state %d bytes live\n", o.Name, o.LiveStateSize)
			}
		}
	}
	return b.String()
}

// WatermarkText prints a watermark: "none" before the first, "end" at
// the end of input, else its UTC time.
func WatermarkText(wm int64) string {
	switch wm {
	case math.MinInt64:
		return "none"
	case math.MaxInt64:
		return "end of input"
	}
	return time.UnixMilli(wm).UTC().Format("2006-01-02 15:04:05.000")
}

// HotSubtasks renders GET /jobs/:jobid/hot-subtasks: the n hottest
// subtasks of the job ranked by (api.HotByBusy, …), ties by vertex
// order and index.
func (j *Job) HotSubtasks(by string, n int) (api.HotSubtasks, error) {
	key, ok := hotKeys[by]
	if !ok {
		return api.HotSubtasks{}, fmt.Errorf("%w: by %q: want %s, %s or %s", ErrBadRequest, by, api.HotByBusy, api.HotByBackPressure, api.HotByLag)
	}
	out := api.HotSubtasks{By: by, Now: time.Now().UnixMilli(), Subtasks: []api.HotSubtask{}}
	if j.graph == nil {
		return out, nil
	}
	for _, v := range j.graph.Vertices {
		for i := range v.Parallelism {
			if g := j.subtaskGroup(v, i); g != nil {
				out.Subtasks = append(out.Subtasks, j.hotSubtask(v, i, g))
			}
		}
	}
	slices.SortStableFunc(out.Subtasks, func(a, b api.HotSubtask) int {
		ka, kb := key(a), key(b)
		return cmp.Or(cmp.Compare(kb[0], ka[0]), cmp.Compare(kb[1], ka[1]))
	})
	out.Subtasks = out.Subtasks[:min(n, len(out.Subtasks))]
	return out, nil
}

// hotKeys are HotSubtasks' rankings: the values a subtask is ranked by,
// highest first, the second breaking ties of the first.
var hotKeys = map[string]func(api.HotSubtask) [2]float64{
	api.HotByBusy:         func(s api.HotSubtask) [2]float64 { return [2]float64{s.BusyRatio, s.BackPressuredRatio} },
	api.HotByBackPressure: func(s api.HotSubtask) [2]float64 { return [2]float64{s.BackPressuredRatio, s.BusyRatio} },
	api.HotByLag:          func(s api.HotSubtask) [2]float64 { return [2]float64{float64(s.SourceLag), s.BusyRatio} },
}

func (j *Job) hotSubtask(v *graph.Vertex, i int, g *metrics.Subtask) api.HotSubtask {
	return api.HotSubtask{VertexID: j.vertexID[v.Name], VertexName: v.Name, Subtask: i,
		BusyRatio: g.BusyMsPerSecond.Load() / 1000, BackPressuredRatio: g.BackPressuredMsPerSecond.Load() / 1000,
		IdleRatio: g.IdleMsPerSecond.Load() / 1000, SourceLag: sourceLag(v, g),
		ReadRecordsPerSecond: g.RecordsInPerSecond.Load(), WriteRecordsPerSecond: g.RecordsOutPerSecond.Load()}
}
