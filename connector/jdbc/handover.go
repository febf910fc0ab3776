package jdbc

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// How a prepared MySQL/MariaDB XA branch passes from the session that
// prepared it to the one that commits or rolls it back. (A PostgreSQL
// prepared transaction belongs to no session: none of this applies.)
//
// MariaDB (seen on 10.11) can lose a commit that races the disconnect of
// the session that prepared the branch. Ending a session, the server
// first makes its prepared xid committable by others, then drops the
// connection from its process list, and only then lets InnoDB release
// the transaction from the session (per a reading of its source). An XA
// COMMIT from another session before that last step answers OK and
// forgets the xid, but commits nothing: the transaction stays prepared
// inside InnoDB, holding its row locks, missing from XA RECOVER until the
// server restarts. Four loops of "prepare, close the session, commit at
// once from another one" lost 6 commits in 4,000 so; waiting first until
// the process list no longer showed the closed session, none in 16,000.
//
// So Weir does not commit across a disconnect it has not seen finish:
//   - The writer keeps the session that prepared a branch (xaLink), and
//     the committer commits on it (at most maxHeld per subtask; more are
//     given up, oldest first).
//   - A session given up while its branch may be prepared and uncommitted
//     (the writer fails or closes first, or its XA PREPARE failed) is
//     recorded, then closed, by detach. Before this process commits or rolls back XA branches on
//     that server from another session, awaitDetached waits until the
//     server's process list no longer shows the recorded connections, and
//     detachGrace more for the step after. That narrows the window
//     rather than closing it. (InnoDB's transaction list is no better a
//     sign: in 3 of 14,000 closes here it kept showing the closed
//     session's id on its prepared transaction for seconds on end, while
//     a commit from elsewhere then went through.)
//   - After an XA COMMIT answers OK, the branch's XA log row must be
//     visible; if not, the commit was lost and the error says so
//     (confirmCommitted).
//
// Sessions of a crashed process are left to that check: on one host the
// server ends them as soon as it reads their end, well before a restarted
// process commits, but after a network partition it ends them only when
// it notices. A lost XA ROLLBACK is not detected: its rows stay locked,
// and writes to them wait and fail with a *LockWaitError.

// closing lists, per server and user (closingKey), the connections this
// process gave up while they might hold a prepared branch, until the
// server is seen to have dropped them. It is process-wide: a restarted
// job has a new Sink but the same server.
var closing = struct {
	sync.Mutex
	conns map[string]map[int64]time.Time // when each was recorded
}{conns: map[string]map[int64]time.Time{}}

// detachWait bounds how long awaitDetached waits for the server to drop a
// closed connection (milliseconds, normally); detachGrace is the wait
// after that, for InnoDB's part of the disconnect.
const (
	detachWait  = 10 * time.Second
	detachGrace = 20 * time.Millisecond
)

// closingKey keys closing: the server's address as configured and the
// user, since without the PROCESS privilege a user sees only its own
// connections.
func (t target) closingKey() string {
	user := ""
	if t.mysql != nil {
		user = t.mysql.User
	}
	return user + "@" + t.address()
}

// detach closes sess, whose connection connID may hold an uncommitted
// prepared branch, and records the connection until the server has
// dropped it.
func (s *Sink) detach(sess session, connID int64) {
	if connID != 0 && s.target.dialect.detachAfterPrepare() {
		recordClosing(s.target.closingKey(), connID)
	}
	sess.release(true)
}

// recordClosing records connection connID under key as closing.
func recordClosing(key string, connID int64) {
	closing.Lock()
	defer closing.Unlock()
	if closing.conns[key] == nil {
		closing.conns[key] = map[int64]time.Time{}
	}
	closing.conns[key][connID] = time.Now()
}

// awaitDetached waits, asking through sess, until the server has dropped
// every connection that detach closed on it.
func (s *Sink) awaitDetached(ctx context.Context, sess session) error {
	return awaitClosed(ctx, s.target.dialect, s.target.closingKey(), sess, detachWait)
}

// awaitClosed waits until the server no longer lists the connections
// recorded under key, then detachGrace more; after wait it fails, so the
// attempt restarts, and the records stay. A record older than the
// server's start is forgotten: a restarted server reuses ids.
func awaitClosed(ctx context.Context, d dialect, key string, sess session, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		ids := closingOn(key)
		if len(ids) == 0 {
			return nil
		}
		own, err := sess.id(ctx) // a reused id cannot be waited out by its own session
		if err != nil {
			return err
		}
		open, err := d.openConnections(ctx, sess, ids)
		if err != nil {
			return fmt.Errorf("jdbc: waiting for the server to drop closed connections %v: %w", ids, err)
		}
		open = slices.DeleteFunc(open, func(id int64) bool { return id == own })
		if len(open) > 0 {
			if open, err = sinceStart(ctx, d, sess, key, open); err != nil {
				return err
			}
		}
		forgetClosed(key, ids, open)
		if len(open) == 0 {
			return pause(ctx, detachGrace)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jdbc: %s still lists connections %v %s after they were closed holding prepared XA "+
				"transactions; committing or rolling back XA transactions before the server has dropped them can "+
				"lose the commit (a MariaDB race), so this attempt stops (the restart strategy retries it)",
				d.name(), open, wait)
		}
		if err := pause(ctx, 2*time.Millisecond); err != nil {
			return err
		}
	}
}

