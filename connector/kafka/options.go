package kafka

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/delivery"
)

// SourceOption configures a Source (NewSource).
type SourceOption interface{ applySource(*sourceConfig) }

// SinkOption configures a Sink (NewSink, NewUpsertSink).
type SinkOption interface{ applySink(*sinkConfig) }

// Option configures sources and sinks alike.
type Option interface {
	SourceOption
	SinkOption
}

type sourceOpt func(*sourceConfig)

func (f sourceOpt) applySource(c *sourceConfig) { f(c) }

type sinkOpt func(*sinkConfig)

func (f sinkOpt) applySink(c *sinkConfig) { f(c) }

type commonOpt func(*commonConfig)

func (f commonOpt) applySource(c *sourceConfig) { f(&c.commonConfig) }
func (f commonOpt) applySink(c *sinkConfig)     { f(&c.commonConfig) }

// commonConfig is what sources and sinks share.
type commonConfig struct {
	brokers    []string
	badRecords BadRecordPolicy
	// badRecordFix is the advice for getting past a bad record; empty:
	// the Go options.
	badRecordFix string
	clientOpts   []kgo.Opt
	logger       *slog.Logger
	// userLogger: logger came from the Logger option (else readers and
	// writers log through their subtask's logger, see loggerFor).
	userLogger bool
}

func (c *commonConfig) ensureDefaults() {
	if c.logger == nil {
		c.logger = slog.Default()
	}
}

func (c *commonConfig) validate(what string) error {
	if len(c.brokers) == 0 {
		return fmt.Errorf("%w: %s needs kafka.Brokers (Flink's properties.bootstrap.servers)", ErrConfig, what)
	}
	return nil
}

// Brokers sets the bootstrap brokers, "host:port" each; a single argument
// may hold a comma-separated list (Flink's properties.bootstrap.servers).
// Required; there is no default.
func Brokers(addrs ...string) Option {
	return commonOpt(func(c *commonConfig) {
		for _, a := range addrs {
			for _, b := range strings.Split(a, ",") {
				if b = strings.TrimSpace(b); b != "" {
					c.brokers = append(c.brokers, b)
				}
			}
		}
	})
}

// BadRecords sets what happens to a record that cannot be read (source:
// the deserializer failed) or written (sink: the serializer failed or the
// record is larger than MaxRequestSize). Default FailOnBadRecord(). Sinks
// accept FailOnBadRecord and SkipBadRecords only.
func BadRecords(p BadRecordPolicy) Option {
	return commonOpt(func(c *commonConfig) { c.badRecords = p })
}

// ClientOptions adds raw franz-go options to every client the connector
// creates (TLS, SASL, client id, timeouts). Default: none. Options the
// connector sets itself (brokers, isolation level, transactional id) win.
func ClientOptions(opts ...kgo.Opt) Option {
	return commonOpt(func(c *commonConfig) { c.clientOpts = append(c.clientOpts, opts...) })
}

// Logger sets where the connector and its franz-go clients log. Default:
// in a job, the subtask's logger (its lines name job, vertex and subtask);
// else slog.Default().
func Logger(l *slog.Logger) Option {
	return commonOpt(func(c *commonConfig) { c.logger, c.userLogger = l, l != nil })
}

// ---------------------------------------------------------------- source

type sourceConfig struct {
	commonConfig
	topics          []string
	groupID         string
	start           OffsetsInitializer
	stop            OffsetsInitializer // nil: unbounded
	readUncommitted bool
	discovery       time.Duration // <= 0: off
	discoverySet    bool
	commitOffsets   bool
	commitSet       bool
	decoder         any // func([]byte) (T, error) or func(Message) (T, error)
	maxPollRecords  int
}

func (c *sourceConfig) ensureDefaults() {
	c.commonConfig.ensureDefaults()
	if c.start == nil {
		c.start = Earliest()
	}
	if !c.discoverySet {
		c.discovery = DefaultPartitionDiscoveryInterval
	}
	if c.stop != nil {
		c.discovery = 0 // a bounded source reads the partitions it started with
	}
	if !c.commitSet {
		c.commitOffsets = c.groupID != ""
	}
	if c.maxPollRecords == 0 {
		c.maxPollRecords = 500
	}
}

