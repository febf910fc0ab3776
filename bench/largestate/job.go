package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	weir "github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/filesystem"
	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/state/backends"
	"github.com/weirstream/weir/types"
)

// The job: a bounded generator of Records records (record n is key
// keyOf(n) with a payload that is a pure function of n), keyed by key, into
// a function that keeps per key a count, a sum of n and a MapState n →
// payload (the state that grows), and registers one event-time timer per
// key at the end of time. When the input ends, the final watermark fires
// the timers; each key emits "key,count,sum,entries,payloadsum", where
// entries and payloadsum are read back from the MapState, into an
// exactly-once file sink. So the output proves both the counts and the
// content of every stored payload after every restore.

// rec is one generated record.
type rec struct {
	Key int64
	Seq int64
}

// splitmix64 is the generator's hash.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func keyOf(n int64, keys int) int64 { return int64(splitmix64(uint64(n)) % uint64(keys)) }

// payload returns record n's payload: size pseudo-random (incompressible)
// bytes.
func payload(buf []byte, n int64, size int) []byte {
	buf = buf[:0]
	x := uint64(n) * 0x2545f4914f6cdd1d
	for len(buf) < size {
		x = splitmix64(x)
		buf = binary.LittleEndian.AppendUint64(buf, x)
	}
	return buf[:size]
}

func payloadSum(p []byte) int64 { return int64(crc32.ChecksumIEEE(p)) }

// emitted counts the records the source readers of this process have
// emitted, from their restored positions on: the progress the parent
// reads in checkpoint lines.
var emitted atomic.Int64

// genSource generates records 0..n-1 in splits; split i holds i, i+s, …
// and its position is the count of its records emitted.
type genSource struct {
	n      int64
	splits int
	rate   int // records per second per process, 0: unthrottled
}

func (s *genSource) Bounded() bool { return true }

func (s *genSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, s.splits)
	for i := range out {
		out[i] = operator.SplitState{ID: strconv.Itoa(i), Position: binary.AppendUvarint(nil, 0)}
	}
	return out, nil
}

func (s *genSource) AssignSplit(id string, n int) int {
	i, _ := strconv.Atoi(id)
	return i % n
}

func (s *genSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &genReader{src: s, start: time.Now()}, nil
}

type genSplit struct {
	id       string
	index    int64
	next     int64 // count emitted
	finished bool
}

type genReader struct {
	src    *genSource
	splits []*genSplit
	done   operator.FinishedSplits
	turn   int
	start  time.Time
	polled int64
	ready  chan struct{} // closed when a throttled reader may go on
}

func (r *genReader) AddSplits(ss []operator.SplitState) error {
	for _, sp := range ss {
		p, k := binary.Uvarint(sp.Position)
		i, err := strconv.Atoi(sp.ID)
		if k <= 0 || err != nil {
			return fmt.Errorf("generator: corrupt split %q", sp.ID)
		}
		r.splits = append(r.splits, &genSplit{id: sp.ID, index: int64(i), next: int64(p)})
		emitted.Add(int64(p))
	}
	return nil
}

// seq is the record number of split sp's next record.
func (r *genReader) seq(sp *genSplit) int64 { return sp.index + sp.next*int64(r.src.splits) }

// Poll emits one record of each split in turn.
func (r *genReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if r.src.rate > 0 && r.polled >= int64(time.Since(r.start).Seconds()*float64(r.src.rate)) {
		// Ahead of the rate: nothing now, something in a moment.
		ready := make(chan struct{})
		time.AfterFunc(2*time.Millisecond, func() { close(ready) })
		r.ready = ready
		return operator.NothingAvailable, nil
	}
	r.polled++
	for range r.splits {
		sp := r.splits[r.turn%len(r.splits)]
		r.turn++
		if n := r.seq(sp); n < r.src.n {
			out.Collect(sp.id, event.Record{Value: rec{Key: keyOf(n, keysFlag), Seq: n}, Timestamp: event.NoTimestamp})
			sp.next++
			emitted.Add(1)
			if r.seq(sp) >= r.src.n {
				r.done.Finish(out, sp.id)
			}
			return operator.MoreAvailable, nil
		}
		r.done.Finish(out, sp.id)
	}
	return operator.EndOfInput, nil
}

func (r *genReader) Available() <-chan struct{} { return r.ready }

func (r *genReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, len(r.splits))
	for i, sp := range r.splits {
		out[i] = operator.SplitState{ID: sp.id, Position: binary.AppendUvarint(nil, uint64(sp.next))}
	}
	return out, nil
}

func (r *genReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *genReader) Close() error                                      { return nil }

// keysFlag and payloadFlag are the child's -keys and -payload (the reader
// and the function read them; one job per process).
var keysFlag, payloadFlag int

// firstRecord is the time the keyed function saw its first record in this
// process (restore done: state is restored when the operator opens).
var firstRecord atomic.Int64

// grow is the keyed function.
type grow struct {
	count, sum weir.ValueState[int64]
	payloads   weir.MapState[int64, []byte]
	buf        []byte
}

