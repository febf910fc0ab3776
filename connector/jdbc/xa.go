package jdbc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// xaWriter writes the rows of each checkpoint interval into one XA
// transaction on a pinned session (MySQL allows one XA transaction per
// connection), started lazily by the first flush, and prepares it at the
// barrier. The committable is the xid; the committer commits it when the
// checkpoint completes. The transaction also inserts its xid into the XA log
// table, so that after the commit "committed" can be told from "lost".
//
// A lost connection loses the open (unprepared) transaction: the writer
// fails and the job restarts from its last checkpoint, whose rows are all
// in prepared or committed transactions (or in the writer state, below).
//
// On a table with a key, a prepared transaction keeps its rows locked until
// it is committed, and the commit runs on the subtask's goroutine. Writing
// the same key again before that commit would wait for it forever (MySQL:
// until the lock wait timeout). So while a transaction this writer prepared
// is not committed, flushes are deferred: rows stay buffered. Rows still
// buffered at a barrier (the notification of the previous checkpoint came
// late) become a write-ahead-log committable instead, applied by the
// committer in a local transaction that inserts the batch's name into the XA
// log (a duplicate name means "applied already": skipped). It counts as
// uncommitted too, so no transaction writes ahead of it.
type xaWriter struct {
	s           *Sink
	t           *tableInfo
	p           pool
	ctx         context.Context
	buf         *buffer
	link        *xaLink
	deferWrites bool // defer flushes while a prepared transaction is uncommitted (keyed tables)
	// Guarded by buf.mu (flushes run under it, and so does prepare).
	sess    session // the open transaction's session; nil between transactions
	connID  int64   // its server connection id, for messages and detach
	cur     xid
	last    event.CheckpointID // the last barrier seen, or the restored checkpoint
	subtask int
	prefix  string
	run     string // this writer's run component of its xids (see xid)
	// lockWait is the sessions' lock wait timeout, for messages.
	lockWait time.Duration
	lease    *identityLease // held until Close
}

func (s *Sink) newXAWriter(ctx context.Context, wctx operator.WriterContext, p pool, t *tableInfo, lease *identityLease) (*xaWriter, error) {
	w := &xaWriter{s: s, t: t, p: p, ctx: ctx, lease: lease, last: wctx.RestoredCheckpoint, subtask: wctx.Subtask.Index,
		prefix: xidPrefix(wctx.JobID, s.opts.Name), run: newRun(), link: s.link(wctx.Subtask.Index), deferWrites: !t.isAppend(),
		lockWait: s.lockWait(wctx)}
	for _, h := range w.link.reset(w.last) { // a predecessor's, if it was not closed
		s.detach(h.sess, h.connID)
	}
	r := xaRecovery{s: s, p: p, prefix: w.prefix, subtask: wctx.Subtask.Index,
		parallelism: max(1, wctx.Parallelism), restored: wctx.RestoredCheckpoint, wctx: wctx}
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	w.buf = newBuffer(s.opts.BufferFlushMaxRows, s.opts.BufferFlushInterval, w.flushLocked)
	return w, nil
}

func (w *xaWriter) Write(r event.Record) error {
	row, err := w.s.rowOf(w.t, r.Value)
	if err != nil {
		return err
	}
	if w.deferWrites { // may go into a write-ahead-log committable
		if row, err = normalize(w.t, row); err != nil {
			return err
		}
	}
	return w.buf.add(row)
}

func (w *xaWriter) Flush(bool) error { return w.buf.flushThen(nil) }

// flushLocked writes rows into the open transaction, starting one if needed.
func (w *xaWriter) flushLocked(rows []event.Row) error {
	if w.deferWrites && w.link.uncommitted() {
		return errDeferred
	}
	if w.sess == nil {
		if err := w.beginLocked(); err != nil {
			return err
		}
	}
	if err := w.t.apply(w.ctx, w.sess, rows); err != nil {
		return w.abandonLocked(w.s.explainLockWait(err, w.t, w.subtask, w.lockWait, true), false)
	}
	w.s.hooks.onConn(w.ctx, "xa-write", w.sess)
	return nil
}

