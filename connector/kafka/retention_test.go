package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

func TestRetentionOf(t *testing.T) {
	for _, tc := range []struct {
		configs map[string]string
		want    int64
	}{
		{map[string]string{"cleanup.policy": "delete", "message.timestamp.type": "CreateTime", "retention.ms": "604800000"}, 604800000},
		{map[string]string{"cleanup.policy": "compact,delete", "retention.ms": "3600000"}, 3600000},
		{map[string]string{"cleanup.policy": "delete", "retention.ms": "0"}, 0},
		{map[string]string{"cleanup.policy": "delete", "retention.ms": "-1"}, -1},
		{map[string]string{"cleanup.policy": "compact", "retention.ms": "3600000"}, -1},
		{map[string]string{"cleanup.policy": "delete", "message.timestamp.type": "LogAppendTime", "retention.ms": "3600000"}, -1},
		{map[string]string{"cleanup.policy": "delete", "retention.ms": "soon"}, -1},
		{map[string]string{}, -1},
	} {
		if got := retentionOf(tc.configs); got.ms != tc.want {
			t.Errorf("retentionOf(%v) = %d, want %d", tc.configs, got.ms, tc.want)
		}
	}
	now := time.UnixMilli(10_000)
	week := retention{ms: 1_000}
	if !week.expired(8_999, now) || week.expired(9_000, now) || keepForever.expired(0, now) {
		t.Error("expired: want true only before now - retention.ms")
	}
}

// TestSinkRestampsRecordsPastRetention is the regression test of a lost
// window: a job over month-old data wrote its first windows with their
// event times into a topic with the default 7-day retention; the broker's
// next retention check deleted the segment holding them, minutes after
// their transaction committed, and later windows written after the check
// survived. A record whose event time is past the topic's retention.ms is
// now written with the current time; younger records keep their event time.
func TestSinkRestampsRecordsPastRetention(t *testing.T) {
	t.Parallel()
	for _, g := range []delivery.Guarantee{delivery.AtLeastOnce, delivery.ExactlyOnce} {
		t.Run(g.String(), func(t *testing.T) {
			t.Parallel()
			c := newCluster(t)
			hour := fmt.Sprint(time.Hour.Milliseconds())
			out := c.topicWith("out", 1, map[string]*string{"retention.ms": &hour})
			sink, err := NewSink[string](Brokers(c.brokers), Topic(out), FlushTimeout(10*time.Second),
				Guarantee(g), TransactionalIDPrefix(out), CheckpointInterval(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			stale, fresh := start.Add(-2*time.Hour).UnixMilli(), start.Add(-10*time.Minute).UnixMilli()
			writeAndCommit(t, sink, event.Record{Value: "stale", Timestamp: stale}, event.Record{Value: "fresh", Timestamp: fresh})
			recs := c.readCommitted(out)
			if len(recs) != 2 {
				t.Fatalf("read %d records, want 2", len(recs))
			}
			if ts := recs[0].Timestamp; ts.Before(start.Truncate(time.Millisecond)) {
				t.Errorf("record past retention has timestamp %v; want the write time (≥ %v), or the broker deletes it", ts, start)
			}
			if ts := recs[1].Timestamp.UnixMilli(); ts != fresh {
				t.Errorf("record within retention has timestamp %d, want its event time %d", ts, fresh)
			}
			if n := sink.Metrics().RecordsRestamped.Load(); n != 1 {
				t.Errorf("RecordsRestamped = %d, want 1", n)
			}
		})
	}
}

// writeAndCommit writes recs with one writer and, for exactly-once,
// pre-commits and commits them as checkpoint 1.
func writeAndCommit(t *testing.T, sink *Sink[string], recs ...event.Record) {
	t.Helper()
	wctx := operator.WriterContext{Subtask: event.SubtaskID{Vertex: "sink"}, Parallelism: 1}
	w, err := sink.CreateWriter(wctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(true); err != nil {
		t.Fatal(err)
	}
	committables, err := w.PrepareCommit(1)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := sink.CreateCommitter(wctx)
	if err != nil || cm == nil {
		return
	}
	defer cm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cm.Commit(ctx, 1, committables); err != nil {
		t.Fatal(err)
	}
}
