package jdbc

import (
	"context"
	"strings"
	"time"
)

// dialect is what differs between MySQL/MariaDB and PostgreSQL: SQL
// spelling, the two-phase-commit statements, catalog queries and the
// reading of driver errors. Implementations are stateless values.
type dialect interface {
	// name is "MySQL" or "PostgreSQL", for messages.
	name() string
	// open connects a pool of sessions to the target.
	open(t target) (pool, error)

	quoteIdent(name string) string // one identifier
	placeholder(i int) string      // the i-th (1-based) bind parameter
	// upsert is the clause after INSERT … VALUES that turns it into an upsert
	// on keys, updating the other columns.
	upsert(cols, keys []string) string
	// maxParams bounds the bind parameters of one statement.
	maxParams() int
	// begin starts a READ COMMITTED local transaction.
	begin() []string

	// Two-phase commit. xid is a plain ASCII id (see xid.go).
	xaStart(xid string) []string
	xaPrepare(xid string) []string
	xaCommit(xid string) string
	xaRollback(xid string) string
	// xaRecover lists the ids of every prepared transaction.
	xaRecover(ctx context.Context, s session) ([]string, error)
	// detachAfterPrepare: the session that prepared a transaction must be
	// closed before another session can commit it (MySQL: a prepared XA
	// branch stays attached to a live session).
	detachAfterPrepare() bool
	// unknownXid reports "no such prepared transaction".
	unknownXid(err error) bool
	// openConnections returns those of the server connections ids that
	// the server still lists (see awaitDetached).
	openConnections(ctx context.Context, s session, ids []int64) ([]int64, error)
	// uptime is how long the server has run (see awaitClosed).
	uptime(ctx context.Context, s session) (time.Duration, error)
	// lockIdentity takes the named lock for as long as session s lives,
	// waiting at most wait while another session holds it; ok is false
	// when that session still holds it then, and holder names it (see
	// identityLease).
	lockIdentity(ctx context.Context, s session, name string, wait time.Duration) (ok bool, holder string, err error)

	// createXALog and createCheckpoints create the bookkeeping tables.
	createXALog(name string) []string
	createCheckpoints(name string) []string
	// insertIfAbsent inserts the checkpoint row (job, sink, subtask, 0)
	// unless it exists.
	insertIfAbsent(checkpoints string) string

	// exists reports whether the table exists, without taking locks.
	exists(ctx context.Context, s session, table string) (bool, error)
	// columns lists the table's columns (name, type) in order; primaryKey
	// its primary key columns in key order.
	columns(ctx context.Context, s session, table string) ([][]string, error)
	primaryKey(ctx context.Context, s session, table string) ([]string, error)
	// uniqueKeys lists the columns of each unique index an upsert can
	// conflict on (primary key included; partial and expression indexes
	// left out), each in index order.
	uniqueKeys(ctx context.Context, s session, table string) ([][]string, error)
	// upsertServed reports whether the upsert on keys is served by one of
	// the unique keys: PostgreSQL's ON CONFLICT (keys) needs a unique index
	// on exactly those columns; MySQL's ON DUPLICATE KEY UPDATE fires on any
	// unique index, so one within keys makes keys unique.
	upsertServed(keys []string, uniques [][]string) bool

	// explainConnect marks a connection error that retrying cannot fix
	// (access denied, unknown database) permanent, with a hint.
	explainConnect(err error) error
	// lockTimeout reports a statement that waited too long for a lock.
	lockTimeout(err error) bool
	// transient reports an error worth retrying on a fresh session.
	transient(err error) bool
	// badRow explains a statement error caused by the data of one row.
	badRow(err error, st *stmtRows) (*BadRowError, bool)
}

// pool hands out sessions: one database connection each.
type pool interface {
	acquire(ctx context.Context) (session, error)
	close() error
}

// session is one pinned database connection. Not safe for concurrent use.
type session interface {
	exec(ctx context.Context, query string, args ...any) (int64, error)
	// query returns every row, each value as text ("" for NULL).
	query(ctx context.Context, query string, args ...any) ([][]string, error)
	// queryValues returns every row as the driver's values (nil for NULL).
	queryValues(ctx context.Context, query string, args ...any) ([][]any, error)
	// id is the server's id of the connection (CONNECTION_ID(), the backend PID).
	id(ctx context.Context) (int64, error)
	// release returns the session to the pool, or closes the connection
	// when discard is set or the session may be inside a transaction.
	release(discard bool)
}

// quoteQualified quotes each dot-separated part of name with q.
func quoteQualified(name string, q func(string) string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = q(p)
	}
	return strings.Join(parts, ".")
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// splitQualified splits "schema.table" into its parts ("" when unqualified).
func splitQualified(name string) (schema, table string) {
	if i := strings.LastIndex(name, "."); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// execAll runs statements in order.
func execAll(ctx context.Context, s session, stmts []string) error {
	for _, q := range stmts {
		if _, err := s.exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
