package main

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/weirstream/weir/connector/mysqlcdc"
)

// mysqlDB is a MariaDB table captured by mysql-cdc.
type mysqlDB struct {
	db    *sql.DB
	cfg   *mysql.Config
	table string
}

func newMySQL(rows int) (*mysqlDB, error) {
	dsn := os.Getenv("WEIR_MYSQL_DSN")
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("WEIR_MYSQL_DSN (eval \"$(scripts/services.sh env)\"): %w", err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	m := &mysqlDB{db: db, cfg: cfg, table: fmt.Sprintf("bench_cdc_%d_%04x", time.Now().UnixNano()%1e9, rand.Uint32()%0xffff)}
	if err := m.exec("CREATE TABLE " + m.table + " (id BIGINT PRIMARY KEY, k INT NOT NULL, amount BIGINT, note VARCHAR(100))"); err != nil {
		db.Close()
		return nil, err
	}
	for i := 0; i < rows; i += 100000 {
		if err := m.insert(i+1, min(100000, rows-i)); err != nil {
			m.close()
			return nil, err
		}
	}
	return m, nil
}

func (m *mysqlDB) source(rows, par int) (source, error) {
	host, port, _ := strings.Cut(m.cfg.Addr, ":")
	var p int
	fmt.Sscan(port, &p)
	lo := 300_000 + rand.Uint32N(1_000_000)*16
	s, err := mysqlcdc.NewSource(mysqlcdc.Options{Hostname: host, Port: p, Username: m.cfg.User, Password: m.cfg.Passwd,
		Database: m.cfg.DBName, Table: m.table, ServerIDs: [2]uint32{lo, lo + 15}, StartupMode: "initial", TimeZone: time.UTC,
		ChunkSize: max(1, rows/(2*par)), Name: "bench", Fields: columns, PrimaryKey: []string{"id"}})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (m *mysqlDB) insert(from, n int) error {
	return m.exec(fmt.Sprintf("INSERT INTO %s SELECT %d + seq, seq %% 7, seq, 'change row' FROM seq_0_to_%d", m.table, from, n-1))
}

// note counts the server's binlog dump threads (every replica's on the
// shared server, ours among them).
func (m *mysqlDB) note() string {
	var n int
	if err := m.db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'").Scan(&n); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("binlog dump connections on the server while streaming: %d", n)
}

func (m *mysqlDB) close() {
	m.exec("DROP TABLE IF EXISTS " + m.table)
	m.db.Close()
}

func (m *mysqlDB) exec(q string) error {
	if _, err := m.db.Exec(q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}