func (g *grow) Open(ctx *weir.RuntimeContext) error {
	g.count = weir.ValueStateOf[int64](ctx, "count")
	g.sum = weir.ValueStateOf[int64](ctx, "sum")
	g.payloads = weir.MapStateOf[int64, []byte](ctx, "payloads")
	return nil
}

func (g *grow) ProcessElement(r rec, kc *weir.KeyedContext[int64], _ weir.Emitter[event.Row]) error {
	firstRecord.CompareAndSwap(0, time.Now().UnixNano())
	c, _ := g.count.Value()
	if c == 0 {
		kc.RegisterEventTimeTimer(weir.EndOfTime)
	}
	g.count.Update(c + 1)
	s, _ := g.sum.Value()
	g.sum.Update(s + r.Seq)
	g.buf = payload(g.buf, r.Seq, payloadFlag)
	g.payloads.Put(r.Seq, g.buf)
	return nil
}

func (g *grow) OnTimer(_ time.Time, kc *weir.KeyedContext[int64], out weir.Emitter[event.Row]) error {
	c, _ := g.count.Value()
	s, _ := g.sum.Value()
	var entries, psum int64
	var bad error
	g.payloads.Range(func(n int64, p []byte) bool {
		entries++
		psum += payloadSum(p)
		if keyOf(n, keysFlag) != kc.Key() && bad == nil {
			bad = fmt.Errorf("key %d holds record %d of key %d", kc.Key(), n, keyOf(n, keysFlag))
		}
		return true
	})
	if bad != nil {
		return bad
	}
	line := fmt.Sprintf("%d,%d,%d,%d,%d", kc.Key(), c, s, entries, psum)
	out.Emit(event.Row{Kind: event.Insert, Fields: []any{[]byte(line)}})
	return nil
}

// childConfig is what the parent passes a child on its command line.
type childConfig struct {
	Records     int64
	Keys        int
	Payload     int
	Parallelism int
	Splits      int
	Interval    time.Duration
	CheckpointD string
	LocalDir    string
	OutDir      string
	Budget      string
	Incremental bool
	Rate        int
	Restore     bool
}

// runChild runs the job once, printing events for the parent on stdout:
//
//	EVENT checkpoint <id> <duration ms> <bytes> <records emitted>
//	EVENT restored <checkpoint id> <ms since start>
//	EVENT restore-phases <ms since start> key=value … (phases.go)
//	EVENT first-record <ms since start>
//	EVENT finished
func runChild(c childConfig) error {
	start := time.Now()
	watchRestorePhases(start)
	keysFlag, payloadFlag = c.Keys, c.Payload
	conf := map[string]string{
		backends.KeyType:     "rocksdb",
		backends.KeyLocalDir: c.LocalDir,
		"state.backend.rocksdb.memory.fixed-per-slot": c.Budget,
	}
	incrementalConf(conf, c.Incremental)
	factory, err := backends.FromConfig(func(k string) (string, bool) { v, ok := conf[k]; return v, ok })
	if err != nil {
		return err
	}
	env := weir.NewEnvironment().SetParallelism(c.Parallelism)
	env.EnableCheckpointing(c.Interval, weir.ExactlyOnce, c.CheckpointD)
	env.SetStateBackend(factory)
	opts := env.RuntimeOptions()
	if c.Restore {
		opts.Restore = runtime.RestoreLatestOrEmpty
	}
	opts.Listener = func(e runtime.Event) { printEvent(e, start) }
	go reportFirstRecord(start)
	src := weir.FromSource[rec](env, &genSource{n: c.Records, splits: c.Splits, rate: c.Rate / c.Parallelism}, "generator", weir.WithUID("generator"))
	keyed := weir.KeyBy(src, func(r rec) int64 { return r.Key })
	out := weir.KeyedProcess(keyed, func() weir.KeyedProcessFunction[rec, int64, event.Row] { return &grow{} }).UID("grow")
	weir.SinkTo(out, &filesystem.Sink{Dir: c.OutDir, Format: format.Raw{Name: "line", Type: types.Type{Kind: types.Bytes}}}, "totals").UID("totals")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := env.Execute(ctx, "largestate"); err != nil {
		return err
	}
	fmt.Println("EVENT finished")
	return nil
}

func printEvent(e runtime.Event, start time.Time) {
	switch e.Kind {
	case runtime.EventCheckpointCompleted:
		var bytes int64
		var dur time.Duration
		if e.Stats != nil {
			dur = e.Stats.Duration
			for _, t := range e.Stats.Tasks {
				bytes += t.Metrics.Bytes
			}
		}
		fmt.Printf("EVENT checkpoint %d %d %d %d\n", e.Checkpoint, dur.Milliseconds(), bytes, emitted.Load())
	case runtime.EventRestored:
		fmt.Printf("EVENT restored %d %d\n", e.Checkpoint, time.Since(start).Milliseconds())
	case runtime.EventCheckpointFailed:
		fmt.Fprintf(os.Stderr, "checkpoint %d failed: %v\n", e.Checkpoint, e.Err)
	}
}

func reportFirstRecord(start time.Time) {
	for firstRecord.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("EVENT first-record %d\n", (firstRecord.Load()-start.UnixNano())/int64(time.Millisecond))
}
