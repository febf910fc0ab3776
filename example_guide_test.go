package weir_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Checkpoints make a job resumable: run it with CheckpointDir, and a later
// run with Restore(RestoreLatest) starts from its newest checkpoint — the
// sources at their recorded positions, keyed state as it was. Here the
// second run's slice is longer: the source resumes after the three elements
// the first run read, and the counts carry on from the checkpointed state.
// The restore matches state by UID, so both runs set the same UIDs.
func ExampleRestore() {
	dir, _ := os.MkdirTemp("", "weir-restore")
	defer os.RemoveAll(dir)
	run := func(words []string, opts ...weir.EnvOpt) {
		env := weir.NewEnvironment(append([]weir.EnvOpt{weir.CheckpointDir(dir)}, opts...)...)
		in := weir.FromSlice(env, words, "words", weir.UID("words"))
		counts := weir.Reduce(weir.KeyBy(weir.Map(in, func(w string) string { return w + "=1" }), wordOf),
			func(a, b string) string { return fmt.Sprintf("%s=%d", wordOf(a), countOf(a)+countOf(b)) }, weir.UID("counts"))
		weir.Print(counts)
		res, err := env.Execute(context.Background(), "counts")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("restored from checkpoint", res.RestoredFrom)
	}
	run([]string{"a", "b", "a"})
	run([]string{"a", "b", "a", "b", "a"}, weir.Restore(weir.RestoreLatest))
	// Output:
	// a=1
	// b=1
	// a=2
	// restored from checkpoint 0
	// b=2
	// a=3
	// restored from checkpoint 1
}

func wordOf(s string) string { return s[:strings.IndexByte(s, '=')] }

func countOf(s string) int {
	var n int
	fmt.Sscan(s[strings.IndexByte(s, '=')+1:], &n)
	return n
}

// Process emits into its main output and, with Side, into side outputs
// (Flink's OutputTag); SideOutput reads one as a stream of its own type.
func ExampleSideOutput() {
	env := weir.NewEnvironment(weir.Guarantee(weir.AtMostOnce))
	invalid := weir.NewOutputTag[string]("invalid")
	amounts := weir.Process(weir.FromSlice(env, []string{"12", "x", "30", "-"}, "amounts"),
		func(s string, out weir.Emitter[int]) error {
			var n int
			if _, err := fmt.Sscan(s, &n); err != nil {
				weir.Side(out, invalid, s)
				return nil
			}
			out.Emit(n)
			return nil
		}, weir.Name("Parse"))
	weir.Print(weir.Map(amounts, func(n int) string { return fmt.Sprint("amount ", n) }))
	weir.Print(weir.Map(weir.SideOutput(amounts, invalid), func(s string) string { return "invalid " + s }))
	if _, err := env.Execute(context.Background(), "parse"); err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// amount 12
	// invalid x
	// amount 30
	// invalid -
}

// The default guarantee, ExactlyOnce, checkpoints the job's state — even a
// bounded job takes a final checkpoint — so it needs a checkpoint
// directory; Execute says so before anything runs. Guarantee(AtLeastOnce)
// checkpoints without aligning barriers; Guarantee(AtMostOnce) takes no
// checkpoints at all.
func ExampleGuarantee() {
	env := weir.NewEnvironment() // ExactlyOnce, no CheckpointDir
	weir.Print(weir.FromSlice(env, []int{1}, "numbers"))
	_, err := env.Execute(context.Background(), "no checkpoint dir")
	fmt.Println(err)

	env = weir.NewEnvironment(weir.Guarantee(weir.AtMostOnce))
	weir.Print(weir.FromSlice(env, []int{1}, "numbers"))
	res, err := env.Execute(context.Background(), "no checkpoints")
	fmt.Println(len(res.Checkpoints), "checkpoints,", err)
	// Output:
	// runtime: CheckpointDir is required unless the delivery guarantee is at-most-once
	// 1
	// 0 checkpoints, <nil>
}