func (c *sourceConfig) validate() error {
	if err := c.commonConfig.validate("kafka source"); err != nil {
		return err
	}
	if len(c.topics) == 0 {
		return fmt.Errorf("%w: kafka source needs kafka.Topics", ErrConfig)
	}
	if c.commitOffsets && c.groupID == "" {
		return fmt.Errorf("%w: kafka source: CommitOffsetsOnCheckpoint needs kafka.GroupID", ErrConfig)
	}
	if _, ok := c.start.(committedOffsets); ok && c.groupID == "" {
		return fmt.Errorf("%w: kafka source: starting from committed offsets needs kafka.GroupID", ErrConfig)
	}
	if c.badRecords.kind == badDeadLetter && c.badRecords.topic == "" {
		return fmt.Errorf("%w: kafka source: DeadLetter needs a topic", ErrConfig)
	}
	return nil
}

// Topics sets the topics to read. Required.
func Topics(topics ...string) SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.topics = append(c.topics, topics...) })
}

// BadRecordFix replaces the advice a bad record error gives for continuing
// past such records (default: the Go options, kafka.BadRecords(…)), for
// callers whose users configure the policy otherwise (the SQL layer's WITH
// options). A source's advice follows "to continue past such records", a
// sink's "to drop such records".
func BadRecordFix(advice string) Option {
	return commonOpt(func(c *commonConfig) { c.badRecordFix = advice })
}

// GroupID sets the consumer group (Flink's properties.group.id) used by
// CommittedOffsets and for committing offsets back on checkpoint
// completion. Default "": no group. The source never joins the group: it
// assigns partitions itself.
func GroupID(id string) SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.groupID = id })
}

// StartingOffsets sets where a fresh start reads each partition from
// (Flink's scan.startup.mode). Default Earliest(). A restore ignores it: the
// checkpoint holds the positions.
func StartingOffsets(o OffsetsInitializer) SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.start = o })
}

// StoppingOffsets makes the source bounded: each partition ends before the
// offset o gives when the job starts (Flink's setBounded). Default: none,
// the source is unbounded. The stopping offset is part of the split, so it
// survives restores.
func StoppingOffsets(o OffsetsInitializer) SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.stop = o })
}

// Bounded ends every partition at its last stable offset at job start:
// StoppingOffsets(Latest()).
func Bounded() SourceOption { return StoppingOffsets(Latest()) }

// ReadUncommitted makes the source read records of open and aborted
// transactions too. Default: read_committed.
func ReadUncommitted() SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.readUncommitted = true })
}

// DefaultPartitionDiscoveryInterval is Flink's default for
// scan.topic-partition-discovery.interval (and partition.discovery.interval.ms).
const DefaultPartitionDiscoveryInterval = 5 * time.Minute

// PartitionDiscoveryInterval sets how often an unbounded source looks for
// new partitions of its topics (Flink's
// scan.topic-partition-discovery.interval). Default
// DefaultPartitionDiscoveryInterval, 5 minutes, as in Flink; 0 or a negative
// duration turns discovery off. Each subtask finds the new partitions it
// owns (the same round-robin rule as at start) and reads them from the
// earliest offset. With weir.Watermarks a new partition gets its own
// watermark generator and holds the subtask's watermark back until its
// records catch up — or, with an IdleTimeout, until it is idle — so its
// records are not late. Bounded sources never discover.
func PartitionDiscoveryInterval(d time.Duration) SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.discovery, c.discoverySet = d, true })
}

// CommitOffsetsOnCheckpoint sets whether positions are committed to the
// consumer group when a checkpoint completes (Flink's
// commit.offsets.on.checkpoint), for monitoring lag. Default: true when a
// GroupID is set.
func CommitOffsetsOnCheckpoint(on bool) SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.commitOffsets, c.commitSet = on, true })
}

// Deserializer sets how a record value becomes a T. Default: the raw value
// when T is []byte, the whole Message when T is Message, else JSON
// (encoding/json into a T). An error is a bad record (see BadRecords).
// Tombstones (nil values) are passed on like any value.
func Deserializer[T any](fn func(value []byte) (T, error)) SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.decoder = fn })
}

// MessageDeserializer is Deserializer with the whole record (key, headers,
// topic, partition, offset, timestamp) as input. Default: see Deserializer.
func MessageDeserializer[T any](fn func(m Message) (T, error)) SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.decoder = fn })
}

// MultiDeserializer is Deserializer for records that hold zero or more
// values each (a changelog format's update is -U and +U, a Debezium
// tombstone nothing): the values are emitted in order, all at the
// record's position, so a checkpoint never falls between them.
func MultiDeserializer[T any](fn func(value []byte) ([]T, error)) SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.decoder = fn })
}

// MultiMessageDeserializer is MultiDeserializer with the whole record as
// input (Flink SQL's metadata columns read its topic, offset, headers …).
func MultiMessageDeserializer[T any](fn func(m Message) ([]T, error)) SourceOption {
	return sourceOpt(func(c *sourceConfig) { c.decoder = fn })
}

// ---------------------------------------------------------------- sink

