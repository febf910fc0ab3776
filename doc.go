// Package weir is Weir's DataStream API, Apache Flink's in Go: declare a job
// on an Environment — sources, transformations, keyed state and timers,
// event-time windows, sinks — and Execute runs it with exactly-once
// checkpoints, restarting from the latest one after a failure.
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
// The default guarantee is ExactlyOnce, which needs CheckpointDir: even a
// bounded job takes a final checkpoint when its input ends, so its
// transactional sinks commit. Guarantee(AtMostOnce) runs without
// checkpoints.
//
// # Streams and transformations
//
// A DataStream[T] is the output of one operator. Go methods cannot take
// type parameters, so transformations are functions: Map, MapErr, Filter,
// FlatMap, Process, Union, SideOutput, Connect with CoFlatMap, and KeyBy,
// which partitions a stream by key into a KeyedStream[T, K]. Functions that
// emit several values get an Emitter.
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
// State and event-time timers are checkpointed and restored; name your
// stateful operators with UID so that a restore finds their state.
//
// # Event time and windows
//
// The Watermarks option gives a source's elements event time (a
// time.Time read from each element) and a WatermarkStrategy, usually
// BoundedOutOfOrderness. Window cuts a keyed stream into
// TumblingEventTimeWindows, SlidingEventTimeWindows or
// EventTimeSessionWindows; WindowReduce, WindowAggregate and WindowProcess
// emit one result per key and window when the watermark passes its end.
// Times are in UTC with millisecond precision; the zero time.Time means
// "no event time".
//
// # Sinks, execution and errors
//
// SinkTo writes a stream to a connector's sink (package connector/kafka,
// connector/jdbc, connector/filesystem, …); Print writes to standard
// output. Execute runs the job until its bounded sources end, the context
// is cancelled, or it fails beyond its restart strategy, and returns a
// Result. A mistake in the declaration — a window of size 0, a negative
// parallelism, watermarks on an operator that is not a source — is returned
// by Execute (and Explain, JobGraph, ExecuteAsync) before anything runs,
// every error naming its operator; nothing panics. ExecuteAsync returns a
// JobClient for savepoints. runtime.Restartable tells whether an error is
// one a restart could get past.
//
// # Deprecated names
//
// The setters of the first API — Environment.SetParallelism,
// EnableCheckpointing, RuntimeOptions, CheckpointOptions, SetStateBackend,
// the DataStream methods Name, UID, Parallelism and DisableChaining, and
// WithUID, WithWatermarks, WithParallelism — still work and are marked
// Deprecated; use the options instead.
package weir
