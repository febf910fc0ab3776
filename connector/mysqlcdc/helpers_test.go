package mysqlcdc

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/weirstream/weir/connector/cdc/cdctest"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// fixture is a captured table (id BIGINT key, k INT, amount BIGINT, note
// VARCHAR) in a database of its own, dropped with the test.
type fixture struct {
	t      *testing.T
	db     *sql.DB
	dbName string
	table  string
	opts   Options
}

var bigint, intT, text = types.Type{Kind: types.BigInt}, types.Type{Kind: types.Int}, types.Type{Kind: types.String}

// serverIDs hands each fixture its own block of replica ids: readers of
// concurrent tests on the shared server must not share one.
func serverIDs() [2]uint32 {
	lo := 100_000 + rand.Uint32N(1_000_000)*16
	return [2]uint32{lo, lo + 15}
}

func newFixture(t *testing.T, rows int) *fixture {
	t.Helper()
	dsn := testsvc.MySQL(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName, cfg.MultiStatements = "", true
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, db: db, dbName: fmt.Sprintf("cdc_%d_%04x", time.Now().UnixNano()%1e9, rand.Uint32()%0xffff), table: "bills"}
	f.exec("CREATE DATABASE " + f.dbName)
	t.Cleanup(func() {
		_, _ = db.Exec("DROP DATABASE IF EXISTS " + f.dbName)
		_ = db.Close()
	})
	f.exec(fmt.Sprintf("CREATE TABLE %s (id BIGINT PRIMARY KEY, k INT NOT NULL, amount BIGINT, note VARCHAR(100)) ENGINE=InnoDB", f.q()))
	if rows > 0 {
		f.exec(fmt.Sprintf("INSERT INTO %s SELECT seq, seq %% 7, seq * 10, CONCAT('row ', seq) FROM %s.seq_1_to_%d", f.q(), f.dbName, rows))
	}
	host, port, _ := strings.Cut(cfg.Addr, ":")
	var p int
	fmt.Sscan(port, &p)
	f.opts = Options{Hostname: host, Port: p, Username: cfg.User, Password: cfg.Passwd, Database: f.dbName, Table: f.table,
		ServerIDs: serverIDs(), StartupMode: "initial", TimeZone: time.UTC, ChunkSize: 1000, Name: "src",
		Fields:     []types.Field{{Name: "id", Type: bigint}, {Name: "k", Type: intT}, {Name: "amount", Type: bigint}, {Name: "note", Type: text}},
		PrimaryKey: []string{"id"}}
	return f
}

// q is the table's qualified name.
func (f *fixture) q() string { return f.dbName + "." + f.table }

