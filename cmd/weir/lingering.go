package main

import (
	"context"
	"database/sql"
	"time"

	"github.com/jackc/pgx/v5"
)

// Prepared transactions are listed server-wide (XA RECOVER) or per
// database (pg_prepared_xacts), so another job on the same server — a
// second chaos run, a test — shows its in-flight transactions too, each
// for a checkpoint's moment. A leftover of the job under test never goes
// away. So a transaction counts as left behind only when every one of
// lingerPolls listings, lingerEvery apart, shows it.
const (
	lingerPolls = 5
	lingerEvery = time.Second
)

// lingering returns the transactions that list shows in each of polls
// listings, every apart; it returns at once when a listing is empty.
func lingering(list func() ([]string, error), polls int, every time.Duration) ([]string, error) {
	var seen map[string]bool
	for i := 0; i < polls; i++ {
		if i > 0 {
			time.Sleep(every)
		}
		ids, err := list()
		if err != nil {
			return nil, err
		}
		now := map[string]bool{}
		for _, id := range ids {
			if seen == nil || seen[id] {
				now[id] = true
			}
		}
		if seen = now; len(seen) == 0 {
			return nil, nil
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	return out, nil
}

// xaRecover lists the prepared XA transactions of the server (their data).
func xaRecover(db *sql.DB) ([]string, error) {
	rows, err := db.Query("XA RECOVER")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var format, gtridLen, bqualLen int64
		var data string
		if err := rows.Scan(&format, &gtridLen, &bqualLen, &data); err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, rows.Err()
}

// pgPrepared lists the prepared transactions of conn's database.
func pgPrepared(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT gid FROM pg_prepared_xacts WHERE database = current_database()")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
