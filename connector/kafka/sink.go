package kafka

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// recordFunc turns a stream value into a Kafka record; drop means the value
// is not written at all (upsert-kafka's -U rows).
type recordFunc func(v any) (rec *kgo.Record, drop bool, err error)

// Sink writes a stream to Kafka with the configured DeliveryGuarantee
// (Flink's KafkaSink). Create it with NewSink or NewUpsertSink and add it
// with weir.SinkTo. A Sink value belongs to one job.
type Sink[T any] struct {
	core *sinkCore
}

// sinkCore is the non-generic part shared by writers and committers.
type sinkCore struct {
	cfg      sinkConfig
	toRecord recordFunc
	metrics  *SinkMetrics
	// crash, set by tests, injects failures at "prepare" (after the flush,
	// before the committable is returned), "commit" (before EndTxn) and
	// "after-commit" (after EndTxn, before success is reported).
	crash func(point string) error

	// pools links each subtask's exactly-once writer to its committer: the
	// committer returns ids to the writer's pool after a commit.
	pools struct {
		sync.Mutex
		bySubtask map[int]*txnPool
	}
}

// NewSink returns a sink of T values. It needs Brokers and Topic (or
// TopicSelector); ExactlyOnce also needs TransactionalIDPrefix.
func NewSink[T any](opts ...SinkOption) (*Sink[T], error) {
	cfg, err := sinkConfigOf(opts)
	if err != nil {
		return nil, err
	}
	enc, err := encoderFor[T](cfg.encoder)
	if err != nil {
		return nil, err
	}
	topic, err := topicFor[T](cfg)
	if err != nil {
		return nil, err
	}
	key, ok := cfg.keyFn.(func(T) []byte)
	if cfg.keyFn != nil && !ok {
		var zero T
		return nil, fmt.Errorf("%w: kafka sink of %T: KeyFunc %T does not take %T", ErrConfig, zero, cfg.keyFn, zero)
	}
	stamp, ok := cfg.stampFn.(func(T) RecordStamp)
	if cfg.stampFn != nil && !ok {
		var zero T
		return nil, fmt.Errorf("%w: kafka sink of %T: Stamp %T does not take %T", ErrConfig, zero, cfg.stampFn, zero)
	}
	to := func(v any) (*kgo.Record, bool, error) {
		t := v.(T)
		val, err := enc(t)
		if err != nil {
			return nil, false, err
		}
		r := &kgo.Record{Topic: topic(t), Value: val}
		if key != nil {
			r.Key = key(t)
		}
		if stamp != nil {
			stampRecord(r, stamp(t))
		}
		return r, false, nil
	}
	return &Sink[T]{core: newSinkCore(cfg, to)}, nil
}

