// Package weir is Weir's DataStream API, Apache Flink's in Go: declare a job
// on an Environment — sources, transformations, keyed state and timers,
// event-time windows, sinks — and Execute runs it with exactly-once
// checkpoints, restarting from the latest one after a failure.
//
// This page is a guide in the order a job is written; each part has a
// runnable example below (Example is a whole job: a word count).
//
// # One idiom: options
//
// Configuration is by functional options, as in franz-go. NewEnvironment
// takes EnvOpt values (Parallelism, CheckpointInterval, CheckpointDir,
// Guarantee, Restore, Restarts, StateBackend, …); every function that adds
// an operator takes OperatorOpt values last (Name, UID, Parallelism,
// DisableChaining, and Watermarks for sources). Each option's doc names the
// Flink setting it mirrors and its default:
//
//	env := weir.NewEnvironment(weir.Parallelism(2),
//		weir.CheckpointInterval(10*time.Second), weir.CheckpointDir("/var/lib/weir/ck"))
//	bills := weir.FromSource[Bill](env, src, "bills", weir.UID("bills"))
//	big := weir.Filter(bills, func(b Bill) bool { return b.Amount > 100 }, weir.Name("big"))
//
// Times are time.Time and time.Duration throughout, in UTC with
// millisecond precision (Flink's event time is in milliseconds); the zero
// time.Time means "no event time".
//
// # Sources
//
// FromSource adds a split-based source (Flink's FLIP-27 Source): a
// connector's — kafka.NewSource (package connector/kafka),
// filesystem.Source, datagen, the CDC sources — or your own
// operator.Source. Its splits are spread over the source's subtasks, and
// each split's position (a Kafka offset, a file offset) is stored in every
// checkpoint, so a restore reads on from there. FromSlice is a bounded
// source over a Go slice, for tests and examples. A job whose sources are
// all bounded ends when they do.
//
// # Streams, transformations and keyBy
//
// A DataStream[T] is the output of one operator. Go methods cannot take
// type parameters, so transformations are functions: Map, MapErr, Filter,
// FlatMap, Process, Union, SideOutput (see Side), Connect with CoFlatMap.
// Functions that emit several values get an Emitter. KeyBy partitions a
// stream by a key function into a KeyedStream[T, K]: every element with the
// same key goes to the same subtask (by key group, MaxParallelism of
// them), where keyed state and timers are scoped to that key. Rebalance and
// Broadcast choose other partitionings; operators with the same
// parallelism and a forward connection are chained into one subtask (see
// Explain).
//
// # Keyed state and timers
//
// On a KeyedStream, Reduce and Aggregate keep a running result per key;
// KeyedProcess runs your KeyedProcessFunction (KeyedCoProcess joins two
// keyed streams). Its Open receives a RuntimeContext, where it registers
// keyed state with ValueStateOf, ListStateOf and MapStateOf (StateTTL
// expires entries); the handles then read and write the value of the key
// being processed. ProcessElement and OnTimer receive a KeyedContext: the
// key, the watermark and processing time, and timers
// (RegisterEventTimeTimer, RegisterProcessingTimeTimer) at a time.Time.
// State and event-time timers are checkpointed and restored. State lives
// in the StateBackend: on the heap by default (Flink's hashmap), or on local
// disk with pebble.Factory (package state/pebble) for state larger than
// memory.
//
// # Event time and windows
//
// The Watermarks option gives a source's elements event time (a time.Time
// read from each element) and a WatermarkStrategy, usually
// BoundedOutOfOrderness: the watermark trails the largest event time seen
// by that bound and says "no element older than this will come". Window
// cuts a keyed stream into TumblingEventTimeWindows,
// SlidingEventTimeWindows or EventTimeSessionWindows; WindowReduce,
// WindowAggregate and WindowProcess emit one result per key and window when
// the watermark passes its end. Elements later than that are dropped, kept
// for AllowedLateness, or sent to SideOutputLateData.
//
// # Checkpoints and restore
//
// A checkpoint is a consistent snapshot of every operator's state and every
// source's position, taken without stopping the job: the sources inject
// barriers into the streams and each operator snapshots when a barrier
// passes (Flink's asynchronous barrier snapshots). CheckpointInterval sets
// how often, CheckpointDir where they go (a directory or an
// s3://bucket/prefix URL), RetainedCheckpoints how many are kept, and
// Checkpointing the rest (timeout, unaligned checkpoints, …). After a
// failure the job restarts from its latest completed checkpoint, as often
// as the Restarts strategy allows (runtime.Restartable tells whether an
// error is one a restart could get past).
//
// A new run resumes from a checkpoint with Restore: RestoreLatest (the
// newest in CheckpointDir), RestoreLatestOrEmpty, or the path of a
// checkpoint or savepoint. State is matched to operators by UID, so set
// UID on every source and stateful operator of a job you intend to
// restore; a restore may change the parallelism (up to MaxParallelism).
// A savepoint is a checkpoint you ask for: ExecuteAsync returns a
// JobClient whose TriggerSavepoint and StopWithSavepoint take one.
//
// # Delivery guarantees
//
// Guarantee sets what the job promises after failures (a
// DeliveryGuarantee, package delivery, the same type the connectors take).
// ExactlyOnce, the default, aligns barriers so that every record's effect
// is in exactly one checkpoint; it needs CheckpointDir, and even a bounded
// job takes a final checkpoint when its input ends. AtLeastOnce does not
// align: a restore may replay records already in the state. AtMostOnce
// takes no checkpoints; a restart starts afresh.
//
// # Sinks
//
// SinkTo writes a stream to a sink (Flink's Sink V2): kafka.NewSink,
// jdbc.New (MySQL/MariaDB, PostgreSQL), filesystem, or your own
// operator.Sink; Print writes to standard output. The job's output is
// exactly-once only when the job's guarantee and the sink's are: a
// transactional sink (kafka.Guarantee(ExactlyOnce),
// jdbc.Guarantee(ExactlyOnce)) pre-commits at each checkpoint barrier and
// commits when the checkpoint completes, so a reader of committed data
// never sees the output of records that a restore replays.
//
// # Running a job
//
// Execute runs the job in this process until its bounded sources end, the
// context is cancelled, or it fails beyond its restart strategy, and
// returns a Result (checkpoints, restarts, per-operator metrics).
// ExecuteAsync starts it and returns a JobClient. Explain prints the plan
// without running it. Metrics and MetricsHandler report Flink's metrics in
// Prometheus's format.
//
// A mistake in the declaration — a window of size 0, a negative
// parallelism, watermarks on an operator that is not a source — is returned
// by Execute (and Explain, JobGraph, ExecuteAsync) before anything runs,
// each error naming its operator; so is exactly-once without a
// CheckpointDir. Nothing panics. An error from your function fails the job, which then
// restarts from its latest checkpoint.
//
// # SQL
//
// Jobs can also be written in Flink SQL: `weir run FILE.sql` (command
// cmd/weir) runs a script of SET, CREATE TABLE and INSERT INTO statements
// as one job with the same runtime, checkpoints and connectors, and `weir
// sql` is the SQL client (Flink's sql-client.sh). From Go, package sql/session runs a
// script (session.New, Session.Execute, Session.Run).
//
// # Deprecated names
//
// The setters of the first API — Environment.SetParallelism,
// EnableCheckpointing, RuntimeOptions, CheckpointOptions, SetStateBackend,
// the DataStream methods Name, UID, Parallelism and DisableChaining, and
// WithUID, WithWatermarks, WithParallelism — still work and are marked
// Deprecated; use the options instead.
package weir
