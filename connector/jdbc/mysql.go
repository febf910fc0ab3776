package jdbc

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// mysqlDialect speaks MySQL 5.7+/8 and MariaDB 10.5+ (prepared XA branches
// survive a disconnect).
type mysqlDialect struct{}

func (mysqlDialect) name() string { return "MySQL" }

func (mysqlDialect) open(t target) (pool, error) {
	c, err := mysql.NewConnector(t.mysql)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	db.SetMaxIdleConns(16) // one per subtask and committer, roughly; the default of 2 churns
	return &sqlPool{db: db, loc: t.mysql.Loc}, nil
}

func (mysqlDialect) quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
func (mysqlDialect) placeholder(int) string     { return "?" }
func (mysqlDialect) maxParams() int             { return 65535 }

func (d mysqlDialect) upsert(cols, keys []string) string {
	isKey := map[string]bool{}
	for _, k := range keys {
		isKey[k] = true
	}
	var sets []string
	for _, c := range cols {
		if !isKey[c] {
			q := d.quoteIdent(c)
			sets = append(sets, q+" = VALUES("+q+")")
		}
	}
	if len(sets) == 0 { // every column is a key column: nothing to update
		q := d.quoteIdent(keys[0])
		sets = append(sets, q+" = "+q)
	}
	return " ON DUPLICATE KEY UPDATE " + strings.Join(sets, ", ")
}

func (mysqlDialect) begin() []string {
	return []string{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "START TRANSACTION"}
}

func (mysqlDialect) xaStart(xid string) []string { return []string{"XA START " + quoteLiteral(xid)} }
func (mysqlDialect) xaPrepare(xid string) []string {
	return []string{"XA END " + quoteLiteral(xid), "XA PREPARE " + quoteLiteral(xid)}
}
func (mysqlDialect) xaCommit(xid string) string   { return "XA COMMIT " + quoteLiteral(xid) }
func (mysqlDialect) xaRollback(xid string) string { return "XA ROLLBACK " + quoteLiteral(xid) }
func (mysqlDialect) detachAfterPrepare() bool     { return true }

// xaRecover reads XA RECOVER: formatID, gtrid_length, bqual_length, data.
func (mysqlDialect) xaRecover(ctx context.Context, s session) ([]string, error) {
	rows, err := s.query(ctx, "XA RECOVER")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		n, err := strconv.Atoi(r[1])
		if err != nil || n > len(r[3]) {
			continue
		}
		out = append(out, r[3][:n])
	}
	return out, nil
}

// unknownXid: ER_XAER_NOTA (1397) "Unknown XID".
func (mysqlDialect) unknownXid(err error) bool { return mysqlCode(err) == 1397 }

func (d mysqlDialect) createXALog(name string) []string {
	return []string{"CREATE TABLE IF NOT EXISTS " + quoteQualified(name, d.quoteIdent) + ` (
			xid VARCHAR(64) NOT NULL PRIMARY KEY,
			prefix VARCHAR(64) NOT NULL,
			subtask INT NOT NULL,
			checkpoint_id BIGINT NOT NULL,
			KEY owner (prefix, subtask, checkpoint_id))`}
}

func (d mysqlDialect) createCheckpoints(name string) []string {
	return []string{"CREATE TABLE IF NOT EXISTS " + quoteQualified(name, d.quoteIdent) + ` (
			job VARCHAR(255) NOT NULL,
			sink VARCHAR(255) NOT NULL,
			subtask INT NOT NULL,
			checkpoint_id BIGINT NOT NULL,
			PRIMARY KEY (job, sink, subtask))`}
}

func (d mysqlDialect) insertIfAbsent(checkpoints string) string {
	return "INSERT INTO " + quoteQualified(checkpoints, d.quoteIdent) +
		" (job, sink, subtask, checkpoint_id) VALUES (?, ?, ?, 0) ON DUPLICATE KEY UPDATE checkpoint_id = checkpoint_id"
}

func (mysqlDialect) exists(ctx context.Context, s session, table string) (bool, error) {
	schema, name := splitQualified(table)
	rows, err := s.query(ctx, `SELECT 1 FROM information_schema.tables
		WHERE table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND table_name = ?`, schema, name)
	return len(rows) > 0, err
}

func (mysqlDialect) columns(ctx context.Context, s session, table string) ([][]string, error) {
	schema, name := splitQualified(table)
	return s.query(ctx, `SELECT column_name, column_type FROM information_schema.columns
		WHERE table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND table_name = ? ORDER BY ordinal_position`, schema, name)
}