// parseGuarantee reads sink.delivery-guarantee; a bad value is an
// *OptionError (an ErrConfig).
func parseGuarantee(s string) (delivery.Guarantee, error) {
	g, err := delivery.Parse(s)
	if err != nil {
		return g, &OptionError{"sink.delivery-guarantee", s, "want none, at-least-once or exactly-once"}
	}
	return g, nil
}

type sinkConfig struct {
	commonConfig
	topic             string
	topicFn           any                // func(T) string
	keyFn             any                // func(T) []byte
	encoder           any                // func(T) ([]byte, error)
	guarantee         delivery.Guarantee // set before the options: default AtLeastOnce
	prefix            string
	txnTimeout        time.Duration
	interval          time.Duration
	poolSize          int
	maxRequestSize    int
	maxRequestSizeFix string // the option to raise it, in the user's terms; empty: the Go option
	commitTimeout     time.Duration
	flushTimeout      time.Duration
	noTimestamps      bool // RecordTimestamps(false)
	stampFn           any  // func(T) RecordStamp
	allowReplay       bool // AllowReplay()
	compression       string
}

func (c *sinkConfig) ensureDefaults() {
	c.commonConfig.ensureDefaults()
	if c.txnTimeout == 0 {
		c.txnTimeout = 15 * time.Minute
	}
	if c.poolSize == 0 {
		c.poolSize = 8
	}
	if c.maxRequestSize == 0 {
		c.maxRequestSize = 1 << 20
	}
	if c.commitTimeout == 0 {
		c.commitTimeout = 2 * time.Minute
	}
	if c.flushTimeout == 0 {
		c.flushTimeout = 2 * time.Minute
	}
}

func (c *sinkConfig) validate() error {
	if err := c.commonConfig.validate("kafka sink"); err != nil {
		return err
	}
	if c.topic == "" && c.topicFn == nil {
		return fmt.Errorf("%w: kafka sink needs kafka.Topic or kafka.TopicSelector", ErrConfig)
	}
	if c.guarantee == delivery.ExactlyOnce && c.prefix == "" {
		return fmt.Errorf("%w: an exactly-once kafka sink needs kafka.TransactionalIDPrefix "+
			"(Flink's sink.transactional-id-prefix), unique per job and stable across restarts", ErrConfig)
	}
	if strings.ContainsAny(c.prefix, " \t\n") {
		return fmt.Errorf("%w: transactional id prefix %q contains white space", ErrConfig, c.prefix)
	}
	if c.badRecords.kind == badDeadLetter {
		return fmt.Errorf("%w: kafka sink supports FailOnBadRecord and SkipBadRecords, not DeadLetter", ErrConfig)
	}
	if c.poolSize < 2 {
		return fmt.Errorf("%w: TransactionalIDPoolSize %d: need at least 2 (one open, one pre-committed)", ErrConfig, c.poolSize)
	}
	if c.maxRequestSize < 1024 {
		return fmt.Errorf("%w: MaxRequestSize %d is below 1024 bytes", ErrConfig, c.maxRequestSize)
	}
	if _, ok := compressionCodecs[c.compression]; !ok {
		return fmt.Errorf("%w: Compression %q: want %s", ErrConfig, c.compression, compressionNames)
	}
	return nil
}

const compressionNames = "none, gzip, snappy, lz4 or zstd"

// compressionCodecs are Kafka's compression.type values.
var compressionCodecs = map[string]kgo.CompressionCodec{"": kgo.NoCompression(), "none": kgo.NoCompression(),
	"gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(),
	"zstd": kgo.ZstdCompression()}

// Topic sets the topic every record is written to. Required unless
// TopicSelector is given.
func Topic(name string) SinkOption { return sinkOpt(func(c *sinkConfig) { c.topic = name }) }

// TopicSelector picks each record's topic. Default: the Topic option.
func TopicSelector[T any](fn func(T) string) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.topicFn = fn })
}

// KeyFunc sets each record's key (it also picks the partition: records of
// one key go to one partition). Default: no key (sticky partitioning).
func KeyFunc[T any](fn func(T) []byte) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.keyFn = fn })
}

// Serializer sets how a T becomes a record value. Default: the value
// itself when T is []byte or string, else JSON (encoding/json). An error is
// a bad record (see BadRecords).
func Serializer[T any](fn func(T) ([]byte, error)) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.encoder = fn })
}

