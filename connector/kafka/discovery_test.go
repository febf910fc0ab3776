package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/runtime"
)

// discoveryJob is a running job that reads a topic with per-partition
// watermarks (ascending event times, written into the values as
// "p<partition>@<ms>") and counts all records per 1 s event-time window.
type discoveryJob struct {
	src     *Source[string]
	read    *sim.Store    // every record read
	windows *sim.Store    // "[start,end) count", one per fired window
	done    chan struct{} // closed when the job has ended, with err
	err     error
}

func startDiscoveryJob(t *testing.T, c *cluster, topic string) *discoveryJob {
	t.Helper()
	src, err := NewSource[string](Brokers(c.brokers), Topics(topic), Deserializer(rawString),
		PartitionDiscoveryInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	j := &discoveryJob{src: src, read: sim.NewStore(), windows: sim.NewStore(), done: make(chan struct{})}
	env := weir.NewEnvironment().SetParallelism(2).EnableCheckpointing(50*time.Millisecond, weir.ExactlyOnce, t.TempDir())
	env.RuntimeOptions().Restart = runtime.NoRestart{}
	s := weir.FromSource[string](env, src, "kafka", weir.WithUID("src"),
		weir.WithWatermarks(weir.BoundedOutOfOrderness(0), eventTimeOf))
	weir.SinkTo(s, &sim.TxSink{Store: j.read}, "read")
	all := weir.KeyBy(s, func(string) string { return "all" })
	counts := weir.WindowProcess(weir.Window(all, weir.TumblingEventTimeWindows(time.Second)),
		func(_ string, w weir.TimeWindow, elems []string, out weir.Emitter[string]) error {
			out.Emit(fmt.Sprintf("[%d,%d) %d", w.Start.UnixMilli(), w.End.UnixMilli(), len(elems)))
			return nil
		})
	weir.SinkTo(counts, &sim.TxSink{Store: j.windows}, "windows")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, j.err = env.Execute(ctx, "discovery")
		close(j.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-j.done
		if j.err != nil && !errors.Is(j.err, context.Canceled) {
			t.Errorf("job: %v", j.err)
		}
	})
	return j
}

func eventTimeOf(v string) int64 {
	_, ms, _ := strings.Cut(v, "@")
	n, _ := strconv.ParseInt(ms, 10, 64)
	return n
}

// waitCommitted waits until store holds n committed values and returns them.
func (j *discoveryJob) waitCommitted(t *testing.T, store *sim.Store, n int, what string) []string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		got := asStrings(store.Committed())
		if len(got) >= n {
			return got
		}
		select {
		case <-j.done:
			t.Fatalf("job ended (%v) with %d of %d %s: %v", j.err, len(got), n, what, got)
		case <-deadline:
			t.Fatalf("%d of %d %s after 30 s: %v", len(got), n, what, got)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func asStrings(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.(string)
	}
	return out
}

// TestPartitionDiscoveryWithWatermarks adds partitions to a topic while a
// job with per-split watermarks reads it. Every record is read exactly
// once, and each discovered partition holds the watermark back until its
// own records arrive, so its old records are counted in their window
// rather than dropped as late. Windows (ascending per partition, so a
// partition's watermark is its last event time - 1; the job's is the
// minimum over the partitions):
//
//	[0,1000):    p0@100 p0@200 p1@150                fires at 1099 (phase 1)
//	[1000,2000): p0@1100 p1@1200 p2@1500             fires at 2099 (phase 3)
//	[2000,3000): p0@2100 p1@2200 p3@2500 p2@2300     fires at 3099 (phase 4)
func TestPartitionDiscoveryWithWatermarks(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := c.topic("in", 2)
	j := startDiscoveryJob(t, c, in)
	var want []string
	write := func(p int32, ts ...int) {
		for _, v := range ts {
			s := fmt.Sprintf("p%d@%d", p, v)
			c.produceTo(in, p, s)
			want = append(want, s)
		}
	}

	write(0, 100, 200, 1100)
	write(1, 150, 1200)
	j.expectWindows(t, "[0,1000) 3")

	if _, err := c.adm.CreatePartitions(context.Background(), 2, in); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for j.src.Metrics().PartitionsDiscovered.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("discovered %d of 2 new partitions after 30 s", j.src.Metrics().PartitionsDiscovered.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// p0 and p1 move on to 2099 and 2199, but p2 and p3 are at MIN: no
	// window may fire, however many watermark intervals pass.
	write(0, 2100)
	write(1, 2200)
	j.waitCommitted(t, j.read, len(want), "records read")
	time.Sleep(time.Second)
	if got := asStrings(j.windows.Committed()); !slices.Equal(got, []string{"[0,1000) 3"}) {
		t.Fatalf("windows %v before the new partitions had records; want only [0,1000)", got)
	}

	write(2, 1500) // not late: p2's watermark held the job's at 1099
	write(3, 2500)
	write(2, 2300)
	j.expectWindows(t, "[0,1000) 3", "[1000,2000) 3")

	write(0, 3100)
	write(1, 3200)
	write(2, 3300)
	write(3, 3400)
	j.expectWindows(t, "[0,1000) 3", "[1000,2000) 3", "[2000,3000) 4")

	compare(t, want, j.waitCommitted(t, j.read, len(want), "records read"), true)
	time.Sleep(500 * time.Millisecond) // nothing more may fire: [3000,4000) waits for 3999
	if got := asStrings(j.windows.Committed()); len(got) != 3 {
		t.Errorf("windows %v; want exactly three", got)
	}
	if n := j.src.Metrics().PartitionsDiscovered.Load(); n != 2 {
		t.Errorf("discovered %d partitions, want 2", n)
	}
}

// expectWindows waits for the windows fired so far and checks them exactly.
func (j *discoveryJob) expectWindows(t *testing.T, want ...string) {
	t.Helper()
	got := j.waitCommitted(t, j.windows, len(want), "windows")
	if !slices.Equal(got, want) {
		t.Fatalf("windows %v, want %v", got, want)
	}
}
