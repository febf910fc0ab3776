package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String implements fmt.Stringer.
func (tp TopicPartition) String() string { return splitID(tp.Topic, tp.Partition) }

// OffsetsInitializer picks an offset for each partition when a source
// starts fresh or, as a stopping offset, where a bounded source ends
// (Flink's OffsetsInitializer).
type OffsetsInitializer interface {
	offsets(ctx context.Context, a *admin, tps []TopicPartition) (map[TopicPartition]int64, error)
	String() string
}

// Earliest is each partition's log start offset (scan.startup.mode
// earliest-offset).
func Earliest() OffsetsInitializer { return earliest{} }

// Latest is each partition's end: the last stable offset when reading
// committed, else the high watermark (scan.startup.mode latest-offset).
func Latest() OffsetsInitializer { return latest{} }

// CommittedOffsets is the consumer group's committed offset
// (scan.startup.mode group-offsets); partitions without one use reset
// (nil: Earliest). Needs GroupID.
func CommittedOffsets(reset OffsetsInitializer) OffsetsInitializer {
	if reset == nil {
		reset = Earliest()
	}
	return committedOffsets{reset: reset}
}

// Timestamp is the first offset whose record timestamp is at or after t
// (scan.startup.mode timestamp); partitions with no such record use their
// end offset.
func Timestamp(t time.Time) OffsetsInitializer { return timestampOffsets{ms: t.UnixMilli()} }

// SpecificOffsets uses the given offset per partition (scan.startup.mode
// specific-offsets); other partitions use Earliest.
func SpecificOffsets(offsets map[TopicPartition]int64) OffsetsInitializer {
	m := make(map[TopicPartition]int64, len(offsets))
	for k, v := range offsets {
		m[k] = v
	}
	return specificOffsets{m: m}
}

type earliest struct{}

func (earliest) String() string { return "earliest-offset" }
func (earliest) offsets(ctx context.Context, a *admin, tps []TopicPartition) (map[TopicPartition]int64, error) {
	return a.listOffsets(ctx, tps, -2)
}

type latest struct{}

func (latest) String() string { return "latest-offset" }
func (latest) offsets(ctx context.Context, a *admin, tps []TopicPartition) (map[TopicPartition]int64, error) {
	return a.listOffsets(ctx, tps, -1)
}

type committedOffsets struct{ reset OffsetsInitializer }

func (c committedOffsets) String() string { return "group-offsets" }
func (c committedOffsets) offsets(ctx context.Context, a *admin, tps []TopicPartition) (map[TopicPartition]int64, error) {
	resp, err := a.adm.FetchOffsets(ctx, a.group)
	if err != nil {
		return nil, fmt.Errorf("fetching committed offsets of group %q: %w", a.group, err)
	}
	out := map[TopicPartition]int64{}
	var missing []TopicPartition
	for _, tp := range tps {
		if o, ok := resp.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil && o.At >= 0 {
			out[tp] = o.At
		} else {
			missing = append(missing, tp)
		}
	}
	return fillFrom(ctx, a, c.reset, out, missing)
}

type timestampOffsets struct{ ms int64 }

func (t timestampOffsets) String() string { return fmt.Sprintf("timestamp(%d)", t.ms) }
func (t timestampOffsets) offsets(ctx context.Context, a *admin, tps []TopicPartition) (map[TopicPartition]int64, error) {
	out, err := a.listOffsets(ctx, tps, t.ms)
	if err != nil {
		return nil, err
	}
	var missing []TopicPartition
	for _, tp := range tps {
		if out[tp] < 0 { // no record at or after the timestamp
			missing = append(missing, tp)
		}
	}
	return fillFrom(ctx, a, Latest(), out, missing)
}

type specificOffsets struct{ m map[TopicPartition]int64 }

func (s specificOffsets) String() string { return "specific-offsets" }
func (s specificOffsets) offsets(ctx context.Context, a *admin, tps []TopicPartition) (map[TopicPartition]int64, error) {
	out := map[TopicPartition]int64{}
	var missing []TopicPartition
	for _, tp := range tps {
		if o, ok := s.m[tp]; ok && o >= 0 {
			out[tp] = o
		} else {
			missing = append(missing, tp)
		}
	}
	return fillFrom(ctx, a, Earliest(), out, missing)
}

