package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type badKind uint8

const (
	badFail badKind = iota
	badSkip
	badDeadLetter
)

// BadRecordPolicy says what happens to a record that cannot be read or
// written. The zero value is FailOnBadRecord.
type BadRecordPolicy struct {
	kind  badKind
	topic string
}

// FailOnBadRecord fails the job; the error names the topic, partition and
// offset (source) or the topic and size (sink), and the cause.
func FailOnBadRecord() BadRecordPolicy { return BadRecordPolicy{kind: badFail} }

// SkipBadRecords drops the record and counts it (SourceMetrics or
// SinkMetrics .RecordsSkipped). A skipped source record's offset still
// moves forward, so a restore never reads it again.
func SkipBadRecords() BadRecordPolicy { return BadRecordPolicy{kind: badSkip} }

// DeadLetter writes the record's original key, value and headers to topic,
// with headers naming where it came from and why it failed (see the
// Header* constants), then moves on. Sources only. The DLQ write is
// at-least-once: a restore from before it may write it again.
func DeadLetter(topic string) BadRecordPolicy {
	return BadRecordPolicy{kind: badDeadLetter, topic: topic}
}

// String implements fmt.Stringer.
func (p BadRecordPolicy) String() string {
	switch p.kind {
	case badSkip:
		return "skip"
	case badDeadLetter:
		return "dead-letter(" + p.topic + ")"
	}
	return "fail"
}

// IsRecordFault tells whether a (de)serializer's error is the record's
// fault, for the bad-record policy to skip or dead-letter. An error that
// has a method NotRecordFault() — a schema registry that cannot be
// reached, or that refuses the table's schema — is not: skipping records
// would drop every one of them, so it fails the job whatever the policy.
func IsRecordFault(err error) bool {
	var nf interface{ NotRecordFault() }
	return !errors.As(err, &nf)
}

// Headers a dead-letter record carries, ahead of the original headers.
const (
	HeaderTopic     = "weir.error.topic"
	HeaderPartition = "weir.error.partition"
	HeaderOffset    = "weir.error.offset"
	HeaderTimestamp = "weir.error.timestamp" // ms since the epoch
	HeaderError     = "weir.error.message"
)

// deadLetterRecord builds the DLQ record for r, which failed with cause.
func deadLetterRecord(topic string, r *kgo.Record, cause error) *kgo.Record {
	hs := []kgo.RecordHeader{
		{Key: HeaderTopic, Value: []byte(r.Topic)},
		{Key: HeaderPartition, Value: []byte(strconv.Itoa(int(r.Partition)))},
		{Key: HeaderOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
		{Key: HeaderTimestamp, Value: []byte(strconv.FormatInt(r.Timestamp.UnixMilli(), 10))},
		{Key: HeaderError, Value: []byte(cause.Error())},
	}
	return &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp,
		Headers: append(hs, r.Headers...)}
}

// deadLetters writes DLQ records synchronously: a bad record's offset moves
// forward only once its DLQ copy is acknowledged.
type deadLetters struct {
	topic string
	opts  []kgo.Opt
	cl    *kgo.Client
}

func (d *deadLetters) send(ctx context.Context, r *kgo.Record, cause error) error {
	if d.cl == nil {
		cl, err := kgo.NewClient(d.opts...)
		if err != nil {
			return fmt.Errorf("kafka source: dead-letter client: %w", err)
		}
		d.cl = cl
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := d.cl.ProduceSync(ctx, deadLetterRecord(d.topic, r, cause)).FirstErr(); err != nil {
		return fmt.Errorf("kafka source: writing the bad record at topic %s partition %d offset %d to dead-letter topic %s: %w",
			r.Topic, r.Partition, r.Offset, d.topic, err)
	}
	return nil
}

func (d *deadLetters) close() {
	if d.cl != nil {
		d.cl.Close()
		d.cl = nil
	}
}
