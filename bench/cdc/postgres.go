package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirstream/weir/connector/postgrescdc"
)

// postgresDB is a PostgreSQL table captured by postgres-cdc through a slot
// of its own.
type postgresDB struct {
	db          *pgx.Conn
	table, slot string
}

func newPostgres(rows int) (*postgresDB, error) {
	ctx := context.Background()
	db, err := pgx.Connect(ctx, os.Getenv("WEIR_POSTGRES_DSN"))
	if err != nil {
		return nil, fmt.Errorf("WEIR_POSTGRES_DSN (eval \"$(scripts/services.sh env)\"): %w", err)
	}
	table := fmt.Sprintf("bench_cdc_%d_%04x", time.Now().UnixNano()%1e9, rand.Uint32()%0xffff)
	p := &postgresDB{db: db, table: table, slot: "weir_" + table}
	if err := p.exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, k INT NOT NULL, amount BIGINT, note TEXT)"); err != nil {
		db.Close(ctx)
		return nil, err
	}
	if err := p.exec("ALTER TABLE " + table + " REPLICA IDENTITY FULL"); err != nil {
		p.close()
		return nil, err
	}
	if err := p.insert(1, rows); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *postgresDB) source(int, int) (source, error) {
	cfg := p.db.Config()
	s, err := postgrescdc.NewSource(postgrescdc.Options{Hostname: cfg.Host, Port: int(cfg.Port), Username: cfg.User, Password: cfg.Password,
		Database: cfg.Database, Schema: "public", Table: p.table, Slot: p.slot, StartupMode: "initial", Name: "bench",
		Fields: columns, PrimaryKey: []string{"id"}})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (p *postgresDB) insert(from, n int) error {
	return p.exec(fmt.Sprintf("INSERT INTO %s SELECT i, i %% 7, i, 'change row' FROM generate_series(%d, %d) i", p.table, from, from+n-1))
}

func (p *postgresDB) note() string { return "" }

// close drops the slot (inactive once the readers closed), its
// publication and the table: a slot left behind would hold the shared
// server's WAL.
func (p *postgresDB) close() {
	p.exec(fmt.Sprintf("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '%s' AND NOT active", p.slot))
	p.exec("DROP PUBLICATION IF EXISTS " + p.slot + "_pub")
	p.exec("DROP TABLE IF EXISTS " + p.table)
	p.db.Close(context.Background())
}

func (p *postgresDB) exec(q string) error {
	if _, err := p.db.Exec(context.Background(), q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}
