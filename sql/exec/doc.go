// Package exec owns the runtime operators of Weir's SQL layer: the
// operators a SQL plan runs on changelog rows (event.Row: a RowKind and
// positional fields, of the Go types sql/types lists), with Flink's
// changelog semantics.
//
// # Operators
//
//	GroupAggregate   GROUP BY + COUNT/SUM/MIN/MAX/AVG/…      any → +I -U +U -D
//	LocalAggregate   first phase of two-phase aggregation   any → +I (partials)
//	GlobalAggregate  second phase (NewGlobalAggregate)      partials → +I -U +U -D
//	WindowAggregate  TUMBLE / HOP / CUMULATE + GROUP BY     insert-only → +I
//	Deduplicate      ROW_NUMBER() … WHERE rn = 1            → +I (first), +I -U +U (last)
//	TopN             ROW_NUMBER() … WHERE rn <= N           → +I -D, or -U +U with rn
//	WindowRank       the same, PARTITION BY window_start,   insert-only → +I
//	                 window_end (Window Top-N)
//	WindowDeduplicate  … ORDER BY rowtime, rn = 1 per window  insert-only → +I
//	Join             regular inner/left/right/full join     any × any → +I -D
//	IntervalJoin     join on a rowtime interval             insert-only × insert-only → +I
//	TemporalJoin     FOR SYSTEM_TIME AS OF a rowtime        any × versioned changelog → the probe row's kind
//	OverAggregate    agg(…) OVER (PARTITION BY … ORDER BY   insert-only → +I (row + aggregates)
//	                 time ROWS|RANGE … PRECEDING)
//	Calc             WHERE + SELECT expressions             kind passes through
//	SinkUpsertMaterializer  alive rows per sink PRIMARY KEY  any → +I +U -D
//
// # What the caller (the planner) must do
//
// Every operator but Calc and LocalAggregate is keyed. Its options give
// the KeyFunc its input must be partitioned by (Key, or LeftKey and
// RightKey for joins); put KeyFunc.Selector() on the graph node and on the
// hash edge(s) in front of it. The operators set the current key
// themselves, from the same KeyFunc, so a two-input join can key each side
// by its own fields.
//
// Records carry event.Row values. Rows are immutable once emitted:
// operators keep input rows in state by reference and emit stored rows, so
// neither an upstream nor a downstream operator may modify a row's
// Fields in place.
//
// Each operator says which changelog it takes. One that takes only
// inserts (WindowAggregate, WindowRank, WindowDeduplicate, WindowJoin, IntervalJoin, OverAggregate,
// keep-first Deduplicate, and any with InputInsertOnly set) fails with
// ErrUpdatesUnsupported on a -U, +U or -D row: the planner must know the
// changelog mode of every input.
//
// # State
//
// All state is keyed state (so checkpoints capture it and rescaling moves
// it by key group), encoded with RowCodec. StateTTL in the options is
// Flink's table.exec.state.ttl: it becomes the TTL of every descriptor.
// WindowAggregate, WindowRank, WindowDeduplicate, WindowJoin and IntervalJoin clean
// up with event-time timers and take no TTL.
package exec