func stampRecord(r *kgo.Record, s RecordStamp) {
	r.Timestamp = s.Timestamp
	for _, h := range s.Headers {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
}

// NewUpsertSink returns an upsert-kafka sink of changelog rows (Flink's
// upsert-kafka): the key is the row's primary key as key encodes it;
// +I and +U rows write value(row); -D rows write a tombstone (nil value);
// -U rows are dropped, as Flink does, because the +U that follows replaces
// the value under the same key. A Stamp option sets every record's
// timestamp and headers, a tombstone's too.
func NewUpsertSink(key func(event.Row) ([]byte, error), value func(event.Row) ([]byte, error), opts ...SinkOption) (*Sink[event.Row], error) {
	cfg, err := sinkConfigOf(opts)
	if err != nil {
		return nil, err
	}
	if key == nil || value == nil {
		return nil, fmt.Errorf("%w: upsert-kafka sink needs key and value encoders", ErrConfig)
	}
	if cfg.topic == "" {
		return nil, fmt.Errorf("%w: upsert-kafka sink needs kafka.Topic", ErrConfig)
	}
	stamp, ok := cfg.stampFn.(func(event.Row) RecordStamp)
	if cfg.stampFn != nil && !ok {
		return nil, fmt.Errorf("%w: upsert-kafka sink: Stamp %T does not take event.Row", ErrConfig, cfg.stampFn)
	}
	to := func(v any) (*kgo.Record, bool, error) {
		row := v.(event.Row)
		if row.Kind == event.UpdateBefore {
			return nil, true, nil
		}
		k, err := key(row)
		if err != nil {
			return nil, false, fmt.Errorf("key: %w", err)
		}
		r := &kgo.Record{Topic: cfg.topic, Key: k}
		if row.Kind != event.Delete {
			if r.Value, err = value(row); err != nil {
				return nil, false, fmt.Errorf("value: %w", err)
			}
		}
		if stamp != nil { // a tombstone too: its row has the metadata columns
			stampRecord(r, stamp(row))
		}
		return r, false, nil
	}
	return &Sink[event.Row]{core: newSinkCore(cfg, to)}, nil
}

func sinkConfigOf(opts []SinkOption) (sinkConfig, error) {
	cfg := sinkConfig{guarantee: delivery.AtLeastOnce} // Flink's default
	for _, o := range opts {
		o.applySink(&cfg)
	}
	cfg.ensureDefaults()
	return cfg, cfg.validate()
}

func newSinkCore(cfg sinkConfig, to recordFunc) *sinkCore {
	c := &sinkCore{cfg: cfg, toRecord: to, metrics: &SinkMetrics{}}
	c.pools.bySubtask = map[int]*txnPool{}
	return c
}

func encoderFor[T any](e any) (func(T) ([]byte, error), error) {
	switch fn := e.(type) {
	case func(T) ([]byte, error):
		return fn, nil
	case nil:
	default:
		var zero T
		return nil, fmt.Errorf("%w: kafka sink of %T: serializer %T does not take %T", ErrConfig, zero, e, zero)
	}
	var zero T
	switch any(zero).(type) {
	case []byte:
		return func(v T) ([]byte, error) { return any(v).([]byte), nil }, nil
	case string:
		return func(v T) ([]byte, error) { return []byte(any(v).(string)), nil }, nil
	}
	return func(v T) ([]byte, error) { return json.Marshal(v) }, nil
}

func topicFor[T any](cfg sinkConfig) (func(T) string, error) {
	if cfg.topicFn == nil {
		return func(T) string { return cfg.topic }, nil
	}
	fn, ok := cfg.topicFn.(func(T) string)
	if !ok {
		var zero T
		return nil, fmt.Errorf("%w: kafka sink of %T: TopicSelector %T does not take %T", ErrConfig, zero, cfg.topicFn, zero)
	}
	return fn, nil
}

// Metrics returns the counters shared by the sink's subtasks.
func (s *Sink[T]) Metrics() *SinkMetrics { return s.core.metrics }

// CreateWriter implements operator.Sink.
//
// A failed constructor's nil pointer must not reach the caller inside the
// interface: a non-nil interface holding a nil *txnWriter looks like a
// writer, and the SinkOperator would call Close on it (a panic that hid
// this error). Hence the explicit nil.
func (s *Sink[T]) CreateWriter(ctx operator.WriterContext) (operator.SinkWriter, error) {
	if s.core.cfg.guarantee == delivery.ExactlyOnce {
		w, err := newTxnWriter(s.core, ctx)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	w, err := newPlainWriter(s.core, ctx)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// CreateCommitter implements operator.Sink: nil unless exactly-once (an
// untyped nil on error, as CreateWriter).
func (s *Sink[T]) CreateCommitter(ctx operator.WriterContext) (operator.Committer, error) {
	if s.core.cfg.guarantee != delivery.ExactlyOnce {
		return nil, nil
	}
	c, err := newCommitter(s.core, ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (c *sinkCore) clientOpts() []kgo.Opt {
	return baseOpts(c.cfg.brokers, c.cfg.clientOpts, c.cfg.logger)
}

// newClient makes a client; its error (most often a malformed broker
// address) names the brokers and the option they came from.
func (c *sinkCore) newClient(opts []kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka sink: cannot create a client for properties.bootstrap.servers %q (kafka.Brokers): %w",
			strings.Join(c.cfg.brokers, ","), err)
	}
	return cl, nil
}

// producerOpts are the options of a producing client: the user's options,
// then what must hold (the record limit, the compression codec).
//
// No kgo.RecordDeliveryTimeout: franz-go measures it from the record's
// Timestamp, which the sink sets to the event time, so every record of a
// backfill older than the timeout would fail at once. FlushTimeout bounds
// the wait at barriers instead.
func (c *sinkCore) producerOpts(extra ...kgo.Opt) []kgo.Opt {
	opts := c.clientOpts()
	opts = append(opts, kgo.ProducerBatchMaxBytes(int32(c.cfg.maxRequestSize)),
		kgo.ProducerBatchCompression(compressionCodecs[c.cfg.compression]))
	return append(opts, extra...)
}

func (c *sinkCore) maybeCrash(point string) error {
	if c.crash == nil {
		return nil
	}
	return c.crash(point)
}

// Sizes of Kafka's record batch header and a generous bound of one record's
// framing (length, attributes, timestamp and offset deltas, key and value
// lengths, header count), in bytes.
const (
	batchOverhead  = 61
	recordOverhead = 32
	headerOverhead = 10
)

// recordSize bounds the encoded size of r in a batch of its own.
func recordSize(r *kgo.Record) int {
	n := batchOverhead + recordOverhead + len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += headerOverhead + len(h.Key) + len(h.Value)
	}
	return n
}

// prepare turns a stream record into a Kafka record under the bad-record
// policy: nil (and no error) when the record is skipped or dropped. Size is
// checked here, before producing, so a too-large record never reaches (and
// never fails) a transaction.
func (c *sinkCore) prepare(r event.Record) (*kgo.Record, error) {
	rec, drop, err := c.toRecord(r.Value)
	if drop {
		return nil, nil
	}
	if err == nil {
		if n := recordSize(rec); n > c.cfg.maxRequestSize {
			err = &TooLargeError{Topic: rec.Topic, Size: n, Limit: c.cfg.maxRequestSize, Raise: c.cfg.maxRequestSizeFix}
		}
	}
	if err != nil && !IsRecordFault(err) {
		return nil, fmt.Errorf("kafka sink: %w", err)
	}
	if err != nil {
		if c.cfg.badRecords.kind == badSkip {
			c.metrics.RecordsSkipped.Add(1)
			return nil, nil
		}
		fix := c.cfg.badRecordFix
		if fix == "" {
			fix = "set kafka.BadRecords(kafka.SkipBadRecords())"
		}
		return nil, fmt.Errorf("%w: kafka sink: %w (to drop such records %s)", ErrBadRecord, err, fix)
	}
	if r.Timestamp != event.NoTimestamp && !c.cfg.noTimestamps && rec.Timestamp.IsZero() {
		rec.Timestamp = time.UnixMilli(r.Timestamp)
	}
	return rec, nil
}

// asyncErr keeps the first error of asynchronous produce callbacks.
type asyncErr struct {
	mu  sync.Mutex
	err error
}

func (a *asyncErr) set(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err == nil {
		a.err = err
	}
}

func (a *asyncErr) get() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *asyncErr) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.err = nil
}
