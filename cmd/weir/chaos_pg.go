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
	rows, err := conn.Query(ctx, "SELECT account_id, total::text, bill_count FROM "+table)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]string{}
	for rows.Next() {
		var id, total string
		var n int64
		if err := rows.Scan(&id, &total, &n); err != nil {
			return nil, nil, err
		}
		out[id] = normTotal(total) + "/" + strconv.FormatInt(n, 10)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	left, err := txncheck.Lingering(func() ([]string, error) { return pgPrepared(ctx, conn) }, lingerPolls, lingerEvery)
	if err != nil {
		return nil, nil, fmt.Errorf("pg_prepared_xacts: %w", err)
	}
	return out, left, nil
}