func (mysqlDialect) primaryKey(ctx context.Context, s session, table string) ([]string, error) {
	schema, name := splitQualified(table)
	rows, err := s.query(ctx, `SELECT column_name FROM information_schema.key_column_usage
		WHERE table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND table_name = ? AND constraint_name = 'PRIMARY'
		ORDER BY ordinal_position`, schema, name)
	return firstColumn(rows), err
}

func (mysqlDialect) uniqueKeys(ctx context.Context, s session, table string) ([][]string, error) {
	schema, name := splitQualified(table)
	rows, err := s.query(ctx, `SELECT index_name, COALESCE(column_name, '') FROM information_schema.statistics
		WHERE table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND table_name = ? AND non_unique = 0
		ORDER BY index_name <> 'PRIMARY', index_name, seq_in_index`, schema, name)
	return groupKeys(rows), err
}

func (mysqlDialect) upsertServed(keys []string, uniques [][]string) bool {
	for _, u := range uniques {
		if subset(u, keys) {
			return true
		}
	}
	return false
}

// groupKeys groups (index, column) rows into one column list per index;
// an index with an expression ("" column) is left out.
func groupKeys(rows [][]string) [][]string {
	var out [][]string
	bad := map[string]bool{}
	for _, r := range rows {
		if r[1] == "" {
			bad[r[0]] = true
		}
	}
	for i, r := range rows {
		if bad[r[0]] {
			continue
		}
		if i == 0 || rows[i-1][0] != r[0] {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], r[1])
	}
	return out
}

// subset reports whether every element of a is in b.
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func firstColumn(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r[0]
	}
	return out
}

func mysqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// explainConnect: access denied (1044, 1045, 1698), unknown database (1049).
func (mysqlDialect) explainConnect(err error) error {
	switch mysqlCode(err) {
	case 1044, 1045, 1698:
		return permanent(fmt.Errorf("%w; check 'username'/'password' (and the user's grants)", err))
	case 1049:
		return permanent(fmt.Errorf("%w; check the database in 'url'", err))
	}
	return err
}

// lockTimeout: ER_LOCK_WAIT_TIMEOUT (1205).
func (mysqlDialect) lockTimeout(err error) bool { return mysqlCode(err) == 1205 }

// transient: a lost or killed connection, a deadlock, a lock wait timeout.
func (mysqlDialect) transient(err error) bool {
	switch mysqlCode(err) {
	case 1205, 1213, 1927, 1053, 2006, 2013, 1158, 1159, 1160, 1161:
		return true
	}
	return connectionLost(err)
}

// connectionLost recognises a broken connection, whatever the driver.
func connectionLost(err error) bool {
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.As(err, &ne) ||
		errors.Is(err, net.ErrClosed)
}

var (
	mysqlAtRow  = regexp.MustCompile(`at row (\d+)`)
	mysqlColumn = regexp.MustCompile("(?i)column (?:'([^']+)'|((?:`[^`]*`\\.)*`([^`]+)`))")
	mysqlDup    = regexp.MustCompile(`Duplicate entry '(.*)' for key '([^']*)'`)
	mysqlFK     = regexp.MustCompile("FOREIGN KEY \\(`([^`]+)`")
	mysqlField  = regexp.MustCompile(`Field '([^']+)'`)
	mysqlCheck  = regexp.MustCompile("CONSTRAINT `([^`]+)`")
)

var mysqlReasons = map[uint16]string{
	1406: "value too long for the column",
	1366: "incorrect value for the column's type",
	1292: "incorrect value for the column's type",
	1367: "incorrect value for the column's type",
	1264: "value out of range for the column",
	1265: "value truncated for the column",
	1048: "NULL in a NOT NULL column",
	1364: "no value for a column without a default",
	1062: "duplicate key",
	1452: "foreign key violation (no parent row)",
	1451: "foreign key violation (child rows exist)",
	4025: "check constraint violated",
	3819: "check constraint violated",
}

