package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/weirstream/weir/internal/txncheck"
)

// pgTotals reads the totals table from PostgreSQL and counts prepared
// transactions left behind (pg_prepared_xacts).
func pgTotals(ctx context.Context, dsn, table string) (map[string]string, []string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close(ctx)
	out, err := pgRows(ctx, conn, "SELECT account_id, total::text, bill_count FROM "+table)
	if err != nil {
		return nil, nil, err
	}
	left, err := txncheck.Lingering(func() ([]string, error) { return pgPrepared(ctx, conn) }, lingerPolls, lingerEvery)
	if err != nil {
		return nil, nil, fmt.Errorf("pg_prepared_xacts: %w", err)
	}
	return out, left, nil
}

// pgRows reads the rows (account_id, total as text, count) of query into
// "total/count" strings by account.
func pgRows(ctx context.Context, conn *pgx.Conn, query string) (map[string]string, error) {
	rows, err := conn.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, total string
		var n int64
		if err := rows.Scan(&id, &total, &n); err != nil {
			return nil, err
		}
		out[id] = normTotal(total) + "/" + strconv.FormatInt(n, 10)
	}
	return out, rows.Err()
}
