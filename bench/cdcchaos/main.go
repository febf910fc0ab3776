// Command cdcchaos is the long SIGKILL run of the billing case fed by CDC:
// a bills table in MariaDB (mysql-cdc) or PostgreSQL (postgres-cdc) that a
// writer changes all along, totalled per account into the same database
// exactly once by `weir run`, which `weir chaos` kills with SIGKILL -kills
// times. After the kills the writer stops, the last run is stopped with a
// savepoint once the totals equal those recomputed from the bills table,
// and the verdict compares them and checks that no prepared transaction is
// left. cmd/weir's TestBilling*CDCThroughKills are the short versions.
//
//	go build -o /tmp/weir ./cmd/weir
//	eval "$(scripts/services.sh env)"
//	go run ./bench/cdcchaos -weir /tmp/weir -db mysql -kills 20
//	go run ./bench/cdcchaos -weir /tmp/weir -db postgres -kills 20
package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/weirstream/weir/examples/billing/cdcbills"
)

type config struct {
	weir, db           string
	rows, kills        int
	minDelay, maxDelay time.Duration
	seed               int64
	keep               bool
}

func main() {
	var c config
	flag.StringVar(&c.weir, "weir", "", "the weir binary (go build -o /tmp/weir ./cmd/weir)")
	flag.StringVar(&c.db, "db", "mysql", "mysql (mysql-cdc from MariaDB) or postgres (postgres-cdc from PostgreSQL)")
	flag.IntVar(&c.rows, "rows", 200000, "bills in the table before the job starts (its snapshot)")
	flag.IntVar(&c.kills, "kills", 20, "SIGKILLs")
	flag.DurationVar(&c.minDelay, "min-delay", 500*time.Millisecond, "shortest run before a kill")
	flag.DurationVar(&c.maxDelay, "max-delay", 3*time.Second, "longest run before a kill")
	flag.Int64Var(&c.seed, "seed", time.Now().UnixNano(), "random seed of the kills and the writer")
	flag.BoolVar(&c.keep, "keep", false, "keep the tables and the scratch directory")
	flag.Parse()
	if err := run(context.Background(), c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// target is the database side of one run: the tables, the job's source
// options and the flags that tell weir chaos where to look.
type target struct {
	db            *sql.DB
	bills, totals string
	source, url   string
	chaosFlags    []string
	cleanup       []string
}

func run(ctx context.Context, c config) error {
	if c.weir == "" {
		return fmt.Errorf("give -weir, the weir binary")
	}
	dir, err := os.MkdirTemp("", "cdcchaos-")
	if err != nil {
		return err
	}
	suffix := fmt.Sprintf("%d_%04x", time.Now().UnixNano()%1e9, rand.Uint32()%0xffff)
	t, err := newTarget(c.db, suffix)
	if err != nil {
		return err
	}
	defer t.close(c.keep)
	if !c.keep {
		defer os.RemoveAll(dir)
	}
	d := cdcbills.Dialect(c.db)
	start := time.Now()
	if err := cdcbills.Create(ctx, t.db, d, t.bills, t.totals, c.rows); err != nil {
		return err
	}
	fmt.Printf("%s: %d bills in %s (%.1fs), totals into %s\n", c.db, c.rows, t.bills, time.Since(start).Seconds(), t.totals)
	script := filepath.Join(dir, "billing-cdc.sql")
	if err := os.WriteFile(script, []byte(cdcbills.Script(t.source, t.url, t.totals)), 0o644); err != nil {
		return err
	}
	args := append([]string{"chaos", "--kills", fmt.Sprint(c.kills), "--min-delay", c.minDelay.String(),
		"--max-delay", c.maxDelay.String(), "--seed", fmt.Sprint(c.seed), "--table", t.totals,
		"--source-table", t.bills, "--settle", "5m", "--job", "billing-cdc-" + suffix}, t.chaosFlags...)
	args = append(args, "--", c.weir, "run", script, "--set", "execution.checkpointing.interval=500ms",
		"--set", "parallelism.default=2", "--set", "execution.checkpointing.dir="+filepath.Join(dir, "checkpoints"), "--set", "pipeline.name=billing-cdc-"+suffix)
	return chaos(ctx, c, t, dir, args)
}

// chaos runs weir chaos while the writer changes the bills, stopping the
// writer when chaos says it settles.
func chaos(ctx context.Context, c config, t *target, dir string, args []string) error {
	w := &cdcbills.Writer{DB: t.db, Table: t.bills, MaxID: int64(c.rows), Seed: uint64(c.seed)}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	werr := make(chan error, 1)
	go func() { werr <- w.Run(wctx) }()
	logf, err := os.Create(filepath.Join(dir, "weir.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, c.weir, args...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	writing := true
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if writing && strings.Contains(line, ": settling after ") {
			stop()
			if err := <-werr; err != nil {
				fmt.Printf("writer: %v\n", err)
			}
			writing = false
			fmt.Printf("writer stopped after %d transactions (%.1fs)\n", w.Txns, time.Since(start).Seconds())
		}
		fmt.Println(line)
	}
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	fmt.Printf("%.1fs in all; %s\n", time.Since(start).Seconds(), phases(logf.Name()))
	if writing {
		stop()
		<-werr
	}
	return err
}

// phases counts in weir's log how often a run started reading a snapshot
// and how often one reached the stream (binlog, replication slot): the
// kills fell in both when both exceed the snapshots a single run needs.
func phases(log string) string {
	b, err := os.ReadFile(log)
	if err != nil {
		return err.Error()
	}
	snap, stream := 0, 0
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.Contains(l, "-cdc: ") && strings.Contains(l, " the snapshot"):
			snap++
		case strings.Contains(l, "-cdc: streaming"):
			stream++
		}
	}
	return fmt.Sprintf("weir's log: %d snapshot reads started, %d streams started", snap, stream)
}

func newTarget(db, suffix string) (*target, error) {
	switch db {
	case "mysql":
		return mysqlTarget(suffix)
	case "postgres":
		return postgresTarget(suffix)
	}
	return nil, fmt.Errorf("-db %q: want mysql or postgres", db)
}

func mysqlTarget(suffix string) (*target, error) {
	dsn := os.Getenv("WEIR_MYSQL_DSN")
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("WEIR_MYSQL_DSN (eval \"$(scripts/services.sh env)\"): %w", err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	t := &target{db: db, bills: "bills_cdc_" + suffix, totals: "account_totals_cdc_" + suffix,
		url: "jdbc:mysql://" + cfg.Addr + "/" + cfg.DBName, chaosFlags: []string{"--mysql", dsn, "--source-mysql", dsn}}
	host, port, _ := strings.Cut(cfg.Addr, ":")
	lo := 200_000 + rand.IntN(1_000_000)*16
	t.source = fmt.Sprintf(`'connector' = 'mysql-cdc', 'hostname' = '%s', 'port' = '%s', 'username' = '%s',
  'password' = '%s', 'database-name' = '%s', 'table-name' = '%s', 'server-id' = '%d-%d',
  'scan.incremental.snapshot.chunk.size' = '8096', 'server-time-zone' = 'UTC'`,
		host, port, cfg.User, cfg.Passwd, cfg.DBName, t.bills, lo, lo+3)
	t.cleanup = []string{"DROP TABLE IF EXISTS " + t.bills, "DROP TABLE IF EXISTS " + t.totals}
	return t, nil
}

func postgresTarget(suffix string) (*target, error) {
	dsn := os.Getenv("WEIR_POSTGRES_DSN")
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("WEIR_POSTGRES_DSN (eval \"$(scripts/services.sh env)\"): %w", err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	t := &target{db: db, bills: "bills_cdc_" + suffix, totals: "account_totals_cdc_" + suffix,
		url:        fmt.Sprintf("jdbc:postgresql://%s:%d/%s", cfg.Host, cfg.Port, cfg.Database),
		chaosFlags: []string{"--postgres", dsn, "--source-postgres", dsn}}
	slot := "weir_" + t.bills
	t.source = fmt.Sprintf(`'connector' = 'postgres-cdc', 'hostname' = '%s', 'port' = '%d', 'username' = '%s',
  'password' = '%s', 'database-name' = '%s', 'schema-name' = 'public', 'table-name' = '%s', 'slot.name' = '%s',
  'decoding.plugin.name' = 'pgoutput'`, cfg.Host, cfg.Port, cfg.User, cfg.Password, cfg.Database, t.bills, slot)
	// The slot holds WAL back on a shared server: it goes with the tables.
	t.cleanup = []string{"SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND NOT active",
		"DROP PUBLICATION IF EXISTS " + slot + "_pub", "DROP TABLE IF EXISTS " + t.bills, "DROP TABLE IF EXISTS " + t.totals}
	return t, nil
}

func (t *target) close(keep bool) {
	if !keep {
		for _, q := range t.cleanup {
			if _, err := t.db.Exec(q); err != nil {
				fmt.Fprintf(os.Stderr, "cleanup %s: %v\n", q, err)
			}
		}
	}
	_ = t.db.Close()
}
