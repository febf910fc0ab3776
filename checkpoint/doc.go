// Package checkpoint owns the checkpoint coordinator: the pure state machine
// that decides when a checkpoint is triggered, when it is complete, and
// why it failed.
//
// # Design
//
// The Coordinator does no I/O, reads no clock and starts no goroutine. Like
// etcd-io/raft's RawNode, it takes events (and the current time, as an
// argument to every call) and returns Actions for a driver to carry out.
// The same inputs always give the same outputs, which is what lets the
// tests in testdata script it line by line and lets a simulation replay a
// failure exactly. It is not safe for concurrent use: one goroutine, the
// driver, owns it and feeds it every event in turn.
//
// # The driver's responsibilities
//
// Feed it:
//
//   - Tick(now) regularly (every 100ms is plenty). Expiry and periodic
//     triggers happen only on Tick. Stop ticking while the job is being
//     redeployed after a failover, since tasks that are not running cannot
//     take a checkpoint.
//   - TriggerNow(now, false) for a user-requested checkpoint, and
//     TriggerNow(now, true) when every source of a bounded job reached end of
//     input. It returns nil when not allowed yet; try again on a later
//     event.
//   - Progress/ProgressDetail when a task enters a phase (barrier received,
//     sync snapshot started, async upload started). Optional, but without
//     it a timeout can only say "no barrier received yet".
//   - Acknowledge and Decline as tasks report them, and Persisted or
//     PersistFailed once a PersistCheckpoint write finished.
//   - AbortAll on failover or cancellation.
//
// Carry out the returned actions in the order returned:
//
//   - TriggerCheckpoint: first persist "next checkpoint id = ID+1" durably,
//     so that ids are never reused across restarts; only then send the
//     trigger to every subtask in Sources. On restart, pass the persisted
//     id to New as nextID.
//   - PersistCheckpoint: write the metadata (id, timestamp, final flag and
//     every task's state blob) atomically — temp file, fsync, rename, with
//     a checksum — and call Persisted on success or PersistFailed on
//     failure. Do not tell any task that the checkpoint completed before
//     Persisted returned NotifyComplete: a sink commits on that message, so
//     the metadata it relies on must be durable first. A checkpoint in this
//     state never expires, so bound the write yourself.
//   - NotifyComplete: call NotifyCheckpointComplete(ID) on every task. Then
//     apply the retention policy (how many completed checkpoints to keep);
//     that is the driver's and checkpoint storage's job, not this package's.
//   - AbortCheckpoint: call NotifyCheckpointAborted(ID) on every task so
//     that aligning tasks unblock and sources emit a cancel barrier. Log the
//     Reason: it names the subtasks and phases at fault. State handles that
//     tasks uploaded for it are garbage for storage to collect.
//   - FailJob: fail the job over (per the restart strategy), then call
//     AbortAll. Until AbortAll, no new checkpoint is triggered and further
//     failures are not counted.
//
// After a failover, restore from LatestCompleted only once every checkpoint
// still listed by Pending as Persisting has resolved through Persisted or
// PersistFailed: AbortAll leaves those alone, because their metadata may
// already be durable, and restoring an older checkpoint would abort the
// transactions that metadata references.
//
// # Guarantees
//
// Ids increase by one per trigger and are never reused, even after an
// abort. A completed checkpoint's id is greater than every earlier
// completed one: when a checkpoint completes, every older pending one is
// aborted as subsumed (ErrSubsumed). At most Options.MaxConcurrent
// checkpoints are pending at once. Every failure is a *FailedError whose
// Cause is one of the package's sentinel errors.
//
// # Sources
//
// The protocol is asynchronous barrier snapshotting (Carbone et al.,
// "Lightweight Asynchronous Snapshots for Distributed Dataflows", 2015),
// with the coordinator's rules — interval, timeout, min pause, max
// concurrent, tolerable failures, decline, subsume — as in Apache Flink's
// CheckpointCoordinator and PendingCheckpoint. The code is Weir's own.
package checkpoint