func (w *xaWriter) beginLocked() error {
	sess, err := w.p.acquire(w.ctx)
	if err != nil {
		return fmt.Errorf("jdbc: table %q: connecting for an XA transaction: %w", w.t.name, err)
	}
	x := xid{prefix: w.prefix, subtask: w.subtask, seq: w.last + 1, run: w.run}
	if err := execAll(w.ctx, sess, w.s.target.dialect.xaStart(x.String())); err != nil {
		sess.release(true)
		return fmt.Errorf("jdbc: table %q: starting XA transaction %s: %w", w.t.name, x, err)
	}
	w.sess, w.cur = sess, x
	if w.connID, err = sess.id(w.ctx); err != nil { // detach needs it
		return w.abandonLocked(err, false)
	}
	return nil
}

// abandonLocked drops the open transaction: closing its connection rolls
// it back. The rows since the last barrier are replayed after the restart.
// After a failed XA PREPARE (mayBePrepared) it may be prepared all the
// same (the answer was lost), so the session is given up as a prepared
// one is (detach).
func (w *xaWriter) abandonLocked(cause error, mayBePrepared bool) error {
	if mayBePrepared {
		w.s.detach(w.sess, w.connID)
	} else {
		w.sess.release(true)
	}
	w.sess = nil
	var bad *BadRowError
	if errors.As(cause, &bad) || errors.Is(cause, ErrLockWait) {
		return cause
	}
	return fmt.Errorf("jdbc: table %q: XA transaction %s on connection %d failed; it is rolled back and the job "+
		"must restart from its last checkpoint: %w", w.t.name, w.cur, w.connID, cause)
}

