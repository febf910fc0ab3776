package weir_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
)

// apiSink is an at-least-once test sink: every written value lands in out.
type apiSink[T any] struct {
	mu  sync.Mutex
	out []T
}

func (c *apiSink[T]) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return apiWriter[T]{c}, nil
}
func (c *apiSink[T]) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}
func (c *apiSink[T]) values() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]T(nil), c.out...)
}

type apiWriter[T any] struct{ c *apiSink[T] }

func (w apiWriter[T]) Write(r event.Record) error {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.c.out = append(w.c.out, r.Value.(T))
	return nil
}
func (apiWriter[T]) Flush(bool) error                                   { return nil }
func (apiWriter[T]) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (apiWriter[T]) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (apiWriter[T]) Close() error                                       { return nil }

func apiEnv(t *testing.T, p int) *weir.Environment {
	return weir.NewEnvironment(weir.Parallelism(p), weir.CheckpointInterval(20*time.Millisecond),
		weir.CheckpointDir(t.TempDir()), weir.Restarts(weir.NoRestart{}))
}

func runJob(t *testing.T, env *weir.Environment) *runtime.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := env.Execute(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func sortedBy[T any](xs []T, less func(a, b T) bool) []T {
	sort.Slice(xs, func(i, j int) bool { return less(xs[i], xs[j]) })
	return xs
}

func seqInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestMapFilterFlatMap(t *testing.T) {
	env := apiEnv(t, 2)
	src := weir.FromSlice(env, seqInts(1000), "ints")
	odd := weir.Filter(src, func(i int) bool { return i%2 == 1 })
	sq := weir.Map(odd, func(i int) string { return fmt.Sprint(i * i) })
	twice := weir.FlatMap(sq, func(s string, out weir.Emitter[string]) { out.Emit(s); out.Emit(s + "!") })
	sink := &apiSink[string]{}
	weir.SinkTo(twice, sink, "out")
	runJob(t, env)
	var want []string
	for i := 1; i < 1000; i += 2 {
		want = append(want, fmt.Sprint(i*i), fmt.Sprint(i*i)+"!")
	}
	got := sink.values()
	less := func(a, b string) bool { return a < b }
	if g, w := strings.Join(sortedBy(got, less), ","), strings.Join(sortedBy(want, less), ","); g != w {
		t.Fatalf("got %d values, want %d; first differences: %.200s vs %.200s", len(got), len(want), g, w)
	}
}

func TestUnionAndSideOutput(t *testing.T) {
	env := apiEnv(t, 2)
	a := weir.FromSlice(env, seqInts(100), "a")
	b := weir.Map(weir.FromSlice(env, seqInts(50), "b"), func(i int) int { return 1000 + i })
	all := weir.Union(a, b)
	big := weir.NewOutputTag[string]("big")
	small := weir.Process(all, func(i int, out weir.Emitter[int]) error {
		if i >= 1000 {
			weir.Side(out, big, fmt.Sprint("big-", i))
			return nil
		}
		out.Emit(i)
		return nil
	})
	smallSink, bigSink := &apiSink[int]{}, &apiSink[string]{}
	weir.SinkTo(small, smallSink, "small")
	weir.SinkTo(weir.SideOutput(small, big), bigSink, "big")
	runJob(t, env)
	gotSmall := sortedBy(smallSink.values(), func(a, b int) bool { return a < b })
	if fmt.Sprint(gotSmall) != fmt.Sprint(seqInts(100)) {
		t.Fatalf("main output %v", gotSmall)
	}
	if got := len(bigSink.values()); got != 50 {
		t.Fatalf("side output has %d values, want 50", got)
	}
	for _, s := range bigSink.values() {
		if !strings.HasPrefix(s, "big-10") {
			t.Fatalf("side output value %q", s)
		}
	}
}

type order struct {
	ID, Customer string
	Amount       int
}
type customer struct{ ID, Name string }

// joinFn emits "name:order" once both sides of a customer are known.
type joinFn struct {
	name   weir.ValueState[string]
	orders weir.ListState[string]
}

func (j *joinFn) Open(ctx *weir.RuntimeContext) error {
	j.name = weir.ValueStateOf[string](ctx, "name")
	j.orders = weir.ListStateOf[string](ctx, "orders")
	return nil
}
func (j *joinFn) ProcessElement1(o order, _ *weir.KeyedContext[string], out weir.Emitter[string]) error {
	if n, ok := j.name.Value(); ok {
		out.Emit(n + ":" + o.ID)
		return nil
	}
	j.orders.Add(o.ID)
	return nil
}
func (j *joinFn) ProcessElement2(c customer, _ *weir.KeyedContext[string], out weir.Emitter[string]) error {
	j.name.Update(c.Name)
	for _, id := range j.orders.Get() {
		out.Emit(c.Name + ":" + id)
	}
	j.orders.Clear()
	return nil
}
func (j *joinFn) OnTimer(time.Time, *weir.KeyedContext[string], weir.Emitter[string]) error {
	return nil
}

func TestKeyedCoProcessJoin(t *testing.T) {
	env := apiEnv(t, 2)
	var orders []order
	var customers []customer
	var want []string
	for c := 0; c < 20; c++ {
		customers = append(customers, customer{ID: fmt.Sprint("c", c), Name: fmt.Sprint("N", c)})
		for o := 0; o < 5; o++ {
			orders = append(orders, order{ID: fmt.Sprint("o", c, "-", o), Customer: fmt.Sprint("c", c)})
			want = append(want, fmt.Sprint("N", c, ":o", c, "-", o))
		}
	}
	ko := weir.KeyBy(weir.FromSlice(env, orders, "orders"), func(o order) string { return o.Customer })
	kc := weir.KeyBy(weir.FromSlice(env, customers, "customers"), func(c customer) string { return c.ID })
	joined := weir.KeyedCoProcess(ko, kc, func() weir.KeyedCoProcessFunction[order, customer, string, string] { return &joinFn{} })
	sink := &apiSink[string]{}
	weir.SinkTo(joined, sink, "joined")
	runJob(t, env)
	less := func(a, b string) bool { return a < b }
	if g, w := fmt.Sprint(sortedBy(sink.values(), less)), fmt.Sprint(sortedBy(want, less)); g != w {
		t.Fatalf("join:\n got %s\nwant %s", g, w)
	}
}

func TestCoFlatMap(t *testing.T) {
	env := apiEnv(t, 1)
	a := weir.FromSlice(env, seqInts(10), "a")
	b := weir.FromSlice(env, []string{"x", "y"}, "b")
	out := weir.CoFlatMap(weir.Connect(a, b),
		func(i int, e weir.Emitter[string]) { e.Emit(fmt.Sprint("i", i)) },
		func(s string, e weir.Emitter[string]) { e.Emit("s" + s) })
	sink := &apiSink[string]{}
	weir.SinkTo(out, sink, "out")
	runJob(t, env)
	if got := len(sink.values()); got != 12 {
		t.Fatalf("got %d values: %v", got, sink.values())
	}
}

type sensorReading struct {
	Sensor string
	TS     int64
}

// timerFn registers an event-time timer at each sensorReading's time + 5 and emits
// "sensor@ts" when it fires, with the watermark it fired at.
type timerFn struct{}

func (timerFn) Open(*weir.RuntimeContext) error { return nil }
func (timerFn) ProcessElement(r sensorReading, kc *weir.KeyedContext[string], _ weir.Emitter[string]) error {
	kc.RegisterEventTimeTimer(time.UnixMilli(r.TS + 5))
	return nil
}
func (timerFn) OnTimer(t time.Time, kc *weir.KeyedContext[string], out weir.Emitter[string]) error {
	out.Emit(fmt.Sprintf("%s@%d", kc.Key(), t.UnixMilli()))
	return nil
}

func TestEventTimeTimersFireOncePerKeyInOrder(t *testing.T) {
	env := apiEnv(t, 1)
	var rs []sensorReading
	for i := int64(0); i < 200; i++ {
		rs = append(rs, sensorReading{Sensor: fmt.Sprint("s", i%4), TS: i * 10})
		rs = append(rs, sensorReading{Sensor: fmt.Sprint("s", i%4), TS: i * 10}) // same timer again: fires once
	}
	src := weir.FromSlice(env, rs, "readings",
		weir.Watermarks(weir.BoundedOutOfOrderness(0), func(r sensorReading) time.Time { return time.UnixMilli(r.TS) }))
	fired := weir.KeyedProcess(weir.KeyBy(src, func(r sensorReading) string { return r.Sensor }),
		func() weir.KeyedProcessFunction[sensorReading, string, string] { return timerFn{} })
	sink := &apiSink[string]{}
	weir.SinkTo(fired, sink, "fired")
	runJob(t, env)
	got := sink.values()
	if len(got) != 200 {
		t.Fatalf("%d timers fired, want 200 (one per distinct key and time)", len(got))
	}
	last := map[string]int64{}
	for _, g := range got {
		var s string
		var ts int64
		fmt.Sscanf(strings.Replace(g, "@", " ", 1), "%s %d", &s, &ts)
		if ts <= last[s] && last[s] != 0 {
			t.Fatalf("timer %s fired after %d: out of order", g, last[s])
		}
		last[s] = ts
	}
}

func TestExplainShowsChains(t *testing.T) {
	env := weir.NewEnvironment().SetParallelism(2)
	src := weir.FromSlice(env, seqInts(10), "ints")
	m := weir.Map(src, func(i int) int { return i })
	r := weir.Reduce(weir.KeyBy(m, func(i int) int { return i % 3 }), func(a, b int) int { return a + b })
	weir.SinkTo(r, &apiSink[int]{}, "out")
	plan, err := env.Explain("plan")
	if err != nil {
		t.Fatal(err)
	}
	want := `== Job "plan": 2 operator chains ==
[0] Source: ints -> Map (parallelism 2)
[1] Reduce -> Sink: out (parallelism 2)
    <- [0] HASH, input 1
`
	if plan != want {
		t.Fatalf("plan:\n%s\nwant:\n%s", plan, want)
	}
}
