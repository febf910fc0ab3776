package kafka

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Event times and time retention.
//
// The sink stamps each Kafka record with its row's event time (CreateTime),
// as Flink's KafkaSink does. A topic with time retention deletes a log
// segment once the largest timestamp in it is older than retention.ms, at
// the broker's next retention check (log.retention.check.interval.ms,
// 5 minutes by default) — the active segment included, and whether or not
// anyone has read it. A record whose event time is already past retention
// when it is written (a backfill: a job over last month's data into a topic
// with the default 7 days) is therefore deleted within minutes of its
// transaction committing, with the records written before it: committed
// output vanishes, not even an aborted transaction is left, and nothing in
// the job fails. Whichever windows were written before the check are gone;
// in a short job that is typically the first ones.
//
// The writers therefore look up each topic's retention once and write a
// record whose event time is past it with the current time instead (Flink
// SQL's Kafka sink never writes the event time unless asked to). Such
// records are counted in SinkMetrics.RecordsRestamped and a warning names
// the topic once per writer. Topics that cannot delete a record for its
// timestamp keep event times: cleanup.policy without "delete", retention.ms
// -1, or message.timestamp.type=LogAppendTime.

// retention is how long a topic keeps a record after its timestamp.
type retention struct {
	// ms is retention.ms when the topic deletes records by their
	// CreateTime; -1 when it never does.
	ms int64
}

var keepForever = retention{ms: -1}

// retentionOf reads a topic's effective configuration (key → value).
// Unknown or unparsable values keep event times: the guard must never
// invent a deletion the broker would not make.
func retentionOf(configs map[string]string) retention {
	if !strings.Contains(configs["cleanup.policy"], "delete") {
		return keepForever
	}
	if t, ok := configs["message.timestamp.type"]; ok && t != "CreateTime" {
		return keepForever
	}
	ms, err := strconv.ParseInt(configs["retention.ms"], 10, 64)
	if err != nil || ms < 0 {
		return keepForever
	}
	return retention{ms: ms}
}

// expired reports whether the broker would delete a record stamped ts
// (milliseconds) at its first retention check after now.
func (r retention) expired(ts int64, now time.Time) bool {
	return r.ms >= 0 && ts < now.UnixMilli()-r.ms
}

// retentionGuard keeps one writer's records from being written already
// expired. It is owned by the writer's goroutine.
type retentionGuard struct {
	core *sinkCore
	// describe returns a topic's effective configuration.
	describe func(ctx context.Context, topic string) (map[string]string, error)
	topics   map[string]*guardedTopic
}

type guardedTopic struct {
	ret    retention
	warned bool
}

func newRetentionGuard(c *sinkCore, cl *kgo.Client) *retentionGuard {
	adm := kadm.NewClient(cl)
	return &retentionGuard{core: c, topics: map[string]*guardedTopic{},
		describe: func(ctx context.Context, topic string) (map[string]string, error) {
			return describeTopicConfigs(ctx, adm, topic)
		}}
}

// stamp restamps rec with now when its timestamp is past its topic's
// retention. The first record of each topic costs a config lookup.
func (g *retentionGuard) stamp(ctx context.Context, rec *kgo.Record, now time.Time) {
	if rec.Timestamp.IsZero() {
		return // the client stamps it with the current time
	}
	t := g.topic(ctx, rec.Topic)
	if !t.ret.expired(rec.Timestamp.UnixMilli(), now) {
		return
	}
	if !t.warned {
		t.warned = true
		g.core.cfg.logger.Warn("kafka sink: a record's event time is older than the topic's retention.ms, so the broker "+
			"would delete it at its next retention check; it and every later such record is written with the current time "+
			"as its Kafka timestamp. To keep event times, set retention.ms=-1 on the topic (or message.timestamp.type=LogAppendTime)",
			"topic", rec.Topic, "retention.ms", t.ret.ms, "event_time", rec.Timestamp.UTC())
	}
	g.core.metrics.RecordsRestamped.Add(1)
	rec.Timestamp = now
}

// topic returns the guarded state of topic, looking its retention up the
// first time. A failed lookup keeps event times (and is logged once).
func (g *retentionGuard) topic(ctx context.Context, topic string) *guardedTopic {
	if t := g.topics[topic]; t != nil {
		return t
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t := &guardedTopic{ret: keepForever}
	cfg, err := g.describe(ctx, topic)
	switch {
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		// Producing fails next, naming the topic (produceError): a warning
		// about its retention would only mislead.
	case err != nil:
		g.core.cfg.logger.Warn("kafka sink: could not read the topic's retention; records keep their event times as Kafka timestamps, "+
			"and any older than the topic's retention.ms will be deleted by the broker", "topic", topic, "err", err)
	default:
		t.ret = retentionOf(cfg)
	}
	g.topics[topic] = t
	return t
}

// describeTopicConfigs returns topic's effective configuration.
func describeTopicConfigs(ctx context.Context, adm *kadm.Client, topic string) (map[string]string, error) {
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return nil, err
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return nil, err
	}
	if rc.Err != nil {
		return nil, rc.Err
	}
	out := make(map[string]string, len(rc.Configs))
	for _, c := range rc.Configs {
		if c.Value != nil {
			out[c.Key] = *c.Value
		}
	}
	return out, nil
}