// committedSink is a transactional sink in Flink's Sink V2 shape: each
// writer buffers what it is given and, at every checkpoint barrier, hands
// the buffer over as a committable (PrepareCommit); the committer makes it
// visible only once that checkpoint is complete. A failure before then
// restores the previous checkpoint and replays the records, but nothing
// they produced was ever visible — exactly-once output. Connectors' sinks
// (kafka.NewSink, jdbc.New, filesystem) work this way with transactions.
type committedSink struct {
	mu      sync.Mutex
	visible []string
}

func (s *committedSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return &bufferWriter{}, nil
}

func (s *committedSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return committer{s}, nil
}

type bufferWriter struct{ pending []string }

func (w *bufferWriter) Write(r event.Record) error {
	w.pending = append(w.pending, fmt.Sprint(r.Value))
	return nil
}

func (w *bufferWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) {
	if len(w.pending) == 0 {
		return nil, nil
	}
	c := []byte(strings.Join(w.pending, ","))
	w.pending = nil
	return [][]byte{c}, nil
}

func (w *bufferWriter) Flush(bool) error                                 { return nil }
func (w *bufferWriter) SnapshotState(event.CheckpointID) ([]byte, error) { return nil, nil }
func (w *bufferWriter) Close() error                                     { return nil }

type committer struct{ s *committedSink }

// Commit is idempotent in a real sink (a committable may be committed
// again after a failure); this one runs once per checkpoint.
func (c committer) Commit(_ context.Context, id event.CheckpointID, committables [][]byte) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	for _, b := range committables {
		c.s.visible = append(c.s.visible, fmt.Sprintf("checkpoint %d: %s", id, b))
	}
	return nil
}

func (c committer) Close() error { return nil }

// SinkTo hands a stream to a sink. With ExactlyOnce and a transactional
// sink, output becomes visible when the checkpoint that covers it
// completes: here the bounded job's final checkpoint.
func ExampleSinkTo() {
	dir, _ := os.MkdirTemp("", "weir-sink")
	defer os.RemoveAll(dir)
	env := weir.NewEnvironment(weir.CheckpointDir(dir))
	sink := &committedSink{}
	weir.SinkTo(weir.FromSlice(env, []string{"a", "b", "c"}, "letters"), sink, "committed", weir.UID("committed"))
	if _, err := env.Execute(context.Background(), "commit"); err != nil {
		fmt.Println(err)
	}
	sort.Strings(sink.visible)
	fmt.Println(strings.Join(sink.visible, "\n"))
	// Output:
	// checkpoint 1: a,b,c
}

// WindowProcess sees all of a window's elements at once, with the window
// itself as a TimeWindow; here session windows, which close after a gap of
// 30 minutes without clicks.
func ExampleWindowProcess() {
	env := weir.NewEnvironment(weir.Guarantee(weir.AtMostOnce))
	at := func(hm string) time.Time { t, _ := time.Parse("15:04", hm); return t }
	clicks := weir.FromSlice(env, []time.Time{at("09:00"), at("09:20"), at("09:40"), at("11:00"), at("11:10")}, "clicks",
		weir.Watermarks(weir.BoundedOutOfOrderness(0), func(t time.Time) time.Time { return t }))
	sessions := weir.Window(weir.KeyBy(clicks, func(time.Time) string { return "ann" }), weir.EventTimeSessionWindows(30*time.Minute))
	weir.Print(weir.WindowProcess(sessions, func(user string, w weir.TimeWindow, clicks []time.Time, out weir.Emitter[string]) error {
		out.Emit(fmt.Sprintf("%s: %d clicks from %s to %s", user, len(clicks), w.Start.Format("15:04"), w.End.Format("15:04")))
		return nil
	}))
	if _, err := env.Execute(context.Background(), "sessions"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// ann: 3 clicks from 09:00 to 10:10
	// ann: 2 clicks from 11:00 to 11:40
}