// badRow reads MySQL's data errors: most say "column 'c' at row n".
func (mysqlDialect) badRow(err error, st *stmtRows) (*BadRowError, bool) {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return nil, false
	}
	reason, ok := mysqlReasons[me.Number]
	if !ok {
		return nil, false
	}
	e := st.newBadRow(reason, err)
	msg := me.Message
	if m := mysqlColumn.FindStringSubmatch(msg); m != nil {
		e.Column = m[1]
		if m[1] == "" {
			e.Column = m[3]
		}
	}
	switch me.Number {
	case 1062:
		if m := mysqlDup.FindStringSubmatch(msg); m != nil {
			st.duplicate(e, m[1], m[2])
		}
		return e, true
	case 1048:
		st.locateNull(e)
	case 1452, 1451:
		if m := mysqlFK.FindStringSubmatch(msg); m != nil {
			e.Column = m[1]
		}
	case 1364:
		if m := mysqlField.FindStringSubmatch(msg); m != nil {
			e.Column = m[1]
		}
	case 4025, 3819:
		if m := mysqlCheck.FindStringSubmatch(msg); m != nil {
			e.Reason = fmt.Sprintf("check constraint %q violated", m[1])
		}
	}
	if m := mysqlAtRow.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		st.locate(e, n-1)
	}
	return e, true
}

// sqlPool is a database/sql pool (MySQL).
type sqlPool struct {
	db  *sql.DB
	loc *time.Location // the connection's time zone (DSN loc), for temporal parameters
}

func (p *sqlPool) acquire(ctx context.Context) (session, error) {
	c, err := p.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &sqlSession{c: c, loc: p.loc}, nil
}

func (p *sqlPool) close() error { return p.db.Close() }

type sqlSession struct {
	c      *sql.Conn
	loc    *time.Location
	connID int64
}

func (s *sqlSession) exec(ctx context.Context, q string, args ...any) (int64, error) {
	r, err := s.c.ExecContext(ctx, q, mysqlTimes(s.loc, args)...)
	if err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return n, nil
}

func (s *sqlSession) query(ctx context.Context, q string, args ...any) ([][]string, error) {
	var out [][]string
	err := scanQuery(ctx, s, q, args, func(vals []sql.NullString) {
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	})
	return out, err
}

func (s *sqlSession) queryValues(ctx context.Context, q string, args ...any) ([][]any, error) {
	var out [][]any
	err := scanQuery(ctx, s, q, args, func(vals []any) { out = append(out, vals) }) // *any gets a copy of []byte
	return out, err
}

// scanQuery runs q on s and hands each row, scanned into fresh values of
// T, to each.
func scanQuery[T any](ctx context.Context, s *sqlSession, q string, args []any, each func([]T)) error {
	rows, err := s.c.QueryContext(ctx, q, mysqlTimes(s.loc, args)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]T, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		each(vals)
	}
	return rows.Err()
}

func (s *sqlSession) id(ctx context.Context) (int64, error) {
	if s.connID == 0 {
		rows, err := s.query(ctx, "SELECT CONNECTION_ID()")
		if err != nil {
			return 0, err
		}
		s.connID, err = strconv.ParseInt(rows[0][0], 10, 64)
		if err != nil {
			return 0, err
		}
	}
	return s.connID, nil
}

// release closes the physical connection when discard is set: returning
// driver.ErrBadConn from Raw makes database/sql drop it instead of pooling
// it, and a closed session is what detaches a prepared XA branch.
func (s *sqlSession) release(discard bool) {
	if discard {
		_ = s.c.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = s.c.Close()
}

// mysqlTimes binds every time.Time parameter as its text. go-sql-driver
// writes Go's zero time.Time, 0001-01-01 00:00:00 UTC, as the zero date
// 0000-00-00, which MySQL and MariaDB store without an error: DATE
// '0001-01-01' would silently become 0000-00-00. The text is what the
// driver writes for any other time (in the connection's zone, the time of
// day left out when it is midnight, fractional digits trimmed); a year the
// driver cannot write stays a time.Time so that the driver reports it.
// args is copied only when it holds a time.
func mysqlTimes(loc *time.Location, args []any) []any {
	out := args
	for i, a := range args {
		t, ok := a.(time.Time)
		if !ok {
			continue
		}
		if loc != nil {
			t = t.In(loc)
		}
		if y := t.Year(); y < 1 || y > 9999 {
			continue
		}
		if &out[0] == &args[0] {
			out = slices.Clone(args)
		}
		out[i] = mysqlTimeText(t)
	}
	return out
}

func mysqlTimeText(t time.Time) string {
	h, m, s := t.Clock()
	if h == 0 && m == 0 && s == 0 && t.Nanosecond() == 0 {
		return t.Format(time.DateOnly)
	}
	return t.Format("2006-01-02 15:04:05.999999999")
}
