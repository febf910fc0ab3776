// Command idle measures what an idle job costs: a job whose sources read
// nothing — silent source → map → discard, the map in subtasks of
// its own (a forward exchange), each at -parallelism, event time with watermarks when -watermarks — runs for
// -warmup, then the process's CPU time (user + system, getrusage) is
// measured over -measure and reported as a share of one core, with the
// goroutines' count. Checkpoints run every -interval (default longer than
// the run, so none falls in the measurement). It reports; it asserts
// nothing.
//
//	go run ./bench/idle -parallelism 1000
//	go run ./bench/idle -parallelism 5000
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/blackhole"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

type config struct {
	parallelism         int
	warmup, measure     time.Duration
	interval            time.Duration
	watermarks, metrics bool
	cpuprofile          string
}

func main() {
	var c config
	flag.IntVar(&c.parallelism, "parallelism", 1000, "subtasks of each of the job's vertices")
	flag.DurationVar(&c.warmup, "warmup", 5*time.Second, "how long the job runs before the measurement")
	flag.DurationVar(&c.measure, "measure", 10*time.Second, "how long CPU time is measured")
	flag.DurationVar(&c.interval, "interval", time.Hour, "checkpoint interval")
	flag.BoolVar(&c.watermarks, "watermarks", true, "the source generates watermarks (every 200 ms, Flink's default)")
	flag.BoolVar(&c.metrics, "metrics", true, "the job reports metrics (a metrics registry is attached)")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the measurement to this file")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err := run(c); err != nil {
		// Not log.Fatal: with slog's default set, the log package writes
		// through it at level Info, which the handler drops.
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	dir, err := os.MkdirTemp("", "weir-bench-idle")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env := weir.NewEnvironment().SetParallelism(c.parallelism).SetMaxParallelism(max(128, c.parallelism)).
		EnableCheckpointing(c.interval, weir.ExactlyOnce, dir)
	if c.metrics {
		env.MetricsHandler() // attaches a registry: subtasks publish their metrics
	}
	var opts []weir.OperatorOpt
	opts = append(opts, weir.UID("silent"))
	if c.watermarks {
		opts = append(opts, weir.Watermarks(weir.BoundedOutOfOrderness(time.Second), func(v int64) time.Time { return time.UnixMilli(v) }))
	}
	src := weir.FromSource[int64](env, silentSource{splits: c.parallelism}, "silent", opts...)
	// Forward, not keyBy: an all-to-all exchange at 5,000 subtasks is 25
	// million channels, which is not what this measures.
	doubled := weir.Map(src, func(v int64) int64 { return 2 * v }, weir.UID("double"), weir.DisableChaining())
	weir.SinkTo(doubled, &blackhole.Sink{}, "discard", weir.UID("discard"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jc, err := env.ExecuteAsync(ctx, "idle")
	if err != nil {
		return err
	}
	select {
	case <-jc.Done():
		_, err := jc.Wait()
		return fmt.Errorf("the job ended before the measurement: %v", err)
	case <-time.After(c.warmup):
	}
	if n := goruntime.NumGoroutine(); n < 2*c.parallelism {
		return fmt.Errorf("after %v only %d goroutines run: the job is not deployed yet (raise -warmup)", c.warmup, n)
	}
	stop, err := profile(c.cpuprofile)
	if err != nil {
		return err
	}
	before, start := cpuTime(), time.Now()
	time.Sleep(c.measure)
	stop()
	used, wall := cpuTime()-before, time.Since(start)
	fmt.Printf("parallelism %d (2 vertices, %d subtasks), watermarks %v, metrics %v: CPU %.1f%% of one core over %v (%v CPU), %d goroutines\n",
		c.parallelism, 2*c.parallelism, c.watermarks, c.metrics, 100*used.Seconds()/wall.Seconds(),
		wall.Round(time.Millisecond), used.Round(time.Millisecond), goruntime.NumGoroutine())
	cancel()
	_, _ = jc.Wait()
	return nil
}

// profile starts a CPU profile into path (none if empty) and returns its stop.
func profile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// silentSource is an unbounded source of int64 with one split per
// subtask whose readers never have a record.
type silentSource struct{ splits int }

func (s silentSource) Bounded() bool { return false }

func (s silentSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, s.splits)
	for i := range out {
		out[i] = operator.SplitState{ID: strconv.Itoa(i)}
	}
	return out, nil
}

func (s silentSource) AssignSplit(id string, n int) int {
	i, _ := strconv.Atoi(id)
	return i % n
}

func (s silentSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &silentReader{never: make(chan struct{})}, nil
}

type silentReader struct {
	ids   []string
	never chan struct{}
}

func (r *silentReader) AddSplits(ss []operator.SplitState) error {
	for _, s := range ss {
		r.ids = append(r.ids, s.ID)
	}
	return nil
}

func (r *silentReader) Poll(operator.ReaderOutput) (operator.ReaderStatus, error) {
	return operator.NothingAvailable, nil
}

func (r *silentReader) Available() <-chan struct{} { return r.never }

func (r *silentReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, len(r.ids))
	for i, id := range r.ids {
		out[i] = operator.SplitState{ID: id}
	}
	return out, nil
}

func (r *silentReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *silentReader) Close() error                                      { return nil }
