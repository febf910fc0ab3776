package kafka

import (
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/operator"
)

// SourceMetrics counts what a source's readers did besides emitting
// records. One value is shared by every reader of the source; read it with
// the atomic Load methods at any time.
type SourceMetrics struct {
	// RecordsSkipped counts bad records dropped under SkipBadRecords.
	RecordsSkipped atomic.Int64
	// RecordsDeadLettered counts bad records written to the DLQ topic.
	RecordsDeadLettered atomic.Int64
	// OffsetResets counts partitions whose position was out of range (data
	// deleted by retention) and was reset to the earliest offset.
	OffsetResets atomic.Int64
	// OffsetCommitFailures counts failed commits of offsets to the consumer
	// group (monitoring only; the job does not depend on them).
	OffsetCommitFailures atomic.Int64
	// PartitionsDiscovered counts partitions added while running.
	PartitionsDiscovered atomic.Int64
}

// SinkMetrics counts what a sink's writers and committers did. One value is
// shared by every subtask of the sink.
type SinkMetrics struct {
	// RecordsSkipped counts records dropped under SkipBadRecords
	// (serialization failed or the record was larger than MaxRequestSize).
	RecordsSkipped atomic.Int64
	// TransactionsCommitted counts transactions committed (re-commits of an
	// already committed transaction after a restore included).
	TransactionsCommitted atomic.Int64
	// LingeringAborted counts open transactions of this sink's ids, left by
	// a crashed writer, that a starting writer aborted.
	LingeringAborted atomic.Int64
	// DataLoss counts committables whose transaction the broker had
	// aborted (or whose outcome could not be established): their records
	// are lost. Anything but 0 needs an operator's attention.
	DataLoss atomic.Int64
	// RecordsRestamped counts records written with the current time as
	// their Kafka timestamp because their event time was already past the
	// topic's retention.ms: the broker would have deleted them (see
	// retention.go).
	RecordsRestamped atomic.Int64
}

// payloadSize is a record's bytes as the source and the sink count them
// (numBytesIn, numBytesOut): key, value and headers, without Kafka's
// framing.
func payloadSize(r *kgo.Record) int64 {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}

// countBytesOut adds a record handed to the producer to the sink's
// numBytesOut (m is nil outside a job).
func countBytesOut(m *operator.Metrics, r *kgo.Record) {
	if m != nil {
		m.BytesOut += payloadSize(r)
	}
}
