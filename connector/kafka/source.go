package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/operator"
)

// Message is a Kafka record as a source reads it.
type Message struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time
	Key       []byte
	Value     []byte
	Headers   []Header
	// TimestampType is how Timestamp was set, as Kafka's Java client
	// names it: CreateTime, LogAppendTime or NoTimestampType.
	TimestampType string
	// LeaderEpoch is the partition leader's epoch when the record was
	// written; -1 when the broker did not say.
	LeaderEpoch int32
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

func messageOf(r *kgo.Record) Message {
	m := Message{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp,
		Key: r.Key, Value: r.Value, TimestampType: timestampType(r.Attrs.TimestampType()), LeaderEpoch: r.LeaderEpoch}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, Header{Key: h.Key, Value: h.Value})
	}
	return m
}

// timestampType names a record's timestamp type as Kafka's Java client
// does (org.apache.kafka.common.record.TimestampType).
func timestampType(t int8) string {
	switch t {
	case 0:
		return "CreateTime"
	case 1:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// decodeFunc turns a record into the value the source emits, or into a
// multi of values (MultiDeserializer).
type decodeFunc func(r *kgo.Record) (any, error)

// multi is what a MultiDeserializer's decodeFunc returns: the values of one
// record, emitted in order.
type multi []any

// Source reads Kafka topics as a split-based source (FLIP-27): one split
// per partition, positions in the checkpoint. Create it with NewSource and
// add it to a job with weir.FromSource[T].
type Source[T any] struct {
	cfg    sourceConfig
	decode decodeFunc
	upsert UpsertDecoder // set by NewUpsertSource: the readers keep tables
	// upsertMsg is set by NewUpsertMessageSource: the tables keep whole
	// records, and rows read their metadata.
	upsertMsg UpsertMessageDecoder
	metrics   *SourceMetrics
}

// NewSource returns a source of T values. It needs Brokers and Topics; every
// other option has a documented default.
func NewSource[T any](opts ...SourceOption) (*Source[T], error) {
	var cfg sourceConfig
	for _, o := range opts {
		o.applySource(&cfg)
	}
	cfg.ensureDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dec, err := decoderFor[T](cfg.decoder)
	if err != nil {
		return nil, err
	}
	return &Source[T]{cfg: cfg, decode: dec, metrics: &SourceMetrics{}}, nil
}

// decoderFor checks the configured deserializer produces T, or picks the
// default for T.
func decoderFor[T any](d any) (decodeFunc, error) {
	switch fn := d.(type) {
	case func([]byte) (T, error):
		return func(r *kgo.Record) (any, error) { return fn(r.Value) }, nil
	case func(Message) (T, error):
		return func(r *kgo.Record) (any, error) { return fn(messageOf(r)) }, nil
	case func([]byte) ([]T, error):
		return func(r *kgo.Record) (any, error) { return multiOf(fn(r.Value)) }, nil
	case func(Message) ([]T, error):
		return func(r *kgo.Record) (any, error) { return multiOf(fn(messageOf(r))) }, nil
	case nil:
	default:
		var zero T
		return nil, fmt.Errorf("%w: kafka source of %T: deserializer %T does not produce %T", ErrConfig, zero, d, zero)
	}
	var zero T
	switch any(zero).(type) {
	case []byte:
		return func(r *kgo.Record) (any, error) { return r.Value, nil }, nil
	case Message:
		return func(r *kgo.Record) (any, error) { return messageOf(r), nil }, nil
	}
	return func(r *kgo.Record) (any, error) {
		var v T
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return nil, fmt.Errorf("json: %w", err)
		}
		return v, nil
	}, nil
}

func multiOf[T any](vs []T, err error) (any, error) {
	out := make(multi, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out, err
}

// Metrics returns the counters shared by the source's readers.
func (s *Source[T]) Metrics() *SourceMetrics { return s.metrics }

// Bounded implements operator.Source: true with StoppingOffsets or Bounded.
func (s *Source[T]) Bounded() bool { return s.cfg.stop != nil }

// AssignSplit implements operator.SplitAssigner: the partitions of a topic
// go round-robin over the readers.
func (s *Source[T]) AssignSplit(id string, numReaders int) int {
	tp, err := parseSplitID(id)
	if err != nil {
		return 0
	}
	return owner(tp, numReaders)
}

func (s *Source[T]) clientOpts() []kgo.Opt {
	return baseOpts(s.cfg.brokers, s.cfg.clientOpts, s.cfg.logger)
}

// baseOpts are every client's options: brokers and defaults first, so the
// user's ClientOptions override the defaults. A short metadata min age
// lets a client see a just-created topic or partition within a second
// instead of franz-go's default 5 s.
func baseOpts(brokers []string, user []kgo.Opt, log *slog.Logger) []kgo.Opt {
	if log == nil {
		log = slog.Default()
	}
	opts := []kgo.Opt{kgo.SeedBrokers(brokers...), kgo.MetadataMinAge(250 * time.Millisecond), kgo.WithLogger(kgoLogger{log})}
	return append(opts, user...)
}

// Enumerate implements operator.Source: every partition of the topics, at
// its starting offset, with its stopping offset when bounded.
func (s *Source[T]) Enumerate(ctx context.Context) ([]operator.SplitState, error) {
	a, err := newAdmin(s.clientOpts(), s.cfg.groupID, !s.cfg.readUncommitted)
	if err != nil {
		return nil, fmt.Errorf("kafka source: %w", err)
	}
	defer a.close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tps, err := a.partitions(ctx, s.cfg.topics)
	if err != nil {
		return nil, fmt.Errorf("kafka source: %w", err)
	}
	start, err := s.cfg.start.offsets(ctx, a, tps)
	if err != nil {
		return nil, fmt.Errorf("kafka source: starting offsets (%s): %w", s.cfg.start, err)
	}
	var stop map[TopicPartition]int64
	if s.cfg.stop != nil {
		if stop, err = s.cfg.stop.offsets(ctx, a, tps); err != nil {
			return nil, fmt.Errorf("kafka source: stopping offsets (%s): %w", s.cfg.stop, err)
		}
	}
	out := make([]operator.SplitState, 0, len(tps))
	for _, tp := range tps {
		p := position{next: start[tp], stop: -1}
		if stop != nil {
			p.stop = max(stop[tp], 0)
		}
		out = append(out, operator.SplitState{ID: splitID(tp.Topic, tp.Partition), Position: p.encode()})
	}
	return out, nil
}

// CreateReader implements operator.Source.
func (s *Source[T]) CreateReader(ctx operator.ReaderContext) (operator.SourceReader, error) {
	log := s.cfg.loggerFor(ctx.Logger)
	r, err := newReader(ctx, &s.cfg, baseOpts(s.cfg.brokers, s.cfg.clientOpts, log), readerDecoders{s.decode, s.upsert, s.upsertMsg}, s.metrics, log)
	if err != nil {
		return nil, err // not r: a nil *reader in the interface is not nil
	}
	return r, nil
}
