// Package jdbc owns Weir's sinks into relational tables of MySQL/MariaDB
// (go-sql-driver/mysql) and PostgreSQL (pgx): Flink's JDBC connector, plus
// two exactly-once sinks.
//
// # Use
//
//	sink, err := jdbc.New(
//		jdbc.URL("jdbc:mysql://db:3306/shop"), jdbc.Table("orders"),
//		jdbc.Credentials("u", "p"),
//		jdbc.Guarantee(weir.ExactlyOnce))
//	weir.SinkTo(rows, sink, "orders")
//
// or, from a SQL WITH clause, jdbc.FromMap(map[string]string{"url": …,
// "table-name": …}, jdbc.Columns(…), jdbc.PrimaryKey(…)). The stream carries
// event.Row values whose positional fields fill Columns (default: every
// column of the table); StructRows and RowsOf adapt other types.
//
// # Modes
//
//	guarantee      strategy          key  writes
//	none, a-l-o    -                 no   batched INSERT
//	none, a-l-o    -                 yes  batched upsert (ON DUPLICATE KEY UPDATE / ON CONFLICT DO UPDATE)
//	exactly-once   xa                any  a checkpoint's rows in one XA (prepared) transaction
//	exactly-once   checkpoint-table  any  a checkpoint's rows kept in the checkpoint, then written
//	                                      with its id in one local transaction
//
// sink.delivery-guarantee defaults to at-least-once (Flink's default);
// sink.exactly-once.strategy to auto: checkpoint-table when the table has a
// primary key, xa otherwise. The key is PrimaryKey, else the table's own.
//
// With a primary key, a changelog is applied by key: +I and +U upsert, -U
// and -D delete (as Flink's JDBC sink does; a -U followed by its +U in one
// batch reduces to the +U). Without a key only +I and +U are accepted.
// Buffers are reduced to the last change per key before they are written.
// At-least-once flushes at every barrier; none only by size and age.
//
// # Exactly-once, the caller's side
//
// The job must checkpoint (a sink without checkpoints never commits), and
// its job id (runtime.Options.JobID) together with the sink's name (default:
// the table) must be unique among running jobs: they name the sink's
// transactions and bookkeeping rows, and a writer that starts cleans up what
// its predecessors with the same names left behind.
//
// XA (StrategyXA): each subtask writes the rows between two barriers into
// one transaction on a pinned connection, named weir:<job>:<sink>:<subtask>:<seq>:r<run>
// (see xid; the run is random per writer, so no two attempts reuse a name), and prepares it at the barrier; the xid is the committable.
// When the checkpoint completes the committer commits it, on MySQL/MariaDB
// on the connection that prepared it while the writer holds that (see
// handover.go). A writer that
// starts rolls back the prepared transactions of checkpoints after the
// restored one; the committer then commits the restored checkpoint's
// (committed already: success). Every transaction inserts its xid into
// weir_xa_log, so a commit that finds no prepared transaction can tell
// "committed" (row present) from "lost" (no row: operator.ErrDataLoss, the
// job fails and nothing is retried), and a commit that answers OK is
// checked by the same row. PostgreSQL needs
// max_prepared_transactions > 0; MySQL 8 needs XA_RECOVER_ADMIN for XA
// RECOVER. Prepared transactions hold their row locks until the checkpoint
// completes (so on a keyed table the writer defers writes behind them, see
// xaWriter), and a database may roll them back after a timeout: then the
// commit reports data loss. Another subtask writing those rows (or, through
// gap locks, near them) would wait for a commit that its own barrier
// holds up; every session therefore waits sink.lock-wait-timeout at most
// for a lock, and the writer fails with a *LockWaitError that says so and
// how to avoid it (key the input by the primary key, lower the
// parallelism, or use the checkpoint table). Log rows are deleted once no restorable
// checkpoint can list their xid; the last few of a finished job stay until
// the job id is started afresh.
//
// Checkpoint table (StrategyCheckpointTable, the default with a primary
// key): the writer keeps the rows of a checkpoint interval in memory; they
// go into the checkpoint as the committable (a write-ahead log). The
// committer writes them in one local transaction that also sets the
// checkpoint id of (job, sink, subtask) in weir_sink_checkpoints, unless it
// is already there (a replay: skipped). Works without a key as well
// (appends), since every checkpoint is applied exactly once. Rows reach the
// database only at the commit, so a bad row fails the commit; the restarted
// job commits the same rows again and fails the same way, and the runtime
// then stops it (the *BadRowError names its row, an
// operator.PositionedError) until the row or the table is fixed and the job
// restored; no row is lost meanwhile.
//
// Restoring a checkpoint older than what the sink already committed (the
// newest checkpoint was deleted or is corrupt, or a retained older one was
// restored by hand) would write the rows after it a second time. Both
// exactly-once strategies know what they committed — the checkpoint table
// its id per (job, sink, subtask), the XA log the xids of committed
// transactions after the restored checkpoint — and fail at open with an
// operator.ReplayError (non-restartable) naming both checkpoints, unless
// 'sink.allow-replay' = 'true' (Go: AllowReplay()) accepts the duplicates.
// The XA log keeps the rows of the newest committed transactions only, so a
// restore far behind may find no evidence (and may then report data loss for
// transactions whose log rows were trimmed).
//
// # Errors
//
// A misconfiguration found at open (wrong credentials, unknown database,
// missing table or column, a declared PRIMARY KEY the table has no unique
// index for) is marked operator.ErrNonRestartable: the job fails once.
// A row the database refuses for its data (value too long, wrong type,
// NULL, duplicate key, constraint) fails the job with a *BadRowError naming
// the table, the row's key and the column; errors.Is(err, ErrBadRow).
// Transient errors (lost connection, deadlock, lock timeout) are retried
// sink.max-retries times where a retry is safe: at-least-once flushes,
// checkpoint-table commits (idempotent by the checkpoint id) and XA
// commits; a lost connection under an open XA transaction fails the job,
// which restarts from its last checkpoint.
//
// # Threads
//
// The runtime calls a writer and its committer from the subtask's
// goroutine. The only other goroutine is a writer's flush timer
// (sink.buffer-flush.interval); the writer's buffer mutex guards everything
// a flush touches. Locks: Sink.mu (pool, table, barrier marks) and
// buffer.mu are never held together, and barrierMark.mu is a leaf.
package jdbc
