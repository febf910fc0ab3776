// Package weir is Weir's DataStream API: an Environment to declare a job,
// typed DataStream and KeyedStream values built with generic functions (Map,
// Filter, FlatMap, KeyBy, Reduce, Aggregate, KeyedProcess, windows, Union,
// Connect, side outputs), sources and sinks, and Execute, which runs the job
// in local mode with exactly-once checkpoints (see package runtime).
//
// Go methods cannot take type parameters, so transformations that change
// the element type are functions: weir.Map(stream, fn), not stream.Map(fn).
// Operator settings that keep the type are methods: Name, UID, Parallelism.
package weir
