package jdbc

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/weirstream/weir/operator"
)

// openErr creates a writer for table with opts and returns its error.
func openErr(t *testing.T, db *testDB, table string, opts ...Opt) error {
	t.Helper()
	s := db.newSink(t, table, opts...)
	w, err := s.CreateWriter(wctx("", 0, 1, 0))
	if err == nil {
		w.Close()
	}
	return err
}

// A misconfiguration fails at open, names what is wrong and is marked
// non-restartable: a restart would fail the same way.
func TestMisconfigurationIsNotRestartable(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "mc", "id INT NOT NULL PRIMARY KEY, code INT NOT NULL, v INT")
		cases := []struct {
			name string
			tbl  string
			opts []Opt
			want []string
		}{
			{"wrong password", tbl, []Opt{Credentials("weir_nobody", "wrong")}, []string{"check 'username'/'password'"}},
			{"missing table", "no_such_table_mc", nil, []string{`table "no_such_table_mc" not found`}},
			{"unknown column", tbl, []Opt{Columns("id", "nope")}, []string{`has no column "nope"`}},
			{"key mismatch", tbl, []Opt{PrimaryKey("code")}, []string{`table "` + tbl + `"`,
				"declared PRIMARY KEY (code)", "unique keys (id)", "unique index on (code)"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				err := openErr(t, db, c.tbl, c.opts...)
				if !errors.Is(err, operator.ErrNonRestartable) {
					t.Fatalf("got %v, want a non-restartable error", err)
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("message lacks %q: %v", w, err)
					}
				}
			})
		}
	})
}

// A declared key the table has a unique index for opens; PostgreSQL needs
// the index on exactly the declared columns, MySQL one within them.
func TestDeclaredKeyMatchesUniqueIndex(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "dk", "id INT NOT NULL PRIMARY KEY, a INT NOT NULL, b INT NOT NULL, v INT")
		db.exec(t, "CREATE UNIQUE INDEX "+tbl+"_ab ON "+tbl+" (b, a)")
		for _, key := range [][]string{{"id"}, {"a", "b"}} {
			if err := openErr(t, db, tbl, PrimaryKey(key...)); err != nil {
				t.Errorf("key %v: %v", key, err)
			}
		}
		err := openErr(t, db, tbl, PrimaryKey("a"))
		if err == nil || !strings.Contains(err.Error(), "unique keys (id), (b, a)") {
			t.Errorf("key (a): got %v, want the table's keys listed", err)
		}
		superset := openErr(t, db, tbl, PrimaryKey("id", "a"))
		if db.kind == "mysql" && superset != nil {
			t.Errorf("key (id, a) on MySQL: %v (ON DUPLICATE KEY UPDATE fires on (id))", superset)
		}
		if db.kind == "postgres" && !errors.Is(superset, operator.ErrNonRestartable) {
			t.Errorf("key (id, a) on PostgreSQL: got %v, want refused (ON CONFLICT needs that exact index)", superset)
		}
	})
}

// A url with a wrong port fails the sink's open naming the table's 'url'
// option and the address, and saying what is retried. No server needed:
// nothing listens on the port.
func TestWrongPortNamesURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	for _, c := range []struct{ kind, url string }{
		{"mysql", "jdbc:mysql://" + addr + "/h6?user=u&password=p"},
		{"postgres", "jdbc:postgresql://" + addr + "/h6?user=u&password=p"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			s, err := New(URL(c.url), Table("t_h6"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.CreateWriter(wctx("", 0, 1, 0))
			name := map[string]string{"mysql": "MySQL", "postgres": "PostgreSQL"}[c.kind]
			want := fmt.Sprintf(`jdbc: sink for table "t_h6": connecting to %s at %s (the table's 'url' option): `, name, addr)
			if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "the job restarts from its last checkpoint and connects again") {
				t.Fatalf("open with a wrong port: %v\nwant an error starting %q", err, want)
			}
			if errors.Is(err, operator.ErrNonRestartable) {
				t.Errorf("a refused connection is marked non-restartable (the database may only be down): %v", err)
			}
		})
	}
}
