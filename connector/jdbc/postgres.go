package jdbc

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgDialect speaks PostgreSQL 11+ through pgx's native API (its
// database/sql adapter would need pgxpool's dependencies). The server needs
// max_prepared_transactions > 0 for StrategyXA.
type pgDialect struct{}

func (pgDialect) name() string { return "PostgreSQL" }

func (pgDialect) open(t target) (pool, error) { return &pgPool{cfg: t.pg, maxIdle: 16}, nil }

func (pgDialect) quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func (pgDialect) placeholder(i int) string   { return "$" + strconv.Itoa(i) }
func (pgDialect) maxParams() int             { return 65535 }

func (d pgDialect) upsert(cols, keys []string) string {
	isKey := map[string]bool{}
	qk := make([]string, len(keys))
	for i, k := range keys {
		isKey[k] = true
		qk[i] = d.quoteIdent(k)
	}
	var sets []string
	for _, c := range cols {
		if !isKey[c] {
			q := d.quoteIdent(c)
			sets = append(sets, q+" = EXCLUDED."+q)
		}
	}
	clause := " ON CONFLICT (" + strings.Join(qk, ", ") + ")"
	if len(sets) == 0 {
		return clause + " DO NOTHING"
	}
	return clause + " DO UPDATE SET " + strings.Join(sets, ", ")
}

func (pgDialect) begin() []string { return []string{"BEGIN ISOLATION LEVEL READ COMMITTED"} }

func (pgDialect) xaStart(string) []string { return []string{"BEGIN"} }
func (pgDialect) xaPrepare(xid string) []string {
	return []string{"PREPARE TRANSACTION " + quoteLiteral(xid)}
}
func (pgDialect) xaCommit(xid string) string   { return "COMMIT PREPARED " + quoteLiteral(xid) }
func (pgDialect) xaRollback(xid string) string { return "ROLLBACK PREPARED " + quoteLiteral(xid) }
func (pgDialect) detachAfterPrepare() bool     { return false }

func (pgDialect) xaRecover(ctx context.Context, s session) ([]string, error) {
	rows, err := s.query(ctx, "SELECT gid FROM pg_prepared_xacts WHERE database = current_database()")
	return firstColumn(rows), err
}

// unknownXid: 42704 "prepared transaction with identifier … does not exist".
func (pgDialect) unknownXid(err error) bool { return pgCode(err) == "42704" }

func (d pgDialect) createXALog(name string) []string {
	return []string{
		"CREATE TABLE IF NOT EXISTS " + quoteQualified(name, d.quoteIdent) + ` (
			xid VARCHAR(200) NOT NULL PRIMARY KEY,
			prefix VARCHAR(64) NOT NULL,
			subtask INT NOT NULL,
			checkpoint_id BIGINT NOT NULL)`,
		"CREATE INDEX IF NOT EXISTS " + d.quoteIdent(lastPart(name)+"_owner") + " ON " +
			quoteQualified(name, d.quoteIdent) + " (prefix, subtask, checkpoint_id)",
	}
}

func (d pgDialect) createCheckpoints(name string) []string {
	return []string{"CREATE TABLE IF NOT EXISTS " + quoteQualified(name, d.quoteIdent) + ` (
			job VARCHAR(255) NOT NULL,
			sink VARCHAR(255) NOT NULL,
			subtask INT NOT NULL,
			checkpoint_id BIGINT NOT NULL,
			PRIMARY KEY (job, sink, subtask))`}
}

func lastPart(name string) string { _, t := splitQualified(name); return t }

func (d pgDialect) insertIfAbsent(checkpoints string) string {
	return "INSERT INTO " + quoteQualified(checkpoints, d.quoteIdent) +
		" (job, sink, subtask, checkpoint_id) VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING"
}

func (d pgDialect) exists(ctx context.Context, s session, table string) (bool, error) {
	rows, err := s.query(ctx, "SELECT to_regclass($1) IS NOT NULL", quoteQualified(table, d.quoteIdent))
	return len(rows) == 1 && rows[0][0] == "true", err
}

