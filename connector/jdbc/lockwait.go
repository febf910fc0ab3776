package jdbc

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/weirstream/weir/operator"
)

// ErrLockWait matches (errors.Is) every *LockWaitError.
var ErrLockWait = errors.New("jdbc: lock wait timeout")

// LockWaitError is a statement that waited longer than
// sink.lock-wait-timeout for a row lock held by another transaction. Under
// StrategyXA that is most likely another subtask's prepared transaction: it
// keeps its locks until its checkpoint completes, and the checkpoint cannot
// complete while this subtask waits (a distributed deadlock). The job fails
// and restores its last completed checkpoint, which rolls back the prepared
// transactions of the unfinished one.
type LockWaitError struct {
	Table   string
	Subtask int
	Timeout time.Duration // 0: the database's own setting
	// Prepared: the writer is an XA writer, so the holder is likely a
	// prepared transaction of another subtask.
	Prepared bool
	Err      error
}

// Error implements error.
func (e *LockWaitError) Error() string {
	wait := "the lock wait timeout"
	if e.Timeout > 0 {
		wait = "sink.lock-wait-timeout (" + e.Timeout.String() + ")"
	}
	if !e.Prepared {
		return fmt.Sprintf("jdbc: table %q, subtask %d: a write waited longer than %s for a lock held by another "+
			"transaction (another job or client writing the same rows?); raise 'sink.lock-wait-timeout' if "+
			"such waits are expected: %v", e.Table, e.Subtask, wait, e.Err)
	}
	return fmt.Sprintf("jdbc: table %q, subtask %d: a write waited longer than %s for a lock held by another "+
		"transaction, likely another subtask's prepared XA transaction, which keeps its locks until its checkpoint "+
		"completes while that checkpoint waits for this subtask (a distributed deadlock); the job restarts from its "+
		"last checkpoint, rolling back the unfinished checkpoint's prepared transactions. To avoid it, key the "+
		"sink's input by the table's primary key (one subtask per key), lower the sink's parallelism, or set "+
		"'sink.exactly-once.strategy' = 'checkpoint-table': %v", e.Table, e.Subtask, wait, e.Err)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *LockWaitError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrLockWait) true.
func (e *LockWaitError) Is(target error) bool { return target == ErrLockWait }

// lockWait is the session lock wait timeout for a sink told wctx: the
// option, capped at half the checkpoint timeout when that is known.
func (s *Sink) lockWait(wctx operator.WriterContext) time.Duration {
	d := s.opts.LockWaitTimeout
	if ct := wctx.CheckpointTimeout; d > 0 && ct > 0 && d > ct/2 {
		d = max(ct/2, time.Second)
	}
	return d
}

// withLockWait returns t with d set as every new session's lock wait
// timeout (nothing when d is 0). The configs are copied: t is shared.
func (t target) withLockWait(d time.Duration) target {
	if d <= 0 {
		return t
	}
	switch {
	case t.mysql != nil:
		cfg := t.mysql.Clone()
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		secs := int64((d + time.Second - 1) / time.Second) // whole seconds, rounded up
		cfg.Params["innodb_lock_wait_timeout"] = strconv.FormatInt(secs, 10)
		t.mysql = cfg
	case t.pg != nil:
		cfg := t.pg.Copy()
		cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(d.Milliseconds(), 10)
		t.pg = cfg
	}
	return t
}

// explainLockWait turns a lock wait timeout of a statement into a
// *LockWaitError; other errors pass unchanged.
func (s *Sink) explainLockWait(err error, t *tableInfo, subtask int, wait time.Duration, prepared bool) error {
	if err == nil || !s.target.dialect.lockTimeout(err) || errors.Is(err, ErrLockWait) {
		return err
	}
	return &LockWaitError{Table: t.name, Subtask: subtask, Timeout: wait, Prepared: prepared, Err: err}
}