// PrepareCommit flushes and prepares the open transaction (if any rows were
// written since the last barrier); its xid is the committable. Rows whose
// flush is deferred become a write-ahead-log committable.
func (w *xaWriter) PrepareCommit(id event.CheckpointID) ([][]byte, error) {
	var out [][]byte
	err := w.buf.flushThen(func() error {
		if w.sess != nil {
			if err := w.prepareLocked(); err != nil {
				return err
			}
			out = append(out, []byte(w.cur.String()))
		}
		w.last = id
		w.link.setLast(id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = w.buf.take(func(rows []event.Row) error {
		if len(rows) == 0 {
			return nil
		}
		b, err := walBatch{origin: w.subtask, id: id, rows: rows}.encode()
		if err != nil {
			return err
		}
		out = append(out, b)
		w.link.prepared(xid{prefix: w.prefix, subtask: w.subtask, seq: id, wal: true}.String(), nil)
		return nil
	})
	return out, err
}

func (w *xaWriter) prepareLocked() error {
	d, x := w.s.target.dialect, w.cur.String()
	if err := insertLog(w.ctx, d, w.sess, w.s.opts.XALogTable, w.cur); err != nil {
		return w.abandonLocked(fmt.Errorf("preparing: %w", err), false)
	}
	if err := execAll(w.ctx, w.sess, d.xaPrepare(x)); err != nil {
		return w.abandonLocked(fmt.Errorf("preparing: %w", err), true)
	}
	// Prepared: the transaction now survives this session. On MySQL the
	// committer commits it on this session (see handover.go); on
	// PostgreSQL any session may, and this one goes back to the pool.
	if d.detachAfterPrepare() {
		for _, e := range w.link.prepared(x, &heldSession{sess: w.sess, connID: w.connID}) {
			w.s.detach(e.sess, e.connID)
		}
	} else {
		w.link.prepared(x, nil)
		w.sess.release(false)
	}
	w.sess = nil
	return w.s.hooks.maybe("prepare")
}

func (w *xaWriter) SnapshotState(event.CheckpointID) ([]byte, error) { return nil, nil }

// Close rolls back the open transaction (by closing its connection);
// prepared ones stay for the committer or the next recovery, and the
// sessions that prepared them are closed (detach).
func (w *xaWriter) Close() error {
	w.buf.close(func() {
		if w.sess != nil {
			w.sess.release(true)
			w.sess = nil
		}
	})
	for _, h := range w.link.drop() {
		w.s.detach(h.sess, h.connID)
	}
	w.lease.release()
	w.s.release()
	return nil
}

// xaLink is what the writer and the committer of one subtask index share:
// the last barrier the writer saw, and the xids it prepared that are not
// committed yet, with the sessions that prepared them while the writer
// holds those (MySQL, see handover.go). Both run on the subtask's
// goroutine, but the writer's flush timer reads it too.
type xaLink struct {
	mu      sync.Mutex
	last    event.CheckpointID
	pending map[string]*heldSession // nil: no session held
	held    uint64                  // sessions ever held, to order them
}

// heldSession is a session that prepared a branch, kept for its commit.
type heldSession struct {
	sess   session
	connID int64  // the server's id of its connection
	n      uint64 // its place in the order the link got them
}

// maxHeld bounds the sessions a link holds. Each is a connection, and a
// transaction prepared for a checkpoint that failed or completes late
// waits for a later checkpoint's commit.
const maxHeld = 4

// reset starts the link afresh for a writer restored at last, and
// returns the sessions still held (to detach).
func (l *xaLink) reset(last event.CheckpointID) []*heldSession {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.dropLocked()
	l.last, l.pending = last, map[string]*heldSession{}
	return held
}

// drop takes every held session out of the link; their xids stay pending.
func (l *xaLink) drop() []*heldSession {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropLocked()
}

func (l *xaLink) dropLocked() []*heldSession {
	var held []*heldSession
	for x, h := range l.pending {
		if h != nil {
			held = append(held, h)
			l.pending[x] = nil
		}
	}
	return held
}

// take hands the session that prepared x to the committer (nil if none).
func (l *xaLink) take(x string) *heldSession {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.pending[x]
	if h != nil {
		l.pending[x] = nil
	}
	return h
}

func (l *xaLink) setLast(id event.CheckpointID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = id
}

func (l *xaLink) getLast() event.CheckpointID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// prepared adds x, with the session that prepared it if h is set; it
// returns the sessions that no longer fit (maxHeld), oldest first, to
// detach.
func (l *xaLink) prepared(x string, h *heldSession) (evicted []*heldSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h != nil {
		l.held++
		h.n = l.held
	}
	l.pending[x] = h
	for {
		oldest, count := "", 0
		for y, g := range l.pending {
			if g != nil {
				count++
				if oldest == "" || g.n < l.pending[oldest].n {
					oldest = y
				}
			}
		}
		if count <= maxHeld {
			return evicted
		}
		evicted = append(evicted, l.pending[oldest])
		l.pending[oldest] = nil
	}
}

func (l *xaLink) committed(x string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pending, x)
}

func (l *xaLink) uncommitted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending) > 0
}

// xaRecovery cleans up after a previous attempt, before a writer starts:
// every prepared transaction of this sink that belongs to a checkpoint after
// the restored one (or any, on a fresh start) is rolled back, and so are the
// XA log rows of such transactions. Transactions of the restored checkpoint
// (and older pending ones) stay: the committer commits them at open.
//
// A subtask owns the xids of old subtasks i with i mod parallelism ==
// subtask, the same rule by which operator.SinkOperator hands it their
// committables after a rescale.
type xaRecovery struct {
	s           *Sink
	p           pool
	prefix      string
	subtask     int
	parallelism int
	restored    event.CheckpointID
	wctx        operator.WriterContext
}

func (r *xaRecovery) owns(x xid) bool {
	return x.prefix == r.prefix && x.subtask%r.parallelism == r.subtask
}

func (r *xaRecovery) run(ctx context.Context) error {
	sess, err := r.p.acquire(ctx)
	if err != nil {
		return fmt.Errorf("jdbc: XA recovery of %s: %w", r.prefix, err)
	}
	err = r.s.awaitDetached(ctx, sess)
	if err == nil {
		err = r.rollBackNewer(ctx, sess)
	}
	if err == nil {
		err = r.forgetNewer(ctx, sess)
	}
	sess.release(err != nil)
	return err
}

