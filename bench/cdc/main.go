// Command cdc measures the mysql-cdc and postgres-cdc sources in records
// per CPU-second (records/s/core) in both phases: a table of -rows rows is
// snapshotted (mysql-cdc by -parallelism readers over key-range splits;
// postgres-cdc has one split), then -changes rows are inserted in
// transactions of 1,000 and the run measures how long until the readers
// have emitted every change. CPU time is the process's (getrusage: user +
// system, every thread), so the database servers' work is not counted but
// this process's own INSERT statements (a few per 1,000 rows) are. For
// mysql-cdc it also counts the binlog dump connections the readers held.
//
//	eval "$(scripts/services.sh env)"
//	go run ./bench/cdc -rows 100000 -changes 100000
//	go run ./bench/cdc -connector mysql-cdc -parallelism 4
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// columns are the captured table's: id BIGINT key, k INT, amount BIGINT,
// note text.
var columns = []types.Field{{Name: "id", Type: types.Type{Kind: types.BigInt}}, {Name: "k", Type: types.Type{Kind: types.Int}},
	{Name: "amount", Type: types.Type{Kind: types.BigInt}}, {Name: "note", Type: types.Type{Kind: types.String}}}

// database is one connector's side: the table, its source and its
// inserts.
type database interface {
	// source returns the connector's source over the table.
	source(rows, par int) (source, error)
	// insert inserts rows [from, from+n) in one transaction.
	insert(from, n int) error
	// note is what the report adds for the connector ("" for none).
	note() string
	// close drops what the run made (table, slot, publication).
	close()
}

// source is what both connectors' sources are.
type source interface {
	Enumerate(context.Context) ([]operator.SplitState, error)
	CreateReader(operator.ReaderContext) (operator.SourceReader, error)
}

func main() {
	conn := flag.String("connector", "both", "mysql-cdc, postgres-cdc or both")
	par := flag.Int("parallelism", 4, "mysql-cdc source subtasks (postgres-cdc has one split)")
	rows := flag.Int("rows", 100000, "rows before the start (snapshot)")
	changes := flag.Int("changes", 100000, "rows inserted after the snapshot (binlog / WAL)")
	flag.Parse()
	slog.SetLogLoggerLevel(slog.LevelWarn)
	fmt.Printf("%-13s %-11s %4s %9s %10s %10s %10s\n", "connector", "phase", "par", "records", "wall s", "records/s", "rec/s/core")
	for _, name := range []string{"mysql-cdc", "postgres-cdc"} {
		if *conn != "both" && *conn != name {
			continue
		}
		if err := run(name, *par, *rows, *changes); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

func run(name string, par, rows, changes int) error {
	var db database
	var err error
	if name == "mysql-cdc" {
		db, err = newMySQL(rows)
	} else {
		db, err = newPostgres(rows)
		par = 1
	}
	if err != nil {
		return err
	}
	defer db.close()
	src, err := db.source(rows, par)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	errc := make(chan error, par)
	var wg sync.WaitGroup
	defer wg.Wait() // the readers close (and give up their slot) before db.close
	defer cancel()
	snap := start()
	if err := startReaders(ctx, &wg, src, par, counter{&n}, errc); err != nil {
		return err
	}
	if err := waitFor(&n, int64(rows), errc); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	snap.report(name, "snapshot", par, rows)
	time.Sleep(time.Second) // every reader's stream has started
	stream := start()
	for i := 0; i < changes; i += 1000 {
		if err := db.insert(rows+i+1, min(1000, changes-i)); err != nil {
			return err
		}
	}
	if err := waitFor(&n, int64(rows+changes), errc); err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	stream.report(name, "stream", par, changes)
	if s := db.note(); s != "" {
		fmt.Printf("  %s: %s\n", name, s)
	}
	return nil
}

// counter is a ReaderOutput that counts rows.
type counter struct{ n *atomic.Int64 }

func (c counter) Collect(string, event.Record) { c.n.Add(1) }

// startReaders makes par readers, hands each its splits (as the runtime
// does, by the source's AssignSplit when it has one) and polls each on a
// goroutine of its own.
func startReaders(ctx context.Context, wg *sync.WaitGroup, src source, par int, out counter, errc chan<- error) error {
	splits, err := src.Enumerate(ctx)
	if err != nil {
		return err
	}
	assign := func(string, int) int { return 0 }
	if a, ok := src.(interface{ AssignSplit(string, int) int }); ok {
		assign = a.AssignSplit
	}
	for i := range par {
		r, err := src.CreateReader(operator.ReaderContext{Subtask: event.SubtaskID{Index: i}, Parallelism: par, Context: ctx})
		if err != nil {
			return err
		}
		mine := slices.DeleteFunc(slices.Clone(splits), func(s operator.SplitState) bool { return assign(s.ID, par) != i })
		if err := r.AddSplits(mine); err != nil {
			return err
		}
		wg.Go(func() { errc <- poll(ctx, r, out) })
	}
	return nil
}

// poll polls r until ctx ends or r fails.
func poll(ctx context.Context, r operator.SourceReader, out counter) error {
	defer r.Close()
	for ctx.Err() == nil {
		st, err := r.Poll(out)
		if err != nil {
			return fmt.Errorf("reader: %w", err)
		}
		if st == operator.NothingAvailable {
			select {
			case <-r.Available():
			case <-ctx.Done():
			}
		}
	}
	return nil
}

// waitFor waits until the readers have emitted want rows, up to five
// minutes, or one of them fails.
func waitFor(n *atomic.Int64, want int64, errc <-chan error) error {
	const limit = 5 * time.Minute
	deadline := time.Now().Add(limit)
	for n.Load() < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d rows after %v", n.Load(), want, limit)
		}
		select {
		case err := <-errc:
			return err
		case <-time.After(5 * time.Millisecond):
		}
	}
	if n.Load() > want {
		return fmt.Errorf("%d rows, want %d", n.Load(), want)
	}
	return nil
}

// phase is a measurement's start.
type phase struct {
	cpu  time.Duration
	wall time.Time
}

func start() phase { return phase{cpuTime(), time.Now()} }

func (p phase) report(name, what string, par, records int) {
	wall, cpu := time.Since(p.wall), cpuTime()-p.cpu
	fmt.Printf("%-13s %-11s %4d %9d %10.2f %10.0f %10.0f\n", name, what, par, records, wall.Seconds(),
		float64(records)/wall.Seconds(), float64(records)/cpu.Seconds())
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
