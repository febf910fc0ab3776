package postgrescdc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weirstream/weir/connector/cdc/cdctest"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// fixture is a captured table (id BIGINT key, k INT, amount BIGINT, note
// TEXT) with its own slot, dropped with the test.
type fixture struct {
	t     *testing.T
	dsn   string
	db    *pgx.Conn
	table string
	slot  string
	opts  Options
}

var bigint, intT, text = types.Type{Kind: types.BigInt}, types.Type{Kind: types.Int}, types.Type{Kind: types.String}

func newFixture(t *testing.T, rows int) *fixture {
	t.Helper()
	c := testsvc.PostgresCDCTable(t, "cdc", "CREATE TABLE %[1]s (id BIGINT PRIMARY KEY, k INT NOT NULL, amount BIGINT, note TEXT)",
		"ALTER TABLE %[1]s REPLICA IDENTITY FULL")
	dsn := c.DSN
	f := &fixture{t: t, dsn: dsn, db: c.DB, table: c.Table, slot: c.Slot}
	if rows > 0 {
		f.exec(fmt.Sprintf("INSERT INTO %s SELECT i, i %% 7, i * 10, 'row ' || i FROM generate_series(1, %d) i", f.table, rows))
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	f.opts = Options{Hostname: cfg.Host, Port: int(cfg.Port), Username: cfg.User, Password: cfg.Password, Database: cfg.Database,
		Schema: "public", Table: f.table, Slot: f.slot, StartupMode: "initial", Name: "src",
		Fields:     []types.Field{{Name: "id", Type: bigint}, {Name: "k", Type: intT}, {Name: "amount", Type: bigint}, {Name: "note", Type: text}},
		PrimaryKey: []string{"id"}}
	return f
}

func (f *fixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.db.Exec(context.Background(), sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// tableRows is the table as it is now, keyed by id.
func (f *fixture) tableRows() map[int64][]any {
	f.t.Helper()
	rows, err := f.db.Query(context.Background(), "SELECT id, k, amount, note FROM "+f.table)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[int64][]any{}
	for rows.Next() {
		var id int64
		var k int32
		var amount *int64
		var note *string
		if err := rows.Scan(&id, &k, &amount, &note); err != nil {
			f.t.Fatal(err)
		}
		row := []any{id, int64(k), nil, nil}
		if amount != nil {
			row[2] = *amount
		}
		if note != nil {
			row[3] = *note
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
	n       int
	done    chan struct{}
	mu      sync.Mutex
	commits int
	err     error
}

func (f *fixture) startWriter(n int, seed uint64) *writer {
	w := &writer{f: f, n: n, done: make(chan struct{})}
	db, err := pgx.Connect(context.Background(), f.dsn)
	if err != nil {
		f.t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		defer db.Close(context.Background())
		rng := rand.New(rand.NewPCG(seed, 1))
		next := int64(1_000_000)
		for i := 0; i < n; i++ {
			if err := w.txn(db, rng, &next); err != nil {
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

func (w *writer) txn(db *pgx.Conn, rng *rand.Rand, next *int64) error {
	ctx := context.Background()
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	t := w.f.table
	for range 1 + rng.IntN(4) {
		id := 1 + rng.Int64N(3000)
		var q string
		var args []any
		switch op := rng.IntN(10); {
		case op < 3:
			*next++
			q, args = "INSERT INTO "+t+" VALUES ($1, $2, $3, 'new')", []any{*next, rng.IntN(7), rng.Int64N(1000)}
		case op < 7:
			q, args = "UPDATE "+t+" SET amount = amount + $2, note = 'upd' WHERE id = $1", []any{id, 1 + rng.Int64N(50)}
		case op < 8:
			*next++
			q, args = "UPDATE "+t+" SET id = $2, k = $3 WHERE id = $1", []any{id, *next, rng.IntN(7)}
		default:
			q, args = "DELETE FROM "+t+" WHERE id = $1", []any{id}
		}
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
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

// fence inserts a row with a fresh id and returns a stop condition: true
// once the changelog has that row (every earlier commit is in it).
func (f *fixture) fence(c *cdctest.Collector, id int64) func() bool {
	f.exec("INSERT INTO "+f.table+" VALUES ($1, 0, 0, 'fence')", id)
	return func() bool {
		for i := len(c.Rows) - 1; i >= 0 && i >= len(c.Rows)-300; i-- {
			if c.Rows[i].Fields[0].(int64) == id {
				return true
			}
		}
		return false
	}
}

// openReader starts a reader of the fixture's table at pos (nil: fresh).
func (f *fixture) openReader(pos []byte) operator.SourceReader {
	f.t.Helper()
	s, err := NewSource(f.opts)
	if err != nil {
		f.t.Fatal(err)
	}
	r, err := s.CreateReader(operator.ReaderContext{Context: context.Background()})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := r.AddSplits([]operator.SplitState{{ID: s.splitID(), Position: pos}}); err != nil {
		f.t.Fatal(err)
	}
	return r
}
