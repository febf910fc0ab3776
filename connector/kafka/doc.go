// Package kafka is Weir's Apache Kafka connector, built on franz-go: a
// split-based source whose checkpoint holds the next offset to read of every
// partition, and a sink with Flink's three delivery guarantees — none,
// at-least-once and exactly-once (Kafka transactions committed when the
// checkpoint completes) — plus upsert-kafka: a sink writing changelog rows
// by key and a source reading such a topic back as a changelog.
//
// # Source
//
// Every partition is a split named "topic-partition"; its position is the
// offset after the last record the reader emitted (or skipped). A job that
// restores a checkpoint seeks there; consumer-group offsets are committed
// back on checkpoint completion for monitoring only and are never read on
// restore. Reads are read_committed by default: aborted data and
// transaction markers never reach the job. Bounded() ends every split at
// the last stable offset seen when the job started. An unbounded source
// looks for new partitions every 5 minutes (PartitionDiscoveryInterval, as
// in Flink) and reads them from the earliest offset, each with its own
// watermark generator when the job has watermarks.
//
// # Sink, exactly-once
//
// Each sink subtask owns a small pool of transactional ids
// "<prefix>-<subtask>-<slot>". The records between two checkpoint barriers
// go into one transaction; at the barrier the writer flushes it and hands
// the checkpoint a committable (transactional id, producer id, epoch); when
// the checkpoint completes the committer ends the transaction with a raw
// EndTxn request. Because the committable is all it needs, a new process
// restoring the checkpoint finishes the commit the same way. The caller's
// responsibilities:
//
//   - give every job its own TransactionalIDPrefix and keep it across
//     restarts (it names the ids whose lingering transactions are aborted);
//   - keep TransactionTimeout above the checkpoint interval plus the
//     longest expected downtime, and at or below the broker's
//     transaction.max.timeout.ms (both are checked when the writer starts);
//   - restore the latest checkpoint. Restoring one older than what the
//     sink already committed fails at open with an operator.ReplayError
//     (each transaction commits a marker of its checkpoint id with it, see
//     committed.go), unless AllowReplay ('sink.allow-replay') accepts the
//     duplicates; it may also find its transactional ids reused and report
//     data loss.
//
// A commit that finds its transaction aborted by the broker fails with an
// error wrapping operator.ErrDataLoss and counts SinkMetrics.DataLoss: the
// data is gone, the job must not pretend otherwise.
//
// See README.md in this directory for the design, the threading model and
// the non-obvious parts.
package kafka