func (f *fixture) exec(q string, args ...any) {
	f.t.Helper()
	if _, err := f.db.Exec(q, args...); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

// tableRows is the table as it is now, keyed by id.
func (f *fixture) tableRows() map[int64][]any {
	f.t.Helper()
	rows, err := f.db.Query("SELECT id, k, amount, note FROM " + f.q())
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64][]any{}
	for rows.Next() {
		var id, k int64
		var amount sql.NullInt64
		var note sql.NullString
		if err := rows.Scan(&id, &k, &amount, &note); err != nil {
			f.t.Fatal(err)
		}
		row := []any{id, k, nil, nil}
		if amount.Valid {
			row[2] = amount.Int64
		}
		if note.Valid {
			row[3] = note.String
		}
		out[id] = row
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// writer changes the table in transactions of a few statements each:
// inserts of new ids, updates of amount, note and sometimes the key, and
// deletes. It stops after n transactions.
type writer struct {
	f       *fixture
	done    chan struct{}
	mu      sync.Mutex
	commits int
	err     error
}

func (f *fixture) startWriter(n int, seed uint64) *writer {
	w := &writer{f: f, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		rng := rand.New(rand.NewPCG(seed, 1))
		next := int64(1_000_000)
		for range n {
			if err := w.txn(rng, &next); err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
				return
			}
			w.mu.Lock()
			w.commits++
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *writer) txn(rng *rand.Rand, next *int64) error {
	tx, err := w.f.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	t := w.f.q()
	for range 1 + rng.IntN(4) {
		id := 1 + rng.Int64N(3000)
		var q string
		var args []any
		switch op := rng.IntN(10); {
		case op < 3:
			*next++
			q, args = "INSERT INTO "+t+" VALUES (?, ?, ?, 'new')", []any{*next, rng.IntN(7), rng.Int64N(1000)}
		case op < 7:
			q, args = "UPDATE "+t+" SET amount = amount + ?, note = 'upd' WHERE id = ?", []any{1 + rng.Int64N(50), id}
		case op < 8:
			// A key moves, often to another split (the chunks are of 1000
			// ids: new negative ids lie in the first, large ones in the last).
			*next++
			to := *next
			if rng.IntN(2) == 0 {
				to = -to
			}
			q, args = "UPDATE "+t+" SET id = ?, k = ? WHERE id = ?", []any{to, rng.IntN(7), id}
		default:
			q, args = "DELETE FROM "+t+" WHERE id = ?", []any{id}
		}
		if _, err := tx.Exec(q, args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (w *writer) committed() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.commits
}

func (w *writer) wait(t *testing.T) {
	t.Helper()
	<-w.done
	if w.err != nil {
		t.Fatalf("writer: %v", w.err)
	}
}

// assign returns subtask i's share of splits, as the runtime assigns them.
func assign(s *Source, splits []operator.SplitState, i, n int) []operator.SplitState {
	var out []operator.SplitState
	for _, sp := range splits {
		if s.AssignSplit(sp.ID, n) == i {
			out = append(out, sp)
		}
	}
	return out
}

// fence commits a change to the table and returns a stop condition for
// each reader: true once every split of it has passed the fence (so every
// earlier commit is in its changelog).
func (f *fixture) fence(id int64) func(r *reader) func() bool {
	f.t.Helper()
	before, err := masterPos(context.Background(), f.db)
	if err != nil {
		f.t.Fatal(err)
	}
	f.exec("INSERT INTO "+f.q()+" VALUES (?, 0, 0, 'fence')", id)
	return func(r *reader) func() bool {
		return func() bool {
			for _, p := range r.pos {
				if p.Snapshotting || p.Done.Compare(before) <= 0 {
					return false
				}
			}
			return true
		}
	}
}

// openReader starts subtask i of n reading splits.
func (f *fixture) openReader(s *Source, i, n int, splits []operator.SplitState) *reader {
	f.t.Helper()
	r, err := s.CreateReader(operator.ReaderContext{Context: context.Background(), Subtask: event.SubtaskID{Index: i}, Parallelism: n})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := r.AddSplits(splits); err != nil {
		f.t.Fatal(err)
	}
	return r.(*reader)
}

// pollAll polls every reader in turn, each into its collector, until
// stop says so, failing after a minute.
func pollAll(t *testing.T, rs []*reader, cs []*cdctest.Collector, stop func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !stop() {
		idle := true
		for i, r := range rs {
			st, err := r.Poll(cs[i])
			if err != nil {
				t.Fatalf("poll subtask %d: %v", i, err)
			}
			idle = idle && st == operator.NothingAvailable
		}
		if time.Now().After(deadline) {
			t.Fatalf("no end after a minute: %d and %d rows read", len(cs[0].Rows), len(cs[len(cs)-1].Rows))
		}
		if idle {
			time.Sleep(time.Millisecond)
		}
	}
}

// source is the fixture's Source and its splits.
func (f *fixture) source() (*Source, []operator.SplitState) {
	f.t.Helper()
	s, err := NewSource(f.opts)
	if err != nil {
		f.t.Fatal(err)
	}
	splits, err := s.Enumerate(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return s, splits
}

// masterFile is the binlog file the server writes now.
func (f *fixture) masterFile() string {
	f.t.Helper()
	pos, err := masterPos(context.Background(), f.db)
	if err != nil {
		f.t.Fatal(err)
	}
	return pos.File
}
