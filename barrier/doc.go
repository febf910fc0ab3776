// Package barrier owns checkpoint-barrier alignment on a task's inputs: it
// decides, from the barriers, cancel-barriers and end-of-input markers a task
// reads, when the task must block an input, take its snapshot, or give up on
// a checkpoint.
//
// A Handler is a pure, deterministic state machine in the style of
// etcd-io/raft: it does no I/O, starts no goroutine and reads no clock. The
// task's mailbox goroutine owns it, feeds it every control event in the order
// it read them (together with the current time, which is used only to measure
// alignment), and carries out the Decision each call returns.
//
// # The caller's responsibilities
//
// A task with n input channels, numbered 0..n-1, must:
//
//   - Call OnBarrier, OnCancelBarrier and OnEndOfInput for every such element
//     it reads, in the order it reads them, and OnAbort when the checkpoint
//     coordinator aborts a checkpoint (NotifyCheckpointAborted, e.g. on
//     timeout).
//   - Carry out every Decision completely, in the field order of Decision
//     (Abort, Snapshot, Unblock, Block), before it reads the next element.
//   - Never read from a channel while it is blocked: its elements stay
//     buffered, in order, until a later Decision unblocks it. Reading past a
//     blocked channel's barrier would put post-barrier records into the
//     snapshot and break exactly-once.
//   - On Decision.Snapshot: take the snapshot for that barrier, then forward
//     the barrier to every output.
//   - On each Decision.Abort entry: decline that checkpoint to the coordinator
//     with the reason, and forward a cancel-barrier for its id to every output
//     so that downstream tasks stop aligning on it.
//
// # Modes
//
// ExactlyOnce aligns barriers as Flink's SingleCheckpointBarrierHandler does
// for aligned checkpoints: a channel is blocked from the moment its barrier
// for the checkpoint arrives until the barriers of all other open channels
// have arrived, so the snapshot reflects exactly the records before the
// barrier on every channel. AtLeastOnce, like Flink's
// CheckpointBarrierTracker, never blocks: it counts barriers and snapshots
// once all open channels delivered one, so records after the barrier on a
// fast channel may be in the snapshot and are replayed after a restore.
//
// # Unaligned checkpoints
//
// With Options.Unaligned (Flink's FLIP-76), an ExactlyOnce handler takes the
// snapshot at a checkpoint's first barrier and blocks nothing: Decision
// Snapshot comes with Unaligned set and Persist listing the channels whose
// barrier is still missing. The caller persists every batch it reads from
// those channels until Decision.Persisted names the channel (its barrier or
// end arrived), then, on Decision.ChannelStateDone, writes that input
// channel state with the snapshot and acknowledges. Together with the
// output the forwarded barrier overtook, the channel state is exactly the
// data between this task's snapshot and its upstreams' snapshots, which a
// restore replays before new input. With Options.AlignedTimeout a
// checkpoint starts aligned and switches to unaligned when its alignment
// outlasts the timeout; the caller passes time in through every event and
// Tick.
//
// # Ids
//
// Checkpoint ids only ever increase, and a channel delivers barriers in id
// order. A barrier or cancel-barrier for an id the handler has already
// snapshotted or abandoned, or (in ExactlyOnce) for an id older than the one
// being aligned, is stale and ignored: each checkpoint is snapshotted or
// abandoned at most once.
package barrier