// fillFrom adds the offsets init gives for missing to out.
func fillFrom(ctx context.Context, a *admin, init OffsetsInitializer, out map[TopicPartition]int64, missing []TopicPartition) (map[TopicPartition]int64, error) {
	if len(missing) == 0 {
		return out, nil
	}
	more, err := init.offsets(ctx, a, missing)
	if err != nil {
		return nil, err
	}
	for tp, o := range more {
		out[tp] = o
	}
	return out, nil
}

// admin lists topics and offsets for a source.
type admin struct {
	cl        *kgo.Client
	adm       *kadm.Client
	group     string
	isolation int8 // 1: read_committed (end offsets are last stable offsets)
}

func newAdmin(opts []kgo.Opt, group string, readCommitted bool) (*admin, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	a := &admin{cl: cl, adm: kadm.NewClient(cl), group: group}
	if readCommitted {
		a.isolation = 1
	}
	return a, nil
}

func (a *admin) close() { a.cl.Close() }

// partitions lists the partitions of topics, sorted; a missing topic is an
// error.
func (a *admin) partitions(ctx context.Context, topics []string) ([]TopicPartition, error) {
	tds, err := a.adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("listing topics %v: %w", topics, err)
	}
	var out []TopicPartition
	for _, t := range topics {
		td, ok := tds[t]
		if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			return nil, fmt.Errorf("topic %q does not exist (create it first)", t)
		}
		if td.Err != nil {
			return nil, fmt.Errorf("topic %q: %w", t, td.Err)
		}
		for p := range td.Partitions {
			out = append(out, TopicPartition{t, p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

// listOffsets sends ListOffsets for tps with the admin's isolation level:
// timestamp -2 is the log start, -1 the end, ≥ 0 the first offset at or
// after that time (-1 in the result when there is none). Retriable
// per-partition errors are retried for a while.
func (a *admin) listOffsets(ctx context.Context, tps []TopicPartition, timestamp int64) (map[TopicPartition]int64, error) {
	out := make(map[TopicPartition]int64, len(tps))
	todo := tps
	var lastErr error
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt == 10 {
			return nil, fmt.Errorf("listing offsets: %w", lastErr)
		}
		if attempt > 0 && !sleepCtx(ctx, time.Duration(attempt)*100*time.Millisecond) {
			return nil, ctx.Err()
		}
		var err error
		if todo, err = a.listOnce(ctx, todo, timestamp, out); err != nil {
			if !kerr.IsRetriable(err) && !isTransportErr(err) {
				return nil, fmt.Errorf("listing offsets: %w", err)
			}
			lastErr = err
		}
	}
	return out, nil
}

// listOnce lists what it can into out and returns the partitions to retry
// with the last retriable error.
func (a *admin) listOnce(ctx context.Context, tps []TopicPartition, timestamp int64, out map[TopicPartition]int64) ([]TopicPartition, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = a.isolation
	req.ReplicaID = -1
	byTopic := map[string]*kmsg.ListOffsetsRequestTopic{}
	for _, tp := range tps {
		rt := byTopic[tp.Topic]
		if rt == nil {
			t := kmsg.NewListOffsetsRequestTopic()
			t.Topic = tp.Topic
			rt = &t
			byTopic[tp.Topic] = rt
		}
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Partition, p.Timestamp, p.CurrentLeaderEpoch = tp.Partition, timestamp, -1
		rt.Partitions = append(rt.Partitions, p)
	}
	for _, rt := range byTopic {
		req.Topics = append(req.Topics, *rt)
	}
	var retry []TopicPartition
	var rerr error
	for _, shard := range a.cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			rerr = shard.Err
			for _, t := range shard.Req.(*kmsg.ListOffsetsRequest).Topics {
				for _, p := range t.Partitions {
					retry = append(retry, TopicPartition{t.Topic, p.Partition})
				}
			}
			continue
		}
		for _, t := range shard.Resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, p := range t.Partitions {
				tp := TopicPartition{t.Topic, p.Partition}
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					if !kerr.IsRetriable(err) {
						return nil, fmt.Errorf("partition %s: %w", tp, err)
					}
					rerr = err
					retry = append(retry, tp)
					continue
				}
				out[tp] = p.Offset
			}
		}
	}
	return retry, rerr
}

func isTransportErr(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || kgo.IsRetryableBrokerErr(err)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
