package mysqlcdc

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// table is the captured table as the database has it.
type table struct {
	schema, name string
	cols         []column // the declared columns, in declared order
	width        int      // the table's number of columns
	keyCols      []int    // positions of the key columns in cols
}

// qualified is the table's quoted name.
func (t *table) qualified() string { return quoteIdent(t.schema) + "." + quoteIdent(t.name) }

// open opens a connection pool to the server, in UTC (TIMESTAMP values
// are read as UTC text), with client-side parameters (so every value
// comes back as text).
func (o Options) open() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = o.Username, o.Password, "tcp", fmt.Sprintf("%s:%d", o.Hostname, o.Port)
	cfg.InterpolateParams = true
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// connectErr names the options to check when the server cannot be used.
func (o Options) connectErr(err error) error {
	return fmt.Errorf("mysql-cdc table %q: connect to %s:%d as %q (check 'hostname', 'port', 'username', 'password'): %w",
		o.Name, o.Hostname, o.Port, o.Username, err)
}

// inspect checks the server's binlog and finds the table the options
// name, its columns and key: every failure names the option to fix.
func (o Options) inspect(ctx context.Context, db *sql.DB) (*table, error) {
	var logBin, format, image string
	err := db.QueryRowContext(ctx, "SELECT @@log_bin, @@binlog_format, @@binlog_row_image").Scan(&logBin, &format, &image)
	if err != nil {
		return nil, o.connectErr(err)
	}
	if logBin != "1" || format != "ROW" || image != "FULL" {
		return nil, o.optErr("hostname", o.Hostname, fmt.Sprintf("the server runs with log_bin = %s, binlog_format = %s, "+
			"binlog_row_image = %s; mysql-cdc needs log_bin on, binlog_format = ROW and binlog_row_image = FULL", logBin, format, image), nil)
	}
	t, err := o.findTable(ctx, db)
	if err != nil {
		return nil, err
	}
	if err := o.readColumns(ctx, db, t); err != nil {
		return nil, err
	}
	return t, o.checkTableKey(ctx, db, t)
}

// findTable matches 'database-name' and 'table-name' (regular expressions
// over the whole name, as Flink CDC) to exactly one table.
func (o Options) findTable(ctx context.Context, db *sql.DB) (*table, error) {
	dbRe := regexp.MustCompile("^(?:" + o.Database + ")$")
	tRe := regexp.MustCompile("^(?:" + o.Table + ")$")
	rows, err := db.QueryContext(ctx, `SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE'
		AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []string
	t := &table{}
	for rows.Next() {
		var s, n string
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		if dbRe.MatchString(s) && tRe.MatchString(n) {
			found = append(found, s+"."+n)
			t.schema, t.name = s, n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch {
	case len(found) == 0:
		return nil, o.optErr("table-name", o.Table, fmt.Sprintf("no table matches it in a database matching 'database-name' = '%s'", o.Database), nil)
	case len(found) > 1:
		slices.Sort(found)
		return nil, o.optErr("table-name", o.Table, fmt.Sprintf("matches %d tables (%s): Weir captures one table per source; "+
			"make 'database-name' and 'table-name' match one", len(found), strings.Join(found, ", ")), nil)
	}
	return t, nil
}

// readColumns finds each declared column's place and MySQL type.
func (o Options) readColumns(ctx context.Context, db *sql.DB, t *table) error {
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, t.schema, t.name)
	if err != nil {
		return err
	}
	defer rows.Close()
	have := map[string]column{}
	var names []string
	for rows.Next() {
		var c column
		var colType string
		if err := rows.Scan(&c.name, &c.ordinal, &c.dataType, &colType); err != nil {
			return err
		}
		c.ordinal--
		c.unsigned = strings.Contains(colType, "unsigned")
		have[c.name], names = c, append(names, c.name)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	t.width = len(names)
	for _, f := range o.Fields {
		c, ok := have[f.Name]
		if !ok {
			return o.optErr("table-name", o.Table, fmt.Sprintf("column %q is declared but %s has no such column (it has %s)",
				f.Name, t.qualified(), strings.Join(names, ", ")), nil)
		}
		c.t = f.Type
		t.cols = append(t.cols, c)
	}
	return nil
}

// checkTableKey requires the declared primary key to be the table's.
func (o Options) checkTableKey(ctx context.Context, db *sql.DB, t *table) error {
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION`, t.schema, t.name)
	if err != nil {
		return err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return err
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if !slices.Equal(names, o.PrimaryKey) {
		have := "none"
		if len(names) > 0 {
			have = strings.Join(names, ", ")
		}
		return o.optErr("PRIMARY KEY", "", fmt.Sprintf("the declared key (%s) is not the primary key of %s (%s): "+
			"a mysql-cdc table's key must be its database table's, in the same order", strings.Join(o.PrimaryKey, ", "), t.qualified(), have), nil)
	}
	t.keyCols = o.keyIndexes()
	return nil
}

// querier is a *sql.DB or *sql.Conn.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// showRow is the first row of a SHOW statement, as text.
func showRow(ctx context.Context, q querier, query string) ([]string, error) {
	rows, err := showRows(ctx, q, query)
	if err != nil {
		return nil, err
	}
	return rows[0], nil
}

// showRows are the rows of a SHOW statement, as text; none is an error
// (the statements asked about the binlog are empty only when it is off).
func showRows(ctx context.Context, q querier, query string) ([][]string, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("mysql-cdc: %s is empty: the binlog is off", query)
	}
	return out, nil
}

// masterPos is the server's current binlog end.
func masterPos(ctx context.Context, q querier) (BinlogPos, error) {
	r, err := showRow(ctx, q, "SHOW MASTER STATUS")
	if err != nil {
		return BinlogPos{}, err
	}
	pos, err := strconv.ParseUint(r[1], 10, 32)
	return BinlogPos{File: r[0], Pos: uint32(pos)}, err
}

// consistentSnapshot starts a transaction on c that reads the tables as
// of a binlog position and returns that position. MariaDB reports the
// position of its consistent snapshot without a lock (the session status
// binlog_snapshot_file/position, taken inside the binlog's commit order);
// MySQL does not, and there the snapshot is taken under a brief FLUSH
// TABLES WITH READ LOCK, as Debezium does.
func consistentSnapshot(ctx context.Context, c *sql.Conn) (BinlogPos, error) {
	if _, err := c.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err != nil {
		return BinlogPos{}, err
	}
	if _, err := c.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return BinlogPos{}, err
	}
	file, err1 := showRow(ctx, c, "SHOW SESSION STATUS LIKE 'binlog_snapshot_file'")
	pos, err2 := showRow(ctx, c, "SHOW SESSION STATUS LIKE 'binlog_snapshot_position'")
	if err1 != nil || err2 != nil || file[1] == "" {
		return lockedSnapshot(ctx, c)
	}
	p, err := strconv.ParseUint(pos[1], 10, 32)
	return BinlogPos{File: file[1], Pos: uint32(p)}, err
}

// lockedSnapshot is MySQL's: no commit between the snapshot's start and
// reading the binlog's end.
func lockedSnapshot(ctx context.Context, c *sql.Conn) (BinlogPos, error) {
	if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
		return BinlogPos{}, err
	}
	if _, err := c.ExecContext(ctx, "FLUSH TABLES WITH READ LOCK"); err != nil {
		return BinlogPos{}, err
	}
	defer c.ExecContext(context.Background(), "UNLOCK TABLES")
	if _, err := c.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return BinlogPos{}, err
	}
	return masterPos(ctx, c)
}
