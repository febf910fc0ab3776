package kafka

import (
	"context"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
)

// The source's metrics in its operator group, named as Flink's
// KafkaSourceReader names them (its groups KafkaSourceReader, topic,
// partition; topic and partition become labels in Prometheus), plus
// records-lag per partition, which Flink leaves in the Kafka consumer's
// own metrics.
const (
	metricCurrentOffset   = "KafkaSourceReader.topic.partition.currentOffset"
	metricCommittedOffset = "KafkaSourceReader.topic.partition.committedOffset"
	metricRecordsLag      = "KafkaSourceReader.topic.partition.records-lag"
	metricRecordsLagMax   = "KafkaSourceReader.KafkaConsumer.records-lag-max"
	// metricPendingRecords is FLIP-33's: records not yet read, over the
	// reader's partitions.
	metricPendingRecords = "pendingRecords"
	// metricInErrors (FLIP-33's numRecordsInErrors) counts bad records the
	// policy skipped or dead-lettered; metricDeadLettered those written to
	// the dead-letter topic.
	metricInErrors     = "numRecordsInErrors"
	metricDeadLettered = "numRecordsDeadLettered"
)

// readerMetrics is what a reader publishes: bytes read into the source's
// counts, the rest into gauges of its group. Only the subtask goroutine
// uses it, except committed (the commit goroutine; gauges are atomic).
type readerMetrics struct {
	m                      *operator.Metrics // nil outside a job
	group                  *metrics.Operator
	lagMax, pending        *metrics.Gauge
	inErrors, deadLettered *metrics.Gauge
}

func newReaderMetrics(rctx operator.ReaderContext) readerMetrics {
	g := rctx.Group
	return readerMetrics{m: rctx.Metrics, group: g, lagMax: g.Gauge(metricRecordsLagMax),
		pending: g.Gauge(metricPendingRecords), inErrors: g.Gauge(metricInErrors), deadLettered: g.Gauge(metricDeadLettered)}
}

// splitGauges are one partition's gauges.
type splitGauges struct{ offset, committed, lag *metrics.Gauge }

func (rm *readerMetrics) forSplit(tp TopicPartition) splitGauges {
	l := []string{"topic", tp.Topic, "partition", strconv.Itoa(int(tp.Partition))}
	return splitGauges{offset: rm.group.Gauge(metricCurrentOffset, l...), committed: rm.group.Gauge(metricCommittedOffset, l...),
		lag: rm.group.Gauge(metricRecordsLag, l...)}
}

func (rm *readerMetrics) bytesRead(r *kgo.Record) {
	if rm.m != nil {
		rm.m.BytesIn += payloadSize(r)
	}
}

// fetchEnds returns, for every partition of a fetch, the offset a reader
// can read up to: the last stable offset when reading committed records
// (what follows is not readable yet), else the high watermark — what the
// Kafka consumer measures its records-lag against.
func fetchEnds(fs kgo.Fetches, committed bool) map[TopicPartition]int64 {
	ends := map[TopicPartition]int64{}
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		end := p.HighWatermark
		if committed && p.LastStableOffset >= 0 {
			end = p.LastStableOffset
		}
		if end >= 0 {
			ends[TopicPartition{p.Topic, p.Partition}] = end
		}
	})
	return ends
}

// lagUnknown is the records-lag of a partition whose end the reader does
// not know yet (the Kafka consumer reports NaN): neither listed nor
// fetched. 0 would claim it caught up.
const lagUnknown = -1

// publishLag sets every split's offset and lag (records between its
// position and the end it knows), their maximum and sum over the splits
// whose lag is known. Called on the subtask goroutine after each Poll.
func (r *reader) publishLag() {
	var sum, most int64
	for _, tp := range r.order {
		st := r.splits[tp]
		st.gauges.offset.Store(st.pos.next)
		lag := int64(0)
		switch {
		case st.finished:
		case st.end < 0:
			st.gauges.lag.Store(lagUnknown)
			continue
		case st.end > st.pos.next:
			lag = st.end - st.pos.next
		}
		st.gauges.lag.Store(lag)
		sum, most = sum+lag, max(most, lag)
	}
	r.rm.pending.Store(sum)
	r.rm.lagMax.Store(most)
}

// takeEnds records the ends a fetch saw, for publishLag.
func (r *reader) takeEnds(ends map[TopicPartition]int64) {
	for tp, end := range ends {
		if st := r.splits[tp]; st != nil && end > st.end {
			st.end = end
		}
	}
}

// listEnds lists the ends of the splits added since its last call (the
// high watermark; the last stable offset under read_committed), so a
// split's lag is known from the first Poll on — a partition the reader
// has not fetched from yet is not caught up. One round trip when splits
// are added, on the subtask goroutine: a listing in the background would
// reach a subtask blocked on a credit only once it is unblocked. A failed
// listing leaves the lag unknown until a fetch.
func (r *reader) listEnds() {
	tps := r.unlisted
	r.unlisted = nil
	if len(tps) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	a := &admin{cl: r.cl, adm: kadm.NewClient(r.cl), isolation: r.isolation()}
	ends, err := a.listOffsets(ctx, tps, -1)
	if err != nil {
		r.log.Warn("kafka source: listing the end offsets of its partitions failed; their lag stays unknown until a fetch",
			"err", err)
		return
	}
	r.takeEnds(ends)
}

// isolation is the admin's isolation level for the reader's end offsets.
func (r *reader) isolation() int8 {
	if r.cfg.readUncommitted {
		return 0
	}
	return 1
}
