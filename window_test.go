package weir_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/operator/window"
	"github.com/weirstream/weir/runtime"
)

// reading is a test element: a sensor's value at event time TS (ms).
type reading struct {
	Sensor string
	TS     int64
	V      int
}

// collectSink gathers every record its writers receive (at-least-once: it
// writes in Write and commits nothing).
type collectSink struct {
	mu  sync.Mutex
	got []event.Record
}

func (s *collectSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return collectWriter{s}, nil
}

func (s *collectSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

func (s *collectSink) records() []event.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

type collectWriter struct{ s *collectSink }

func (w collectWriter) Write(r event.Record) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.got = append(w.s.got, r)
	return nil
}

func (collectWriter) Flush(bool) error                                   { return nil }
func (collectWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (collectWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (collectWriter) Close() error                                       { return nil }

// countSum is the aggregate of the sliding windows: count and sum.
type countSum struct{}

type csAcc struct{ N, Sum int }

func (countSum) CreateAccumulator() csAcc     { return csAcc{} }
func (countSum) Add(r reading, a csAcc) csAcc { return csAcc{a.N + 1, a.Sum + r.V} }
func (countSum) GetResult(a csAcc) string     { return fmt.Sprintf("n=%d sum=%d", a.N, a.Sum) }
func (countSum) Merge(a, b csAcc) csAcc       { return csAcc{a.N + b.N, a.Sum + b.Sum} }
func sumReadings(a, b reading) reading        { return reading{Sensor: a.Sensor, TS: a.TS, V: a.V + b.V} }
func sensorOf(r reading) string               { return r.Sensor }
func timestampOf(r reading) int64             { return r.TS }
func line(key string, w fmt.Stringer, rest string) string {
	return fmt.Sprintf("%s %v %s", key, w, rest)
}

// readings makes n readings of 5 sensors, roughly 3ms apart, each up to
// 15ms out of order: with 50ms of out-of-orderness none is late.
func readings(n int) []reading {
	rng := rand.New(rand.NewPCG(42, 1))
	out := make([]reading, n)
	for i := range out {
		out[i] = reading{Sensor: fmt.Sprintf("s%d", rng.IntN(5)), TS: int64(i*3) + rng.Int64N(15), V: 1 + rng.IntN(100)}
	}
	return out
}

// windowJob declares tumbling, sliding and session windows over data on
// env, after a map stage through pre (identity if nil), each into its own
// sink, with the tumbling window's late data into sinks["late"].
func windowJob(env *weir.Environment, data []reading, pre func(reading) (reading, error)) map[string]*collectSink {
	if pre == nil {
		pre = func(r reading) (reading, error) { return r, nil }
	}
	src := weir.FromSlice(env, data, "readings", weir.WithWatermarks(weir.BoundedOutOfOrderness(50*time.Millisecond), timestampOf))
	keyed := weir.KeyBy(weir.MapErr(src, pre), sensorOf)
	lateTag := weir.NewOutputTag[reading]("late")

	sums := weir.WindowReduce(weir.Window(keyed, weir.TumblingEventTimeWindows(100*time.Millisecond)).
		SideOutputLateData(lateTag), sumReadings).UID("tumbling")
	aggs := weir.WindowAggregate(weir.Window(keyed, weir.SlidingEventTimeWindows(200*time.Millisecond, 50*time.Millisecond)).
		AllowedLateness(20*time.Millisecond), countSum{}).UID("sliding")
	sessions := weir.WindowProcess(weir.Window(keyed, weir.EventTimeSessionWindows(20*time.Millisecond)),
		func(key string, w weir.TimeWindow, elems []reading, out weir.Emitter[string]) error {
			sum := 0
			for _, r := range elems {
				sum += r.V
			}
			out.Emit(line(key, w, fmt.Sprintf("n=%d sum=%d", len(elems), sum)))
			return nil
		}).UID("session")

	sinks := map[string]*collectSink{"tumbling": {}, "sliding": {}, "session": {}, "late": {}}
	weir.SinkTo(sums, sinks["tumbling"], "tumbling")
	weir.SinkTo(aggs, sinks["sliding"], "sliding")
	weir.SinkTo(sessions, sinks["session"], "session")
	weir.SinkTo(weir.SideOutput(sums, lateTag), sinks["late"], "late")
	return sinks
}

func execute(t *testing.T, env *weir.Environment) *runtime.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := env.Execute(ctx, "windows")
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res
}

// checkResults compares the sinks with windows computed directly from
// data. With dedupe, a result may arrive more than once (an at-least-once
// sink after a failover) but must be one of the expected ones.
func checkResults(t *testing.T, res *runtime.Result, sinks map[string]*collectSink, data []reading, dedupe bool) {
	t.Helper()
	for _, uid := range []string{"tumbling", "sliding", "session"} {
		if m := res.Metrics[uid]; m.LateDropped != 0 || m.LateSide != 0 {
			t.Errorf("%s: %d late dropped, %d late to the side output; want none", uid, m.LateDropped, m.LateSide)
		}
	}
	if late := sinks["late"].records(); len(late) != 0 {
		t.Errorf("late side output got %v, want nothing", late)
	}
	norm := func(l []string) []string {
		slices.Sort(l)
		if dedupe {
			l = slices.Compact(l)
		}
		return l
	}
	checkLines(t, "tumbling", norm(tumblingLines(sinks["tumbling"].records())), expectTumbling(data, 100))
	checkLines(t, "sliding", norm(stampedLines(sinks["sliding"].records())), expectSliding(data, 200, 50))
	checkLines(t, "session", norm(stampedLines(sinks["session"].records())), expectSessions(data, 20))
	t.Logf("%d tumbling, %d sliding, %d session results; %d restarts, %d checkpoints, restored from %d",
		len(sinks["tumbling"].records()), len(sinks["sliding"].records()), len(sinks["session"].records()),
		res.Restarts, len(res.Checkpoints), res.RestoredFrom)
}

// TestWindowsEndToEnd runs tumbling, sliding and session windows through
// the runtime at parallelism 2 with checkpoints, and compares the sinks'
// records with windows computed directly from the input.
func TestWindowsEndToEnd(t *testing.T) {
	data := readings(3000)
	env := weir.NewEnvironment().SetParallelism(2).EnableCheckpointing(50*time.Millisecond, weir.ExactlyOnce, t.TempDir())
	env.RuntimeOptions().Restart = runtime.FixedDelay{Attempts: 0}
	sinks := windowJob(env, data, nil)
	checkResults(t, execute(t, env), sinks, data, false)
}

// TestWindowsFailover crashes the job once, after a checkpoint completed
// mid-stream while windows were open: the restored window state and
// timers, with the replayed input, must give the same results (some twice,
// should windows have fired between the checkpoint and the crash, since the
// test sink is at-least-once).
func TestWindowsFailover(t *testing.T) {
	data := readings(6000)
	env := weir.NewEnvironment().SetParallelism(2).EnableCheckpointing(30*time.Millisecond, weir.ExactlyOnce, t.TempDir())
	var checkpointed, crashed atomic.Bool
	opts := env.RuntimeOptions()
	opts.Restart = runtime.FixedDelay{Attempts: 1, Delay: 10 * time.Millisecond}
	opts.Listener = func(e runtime.Event) {
		if e.Kind == runtime.EventCheckpointCompleted {
			checkpointed.Store(true)
		}
	}
	// Slow the input so that checkpoints complete mid-stream; crash once
	// after one did and half the input was read.
	var seen atomic.Int64
	sinks := windowJob(env, data, func(r reading) (reading, error) {
		time.Sleep(100 * time.Microsecond)
		if seen.Add(1) >= int64(len(data)/2) && checkpointed.Load() && !crashed.Swap(true) {
			return r, errors.New("injected crash")
		}
		return r, nil
	})
	res := execute(t, env)
	if res.Restarts != 1 || res.RestoredFrom == 0 {
		t.Fatalf("%d restarts, restored from checkpoint %d; want 1 restart from a checkpoint", res.Restarts, res.RestoredFrom)
	}
	checkResults(t, res, sinks, data, true)
}

func checkLines(t *testing.T, name string, got, want []string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	if slices.Equal(got, want) {
		return
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s: line %d is %q, want %q (%d lines, want %d)", name, i, got[i], want[i], len(got), len(want))
			return
		}
	}
	t.Errorf("%s: %d lines, want %d", name, len(got), len(want))
}

