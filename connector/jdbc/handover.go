package jdbc

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// How a prepared MySQL/MariaDB XA branch passes from the session that
// prepared it to the one that commits or rolls it back. (A PostgreSQL
// prepared transaction belongs to no session: none of this applies.)
//
// MariaDB (seen on 10.11) can lose a commit that races the disconnect of
// the session that prepared the branch. During the disconnect the server
// makes the xid committable before InnoDB lets go of the transaction; an
// XA COMMIT from another session in that window answers OK and forgets the
// xid, but commits nothing. The transaction stays prepared inside InnoDB,
// holding its row locks, missing from XA RECOVER until the server
// restarts. Four loops of "prepare, close the session, commit at once from
// another one" lost 6 commits in 4,000 so.
//
// So Weir never commits across a disconnect it has not seen finish:
//   - The writer keeps the session that prepared a branch (xaLink), and
//     the committer commits on it.
//   - A session given up while its branch is uncommitted (the writer fails
//     or closes first) is closed by detach, which records its connection.
//     Before this process commits or rolls back XA branches on that server
//     from any other session, awaitDetached waits until the server no
//     longer lists the recorded connections.
//   - After an XA COMMIT answers OK, the branch's XA log row must be
//     visible; if not, the commit was lost and the error says so
//     (confirmCommitted).
//
// A crashed process's sessions are the one case left: the server drops
// them when it reads their end, long before a restarted process
// commits, and the check after the commit reports a loss if not.

// closing lists, per server address, the connections this process closed
// while they held an uncommitted prepared branch and that the server may
// still list. It is process-wide: a restarted job has a new Sink but the
// same server.
var closing = struct {
	sync.Mutex
	conns map[string]map[int64]bool
}{conns: map[string]map[int64]bool{}}

// detachWait bounds how long awaitDetached waits for the server to drop a
// closed connection (milliseconds, normally).
const detachWait = 10 * time.Second

// detach closes sess, which holds the uncommitted prepared branch of
// connection connID, and records the connection until the server has
// dropped it.
func (s *Sink) detach(sess session, connID int64) {
	sess.release(true)
	if connID != 0 && s.target.dialect.detachAfterPrepare() {
		recordClosing(s.target.address(), connID)
	}
}

// recordClosing records connection connID on addr as closing.
func recordClosing(addr string, connID int64) {
	closing.Lock()
	defer closing.Unlock()
	if closing.conns[addr] == nil {
		closing.conns[addr] = map[int64]bool{}
	}
	closing.conns[addr][connID] = true
}

// awaitDetached waits, asking through sess, until the server no longer
// lists any connection that detach closed on it.
func (s *Sink) awaitDetached(ctx context.Context, sess session) error {
	return awaitClosed(ctx, s.target.dialect, s.target.address(), sess, detachWait)
}

func awaitClosed(ctx context.Context, d dialect, addr string, sess session, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		ids := closingOn(addr)
		if len(ids) == 0 {
			return nil
		}
		open, err := d.openConnections(ctx, sess, ids)
		if err != nil {
			return fmt.Errorf("jdbc: waiting for the server to drop closed connections %v: %w", ids, err)
		}
		forgetClosed(addr, ids, open)
		if len(open) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jdbc: %s still lists connections %v %s after they were closed holding prepared XA "+
				"transactions; committing or rolling back XA transactions before the server has dropped them can "+
				"lose the commit (a MariaDB race), so this attempt stops (the restart strategy retries it)",
				d.name(), open, wait)
		}
		select {
		case <-time.After(2 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// closingOn returns the recorded connections on addr, in order.
func closingOn(addr string) []int64 {
	closing.Lock()
	defer closing.Unlock()
	var ids []int64
	for id := range closing.conns[addr] {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// forgetClosed drops the connections of ids that are not in open.
func forgetClosed(addr string, ids, open []int64) {
	still := map[int64]bool{}
	for _, id := range open {
		still[id] = true
	}
	closing.Lock()
	defer closing.Unlock()
	for _, id := range ids {
		if !still[id] {
			delete(closing.conns[addr], id)
		}
	}
}

// openConnections returns those of ids the server still lists.
func (mysqlDialect) openConnections(ctx context.Context, s session, ids []int64) ([]int64, error) {
	return openOf(ctx, s, "SELECT id FROM information_schema.processlist WHERE id IN (%s)", ids)
}

func (pgDialect) openConnections(ctx context.Context, s session, ids []int64) ([]int64, error) {
	return openOf(ctx, s, "SELECT pid FROM pg_stat_activity WHERE pid IN (%s)", ids)
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
