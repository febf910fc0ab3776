// Package watermark owns event-time progress: the generators that derive a
// source split's watermark from its records' timestamps, Multi which combines
// the splits of one source subtask, StallDetector which notices a split
// without records holding that combination back, and Valve which combines the
// watermarks arriving on a task's input channels into the task's input
// watermark.
//
// Everything here is a pure, single-threaded state machine: no I/O, no
// goroutines, and no clock — the caller passes processing time in as now.
// The subtask's mailbox goroutine owns each value.
//
// # Semantics, as in Flink
//
// A watermark W on a stream promises that no later record has an event time
// at or below W (records that break the promise are late). Watermarks only
// ever advance. A stream that has no data for a while can be marked idle: it
// is left out of the minimum downstream so it does not hold back event time,
// and it never makes event time jump to MaxWatermark, which is reserved for
// the end of a bounded input.
//
// The caller's duties:
//
//   - Source subtask: feed every record's timestamp to Multi.OnEvent, call
//     Multi.OnPeriodicEmit every pipeline.auto-watermark-interval (Flink's
//     default: 200ms), emit a watermark downstream when it reports advanced,
//     and an Idle or Active status when the idle result changes; then pass
//     the same now, the result and Multi.Splits to StallDetector.Check and
//     report a stall it finds.
//   - Any task: feed every watermark, Idle, Active and end-of-input element
//     read from input channel ch to the Valve, and forward the output
//     watermark when the Valve reports it advanced, and the status when its
//     all-idle result changes.
package watermark