// tumblingLines prints reduced readings as "sensor sum @ts".
func tumblingLines(recs []event.Record) []string {
	var out []string
	for _, r := range recs {
		v := r.Value.(reading)
		out = append(out, fmt.Sprintf("%s %d @%d", v.Sensor, v.V, r.Timestamp))
	}
	return out
}

// stampedLines prints string results as "value @ts".
func stampedLines(recs []event.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%v @%d", r.Value, r.Timestamp))
	}
	return out
}

type sensorWindow struct {
	sensor     string
	start, end int64
}

func expectTumbling(data []reading, size int64) []string {
	sums := map[sensorWindow]int{}
	for _, r := range data {
		start := r.TS - r.TS%size // all timestamps are >= 0
		sums[sensorWindow{r.Sensor, start, start + size}] += r.V
	}
	var out []string
	for w, s := range sums {
		out = append(out, fmt.Sprintf("%s %d @%d", w.sensor, s, w.end-1))
	}
	return out
}

func expectSliding(data []reading, size, slide int64) []string {
	type cs struct{ n, sum int }
	acc := map[sensorWindow]cs{}
	for _, r := range data {
		// Every window [k·slide, k·slide+size) that holds r.TS.
		for start := r.TS - r.TS%slide; start > r.TS-size; start -= slide {
			w := sensorWindow{r.Sensor, start, start + size}
			acc[w] = cs{acc[w].n + 1, acc[w].sum + r.V}
		}
	}
	var out []string
	for w, a := range acc {
		out = append(out, fmt.Sprintf("n=%d sum=%d @%d", a.n, a.sum, w.end-1))
	}
	return out
}

// expectSessions sorts each sensor's readings by time and starts a new
// session whenever a reading comes more than gap after the session's end
// (windows that touch merge, as in Flink).
func expectSessions(data []reading, gap int64) []string {
	bySensor := map[string][]reading{}
	for _, r := range data {
		bySensor[r.Sensor] = append(bySensor[r.Sensor], r)
	}
	var out []string
	for _, sensor := range slices.Sorted(maps.Keys(bySensor)) {
		rs := bySensor[sensor]
		slices.SortFunc(rs, func(a, b reading) int { return int(a.TS - b.TS) })
		emit := func(w window.Window, n, sum int) {
			out = append(out, fmt.Sprintf("%s @%d", line(sensor, w, fmt.Sprintf("n=%d sum=%d", n, sum)), w.End-1))
		}
		cur, n, sum := window.Window{Start: rs[0].TS, End: rs[0].TS + gap}, 0, 0
		for _, r := range rs {
			if r.TS > cur.End {
				emit(cur, n, sum)
				cur, n, sum = window.Window{Start: r.TS, End: r.TS + gap}, 0, 0
			}
			cur.End = max(cur.End, r.TS+gap)
			n, sum = n+1, sum+r.V
		}
		emit(cur, n, sum)
	}
	return out
}