func (r *xaRecovery) rollBackNewer(ctx context.Context, sess session) error {
	d := r.s.target.dialect
	ids, err := d.xaRecover(ctx, sess)
	if err != nil {
		return fmt.Errorf("jdbc: XA recovery of %s: listing prepared transactions: %w", r.prefix, err)
	}
	for _, id := range ids {
		x, ok := parseXid(id)
		if !ok || !r.owns(x) || x.seq <= r.restored {
			continue
		}
		if err := r.rollBack(ctx, sess, id); err != nil {
			return err
		}
		r.s.opts.Logger.Info("jdbc: rolled back a prepared transaction of an unfinished checkpoint",
			"xid", id, "restored", r.restored)
	}
	return nil
}

// rollBack rolls back xid; "unknown" means done, unless the xid is still
// prepared (MySQL: still attached to a session that is going away).
func (r *xaRecovery) rollBack(ctx context.Context, sess session, id string) error {
	d := r.s.target.dialect
	for attempt := 0; ; attempt++ {
		_, err := sess.exec(ctx, d.xaRollback(id))
		if err == nil {
			return nil
		}
		if !d.unknownXid(err) {
			return fmt.Errorf("jdbc: XA recovery: rolling back %s: %w", id, err)
		}
		st, lerr := xaState(ctx, d, sess, r.s.opts.XALogTable, id)
		if lerr == nil && st != xaPrepared {
			return nil
		}
		if attempt >= attachedRetries {
			return fmt.Errorf("jdbc: XA recovery: %s stays prepared and attached to another session; "+
				"is another job with the same id running? %w", id, err)
		}
		time.Sleep(attachedWait)
	}
}

