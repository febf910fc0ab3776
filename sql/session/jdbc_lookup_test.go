package session

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/weirstream/weir/internal/testsvc"
)

// lookupDB is a dimension table h9_cust_… on MariaDB or PostgreSQL, and
// the WITH options that reach it.
type lookupDB struct {
	kind, table, with string
	db                *sql.DB
}

func openLookupDBs(t *testing.T) []lookupDB {
	t.Helper()
	my, pg := testsvc.MySQL(t), testsvc.Postgres(t)
	var out []lookupDB
	for _, c := range []struct{ kind, driver, dsn, with string }{
		{"mysql", "mysql", my, fmt.Sprintf("'url'='%s','username'='weir','password'='weir'", jdbcURL(t, my))},
		{"postgres", "pgx", pg, fmt.Sprintf("'url'='%s'", pg)},
	} {
		db, err := sql.Open(c.driver, c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		table := fmt.Sprintf("h9_cust_%d", time.Now().UnixNano())
		for _, q := range []string{
			"CREATE TABLE " + table + " (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), tier INT)",
			"INSERT INTO " + table + " VALUES (1, 'ann', 1), (2, 'bob', 2), (3, NULL, 1)",
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { db.Exec("DROP TABLE " + table) })
		out = append(out, lookupDB{kind: c.kind, table: table, with: c.with, db: db})
	}
	return out
}

// lookupScript joins orders (a CSV file) with the JDBC table customers by
// key and writes the result to a CSV directory; it returns the script and
// the output directory.
func lookupScript(t *testing.T, d lookupDB, cacheOptions, query string) (string, string) {
	return lookupScriptCols(t, d, "id INT, name STRING, tier INT", cacheOptions, query)
}

// lookupScriptCols is lookupScript with customers' columns.
func lookupScriptCols(t *testing.T, d lookupDB, cols, cacheOptions, query string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	orders := filepath.Join(dir, "orders.csv")
	if err := os.WriteFile(orders, []byte("10,1\n11,2\n12,9\n13,\n14,3\n15,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	return fmt.Sprintf(`CREATE TABLE orders (id INT, cust INT, pt AS PROCTIME())
  WITH ('connector'='filesystem','path'='%s','format'='csv');
CREATE TABLE customers (%s, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector'='jdbc',%s,'table-name'='%s'%s);
CREATE TABLE enriched (id INT, cust INT, name STRING, tier INT)
  WITH ('connector'='filesystem','path'='%s','format'='csv');
%s`, orders, cols, d.with, d.table, cacheOptions, out, query), out
}

// readLines returns the lines of every file in dir, sorted.
func readLines(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		if e.IsDir() { // the sink's .weir-committed markers
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(strings.TrimSpace(string(b)), "\n")...)
	}
	slices.Sort(lines)
	return lines
}

// A stream joined with a JDBC dimension table, INNER and LEFT, with and
// without the PARTIAL cache: each order finds its customer by key; a
// missing or NULL key matches nothing; the rest of ON filters matches.
func TestJDBCLookupJoin(t *testing.T) {
	for _, d := range openLookupDBs(t) {
		for _, c := range []struct{ name, cache, query string }{
			{"inner", "", `INSERT INTO enriched SELECT o.id, o.cust, c.name, c.tier
FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.id;`},
			{"left", ",'lookup.cache'='PARTIAL','lookup.partial-cache.max-rows'='2'", `INSERT INTO enriched SELECT o.id, o.cust, c.name, c.tier
FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.id;`},
			{"left-condition", ",'lookup.cache.max-rows'='10','lookup.cache.ttl'='1 min'", `INSERT INTO enriched SELECT o.id, o.cust, c.name, c.tier
FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.id AND c.tier = 1;`},
		} {
			t.Run(d.kind+"/"+c.name, func(t *testing.T) {
				script, out := lookupScript(t, d, c.cache, c.query)
				if _, err := runScript(t, script); err != nil {
					t.Fatal(err)
				}
				want := map[string][]string{
					"inner":          {"10,1,ann,1", "11,2,bob,2", "14,3,,1", "15,1,ann,1"},
					"left":           {"10,1,ann,1", "11,2,bob,2", "12,9,,", "13,,,", "14,3,,1", "15,1,ann,1"},
					"left-condition": {"10,1,ann,1", "11,2,,", "12,9,,", "13,,,", "14,3,,1", "15,1,ann,1"},
				}[c.name]
				if got := readLines(t, out); !slices.Equal(got, want) {
					t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
}

// A bad lookup option is refused at its line:col.
func TestJDBCLookupBadOptions(t *testing.T) {
	d := openLookupDBs(t)[1]
	for _, c := range []struct{ cache, want string }{
		{",\n  'lookup.cache'='FULL'", `line 5:3: table "customers": jdbc: option 'lookup.cache': "FULL" is not a lookup cache; ` +
			`want NONE or PARTIAL (FULL is not supported yet)`},
		{",\n  'lookup.cache'='PARTIAL',\n  'lookup.partial-cache.expire-after-write'='soon'", `line 6:3: table "customers": jdbc: ` +
			`option 'lookup.partial-cache.expire-after-write': "soon" is not a duration (e.g. '10 s', '5 min')`},
	} {
		script, _ := lookupScript(t, d, c.cache, `INSERT INTO enriched SELECT o.id, o.cust, c.name, c.tier
FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.id;`)
		_, err := runScript(t, script)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v\nwant it to contain %s", err, c.want)
		}
	}
}

// A computed column of the lookup table is computed on each row the query
// returns, and the key maps to the physical column it names; a computed
// column cannot be a lookup key.
func TestJDBCLookupComputedColumns(t *testing.T) {
	d := openLookupDBs(t)[0]
	cols := "label AS UPPER(name), id INT, name STRING, tier INT"
	script, out := lookupScriptCols(t, d, cols, "", `INSERT INTO enriched SELECT o.id, o.cust, c.label, c.tier
FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.id;`)
	if _, err := runScript(t, script); err != nil {
		t.Fatal(err)
	}
	want := []string{"10,1,ANN,1", "11,2,BOB,2", "14,3,,1", "15,1,ANN,1"}
	if got := readLines(t, out); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	script, _ = lookupScriptCols(t, d, cols, "", `INSERT INTO enriched SELECT o.id, o.cust, c.label, c.tier
FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON CAST(o.cust AS STRING) = c.label;`)
	_, err := runScript(t, script)
	if want := `line 3:25: table "customers": a lookup join queries customers by its physical columns; label is computed`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v\nwant it to contain %s", err, want)
	}
}