func (d pgDialect) columns(ctx context.Context, s session, table string) ([][]string, error) {
	return s.query(ctx, `SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
		quoteQualified(table, d.quoteIdent))
}

func (d pgDialect) primaryKey(ctx context.Context, s session, table string) ([]string, error) {
	rows, err := s.query(ctx, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		WHERE i.indrelid = $1::regclass AND i.indisprimary
		ORDER BY array_position(i.indkey::int2[], a.attnum)`, quoteQualified(table, d.quoteIdent))
	return firstColumn(rows), err
}

func (d pgDialect) uniqueKeys(ctx context.Context, s session, table string) ([][]string, error) {
	rows, err := s.query(ctx, `SELECT c.relname, a.attname FROM pg_index i
		JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY((i.indkey::int2[])[0:i.indnkeyatts-1])
		WHERE i.indrelid = $1::regclass AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
		ORDER BY NOT i.indisprimary, c.relname, array_position(i.indkey::int2[], a.attnum)`,
		quoteQualified(table, d.quoteIdent))
	return groupKeys(rows), err
}

func (pgDialect) upsertServed(keys []string, uniques [][]string) bool {
	for _, u := range uniques {
		if len(u) == len(keys) && subset(u, keys) {
			return true
		}
	}
	return false
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// explainConnect: invalid password or authorization (28P01, 28000),
// unknown database (3D000).
func (pgDialect) explainConnect(err error) error {
	switch pgCode(err) {
	case "28P01", "28000":
		return permanent(fmt.Errorf("%w; check 'username'/'password'", err))
	case "3D000":
		return permanent(fmt.Errorf("%w; check the database in 'url'", err))
	}
	return err
}

// lockTimeout: lock_not_available (55P03), which lock_timeout raises.
func (pgDialect) lockTimeout(err error) bool { return pgCode(err) == "55P03" }

// transient: connection exceptions (class 08), serialization failures and
// deadlocks, a terminated backend (57P01–57P03), a busy prepared
// transaction, and anything pgconn knows was not sent.
func (pgDialect) transient(err error) bool {
	c := pgCode(err)
	switch {
	case strings.HasPrefix(c, "08"), c == "40001", c == "40P01", c == "57P01", c == "57P02", c == "57P03", c == "55P03":
		return true
	case c == "55000" && strings.Contains(err.Error(), "is busy"):
		return true
	case c != "":
		return false
	}
	return pgconn.SafeToRetry(err) || pgconn.Timeout(err) || connectionLost(err) ||
		strings.Contains(err.Error(), "conn closed")
}

var (
	pgKeyDetail = regexp.MustCompile(`Key \((.+)\)=\((.*)\) (?:already exists|is not present)`)
	pgTooLong   = regexp.MustCompile(`value too long for type (.+)$`)
	pgSyntax    = regexp.MustCompile(`(?:invalid input syntax for type|invalid input value for enum|out of range for type) ([^:]+?)(?:: "(.*)")?$`)
	pgOutValue  = regexp.MustCompile(`value "(.*)" is out of range for type (.+)$`)
	pgArgs      = regexp.MustCompile(`failed to encode args\[(\d+)\]`)
	pgTypeLen   = regexp.MustCompile(`\((\d+)\)$`)
)

var pgReasons = map[string]string{
	"22001": "value too long for the column",
	"22P02": "incorrect value for the column's type",
	"22007": "incorrect value for the column's type",
	"22008": "value out of range for the column",
	"22003": "value out of range for the column",
	"23502": "NULL in a NOT NULL column",
	"23505": "duplicate key",
	"23503": "foreign key violation",
	"23514": "check constraint violated",
}

// badRow reads PostgreSQL's data errors. The server rarely names the row,
// so the row is found by the value or length the message gives.
func (pgDialect) badRow(err error, st *stmtRows) (*BadRowError, bool) {
	if m := pgArgs.FindStringSubmatch(err.Error()); m != nil && pgCode(err) == "" {
		i, _ := strconv.Atoi(m[1])
		e := st.newBadRow("value cannot be converted to the column's type", err)
		st.locateArg(e, i)
		return e, true
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil, false
	}
	reason, ok := pgReasons[pe.Code]
	if !ok {
		return nil, false
	}
	e := st.newBadRow(reason, err)
	e.Column = pe.ColumnName
	switch pe.Code {
	case "23505", "23503":
		if m := pgKeyDetail.FindStringSubmatch(pe.Detail); m != nil {
			st.locateKey(e, m[1], m[2])
		}
	case "23502":
		st.locateNull(e)
	case "23514":
		e.Reason = fmt.Sprintf("check constraint %q violated", pe.ConstraintName)
	case "22001":
		if m := pgTooLong.FindStringSubmatch(pe.Message); m != nil {
			st.locateTooLong(e, m[1], pgMaxLen(m[1]))
		}
	default:
		if m := pgOutValue.FindStringSubmatch(pe.Message); m != nil {
			st.locateValue(e, m[2], m[1])
		} else if m := pgSyntax.FindStringSubmatch(pe.Message); m != nil {
			st.locateValue(e, m[1], m[2])
		}
	}
	return e, true
}

func pgMaxLen(typ string) int {
	if m := pgTypeLen.FindStringSubmatch(typ); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return -1
}

// pgPool is a small pool of pgx connections.
type pgPool struct {
	cfg     *pgx.ConnConfig
	maxIdle int
	mu      struct {
		sync.Mutex
		idle   []*pgx.Conn
		closed bool
	}
}

func (p *pgPool) acquire(ctx context.Context) (session, error) {
	if c := p.popIdle(); c != nil {
		return &pgSession{p: p, c: c}, nil
	}
	c, err := pgx.ConnectConfig(ctx, p.cfg.Copy())
	if err != nil {
		return nil, err
	}
	return &pgSession{p: p, c: c}, nil
}

func (p *pgPool) popIdle() *pgx.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.mu.idle) > 0 {
		c := p.mu.idle[len(p.mu.idle)-1]
		p.mu.idle = p.mu.idle[:len(p.mu.idle)-1]
		if !c.IsClosed() {
			return c
		}
	}
	return nil
}