// forgetNewer deletes the XA log rows of transactions after the restored
// checkpoint: none can be committed unless an older checkpoint than the
// last committed one was restored. Then their rows would be written again:
// an operator.ReplayError, unless sink.allow-replay accepts it (and the
// rows go, so that their xids can be used again).
// The rows are found by a plain (non-locking) read and deleted by xid: a
// predicate DELETE would wait for the rows that other subtasks' prepared
// transactions hold locked until their checkpoint completes.
func (r *xaRecovery) forgetNewer(ctx context.Context, sess session) error {
	d := r.s.target.dialect
	table := quoteQualified(r.s.opts.XALogTable, d.quoteIdent)
	rows, err := sess.query(ctx, "SELECT xid FROM "+table+" WHERE prefix = "+d.placeholder(1)+
		" AND checkpoint_id > "+d.placeholder(2), r.prefix, int64(r.restored))
	if err != nil {
		return fmt.Errorf("jdbc: XA recovery: reading %s: %w", r.s.opts.XALogTable, err)
	}
	var ids []string
	var newest event.CheckpointID
	for _, row := range rows {
		if x, ok := parseXid(row[0]); ok && r.owns(x) {
			ids = append(ids, row[0])
			newest = max(newest, x.seq)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if r.restored > 0 {
		// Committed (a prepared one was rolled back above): a checkpoint
		// after the restored one completed and was committed.
		evidence := fmt.Sprintf("committed XA transactions in %s, e.g. %s", r.s.opts.XALogTable, ids[0])
		if err := r.s.replay(r.wctx, newest, evidence); err != nil {
			return err
		}
	}
	if err := deleteXids(ctx, d, sess, r.s.opts.XALogTable, ids); err != nil {
		return fmt.Errorf("jdbc: XA recovery: cleaning %s: %w", r.s.opts.XALogTable, err)
	}
	return nil
}

// insertLog records x in the XA log.
func insertLog(ctx context.Context, d dialect, s session, logTable string, x xid) error {
	_, err := s.exec(ctx, "INSERT INTO "+quoteQualified(logTable, d.quoteIdent)+
		" (xid, prefix, subtask, checkpoint_id) VALUES ("+d.placeholder(1)+", "+d.placeholder(2)+", "+
		d.placeholder(3)+", "+d.placeholder(4)+")", x.String(), x.prefix, x.subtask, int64(x.seq))
	return err
}

// deleteXids deletes the XA log rows of ids, by primary key.
func deleteXids(ctx context.Context, d dialect, s session, logTable string, ids []string) error {
	ph := make([]string, len(ids))
	args := make([]any, len(ids))
	for i, id := range ids {
		ph[i], args[i] = d.placeholder(i+1), id
	}
	_, err := s.exec(ctx, "DELETE FROM "+quoteQualified(logTable, d.quoteIdent)+
		" WHERE xid IN ("+strings.Join(ph, ", ")+")", args...)
	return err
}

// How long a commit or rollback waits for a prepared MySQL XA branch to
// detach from the session that prepared it.
const (
	attachedRetries = 20
	attachedWait    = 100 * time.Millisecond
)

type xaStatus int

const (
	xaPrepared xaStatus = iota
	xaCommitted
	xaLost
)

// xaState tells whether xid is prepared, committed (in the XA log) or lost.
// The order matters: once a transaction is no longer prepared its outcome
// is final, so a log lookup after the prepared check cannot miss a commit.
func xaState(ctx context.Context, d dialect, s session, logTable, id string) (xaStatus, error) {
	ids, err := d.xaRecover(ctx, s)
	if err != nil {
		return xaLost, err
	}
	for _, p := range ids {
		if p == id {
			return xaPrepared, nil
		}
	}
	rows, err := s.query(ctx, "SELECT 1 FROM "+quoteQualified(logTable, d.quoteIdent)+" WHERE xid = "+d.placeholder(1), id)
	if err != nil {
		return xaLost, err
	}
	if len(rows) > 0 {
		return xaCommitted, nil
	}
	return xaLost, nil
}

// xaCommitter commits the xids of completed checkpoints, in order.
type xaCommitter struct {
	committerBase
	prefix string
	link   *xaLink
	// trim lists committed xids whose XA log rows are still needed: a row
	// can go once no restorable checkpoint lists its xid. The xid was
	// committed when the writer had seen barriers up to last, so every
	// checkpoint after last was snapshotted without it; once such a
	// checkpoint has completed (a Commit of an id > last is proof), the
	// latest completed checkpoint (what a restore picks) does not list it.
	// Lost on a crash: those few rows stay until a fresh start of the job
	// deletes its rows.
	trim []committedXid
}

type committedXid struct {
	xid  string
	last event.CheckpointID
}

// Commit commits every xid of checkpoint id (and applies the rows of
// deferred batches). Already committed is success; neither prepared nor
// committed is data loss, reported and never retried.
func (c *xaCommitter) Commit(ctx context.Context, id event.CheckpointID, committables [][]byte) error {
	c.trimLog(ctx, id)
	for _, raw := range committables {
		if err := c.s.hooks.maybe("commit"); err != nil {
			return err
		}
		name, op := string(raw), func() error { return c.commitOne(ctx, id, string(raw)) }
		if len(raw) > 0 && raw[0] == walMagic {
			b, err := decodeWAL(raw)
			if err != nil {
				return fmt.Errorf("jdbc: table %q: %w", c.t.name, err)
			}
			name = xid{prefix: c.prefix, subtask: b.origin, seq: b.id, wal: true}.String()
			op = func() error { return c.applyDeferred(ctx, name, b) }
		}
		if err := retry(ctx, c.s.target.dialect, c.s.opts.MaxRetries, "commit of "+name, c.log, op); err != nil {
			return err
		}
		c.link.committed(name)
		c.trim = append(c.trim, committedXid{xid: name, last: c.link.getLast()})
	}
	return c.s.hooks.maybe("after-commit")
}

// applyDeferred writes a deferred batch in a local transaction that first
// inserts its name into the XA log: if the name is there, it was applied.
func (c *xaCommitter) applyDeferred(ctx context.Context, name string, b walBatch) error {
	d := c.s.target.dialect
	err := inLocalTx(ctx, c.s, c.p, "wal-apply", func(s session) error {
		if err := insertLog(ctx, d, s, c.s.opts.XALogTable, xid{prefix: c.prefix, subtask: b.origin, seq: b.id, wal: true}); err != nil {
			return err
		}
		return c.t.apply(ctx, s, b.rows)
	})
	if code := mysqlCode(err); code == 1062 || pgCode(err) == "23505" {
		var bad *BadRowError
		if !errors.As(err, &bad) { // the log row, not a data row
			return nil
		}
	}
	return err
}

// commitOne commits x on the session that prepared it if the writer
// holds it, else on another one once the server has dropped the sessions
// this process gave up (see handover.go).
func (c *xaCommitter) commitOne(ctx context.Context, id event.CheckpointID, x string) error {
	h := c.link.take(x)
	if h == nil {
		return c.commitElsewhere(ctx, id, x)
	}
	c.s.hooks.onConn(ctx, "xa-commit", h.sess)
	if err := c.commitOn(ctx, h.sess, id, x); err != nil {
		c.s.detach(h.sess, h.connID) // a retry commits elsewhere
		return err
	}
	h.sess.release(false)
	return nil
}

func (c *xaCommitter) commitElsewhere(ctx context.Context, id event.CheckpointID, x string) error {
	sess, err := c.p.acquire(ctx)
	if err != nil {
		return err
	}
	err = c.s.awaitDetached(ctx, sess)
	if err == nil {
		c.s.hooks.onConn(ctx, "xa-commit", sess)
		err = c.commitOn(ctx, sess, id, x)
	}
	sess.release(err != nil)
	return err
}

// commitOn commits x through sess. Unknown to the server, x was committed
// (its XA log row is there) or lost; still prepared, it is attached to
// another session (one of a crashed process the server has not dropped
// yet): wait for it, a while.
func (c *xaCommitter) commitOn(ctx context.Context, sess session, id event.CheckpointID, x string) error {
	d := c.s.target.dialect
	for attempt := 0; ; attempt++ {
		_, cerr := sess.exec(ctx, d.xaCommit(x))
		if cerr == nil {
			return c.confirmCommitted(ctx, sess, id, x)
		}
		if !d.unknownXid(cerr) {
			return cerr
		}
		st, err := xaState(ctx, d, sess, c.s.opts.XALogTable, x)
		if err != nil {
			return err
		}
		switch {
		case st == xaCommitted:
			return nil
		case st == xaLost:
			return fmt.Errorf("jdbc: table %q: XA transaction %s of checkpoint %d is neither prepared nor committed; "+
				"its rows are lost (rolled back by an administrator or a server timeout?): %w",
				c.t.name, x, id, operator.ErrDataLoss)
		case attempt >= attachedRetries: // prepared, but attached to a live session
			return fmt.Errorf("jdbc: XA transaction %s stays attached to another session: %w", x, cerr)
		}
		time.Sleep(attachedWait)
	}
}

// trimLog deletes the XA log rows that no restorable checkpoint needs, now
// that checkpoint id (or a later one) has completed. Best effort.
func (c *xaCommitter) trimLog(ctx context.Context, id event.CheckpointID) {
	var ids []string
	var keep []committedXid
	for _, t := range c.trim {
		if t.last < id {
			ids = append(ids, t.xid)
		} else {
			keep = append(keep, t)
		}
	}
	if len(ids) == 0 {
		return
	}
	d := c.s.target.dialect
	err := func() error {
		sess, err := c.p.acquire(ctx)
		if err != nil {
			return err
		}
		err = deleteXids(ctx, d, sess, c.s.opts.XALogTable, ids)
		sess.release(err != nil)
		return err
	}()
	if err != nil {
		c.log("jdbc: trimming the XA log failed; will retry", "table", c.s.opts.XALogTable, "err", err)
		return
	}
	c.trim = keep
}
