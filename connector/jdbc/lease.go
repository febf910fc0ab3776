package jdbc

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/weirstream/weir/operator"
)

// identityWait is how long an exactly-once writer waits for its identity
// lock (see identityLease) before it fails. A restart after a crash waits
// here until the server has noticed the dead process's connection, which
// on one host takes milliseconds.
const identityWait = 10 * time.Second

// identityLease is a database lock an exactly-once writer holds on its
// identity — the job id (pipeline.name), sink.name and subtask index that
// name its XA transactions and its rows of the checkpoint table — for as
// long as it runs: MySQL's GET_LOCK, PostgreSQL's session advisory lock,
// held by a session of its own and released when that session closes
// (also when the process dies, once the server notices).
//
// Without it, two jobs running at once under one identity (the same
// pipeline.name and the same sink.name, e.g. one SQL script started twice
// against different tables) would silently undo each other's work: one's
// XA recovery rolls back the other's prepared transactions, one's fresh
// start resets the other's checkpoint-table rows. With it, the second
// writer fails before it touches anything, naming the identity and the
// connection that holds it.
//
// Each subtask locks its own index. That covers a rescaled restore: a
// subtask s that recovers the transactions of an old subtask i (i mod
// parallelism = s) has s ≤ i, so a job still running with subtask i also
// runs subtask s, and holds lock s.
type identityLease struct {
	sess session
}

// identityLockName is the lock's name: the xid prefix (at most 38 bytes,
// see xid) and the subtask index, within MySQL's 64 bytes.
func identityLockName(job, sink string, subtask int) string {
	return xidPrefix(job, sink) + ":" + strconv.Itoa(subtask)
}

// takeIdentity locks the identity of wctx's subtask in this sink.
func (s *Sink) takeIdentity(ctx context.Context, wctx operator.WriterContext, p pool) (*identityLease, error) {
	name := identityLockName(wctx.JobID, s.opts.Name, wctx.Subtask.Index)
	sess, err := p.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("jdbc: sink %q: locking its identity %s: %w", s.opts.Name, name, err)
	}
	wait := s.identityWait
	if wait <= 0 {
		wait = identityWait
	}
	ok, holder, err := s.target.dialect.lockIdentity(ctx, sess, name, wait)
	if err != nil {
		sess.release(true)
		return nil, fmt.Errorf("jdbc: sink %q: locking its identity %s: %w", s.opts.Name, name, err)
	}
	if !ok {
		sess.release(true)
		return nil, fmt.Errorf("jdbc: sink %q of job %q, subtask %d: another running writer holds this sink's identity "+
			"(lock %s, held by %s connection %s for %s): two jobs with the same pipeline.name and sink.name would "+
			"roll back each other's transactions and reset each other's checkpoint rows, so this attempt stops before "+
			"touching anything (the restart strategy retries it, and it runs once the other job ends); "+
			"give one of them another sink.name (or pipeline.name), or end the other job",
			s.opts.Name, wctx.JobID, wctx.Subtask.Index, name, s.target.dialect.name(), holder, wait)
	}
	return &identityLease{sess: sess}, nil
}

// release ends the lease by closing its session. Safe on nil.
func (l *identityLease) release() {
	if l != nil && l.sess != nil {
		l.sess.release(true)
		l.sess = nil
	}
}

// lockIdentity: GET_LOCK waits whole seconds at most (rounded up); the
// holder comes from IS_USED_LOCK.
func (mysqlDialect) lockIdentity(ctx context.Context, s session, name string, wait time.Duration) (bool, string, error) {
	secs := int64(math.Ceil(wait.Seconds()))
	rows, err := s.query(ctx, "SELECT GET_LOCK(?, ?)", name, secs)
	if err != nil {
		return false, "", err
	}
	switch firstValue(rows) {
	case "1":
		return true, "", nil
	case "0":
		holder, err := s.query(ctx, "SELECT IS_USED_LOCK(?)", name)
		if err != nil {
			return false, "", err
		}
		return false, orUnknown(firstValue(holder)), nil
	default:
		return false, "", fmt.Errorf("GET_LOCK(%s) returned %q", name, firstValue(rows))
	}
}

// lockIdentity: pg_try_advisory_lock on a 64-bit key hashed from name,
// tried every 100 ms; the holder comes from pg_locks (its backend PID).
func (pgDialect) lockIdentity(ctx context.Context, s session, name string, wait time.Duration) (bool, string, error) {
	h := sha256.Sum256([]byte(name))
	key := int64(binary.BigEndian.Uint64(h[:8]))
	deadline := time.Now().Add(wait)
	for {
		rows, err := s.query(ctx, "SELECT CASE WHEN pg_try_advisory_lock($1) THEN 1 ELSE 0 END", key)
		if err != nil {
			return false, "", err
		}
		if firstValue(rows) == "1" {
			return true, "", nil
		}
		if !time.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return false, "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	holder, err := s.query(ctx, "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "+
		"AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1", int64(uint64(key)>>32), int64(uint64(key)&math.MaxUint32))
	if err != nil {
		return false, "", err
	}
	return false, orUnknown(firstValue(holder)), nil
}

// firstValue is the first column of the first row, or "".
func firstValue(rows [][]string) string {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return ""
	}
	return rows[0][0]
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
