package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
)

// transaction writes values to partition 0 of topic in one transaction and
// commits or aborts it.
func (c *cluster) transaction(topic, id string, commit bool, values ...string) {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.brokers, ",")...), kgo.TransactionalID(id),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		c.t.Fatal(err)
	}
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		c.t.Fatal(err)
	}
}

// TestSourceBoundedThroughRuntime reads a topic with committed and aborted
// transactions through a job: exactly the committed records arrive, and the
// positions are committed to the consumer group.
func TestSourceBoundedThroughRuntime(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := c.topic("in", 3)
	want := seqValues("v", 3000)
	c.produce(in, 3, want[:1500])
	c.transaction(in, in+"-committed", true, "t-1", "t-2")
	c.transaction(in, in+"-aborted", false, "aborted-1", "aborted-2")
	c.produce(in, 3, want[1500:])
	want = append(want, "t-1", "t-2")

	group := in + "-group"
	src, err := NewSource[string](Brokers(c.brokers), Topics(in), Bounded(), Deserializer(rawString), GroupID(group))
	if err != nil {
		t.Fatal(err)
	}
	store := sim.NewStore()
	env := weir.NewEnvironment().SetParallelism(2).EnableCheckpointing(50*time.Millisecond, weir.ExactlyOnce, t.TempDir())
	env.RuntimeOptions().Restart = runtime.NoRestart{}
	s := weir.FromSource[string](env, src, "kafka", weir.WithUID("src"))
	weir.SinkTo(s, &sim.TxSink{Store: store}, "out")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := env.Execute(ctx, "source"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range store.Committed() {
		got = append(got, v.(string))
	}
	compare(t, want, got, true)

	// Offsets go to the group asynchronously, for monitoring.
	ends := c.endOffsets(in, true)
	deadline := time.Now().Add(10 * time.Second)
	for {
		offs, err := c.adm.FetchOffsets(ctx, group)
		ok := err == nil
		for p, end := range ends {
			o, found := offs.Lookup(in, p)
			ok = ok && found && o.At == end
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group offsets %v (err %v), want the ends %v", offs, err, ends)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// splitPositions runs Enumerate and decodes the positions by partition.
func splitPositions(t *testing.T, opts ...SourceOption) map[int32]position {
	t.Helper()
	src, err := NewSource[[]byte](opts...)
	if err != nil {
		t.Fatal(err)
	}
	splits, err := src.Enumerate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]position{}
	for _, sp := range splits {
		tp, err := parseSplitID(sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if out[tp.Partition], err = decodePosition(sp.Position); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestSourceStartingOffsets(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := c.topic("in", 2)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	var recs []*kgo.Record
	for p := int32(0); p < 2; p++ {
		for i := 0; i < 10; i++ {
			recs = append(recs, &kgo.Record{Topic: in, Partition: p, Value: []byte("x"),
				Timestamp: base.Add(time.Duration(i) * time.Second)})
		}
	}
	c.produceRecords(recs...)
	group := in + "-group"
	ctx := context.Background()
	offs := kadm.Offsets{}
	offs.AddOffset(in, 0, 7, -1)
	if err := c.adm.CommitAllOffsets(ctx, group, offs); err != nil {
		t.Fatal(err)
	}
	common := []SourceOption{Brokers(c.brokers), Topics(in), GroupID(group), CommitOffsetsOnCheckpoint(false)}
	cases := []struct {
		name string
		opts []SourceOption
		want [2]position
	}{
		{"earliest", nil, [2]position{{0, -1}, {0, -1}}},
		{"latest", []SourceOption{StartingOffsets(Latest())}, [2]position{{10, -1}, {10, -1}}},
		{"timestamp", []SourceOption{StartingOffsets(Timestamp(base.Add(5 * time.Second)))}, [2]position{{5, -1}, {5, -1}}},
		{"timestamp-future", []SourceOption{StartingOffsets(Timestamp(time.Now().Add(time.Hour)))}, [2]position{{10, -1}, {10, -1}}},
		{"specific", []SourceOption{StartingOffsets(SpecificOffsets(map[TopicPartition]int64{{in, 0}: 3}))}, [2]position{{3, -1}, {0, -1}}},
		{"committed", []SourceOption{StartingOffsets(CommittedOffsets(nil))}, [2]position{{7, -1}, {0, -1}}},
		{"committed-latest", []SourceOption{StartingOffsets(CommittedOffsets(Latest()))}, [2]position{{7, -1}, {10, -1}}},
		{"bounded", []SourceOption{Bounded()}, [2]position{{0, 10}, {0, 10}}},
		{"stop-at-timestamp", []SourceOption{StoppingOffsets(Timestamp(base.Add(4 * time.Second)))}, [2]position{{0, 4}, {0, 4}}},
	}
	for _, tc := range cases {
		got := splitPositions(t, append(append([]SourceOption{}, common...), tc.opts...)...)
		for p := int32(0); p < 2; p++ {
			if got[p] != tc.want[p] {
				t.Errorf("%s: partition %d at %+v, want %+v", tc.name, p, got[p], tc.want[p])
			}
		}
	}
}

// collector is a ReaderOutput that keeps what it gets; as a SplitListener
// it also keeps the splits it is told about, "+id" added, "-id" finished.
type collector struct {
	vals    []any
	splits  map[string]int
	changes []string
}

func (c *collector) SplitAdded(id string)    { c.changes = append(c.changes, "+"+id) }
func (c *collector) SplitFinished(id string) { c.changes = append(c.changes, "-"+id) }

func (c *collector) Collect(split string, r event.Record) {
	if c.splits == nil {
		c.splits = map[string]int{}
	}
	c.vals = append(c.vals, r.Value)
	c.splits[split]++
}

// openReader enumerates src and opens a reader of all its splits (or of the
// given ones).
func openReader[T any](t *testing.T, src *Source[T], splits []operator.SplitState) operator.SourceReader {
	t.Helper()
	return openReaderIn(t, src, splits, nil)
}

// openReaderIn is openReader publishing into the metrics group g.
func openReaderIn[T any](t *testing.T, src *Source[T], splits []operator.SplitState, g *metrics.Operator) operator.SourceReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if splits == nil {
		var err error
		if splits, err = src.Enumerate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	r, err := src.CreateReader(operator.ReaderContext{Subtask: event.SubtaskID{Vertex: "src"}, Parallelism: 1, Context: ctx, Group: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if err := r.AddSplits(splits); err != nil {
		t.Fatal(err)
	}
	return r
}

// pollUntil polls r until done says so, the input ends or an error; it
// fails the test after 20s.
func pollUntil(t *testing.T, r operator.SourceReader, out *collector, done func() bool) error {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !done() {
		st, err := r.Poll(out)
		if err != nil {
			return err
		}
		switch st {
		case operator.EndOfInput:
			return nil
		case operator.NothingAvailable:
			select {
			case <-r.Available():
			case <-time.After(100 * time.Millisecond):
			case <-deadline:
				t.Fatalf("reader stalled after %d values", len(out.vals))
			}
		}
	}
	return nil
}

type payload struct {
	N int `json:"n"`
}

// poisoned writes ten records to partition 0, the one at offset 5 not JSON.
func poisoned(c *cluster) string {
	in := c.topic("in", 1)
	var vals []string
	for i := 0; i < 10; i++ {
		b, _ := json.Marshal(payload{N: i})
		if i == 5 {
			b = []byte("not json")
		}
		vals = append(vals, string(b))
	}
	c.produce(in, 1, vals)
	return in
}

func TestSourceBadRecordFail(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := poisoned(c)
	src, err := NewSource[payload](Brokers(c.brokers), Topics(in), Bounded())
	if err != nil {
		t.Fatal(err)
	}
	out := &collector{}
	err = pollUntil(t, openReader(t, src, nil), out, func() bool { return false })
	var re *RecordError
	if !errors.Is(err, ErrBadRecord) || !errors.As(err, &re) || re.Offset != 5 || re.Partition != 0 || re.Topic != in {
		t.Fatalf("got %v, want a RecordError at %s partition 0 offset 5", err, in)
	}
	if msg := err.Error(); !strings.Contains(msg, "topic "+in+" partition 0 offset 5") || !strings.Contains(msg, "json") {
		t.Errorf("message %q does not name the place and the cause", msg)
	}
	if len(out.vals) != 5 {
		t.Errorf("emitted %d values before the bad one, want 5", len(out.vals))
	}
}

func TestSourceBadRecordSkip(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := poisoned(c)
	src, err := NewSource[payload](Brokers(c.brokers), Topics(in), Bounded(), BadRecords(SkipBadRecords()))
	if err != nil {
		t.Fatal(err)
	}
	r := openReader(t, src, nil)
	out := &collector{}
	if err := pollUntil(t, r, out, func() bool { return false }); err != nil {
		t.Fatal(err)
	}
	if len(out.vals) != 9 || src.Metrics().RecordsSkipped.Load() != 1 {
		t.Fatalf("emitted %d, skipped %d; want 9 and 1", len(out.vals), src.Metrics().RecordsSkipped.Load())
	}
	snap, err := r.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := decodePosition(snap[0].Position); p.next != 10 {
		t.Fatalf("position %+v after the skipped record, want next 10", p)
	}
	// A restore from that checkpoint does not read the bad record again.
	out2 := &collector{}
	if err := pollUntil(t, openReader(t, src, snap), out2, func() bool { return false }); err != nil {
		t.Fatal(err)
	}
	if len(out2.vals) != 0 || src.Metrics().RecordsSkipped.Load() != 1 {
		t.Fatalf("after restore: emitted %d, skipped %d in total; want 0 and 1", len(out2.vals), src.Metrics().RecordsSkipped.Load())
	}
}

func TestSourceBadRecordDeadLetter(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := poisoned(c)
	dlq := c.topic("dlq", 1)
	src, err := NewSource[payload](Brokers(c.brokers), Topics(in), Bounded(), BadRecords(DeadLetter(dlq)))
	if err != nil {
		t.Fatal(err)
	}
	out := &collector{}
	g := metrics.NewOperator("Source: in", "in")
	if err := pollUntil(t, openReaderIn(t, src, nil, g), out, func() bool { return false }); err != nil {
		t.Fatal(err)
	}
	if len(out.vals) != 9 || src.Metrics().RecordsDeadLettered.Load() != 1 {
		t.Fatalf("emitted %d, dead-lettered %d; want 9 and 1", len(out.vals), src.Metrics().RecordsDeadLettered.Load())
	}
	for _, name := range []string{metricDeadLettered, metricInErrors} {
		if v, _ := g.Find(name); v != 1 {
			t.Errorf("the reader's %s = %d, want 1", name, v)
		}
	}
	recs := c.readCommitted(dlq)
	if len(recs) != 1 || string(recs[0].Value) != "not json" {
		t.Fatalf("dead-letter topic holds %v, want the one bad record", values(recs))
	}
	h := map[string]string{}
	for _, x := range recs[0].Headers {
		h[x.Key] = string(x.Value)
	}
	if h[HeaderTopic] != in || h[HeaderPartition] != "0" || h[HeaderOffset] != "5" || h[HeaderTimestamp] == "" ||
		!strings.Contains(h[HeaderError], "json") {
		t.Errorf("dead-letter headers %v", h)
	}
	if ts, err := strconv.ParseInt(h[HeaderTimestamp], 10, 64); err != nil || ts <= 0 {
		t.Errorf("timestamp header %q", h[HeaderTimestamp])
	}
}

func TestSourcePartitionDiscovery(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := c.topic("in", 1)
	c.produce(in, 1, []string{"p0"})
	src, err := NewSource[string](Brokers(c.brokers), Topics(in), Deserializer(rawString),
		PartitionDiscoveryInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	r := openReader(t, src, nil)
	out := &collector{}
	if err := pollUntil(t, r, out, func() bool { return len(out.vals) == 1 }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.adm.CreatePartitions(context.Background(), 1, in); err != nil {
		t.Fatal(err)
	}
	c.produceTo(in, 1, "p1")
	if err := pollUntil(t, r, out, func() bool { return len(out.vals) == 2 }); err != nil {
		t.Fatal(err)
	}
	if out.vals[1] != "p1" || out.splits[in+"-1"] != 1 || src.Metrics().PartitionsDiscovered.Load() != 1 {
		t.Fatalf("got %v by split %v, discovered %d", out.vals, out.splits, src.Metrics().PartitionsDiscovered.Load())
	}
	if !slices.Equal(out.changes, []string{"+" + in + "-1"}) {
		t.Fatalf("split changes %v, want only %s-1 added", out.changes, in)
	}
	snap, _ := r.SnapshotState(1)
	if len(snap) != 2 {
		t.Fatalf("snapshot has %d splits, want 2 (the discovered one included)", len(snap))
	}
}

// TestSourceReportsFinishedSplits: a bounded split tells the runtime when it
// ends — also one that is empty from the start, which must not hold the
// subtask's watermark at MIN until the end of input.
func TestSourceReportsFinishedSplits(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := c.topic("in", 2)
	c.produceTo(in, 0, "a", "b")
	src, err := NewSource[string](Brokers(c.brokers), Topics(in), Bounded(), Deserializer(rawString))
	if err != nil {
		t.Fatal(err)
	}
	out := &collector{}
	if err := pollUntil(t, openReader(t, src, nil), out, func() bool { return false }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"-" + in + "-1", "-" + in + "-0"}; !slices.Equal(out.changes, want) || len(out.vals) != 2 {
		t.Fatalf("split changes %v with %d values; want %v with 2", out.changes, len(out.vals), want)
	}
}