// put pools c, or reports false when it must be closed.
func (p *pgPool) put(c *pgx.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed || len(p.mu.idle) >= p.maxIdle {
		return false
	}
	p.mu.idle = append(p.mu.idle, c)
	return true
}

func (p *pgPool) close() error {
	p.mu.Lock()
	idle := p.mu.idle
	p.mu.idle, p.mu.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		closeConn(c)
	}
	return nil
}

func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}

type pgSession struct {
	p *pgPool
	c *pgx.Conn
}

func (s *pgSession) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := s.c.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (s *pgSession) query(ctx context.Context, q string, args ...any) ([][]string, error) {
	vals, err := s.queryValues(ctx, q, args...)
	out := make([][]string, len(vals))
	for i, r := range vals {
		out[i] = make([]string, len(r))
		for j, v := range r {
			out[i][j] = textOf(v)
		}
	}
	return out, err
}

func (s *pgSession) queryValues(ctx context.Context, q string, args ...any) ([][]any, error) {
	rows, err := s.c.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

func textOf(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(v)
	case string:
		return v
	}
	return fmt.Sprint(v)
}

func (s *pgSession) id(context.Context) (int64, error) { return int64(s.c.PgConn().PID()), nil }

// release pools the connection only when it is healthy and outside any
// transaction ('I': idle); anything else is closed, which rolls back.
func (s *pgSession) release(discard bool) {
	if discard || s.c.IsClosed() || s.c.PgConn().TxStatus() != 'I' || !s.p.put(s.c) {
		closeConn(s.c)
	}
}
