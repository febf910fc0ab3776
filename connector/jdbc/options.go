package jdbc

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/duration"
	"github.com/weirstream/weir/event"
)

// Strategy picks how delivery.ExactlyOnce is achieved.
type Strategy string

const (
	// StrategyAuto is StrategyCheckpointTable when the table has a primary
	// key (given or discovered) and StrategyXA otherwise.
	StrategyAuto Strategy = "auto"
	// StrategyXA writes each checkpoint's rows in one XA transaction
	// (PostgreSQL: a prepared transaction), prepared at the barrier and
	// committed when the checkpoint completes.
	StrategyXA Strategy = "xa"
	// StrategyCheckpointTable keeps each checkpoint's rows in the checkpoint
	// (a write-ahead log) and writes them when it completes, in one local
	// transaction that also records the checkpoint id in the bookkeeping
	// table, so a replay is detected and skipped.
	StrategyCheckpointTable Strategy = "checkpoint-table"
)

// Options configures a Sink. Every field documents its default; New fills
// defaults (EnsureDefaults) and checks the result (Validate).
type Options struct {
	// URL is Flink's `url`: jdbc:mysql://host:3306/db,
	// jdbc:mariadb://host:3306/db, jdbc:postgresql://host:5432/db, or a Go
	// DSN (go-sql-driver/mysql "user:pass@tcp(host:3306)/db", or
	// "postgres://…" / "host=… dbname=…" for pgx). Required.
	URL string
	// Table is Flink's `table-name`, optionally qualified ("db.t" on MySQL,
	// "schema.t" on PostgreSQL). Identifiers are quoted, so give them as the
	// database stores them. Required.
	Table string
	// Username and Password are Flink's `username` and `password`; when set
	// they override what the URL says. Default: the URL's.
	Username, Password string
	// Columns are the table columns that the positional fields of each
	// event.Row fill. Default: every column of the table, in order.
	Columns []string
	// PrimaryKey names the key columns used to upsert and delete. Default:
	// the table's primary key, if it has one.
	PrimaryKey []string
	// Append forces plain INSERTs even if the table has a primary key.
	// Changelog rows other than +I are then rejected. Default false.
	Append bool
	// BufferFlushMaxRows is Flink's `sink.buffer-flush.max-rows`: the
	// buffered rows that trigger a flush; 0 disables size-based flushing.
	// Default 100.
	BufferFlushMaxRows int
	// BufferFlushInterval is Flink's `sink.buffer-flush.interval`: the age
	// of buffered rows that triggers a flush; 0 disables it. Default 1s.
	BufferFlushInterval time.Duration
	// MaxRetries is Flink's `sink.max-retries`: retries of a write or commit
	// that failed with a transient error (lost connection, deadlock, lock
	// timeout). Bad rows are never retried. Default 3.
	MaxRetries int
	// LockWaitTimeout is `sink.lock-wait-timeout` (Weir's): how long one
	// statement of the sink waits for a row lock before it fails (set on
	// every session: PostgreSQL's lock_timeout, MySQL's
	// innodb_lock_wait_timeout, rounded up to whole seconds). An XA
	// transaction prepared by one subtask holds its locks until its
	// checkpoint completes, and that checkpoint waits for every subtask: a
	// subtask whose write waits for those locks would wait forever
	// (PostgreSQL's default) or 50 s (MySQL's), and the checkpoint would
	// expire without saying why; so the statement fails instead, naming the
	// cause. A wait that is not a deadlock ends when the holder's checkpoint
	// completes. Default DefaultLockWaitTimeout, capped at half the job's
	// checkpoint timeout when the sink is told it (so the lock error comes
	// before the checkpoint expires); 0 keeps the database's own setting.
	LockWaitTimeout time.Duration
	// Guarantee is `sink.delivery-guarantee`. Default (DefaultOptions)
	// delivery.AtLeastOnce: the sink flushes on every checkpoint barrier,
	// so a failure may write rows again (harmless with a primary key: the
	// write is an upsert). delivery.None writes in batches and does not
	// flush on checkpoints: a failure may lose the rows buffered since the
	// last flush. delivery.ExactlyOnce makes every row visible once, when
	// its checkpoint completes, by one of the two Strategy values. Options{}
	// built by hand has the zero value, delivery.ExactlyOnce.
	Guarantee delivery.Guarantee
	// Strategy is `sink.exactly-once.strategy` (Weir's). Default StrategyAuto.
	Strategy Strategy
	// Name identifies the sink in transaction ids and bookkeeping rows,
	// together with the job id: `sink.name` (Weir's). Two sinks of one job
	// writing to one table need different names. Default: Table.
	Name string
	// XALogTable is where XA transactions record their own id, so that a
	// committed transaction can be told from a lost one. Default "weir_xa_log".
	XALogTable string
	// CheckpointTable holds the last committed checkpoint id per (job,
	// sink, subtask) for StrategyCheckpointTable. Default "weir_sink_checkpoints".
	CheckpointTable string
	// AllowReplay is `sink.allow-replay` (Weir's): accept a restore of a
	// checkpoint older than the newest one the sink already committed (its
	// bookkeeping rows say so), writing the output of the checkpoints in
	// between again. Otherwise the sink fails at open with an
	// operator.ReplayError naming both checkpoints. Default false.
	AllowReplay bool
	// Converter turns stream values that are not event.Row into rows.
	// Default: none (values must be event.Row or *event.Row).
	Converter func(v any) (event.Row, error)
	// Logger receives recovery and retry messages. Default slog.Default().
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultBufferFlushMaxRows  = 100
	DefaultBufferFlushInterval = time.Second
	DefaultMaxRetries          = 3
	DefaultLockWaitTimeout     = 30 * time.Second
	DefaultXALogTable          = "weir_xa_log"
	DefaultCheckpointTable     = "weir_sink_checkpoints"
)

