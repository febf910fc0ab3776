// Package cdcbills is the billing case fed by change data capture: a bills
// table in MariaDB or PostgreSQL that a writer inserts into, updates and
// deletes from while a job captures it (mysql-cdc, postgres-cdc) and
// totals it per account into the same database exactly once. The chaos
// test of cmd/weir and bench/cdcchaos share it.
package cdcbills

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Dialect is the database the bills live in.
type Dialect string

const (
	MySQL    Dialect = "mysql"    // MariaDB or MySQL, captured by mysql-cdc
	Postgres Dialect = "postgres" // PostgreSQL, captured by postgres-cdc
)

// Accounts is how many accounts the bills are spread over.
const Accounts = 1000

// Create makes the bills table name with rows bills (ids 1..rows) and the
// empty totals table; on PostgreSQL the bills table logs whole rows
// (REPLICA IDENTITY FULL), so a delete carries the amount it takes away.
func Create(ctx context.Context, db *sql.DB, d Dialect, bills, totals string, rows int) error {
	seed := fmt.Sprintf("INSERT INTO %s SELECT seq, CONCAT('acc-', LPAD(seq %% %d, 4, '0')), (seq %% 9973) / 100.0 FROM seq_1_to_%d",
		bills, Accounts, rows)
	if d == Postgres {
		seed = fmt.Sprintf("INSERT INTO %s SELECT i, 'acc-' || LPAD((i %% %d)::text, 4, '0'), (i %% 9973) / 100.0 FROM generate_series(1, %d) i",
			bills, Accounts, rows)
	}
	stmts := []string{
		"CREATE TABLE " + bills + " (bill_id BIGINT PRIMARY KEY, account_id VARCHAR(64) NOT NULL, amount DECIMAL(18, 2) NOT NULL)",
		"CREATE TABLE " + totals + " (account_id VARCHAR(64) PRIMARY KEY, total DECIMAL(38, 2) NOT NULL, bill_count BIGINT NOT NULL)",
	}
	if d == Postgres {
		stmts = append(stmts, "ALTER TABLE "+bills+" REPLICA IDENTITY FULL")
	}
	if rows > 0 {
		stmts = append(stmts, seed)
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// Writer changes the bills table in transactions of one to three
// statements: new bills, amounts corrected, bills moved to another account,
// bills deleted.
type Writer struct {
	DB    *sql.DB
	Table string
	// MaxID is the highest id Create gave (the ids updates and deletes
	// pick from, with those inserted since); Pause is the wait between
	// transactions (0: none).
	MaxID int64
	Pause time.Duration
	Seed  uint64
	// Txns counts the transactions committed.
	Txns int
}

// Run writes until ctx ends (nil then) or a statement fails.
func (w *Writer) Run(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(w.Seed, 18))
	next := w.MaxID
	for ctx.Err() == nil {
		var stmts []string
		for range 1 + rng.IntN(3) {
			stmts = append(stmts, w.statement(rng, &next))
		}
		if err := w.txn(ctx, stmts); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		w.Txns++
		if w.Pause > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(w.Pause):
			}
		}
	}
	return nil
}

// statement is one random change; new ids count up from *next.
func (w *Writer) statement(rng *rand.Rand, next *int64) string {
	id := 1 + rng.Int64N(*next)
	acct := fmt.Sprintf("acc-%04d", rng.IntN(Accounts))
	switch op := rng.IntN(20); {
	case op < 8:
		*next++
		return fmt.Sprintf("INSERT INTO %s VALUES (%d, '%s', %d.%02d)", w.Table, *next, acct, rng.IntN(500), rng.IntN(100))
	case op < 13:
		return fmt.Sprintf("UPDATE %s SET amount = amount + %d.%02d WHERE bill_id = %d", w.Table, rng.IntN(5), rng.IntN(100), id)
	case op < 16:
		return fmt.Sprintf("UPDATE %s SET account_id = '%s' WHERE bill_id = %d", w.Table, acct, id)
	}
	return fmt.Sprintf("DELETE FROM %s WHERE bill_id = %d", w.Table, id)
}

func (w *Writer) txn(ctx context.Context, stmts []string) error {
	tx, err := w.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return tx.Commit()
}

// Script is the job: the bills captured by source (the WITH options of
// the CDC connector), totalled per account into the JDBC table totals
// exactly once.
func Script(source, jdbcURL, totals string) string {
	return strings.TrimSpace(fmt.Sprintf(`
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
SET 'pipeline.name' = 'billing-cdc';

CREATE TABLE bills (
  bill_id    BIGINT,
  account_id STRING,
  amount     DECIMAL(18, 2),
  PRIMARY KEY (bill_id) NOT ENFORCED
) WITH (%s);

CREATE TABLE account_totals (
  account_id STRING,
  total      DECIMAL(38, 2),
  bill_count BIGINT,
  PRIMARY KEY (account_id) NOT ENFORCED
) WITH (
  'connector' = 'jdbc',
  'url' = '%s',
  'table-name' = '%[3]s',
  'sink.name' = '%[3]s',
  'username' = 'weir',
  'password' = 'weir',
  'sink.delivery-guarantee' = 'exactly-once'
);

INSERT INTO account_totals
SELECT account_id, SUM(amount) AS total, COUNT(*) AS bill_count
FROM bills
GROUP BY account_id;
`, source, jdbcURL, totals)) + "\n"
}
