// Package window owns event-time windows on keyed streams (Flink's
// WindowOperator): the Window interval, the assigners that map an element's
// timestamp to its windows (tumbling, sliding, session), and the keyed
// Operator that keeps each window's contents in keyed state, fires a window
// when the watermark passes its end, and routes late data.
//
// The operator's rules, in Flink's terms (EventTimeTrigger, no evictor):
//
//   - A window [start, end) fires when the watermark reaches its
//     MaxTimestamp, end-1; its result carries that timestamp.
//   - An element is late when every window it belongs to has a cleanup time
//     (MaxTimestamp + allowed lateness) at or below the watermark. Late
//     elements go to the late side output if one is set, else they are
//     dropped; either way they are counted in operator.Metrics.
//   - An element that arrives after its window fired, but within the
//     allowed lateness, updates the window and fires it again at once (a
//     late firing). The window's state is dropped at its cleanup time.
//   - Session windows merge: the contents of overlapping windows of a key
//     are combined and their timers replaced by the merged window's.
//     Lateness is judged on the merged window.
//   - An element in the gap of a sliding assigner with Slide > Size belongs
//     to no window and is counted in Metrics.Filtered.
//
// Watermarks are not state: after a restore the operator's event-time clock
// starts at event.MinWatermark until its inputs send a watermark, as in
// Flink, so an element that arrives first is judged against no watermark.
//
// Everything the operator keeps between records lives in the keyed state
// backend (one MapState from window to contents, per key) and in the timer
// service, so a checkpoint captures it and a restore, at any parallelism,
// continues where the snapshot left off.
package window
