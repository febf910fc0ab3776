package postgrescdc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
)

// tableInfo is what the source needs to know of the captured table.
type tableInfo struct {
	// keyTypes are the PostgreSQL types of the key columns, in
	// Options.PrimaryKey order (the snapshot query casts its bounds to
	// them); collatable tells which need COLLATE "C".
	keyTypes   []string
	collatable []bool
}

// optErr is an OptionError of the table o captures.
func (o Options) optErr(option, value, msg string, err error) error {
	return &OptionError{Connector: "postgres-cdc", Table: o.Name, Option: option, Value: value, Msg: msg, Err: err}
}

// connect opens a plain connection, naming the options when it fails.
func (o Options) connect(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.Connect(ctx, o.connString(false))
	if err != nil {
		return nil, fmt.Errorf("postgres-cdc table %q: connect to %s:%d database %q as %q (check 'hostname', 'port', "+
			"'database-name', 'username', 'password'): %w", o.Name, o.Hostname, o.Port, o.Database, o.Username, err)
	}
	return c, nil
}

// inspect checks the server, the user's rights and the table against the
// options: every failure names the option to fix.
func (o Options) inspect(ctx context.Context, c *pgx.Conn) (tableInfo, error) {
	var info tableInfo
	var level string
	if err := c.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		return info, err
	}
	if level != "logical" {
		return info, o.optErr("hostname", o.Hostname, fmt.Sprintf("the server runs with wal_level = %s; logical "+
			"decoding needs wal_level = logical (set it in postgresql.conf and restart the server)", level), nil)
	}
	var canReplicate bool
	if err := c.QueryRow(ctx, "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&canReplicate); err != nil {
		return info, err
	}
	if !canReplicate {
		return info, o.optErr("username", o.Username, fmt.Sprintf("the user may not use replication slots: "+
			"ALTER ROLE %s REPLICATION (or use a user that has it)", quoteIdent(o.Username)), nil)
	}
	oid, ident, err := o.tableOID(ctx, c)
	if err != nil {
		return info, err
	}
	if err := o.checkColumns(ctx, c, oid); err != nil {
		return info, err
	}
	if info, err = o.checkTableKey(ctx, c, oid); err != nil {
		return info, err
	}
	if ident != "f" {
		return info, o.optErr("table-name", o.Table, fmt.Sprintf("updates and deletes must carry the whole old row: "+
			"ALTER TABLE %s REPLICA IDENTITY FULL", o.qualified()), nil)
	}
	return info, nil
}

// tableOID finds the table and its replica identity.
func (o Options) tableOID(ctx context.Context, c *pgx.Conn) (uint32, string, error) {
	var oid uint32
	var ident string
	err := c.QueryRow(ctx, `SELECT c.oid, c.relreplident::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')`, o.Schema, o.Table).Scan(&oid, &ident)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", o.optErr("table-name", o.Table, fmt.Sprintf("no table %s.%s in database %q (check 'schema-name' and 'table-name')",
			o.Schema, o.Table, o.Database), nil)
	}
	return oid, ident, err
}

// checkColumns refuses a declared column the table does not have.
func (o Options) checkColumns(ctx context.Context, c *pgx.Conn, oid uint32) error {
	rows, err := c.Query(ctx, "SELECT attname FROM pg_attribute WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped", oid)
	if err != nil {
		return err
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, f := range o.Fields {
		if !slices.Contains(have, f.Name) {
			return o.optErr("table-name", o.Table, fmt.Sprintf("column %q is declared but %s has no such column (it has %s)",
				f.Name, o.qualified(), strings.Join(have, ", ")), nil)
		}
	}
	return nil
}

// checkTableKey requires the declared primary key to be the table's.
func (o Options) checkTableKey(ctx context.Context, c *pgx.Conn, oid uint32) (tableInfo, error) {
	var info tableInfo
	rows, err := c.Query(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod), t.typcollation <> 0
		FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		JOIN pg_type t ON t.oid = a.atttypid WHERE i.indrelid = $1 AND i.indisprimary`, oid)
	if err != nil {
		return info, err
	}
	types := map[string]string{}
	coll := map[string]bool{}
	var names []string
	for rows.Next() {
		var n, t string
		var cl bool
		if err := rows.Scan(&n, &t, &cl); err != nil {
			return info, err
		}
		names, types[n], coll[n] = append(names, n), t, cl
	}
	if err := rows.Err(); err != nil {
		return info, err
	}
	if len(names) == 0 || len(names) != len(o.PrimaryKey) || slices.ContainsFunc(o.PrimaryKey, func(k string) bool { return types[k] == "" }) {
		have := "none"
		if len(names) > 0 {
			have = strings.Join(names, ", ")
		}
		return info, &OptionError{Connector: "postgres-cdc", Table: o.Name, Option: "PRIMARY KEY", Msg: fmt.Sprintf("the declared key (%s) is not the primary key "+
			"of %s (%s): a postgres-cdc table's key must be its database table's", strings.Join(o.PrimaryKey, ", "), o.qualified(), have)}
	}
	for _, k := range o.PrimaryKey {
		info.keyTypes = append(info.keyTypes, types[k])
		info.collatable = append(info.collatable, coll[k])
	}
	return info, nil
}

// ensurePublication creates the slot's publication FOR TABLE the captured
// table, or adds the table to it. It must exist before the slot is
// created: pgoutput reads publications as of each change's LSN.
func (o Options) ensurePublication(ctx context.Context, c *pgx.Conn) error {
	var exists, has bool
	err := c.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_publication WHERE pubname = $1),
		EXISTS (SELECT FROM pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND tablename = $3)`,
		o.publication(), o.Schema, o.Table).Scan(&exists, &has)
	switch {
	case err != nil:
		return err
	case !exists:
		_, err = c.Exec(ctx, "CREATE PUBLICATION "+quoteIdent(o.publication())+" FOR TABLE "+o.qualified())
	case !has:
		_, err = c.Exec(ctx, "ALTER PUBLICATION "+quoteIdent(o.publication())+" ADD TABLE "+o.qualified())
	}
	if err != nil {
		return o.optErr("slot.name", o.Slot, fmt.Sprintf("create publication %q for %s", o.publication(), o.qualified()), err)
	}
	return nil
}

// slotState is a slot as pg_replication_slots shows it; found is false
// when there is none.
type slotState struct {
	found, active bool
	confirmed     pglogrepl.LSN
}

func (o Options) slot(ctx context.Context, c *pgx.Conn) (slotState, error) {
	var s slotState
	var lsn *string
	err := c.QueryRow(ctx, "SELECT active, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
		o.Slot).Scan(&s.active, &lsn)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	s.found = true
	if lsn != nil {
		s.confirmed, err = pglogrepl.ParseLSN(*lsn)
	}
	return s, err
}

// slotReleaseWait bounds how long a start waits for the slot to be let go:
// the walsender of a failed attempt's connection exits a moment after it.
const slotReleaseWait = 10 * time.Second

// waitInactive returns the slot's state once no connection uses it, or
// as it is after slotReleaseWait.
func (o Options) waitInactive(ctx context.Context, c *pgx.Conn) (slotState, error) {
	deadline := time.Now().Add(slotReleaseWait)
	for {
		s, err := o.slot(ctx, c)
		if err != nil || !s.active || time.Now().After(deadline) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