// pause waits d, or until ctx is done (its error).
func pause(ctx context.Context, d time.Duration) error {
	if !clock.Sleep(ctx, clock.Real, d) {
		return ctx.Err()
	}
	return nil
}

// sinceStart returns those of ids recorded under key since the server
// started (a second's leeway); the others name connections of a server
// that has restarted since.
func sinceStart(ctx context.Context, d dialect, sess session, key string, ids []int64) ([]int64, error) {
	up, err := d.uptime(ctx, sess)
	if err != nil {
		return nil, fmt.Errorf("jdbc: reading the server's uptime: %w", err)
	}
	started := time.Now().Add(-up - time.Second)
	closing.Lock()
	defer closing.Unlock()
	return slices.DeleteFunc(ids, func(id int64) bool { return closing.conns[key][id].Before(started) }), nil
}

// closingOn returns the connections recorded under key, in order.
func closingOn(key string) []int64 {
	closing.Lock()
	defer closing.Unlock()
	return slices.Sorted(maps.Keys(closing.conns[key]))
}

// forgetClosed drops the connections of ids that are not in open.
func forgetClosed(key string, ids, open []int64) {
	still := map[int64]bool{}
	for _, id := range open {
		still[id] = true
	}
	closing.Lock()
	defer closing.Unlock()
	for _, id := range ids {
		if !still[id] {
			delete(closing.conns[key], id)
		}
	}
}

// openConnections returns those of ids the server's process list shows
// (a user without the PROCESS privilege sees its own connections).
func (mysqlDialect) openConnections(ctx context.Context, s session, ids []int64) ([]int64, error) {
	return openOf(ctx, s, "SELECT id FROM information_schema.processlist WHERE id IN (%s)", ids)
}

func (pgDialect) openConnections(ctx context.Context, s session, ids []int64) ([]int64, error) {
	return openOf(ctx, s, "SELECT pid FROM pg_stat_activity WHERE pid IN (%s)", ids)
}

// uptime is how long the server has run.
func (mysqlDialect) uptime(ctx context.Context, s session) (time.Duration, error) {
	return uptimeOf(ctx, s, "SHOW GLOBAL STATUS LIKE 'Uptime'", 1)
}

func (pgDialect) uptime(ctx context.Context, s session) (time.Duration, error) {
	return uptimeOf(ctx, s, "SELECT floor(extract(epoch FROM now() - pg_postmaster_start_time()))::bigint", 0)
}

// uptimeOf reads whole seconds from column col of q's one row.
func uptimeOf(ctx context.Context, s session, q string, col int) (time.Duration, error) {
	rows, err := s.query(ctx, q)
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 || len(rows[0]) <= col {
		return 0, fmt.Errorf("%s: %d rows", q, len(rows))
	}
	n, err := strconv.ParseInt(rows[0][col], 10, 64)
	return time.Duration(n) * time.Second, err
}

// openOf runs q with the ids as its IN list (integers, written inline) and
// returns the ids it lists.
func openOf(ctx context.Context, s session, q string, ids []int64) ([]int64, error) {
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = strconv.FormatInt(id, 10)
	}
	rows, err := s.query(ctx, fmt.Sprintf(q, strings.Join(list, ", ")))
	if err != nil {
		return nil, err
	}
	var open []int64
	for _, r := range rows {
		if id, err := strconv.ParseInt(r[0], 10, 64); err == nil {
			open = append(open, id)
		}
	}
	return open, nil
}

// confirmCommitted checks, after an XA COMMIT of x answered OK on sess,
// that the transaction's XA log row is visible: the commit happened. If
// not, the server forgot the xid without committing it (see above).
func (c *xaCommitter) confirmCommitted(ctx context.Context, sess session, id event.CheckpointID, x string) error {
	d := c.s.target.dialect
	rows, err := sess.query(ctx, "SELECT 1 FROM "+quoteQualified(c.s.opts.XALogTable, d.quoteIdent)+
		" WHERE xid = "+d.placeholder(1), x)
	if err != nil || len(rows) > 0 {
		return err
	}
	return fmt.Errorf("jdbc: table %q: %s answered XA COMMIT of %s (checkpoint %d) with success, but nothing was "+
		"committed: its row in the XA log %s is not there. The server lost the commit; MariaDB does so when the "+
		"commit races the disconnect of the session that prepared the transaction. The transaction is still "+
		"prepared inside the server, holding its row locks, and shows in XA RECOVER again once the server "+
		"restarts; restart the database server, then the job from its latest checkpoint, whose committer "+
		"commits it then: %w", c.t.name, d.name(), x, id, c.s.opts.XALogTable, operator.ErrDataLoss)
}
