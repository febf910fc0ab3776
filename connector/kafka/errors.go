package kafka

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	// ErrConfig marks an invalid connector configuration.
	ErrConfig = errors.New("kafka: invalid configuration")
	// ErrBadRecord marks a record that could not be deserialized (source)
	// or serialized or sent (sink) under the fail policy.
	ErrBadRecord = errors.New("kafka: bad record")
	// ErrUnsafeTransactionTimeout marks an exactly-once sink whose
	// transaction timeout the broker would refuse or that would let the
	// broker abort transactions before their checkpoint completes.
	ErrUnsafeTransactionTimeout = errors.New("kafka: unsafe transaction timeout")
	// ErrPoolExhausted marks an exactly-once writer with no free
	// transactional id: too many checkpoints pre-committed and not yet
	// completed.
	ErrPoolExhausted = errors.New("kafka: transactional id pool exhausted")
)

// RecordError names the Kafka record a source could not read.
type RecordError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
	// Fix is how to continue past such records; empty: the Go options.
	Fix string
}

// Error implements error.
func (e *RecordError) Error() string {
	fix := e.Fix
	if fix == "" {
		fix = "use kafka.BadRecords(kafka.SkipBadRecords()) or kafka.DeadLetter"
	}
	return fmt.Sprintf("kafka source: bad record at topic %s partition %d offset %d: %v (to continue past such records %s)",
		e.Topic, e.Partition, e.Offset, e.Err, fix)
}

// Unwrap returns ErrBadRecord and the cause.
func (e *RecordError) Unwrap() []error { return []error{ErrBadRecord, e.Err} }

// Position implements operator.PositionedError: a restart reads the record
// again, so the same error there twice fails the job instead of restarting
// it forever.
func (e *RecordError) Position() string {
	return fmt.Sprintf("topic %s partition %d offset %d", e.Topic, e.Partition, e.Offset)
}

// TooLargeError is the cause when a record exceeds MaxRequestSize.
type TooLargeError struct {
	Topic string
	Size  int
	Limit int
	// Raise names the option that raises Limit; empty: the Go option.
	Raise string
}

// Error implements error.
func (e *TooLargeError) Error() string {
	raise := e.Raise
	if raise == "" {
		raise = "kafka.MaxRequestSize"
	}
	return fmt.Sprintf("record for topic %s is about %d bytes, more than max.request.size %d "+
		"(raise %s and the topic's max.message.bytes)", e.Topic, e.Size, e.Limit, raise)
}

// Position implements operator.PositionedError: the restored job writes
// the same record again. The record is named by its topic and size (a sink
// record has no offset yet).
func (e *TooLargeError) Position() string {
	return fmt.Sprintf("Kafka sink topic %s (a record of about %d bytes)", e.Topic, e.Size)
}

// MissingTopicError is a sink topic that does not exist. Every restart
// writes to it again, so it is an operator.PositionedError: the job fails
// after the second time instead of restarting forever.
type MissingTopicError struct {
	Topic string
	Err   error
}

// Error implements error.
func (e *MissingTopicError) Error() string {
	return fmt.Sprintf("topic %q does not exist (create it first; the kafka sink does not create topics): %v", e.Topic, e.Err)
}

// Position implements operator.PositionedError.
func (e *MissingTopicError) Position() string { return "Kafka sink topic " + e.Topic }

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *MissingTopicError) Unwrap() error { return e.Err }

// produceError names the topic of a record the broker refused; a topic
// that does not exist (the sink never creates topics) says so.
func produceError(r *kgo.Record, err error) error {
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return &MissingTopicError{Topic: r.Topic, Err: err}
	}
	return fmt.Errorf("topic %s: %w", r.Topic, err)
}

func unsafeTimeout(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsafeTransactionTimeout, fmt.Sprintf(format, args...))
}

func ms(d time.Duration) int64 { return d.Milliseconds() }