// Guarantee sets the sink's guarantee (Flink's sink.delivery-guarantee;
// the option has this name in every connector, as jdbc.Guarantee, and for
// the job, weir.Guarantee). Default delivery.AtLeastOnce, Flink's default:
// every record is flushed before the checkpoint barrier passes, so a
// restore may write records again but never loses them.
// delivery.ExactlyOnce writes in Kafka transactions committed when the
// checkpoint completes (read_committed consumers see every record once;
// needs TransactionalIDPrefix); delivery.None sends records and never waits
// for them, so failures may lose or duplicate records.
func Guarantee(g delivery.Guarantee) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.guarantee = g })
}

// RecordTimestamps sets whether a record's event time becomes its Kafka
// timestamp. Default true, as Flink's DataStream KafkaSink does. With
// false the timestamp is left to the producer (CreateTime = now), as
// Flink SQL's kafka sink does for a table without a writable 'timestamp'
// metadata column. Either way a timestamp already past the topic's
// retention is replaced by the current time (see retention.go).
func RecordTimestamps(on bool) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.noTimestamps = !on })
}

// RecordStamp is what a sink writes into a record besides its key and
// value: Flink SQL's writable metadata columns.
type RecordStamp struct {
	// Timestamp, when not zero, is the record's timestamp (it wins over
	// the event time and RecordTimestamps).
	Timestamp time.Time
	// Headers are the record's headers, in order.
	Headers []Header
}

// Stamp sets each record's timestamp and headers from its value (Flink
// SQL's writable 'timestamp' and 'headers' metadata). Default: none.
func Stamp[T any](fn func(T) RecordStamp) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.stampFn = fn })
}

// AllowReplay is `sink.allow-replay` (Weir's): accept a restore of a
// checkpoint older than the newest one whose transaction the exactly-once
// sink already committed, writing the records of the checkpoints in
// between again. Without it the writer fails at open with an
// operator.ReplayError naming both checkpoints. Default: off.
func AllowReplay() SinkOption { return sinkOpt(func(c *sinkConfig) { c.allowReplay = true }) }

// TransactionalIDPrefix sets the prefix of the exactly-once sink's
// transactional ids, "<prefix>-<subtask>-<slot>" (Flink's
// sink.transactional-id-prefix). Required for ExactlyOnce; must be unique
// per job and stay the same across restarts.
func TransactionalIDPrefix(p string) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.prefix = p })
}

// TransactionTimeout sets transaction.timeout.ms: how long the broker keeps
// a transaction open before aborting it. Default 15 minutes (the broker's
// default transaction.max.timeout.ms). It must exceed the checkpoint
// interval plus the longest downtime you want to survive; a transaction
// the broker aborted is data loss.
func TransactionTimeout(d time.Duration) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.txnTimeout = d })
}

// CheckpointInterval tells an exactly-once sink the job's checkpoint
// interval (execution.checkpointing.interval) so it can refuse a
// transaction timeout that is not larger. Default 0: unknown; the check is
// skipped with a warning.
func CheckpointInterval(d time.Duration) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.interval = d })
}

// TransactionalIDPoolSize sets how many transactional ids each subtask
// cycles through. An id is reused only after its transaction committed and
// a later checkpoint completed, so a pool needs about 4 ids plus one per
// checkpoint that may fail in a row. Default 8.
func TransactionalIDPoolSize(n int) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.poolSize = n })
}

// MaxRequestSize sets max.request.size, the largest record the sink sends,
// in bytes. Larger records are bad records: checked before they are
// produced, so they never poison a transaction. Default 1 MiB (1048576).
func MaxRequestSize(n int) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.maxRequestSize = n })
}

// Compression sets compression.type, the codec of the sink's record
// batches: none, gzip, snappy, lz4 or zstd. Default none, the Kafka
// producer's default, which Flink's sink keeps (franz-go's own default
// would be snappy).
func Compression(codec string) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.compression = codec })
}

// MaxRequestSizeFix replaces the option a too-large record error tells the
// user to raise (default "kafka.MaxRequestSize"), for callers whose users
// set it otherwise (SQL's 'properties.max.request.size').
func MaxRequestSizeFix(option string) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.maxRequestSizeFix = option })
}

// CommitTimeout bounds how long a committer retries one EndTxn (coordinator
// moving, concurrent transactions, timeouts) before it fails the job.
// Default 2 minutes.
func CommitTimeout(d time.Duration) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.commitTimeout = d })
}

// FlushTimeout bounds how long a checkpoint barrier (and the end of input)
// waits for the sink's records to be acknowledged; past it the job fails.
// Default 2 minutes. Records themselves have no delivery timeout (their
// Kafka timestamp is the event time, which may be long past), so a None
// sink facing a broker outage backpressures until the broker returns.
func FlushTimeout(d time.Duration) SinkOption {
	return sinkOpt(func(c *sinkConfig) { c.flushTimeout = d })
}