// DefaultOptions returns the options New starts from: every numeric option
// at its default (0 means "disabled" for them, so it cannot mean "unset")
// and Guarantee at Flink's default, delivery.AtLeastOnce (the zero value is
// delivery.ExactlyOnce).
func DefaultOptions() Options {
	return Options{BufferFlushMaxRows: DefaultBufferFlushMaxRows, BufferFlushInterval: DefaultBufferFlushInterval,
		MaxRetries: DefaultMaxRetries, LockWaitTimeout: DefaultLockWaitTimeout, Guarantee: delivery.AtLeastOnce}
}

// EnsureDefaults fills the unset string, enum and logger fields.
func (o *Options) EnsureDefaults() {
	if o.Strategy == "" {
		o.Strategy = StrategyAuto
	}
	if o.Name == "" {
		o.Name = o.Table
	}
	if o.XALogTable == "" {
		o.XALogTable = DefaultXALogTable
	}
	if o.CheckpointTable == "" {
		o.CheckpointTable = DefaultCheckpointTable
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Validate reports an unusable configuration, naming the option.
func (o *Options) Validate() error {
	var errs []error
	if o.URL == "" {
		errs = append(errs, errors.New("option 'url' is required"))
	}
	if o.Table == "" {
		errs = append(errs, errors.New("option 'table-name' is required"))
	}
	if o.BufferFlushMaxRows < 0 || o.BufferFlushInterval < 0 || o.MaxRetries < 0 || o.LockWaitTimeout < 0 {
		errs = append(errs, errors.New("sink.buffer-flush.max-rows, sink.buffer-flush.interval, sink.max-retries "+
			"and sink.lock-wait-timeout must not be negative"))
	}
	switch o.Guarantee {
	case delivery.None, delivery.AtLeastOnce, delivery.ExactlyOnce:
	default:
		errs = append(errs, fmt.Errorf("sink.delivery-guarantee %v: want none, at-least-once or exactly-once", o.Guarantee))
	}
	switch o.Strategy {
	case StrategyAuto, StrategyXA, StrategyCheckpointTable:
	default:
		errs = append(errs, fmt.Errorf("sink.exactly-once.strategy %q: want auto, xa or checkpoint-table", o.Strategy))
	}
	if o.Append && len(o.PrimaryKey) > 0 {
		errs = append(errs, errors.New("append mode and a primary key exclude each other"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("jdbc: sink for table %q: %w", o.Table, err)
	}
	return nil
}

// Opt is a functional option of New.
type Opt interface{ apply(*Options) }

type optFunc func(*Options)

func (f optFunc) apply(o *Options) { f(o) }

// URL sets `url`.
func URL(url string) Opt { return optFunc(func(o *Options) { o.URL = url }) }

// Table sets `table-name`.
func Table(name string) Opt { return optFunc(func(o *Options) { o.Table = name }) }

// Credentials sets `username` and `password`.
func Credentials(user, password string) Opt {
	return optFunc(func(o *Options) { o.Username, o.Password = user, password })
}

// Columns sets the columns that a row's positional fields fill.
func Columns(cols ...string) Opt { return optFunc(func(o *Options) { o.Columns = cols }) }

// PrimaryKey sets the key columns (upsert and delete by them).
func PrimaryKey(cols ...string) Opt { return optFunc(func(o *Options) { o.PrimaryKey = cols }) }

// Append writes plain INSERTs, ignoring the table's primary key.
func Append() Opt { return optFunc(func(o *Options) { o.Append = true }) }

// BufferFlush sets `sink.buffer-flush.max-rows` and `sink.buffer-flush.interval`.
func BufferFlush(maxRows int, interval time.Duration) Opt {
	return optFunc(func(o *Options) { o.BufferFlushMaxRows, o.BufferFlushInterval = maxRows, interval })
}

// MaxRetries sets `sink.max-retries`.
func MaxRetries(n int) Opt { return optFunc(func(o *Options) { o.MaxRetries = n }) }

// LockWaitTimeout sets `sink.lock-wait-timeout`; 0 keeps the database's.
func LockWaitTimeout(d time.Duration) Opt { return optFunc(func(o *Options) { o.LockWaitTimeout = d }) }

// Guarantee sets `sink.delivery-guarantee`.
func Guarantee(g delivery.Guarantee) Opt { return optFunc(func(o *Options) { o.Guarantee = g }) }

// ExactlyOnceStrategy sets `sink.exactly-once.strategy`.
func ExactlyOnceStrategy(s Strategy) Opt { return optFunc(func(o *Options) { o.Strategy = s }) }

// Name sets `sink.name`.
func Name(name string) Opt { return optFunc(func(o *Options) { o.Name = name }) }

// BookkeepingTables renames the XA log and checkpoint tables.
func BookkeepingTables(xaLog, checkpoints string) Opt {
	return optFunc(func(o *Options) { o.XALogTable, o.CheckpointTable = xaLog, checkpoints })
}

// AllowReplay sets `sink.allow-replay`: accept restoring a checkpoint older
// than what the sink already committed, and its duplicate rows.
func AllowReplay() Opt { return optFunc(func(o *Options) { o.AllowReplay = true }) }

// Logger sets the logger.
func Logger(l *slog.Logger) Opt { return optFunc(func(o *Options) { o.Logger = l }) }

// WithOptions replaces every option by o (later options still apply).
func WithOptions(o Options) Opt { return optFunc(func(dst *Options) { *dst = o }) }

// Option keys of FromMap, in Flink's words where Flink has one.
const (
	KeyURL                 = "url"
	KeyTable               = "table-name"
	KeyUsername            = "username"
	KeyPassword            = "password"
	KeyBufferFlushMaxRows  = "sink.buffer-flush.max-rows"
	KeyBufferFlushInterval = "sink.buffer-flush.interval"
	KeyMaxRetries          = "sink.max-retries"
	KeyLockWaitTimeout     = "sink.lock-wait-timeout"
	KeyDeliveryGuarantee   = "sink.delivery-guarantee"
	KeyStrategy            = "sink.exactly-once.strategy"
	KeyName                = "sink.name"
	KeyAllowReplay         = "sink.allow-replay"
)

// ignoredKeys are understood by other layers (the SQL planner) and accepted
// here without effect.
var ignoredKeys = func() map[string]bool {
	m := map[string]bool{"connector": true, "driver": true, "sink.parallelism": true}
	for _, k := range LookupKeys { // read by ParseLookupOptions
		m[k] = true
	}
	return m
}()

// ParseOptions reads options from a map of Flink option names, as a SQL
// WITH clause gives them. Unknown keys are an error that lists them.
func ParseOptions(m map[string]string) (Options, error) {
	o := DefaultOptions()
	var unknown []string
	var errs []error
	for k, v := range m {
		if err := o.set(k, strings.TrimSpace(v)); err == errUnknownKey {
			unknown = append(unknown, k)
		} else if err != nil {
			errs = append(errs, fmt.Errorf("option '%s': %w", k, err))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		errs = append(errs, fmt.Errorf("unsupported options %s; supported: url, table-name, username, password, "+
			"sink.buffer-flush.max-rows, sink.buffer-flush.interval, sink.max-retries, sink.lock-wait-timeout, "+
			"sink.delivery-guarantee, "+
			"sink.exactly-once.strategy, sink.name, sink.allow-replay", strings.Join(unknown, ", ")))
	}
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("jdbc: %w", err)
	}
	return o, nil
}

var errUnknownKey = errors.New("unknown key")

func (o *Options) set(k, v string) error {
	var err error
	switch k {
	case KeyURL:
		o.URL = v
	case KeyTable:
		o.Table = v
	case KeyUsername:
		o.Username = v
	case KeyPassword:
		o.Password = v
	case KeyBufferFlushMaxRows:
		o.BufferFlushMaxRows, err = strconv.Atoi(v)
	case KeyBufferFlushInterval:
		o.BufferFlushInterval, err = duration.Parse(v)
	case KeyMaxRetries:
		o.MaxRetries, err = strconv.Atoi(v)
	case KeyLockWaitTimeout:
		o.LockWaitTimeout, err = duration.Parse(v)
	case KeyDeliveryGuarantee:
		o.Guarantee, err = delivery.Parse(v)
	case KeyStrategy:
		o.Strategy = Strategy(strings.ToLower(v))
	case KeyName:
		o.Name = v
	case KeyAllowReplay:
		o.AllowReplay, err = strconv.ParseBool(v)
	default:
		if !ignoredKeys[k] {
			return errUnknownKey
		}
	}
	return err
}
