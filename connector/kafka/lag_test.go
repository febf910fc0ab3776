package kafka

import (
	"context"
	"encoding/json"
	"testing"

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
