package kafka

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
)

// TestSourceLagMetrics: the reader publishes, per partition, its position
// and how many records lie between it and the end its fetch saw (the high
// watermark; the last stable offset under read_committed), their sum as
// pendingRecords and their maximum, and counts the bytes it read — exact
// values, taken from the reader's own position, not recomputed.
func TestSourceLagMetrics(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := c.topic("in", 1)
	var vals []string
	for i := 0; i < 100; i++ {
		b, _ := json.Marshal(payload{N: i})
		vals = append(vals, string(b))
	}
	c.produce(in, 1, vals) // acknowledged: the high watermark is 100 before the reader fetches
	src, err := NewSource[payload](Brokers(c.brokers), Topics(in))
	if err != nil {
		t.Fatal(err)
	}
	src.cfg.maxPollRecords = 10
	group := metrics.NewOperator("Source: in", "in")
	m := &operator.Metrics{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	splits, err := src.Enumerate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.CreateReader(operator.ReaderContext{Subtask: event.SubtaskID{Vertex: "src"}, Parallelism: 1, Context: ctx,
		Metrics: m, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddSplits(splits); err != nil {
		t.Fatal(err)
	}
	out := &collector{}
	if err := pollUntil(t, r, out, func() bool { return len(out.vals) > 0 }); err != nil {
		t.Fatal(err)
	}
	p0 := []string{"topic", in, "partition", "0"}
	check := func(read int) {
		t.Helper()
		want := map[string]int64{metricCurrentOffset: int64(read), metricRecordsLag: int64(100 - read)}
		for name, w := range want {
			if got, ok := group.Find(name, p0...); !ok || got != w {
				t.Errorf("after %d records: %s = %d (%v), want %d", read, name, got, ok, w)
			}
		}
		for _, name := range []string{metricPendingRecords, metricRecordsLagMax} {
			if got, _ := group.Find(name); got != int64(100-read) {
				t.Errorf("after %d records: %s = %d, want %d", read, name, got, 100-read)
			}
		}
		var bytes int64
		for _, v := range vals[:read] {
			bytes += int64(len(v))
		}
		if m.BytesIn != bytes {
			t.Errorf("after %d records: numBytesIn %d, want %d", read, m.BytesIn, bytes)
		}
	}
	if len(out.vals) != 10 {
		t.Fatalf("first poll emitted %d records, want maxPollRecords (10)", len(out.vals))
	}
	check(10)
	if err := pollUntil(t, r, out, func() bool { return len(out.vals) == 100 }); err != nil {
		t.Fatal(err)
	}
	check(100)
}

// TestLagUnknownBeforeEnd: a split whose end the reader knows neither from
// a fetch nor from a listing reports records-lag -1 (unknown), not 0 (caught
// up), and stays out of pendingRecords and the maximum.
func TestLagUnknownBeforeEnd(t *testing.T) {
	group := metrics.NewOperator("Source: in", "in")
	r := &reader{splits: map[TopicPartition]*splitState{}, rm: newReaderMetrics(operator.ReaderContext{Group: group})}
	r.mu.known = map[TopicPartition]bool{}
	consume := map[string]map[int32]kgo.Offset{}
	r.addSplit(TopicPartition{"in", 0}, position{next: 3, stop: -1}, nil, consume)
	r.addSplit(TopicPartition{"in", 1}, position{next: 5, stop: -1}, nil, consume)
	r.takeEnds(map[TopicPartition]int64{{"in", 1}: 12})
	r.publishLag()
	for p, want := range map[string]int64{"0": lagUnknown, "1": 7} {
		if got, _ := group.Find(metricRecordsLag, "topic", "in", "partition", p); got != want {
			t.Errorf("partition %s: records-lag %d, want %d", p, got, want)
		}
	}
	for _, name := range []string{metricPendingRecords, metricRecordsLagMax} {
		if got, _ := group.Find(name); got != 7 {
			t.Errorf("%s = %d, want 7 (partition 1's; partition 0's is unknown)", name, got)
		}
	}
}

// TestLagOfUnfetchedPartition: a partition the reader has not fetched from
// (paused here) shows its whole backlog as lag — the high watermark the
// reader listed when the split was added — while the other partition is
// read to its end; before, it showed 0.
func TestLagOfUnfetchedPartition(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := c.topic("in", 2)
	var vals []string
	for i := 0; i < 60; i++ {
		b, _ := json.Marshal(payload{N: i})
		vals = append(vals, string(b))
	}
	c.produce(in, 2, vals) // 30 records in each partition
	src, err := NewSource[payload](Brokers(c.brokers), Topics(in))
	if err != nil {
		t.Fatal(err)
	}
	group := metrics.NewOperator("Source: in", "in")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	splits, err := src.Enumerate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sr, err := src.CreateReader(operator.ReaderContext{Subtask: event.SubtaskID{Vertex: "src"}, Parallelism: 1, Context: ctx,
		Metrics: &operator.Metrics{}, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	sr.(*reader).cl.PauseFetchPartitions(map[string][]int32{in: {1}})
	if err := sr.AddSplits(splits); err != nil {
		t.Fatal(err)
	}
	lag := func(p string) int64 {
		v, _ := group.Find(metricRecordsLag, "topic", in, "partition", p)
		return v
	}
	out := &collector{}
	if err := pollUntil(t, sr, out, func() bool { return len(out.vals) == 30 && lag("1") != lagUnknown }); err != nil {
		t.Fatal(err)
	}
	if lag("0") != 0 || lag("1") != 30 {
		t.Errorf("records-lag: partition 0 (read to its end) %d, want 0; partition 1 (not fetched) %d, want 30", lag("0"), lag("1"))
	}
	if got, _ := group.Find(metricPendingRecords); got != 30 {
		t.Errorf("pendingRecords %d, want 30", got)
	}
}
