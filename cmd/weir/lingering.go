package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// A prepared transaction counts as left behind only when every one of
// lingerPolls listings, lingerEvery apart, shows it (txncheck.Lingering).
const (
	lingerPolls = 5
	lingerEvery = time.Second
)

// pgPrepared lists the prepared transactions of conn's database.
func pgPrepared(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT gid FROM pg_prepared_xacts WHERE database = current_database()")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
