// Command mysqlcdc measures mysql-cdc's binlog phase with several source
// subtasks: a table of -rows rows (in -parallelism×2 key-range splits) is
// snapshotted by -parallelism readers; then -changes rows are inserted in
// transactions of 1,000 and the run measures how long until the readers
// have emitted every change, the process CPU time that took, and how many
// binlog dump connections the readers held to the server.
//
//	eval "$(scripts/services.sh env)"
//	go run ./bench/mysqlcdc -parallelism 4 -changes 100000
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/weirstream/weir/connector/mysqlcdc"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

func main() {
	par := flag.Int("parallelism", 4, "source subtasks")
	rows := flag.Int("rows", 8000, "rows before the start (snapshot)")
	changes := flag.Int("changes", 100000, "rows inserted after the snapshot (binlog)")
	flag.Parse()
	if err := run(*par, *rows, *changes); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// counter is a ReaderOutput that counts rows.
type counter struct{ n *atomic.Int64 }

func (c counter) Collect(string, event.Record) { c.n.Add(1) }

func run(par, rows, changes int) error {
	dsn := os.Getenv("WEIR_MYSQL_DSN")
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("WEIR_MYSQL_DSN (eval \"$(scripts/services.sh env)\"): %w", err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	table := fmt.Sprintf("bench_cdc_%d_%04x", time.Now().UnixNano()%1e9, rand.Uint32()%0xffff)
	if err := exec(db, "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY, k INT NOT NULL, amount BIGINT, note VARCHAR(100))",
		fmt.Sprintf("INSERT INTO %s SELECT seq, seq %% 7, seq, 'snapshot row' FROM seq_1_to_%d", table, rows)); err != nil {
		return err
	}
	defer exec(db, "DROP TABLE "+table)
	host, port, _ := strings.Cut(cfg.Addr, ":")
	var p int
	fmt.Sscan(port, &p)
	lo := 300_000 + rand.Uint32N(1_000_000)*16
	src, err := mysqlcdc.NewSource(mysqlcdc.Options{Hostname: host, Port: p, Username: cfg.User, Password: cfg.Passwd,
		Database: cfg.DBName, Table: table, ServerIDs: [2]uint32{lo, lo + 15}, StartupMode: "initial", TimeZone: time.UTC,
		ChunkSize: max(1, rows/(2*par)), Name: "bench",
		Fields: []types.Field{{Name: "id", Type: types.Type{Kind: types.BigInt}}, {Name: "k", Type: types.Type{Kind: types.Int}},
			{Name: "amount", Type: types.Type{Kind: types.BigInt}}, {Name: "note", Type: types.Type{Kind: types.String}}},
		PrimaryKey: []string{"id"}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if err := startReaders(ctx, &wg, src, par, counter{&n}); err != nil {
		return err
	}
	if err := waitFor(&n, int64(rows), time.Minute); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	time.Sleep(time.Second) // every reader's stream has started
	dumps, _ := binlogDumps(db)
	cpu0, t0 := cpuTime(), time.Now()
	for i := 0; i < changes; i += 1000 {
		q := fmt.Sprintf("INSERT INTO %s SELECT %d + seq, seq %% 7, seq, 'binlog row' FROM seq_1_to_%d", table, rows+i, min(1000, changes-i))
		if err := exec(db, q); err != nil {
			return err
		}
	}
	if err := waitFor(&n, int64(rows+changes), 5*time.Minute); err != nil {
		return fmt.Errorf("binlog: %w", err)
	}
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	fmt.Printf("parallelism %d: %d changes in %.2fs (%.0f rows/s), process CPU %.2fs (%.0f rows per CPU-second); "+
		"binlog dump connections on the server while streaming: %d\n",
		par, changes, wall.Seconds(), float64(changes)/wall.Seconds(), cpu.Seconds(), float64(changes)/cpu.Seconds(), dumps)
	return nil
}

// startReaders makes par readers, hands each its splits (as the runtime
// does) and polls each on a goroutine of its own.
func startReaders(ctx context.Context, wg *sync.WaitGroup, src *mysqlcdc.Source, par int, out counter) error {
	splits, err := src.Enumerate(ctx)
	if err != nil {
		return err
	}
	for i := range par {
		r, err := src.CreateReader(operator.ReaderContext{Subtask: event.SubtaskID{Index: i}, Parallelism: par, Context: ctx})
		if err != nil {
			return err
		}
		var mine []operator.SplitState
		for _, s := range splits {
			if src.AssignSplit(s.ID, par) == i {
				mine = append(mine, s)
			}
		}
		if err := r.AddSplits(mine); err != nil {
			return err
		}
		wg.Go(func() { poll(ctx, r, out) })
	}
	return nil
}

func poll(ctx context.Context, r operator.SourceReader, out counter) {
	defer r.Close()
	for ctx.Err() == nil {
		st, err := r.Poll(out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reader:", err)
			return
		}
		if st == operator.NothingAvailable {
			select {
			case <-r.Available():
			case <-ctx.Done():
			}
		}
	}
}

func waitFor(n *atomic.Int64, want int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for n.Load() < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d rows after %v", n.Load(), want, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n.Load() > want {
		return fmt.Errorf("%d rows, want %d", n.Load(), want)
	}
	return nil
}

// binlogDumps counts the server's binlog dump threads (every replica's on
// the shared server, ours among them).
func binlogDumps(db *sql.DB) (int, error) {
	var n int
	err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'").Scan(&n)
	return n, err
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func exec(db *sql.DB, qs ...string) error {
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}
