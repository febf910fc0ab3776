package weir_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/weirstream/weir"
)

// A job counts words: a bounded source, a keyed running count, and Print.
// With parallelism 1 the output keeps the input's order. Exactly-once, the
// default, needs a checkpoint directory (a bounded job takes a final
// checkpoint when its input ends).
func Example() {
	dir, _ := os.MkdirTemp("", "weir-example")
	defer os.RemoveAll(dir)
	env := weir.NewEnvironment(weir.Parallelism(1), weir.CheckpointDir(dir))
	lines := weir.FromSlice(env, []string{"to be", "or not to be"}, "lines")
	words := weir.FlatMap(lines, func(line string, out weir.Emitter[string]) {
		for _, w := range strings.Fields(line) {
			out.Emit(w)
		}
	}, weir.Name("Split"))
	type count struct {
		Word string
		N    int
	}
	ones := weir.Map(words, func(w string) count { return count{w, 1} })
	counts := weir.Reduce(weir.KeyBy(ones, func(c count) string { return c.Word }),
		func(a, b count) count { return count{a.Word, a.N + b.N} }, weir.UID("counts"))
	weir.Print(weir.Map(counts, func(c count) string { return fmt.Sprintf("%s=%d", c.Word, c.N) }))
	if _, err := env.Execute(context.Background(), "word count"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// to=1
	// be=1
	// or=1
	// not=1
	// to=2
	// be=2
}

// Options configure the environment once, at construction; each names the
// Flink setting it mirrors.
func ExampleNewEnvironment() {
	env := weir.NewEnvironment(
		weir.Parallelism(2),                     // parallelism.default
		weir.CheckpointInterval(10*time.Second), // execution.checkpointing.interval
		weir.CheckpointDir("/var/lib/weir/ck"),  // state.checkpoints.dir
		weir.Guarantee(weir.ExactlyOnce),        // execution.checkpointing.mode
		weir.Restore(weir.RestoreLatestOrEmpty), // resume from the newest checkpoint
		weir.Restarts(weir.FixedDelay{Attempts: 3, Delay: time.Second}),
	)
	src := weir.FromSlice(env, []int{1, 2, 3}, "numbers", weir.UID("numbers"))
	weir.Print(weir.Filter(src, func(n int) bool { return n%2 == 1 }, weir.Parallelism(1)))
	plan, err := env.Explain("odd numbers")
	fmt.Println(plan, err)
	// Output:
	// == Job "odd numbers": 3 operator chains ==
	// [0] Source: numbers (parallelism 2)
	// [1] Filter (parallelism 1)
	//     <- [0] REBALANCE, input 1
	// [2] Sink: Print to Std. Out (parallelism 2)
	//     <- [1] REBALANCE, input 1
	//  <nil>
}

// A mistake in the declaration — here a window of size 0 — is returned by
// Execute, before anything runs.
func ExampleEnvironment_Execute_constructionError() {
	env := weir.NewEnvironment()
	src := weir.FromSlice(env, []int{1}, "numbers")
	keyed := weir.KeyBy(src, func(int) int { return 0 })
	weir.WindowReduce(weir.Window(keyed, weir.TumblingEventTimeWindows(0)), func(a, b int) int { return a + b })
	_, err := env.Execute(context.Background(), "bad window")
	fmt.Println(err)
	// Output:
	// weir: Window: window: invalid options: Tumbling.Size is 0s; it must be at least 1ms
}

// dedup forwards the first bill of each id: its keyed state remembers the
// ids seen, for a day of processing time.
type dedup struct{ seen weir.ValueState[bool] }

func (d *dedup) Open(ctx *weir.RuntimeContext) error {
	d.seen = weir.ValueStateOf[bool](ctx, "seen", weir.StateTTL(24*time.Hour))
	return nil
}

func (d *dedup) ProcessElement(id string, _ *weir.KeyedContext[string], out weir.Emitter[string]) error {
	if _, dup := d.seen.Value(); !dup {
		d.seen.Update(true)
		out.Emit(id)
	}
	return nil
}

func (d *dedup) OnTimer(time.Time, *weir.KeyedContext[string], weir.Emitter[string]) error {
	return nil
}

// A KeyedProcessFunction keeps keyed state, registered in Open through the
// RuntimeContext.
func ExampleKeyedProcess() {
	env := weir.NewEnvironment(weir.Guarantee(weir.AtMostOnce)) // no checkpoints: nothing to recover here
	ids := weir.FromSlice(env, []string{"b1", "b2", "b1", "b3", "b2"}, "bills")
	firsts := weir.KeyedProcess(weir.KeyBy(ids, func(id string) string { return id }),
		func() weir.KeyedProcessFunction[string, string, string] { return &dedup{} }, weir.UID("dedup"))
	weir.Print(firsts)
	if _, err := env.Execute(context.Background(), "dedup"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// b1
	// b2
	// b3
}

type sensorSample struct {
	Sensor string
	At     time.Time
	Value  int
}

// alarm emits a sensor's last value once no sensorSample came for a minute of
// event time: each sensorSample moves the sensor's timer.
type alarm struct {
	last  weir.ValueState[sensorSample]
	timer weir.ValueState[time.Time]
}

func (a *alarm) Open(ctx *weir.RuntimeContext) error {
	a.last = weir.ValueStateOf[sensorSample](ctx, "last")
	a.timer = weir.ValueStateOf[time.Time](ctx, "timer")
	return nil
}

func (a *alarm) ProcessElement(r sensorSample, ctx *weir.KeyedContext[string], _ weir.Emitter[string]) error {
	if t, ok := a.timer.Value(); ok {
		ctx.DeleteEventTimeTimer(t)
	}
	a.last.Update(r)
	a.timer.Update(r.At.Add(time.Minute))
	ctx.RegisterEventTimeTimer(r.At.Add(time.Minute))
	return nil
}

func (a *alarm) OnTimer(t time.Time, ctx *weir.KeyedContext[string], out weir.Emitter[string]) error {
	r, _ := a.last.Value()
	out.Emit(fmt.Sprintf("%s silent since %s (last value %d)", ctx.Key(), r.At.Format("15:04:05"), r.Value))
	return nil
}

// Timers take a time.Time: event time comes from the source's Watermarks
// option, and OnTimer runs once the watermark passes the timer.
func ExampleKeyedContext_RegisterEventTimeTimer() {
	env := weir.NewEnvironment(weir.Guarantee(weir.AtMostOnce))
	at := func(hms string) time.Time { t, _ := time.Parse("15:04:05", hms); return t }
	readings := weir.FromSlice(env, []sensorSample{
		{"s1", at("10:00:00"), 1}, {"s2", at("10:00:30"), 7}, {"s1", at("10:00:50"), 2}, {"s2", at("10:05:00"), 8},
	}, "readings", weir.Watermarks(weir.BoundedOutOfOrderness(0), func(r sensorSample) time.Time { return r.At }))
	alarms := weir.KeyedProcess(weir.KeyBy(readings, func(r sensorSample) string { return r.Sensor }),
		func() weir.KeyedProcessFunction[sensorSample, string, string] { return &alarm{} })
	weir.Print(alarms)
	if _, err := env.Execute(context.Background(), "alarms"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// s1 silent since 10:00:50 (last value 2)
	// s2 silent since 10:05:00 (last value 8)
}

// Windows group each key's elements by event time; WindowReduce emits one
// value per key and window when the watermark passes the window's end.
func ExampleWindowReduce() {
	env := weir.NewEnvironment(weir.Guarantee(weir.AtMostOnce))
	type click struct {
		User string
		At   time.Time
		N    int
	}
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 10, m, 0, 0, time.UTC) }
	clicks := weir.FromSlice(env, []click{{"ann", at(0), 1}, {"bob", at(1), 1}, {"ann", at(3), 1}, {"ann", at(7), 1}},
		"clicks", weir.Watermarks(weir.BoundedOutOfOrderness(time.Minute), func(c click) time.Time { return c.At }))
	perUser := weir.Window(weir.KeyBy(clicks, func(c click) string { return c.User }), weir.TumblingEventTimeWindows(5*time.Minute))
	sums := weir.WindowReduce(perUser, func(a, b click) click { return click{a.User, a.At, a.N + b.N} })
	weir.Print(weir.Map(sums, func(c click) string { return fmt.Sprintf("%s: %d", c.User, c.N) }))
	if _, err := env.Execute(context.Background(), "clicks per user"); err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// ann: 2
	// bob: 1
	// ann: 1
}
