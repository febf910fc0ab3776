package session

import (
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/testsvc"
)

// TestSinkMaterializerMariaDB writes an inner join whose orders move
// between customers into a MariaDB table keyed by order_id, at
// parallelism 2 (see testdata/sink_materialize): the table must end as the
// join of the last row of every order and customer. Without the
// SinkMaterializer a -D of an order's old row from one join subtask
// overtakes the +I of its new row from the other and deletes it.
func TestSinkMaterializerMariaDB(t *testing.T) {
	dsn := testsvc.MySQL(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	table := fmt.Sprintf("sink_materialize_%d", time.Now().UnixNano())
	if _, err := db.Exec("CREATE TABLE " + table + " (order_id BIGINT PRIMARY KEY, cust_id BIGINT, name VARCHAR(32), amount BIGINT)"); err != nil {
		t.Fatal(err)
	}
	defer db.Exec("DROP TABLE " + table)
	dir := t.TempDir()
	want := writeMovingOrders(t, dir)
	script := fmt.Sprintf(`SET 'parallelism.default' = '2';
CREATE TABLE ord_log (order_id BIGINT, cust_id BIGINT, amount BIGINT, pt AS PROCTIME())
  WITH ('connector'='filesystem','path'='%s','format'='csv');
CREATE TABLE cust_log (cust_id BIGINT, name STRING, pt AS PROCTIME())
  WITH ('connector'='filesystem','path'='%s','format'='csv');
CREATE VIEW ord AS SELECT order_id, cust_id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rn FROM ord_log) WHERE rn = 1;
CREATE VIEW cust AS SELECT cust_id, name FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY cust_id ORDER BY pt DESC) AS rn FROM cust_log) WHERE rn = 1;
CREATE TABLE j (order_id BIGINT, cust_id BIGINT, name STRING, amount BIGINT, PRIMARY KEY (order_id) NOT ENFORCED) WITH (
  'connector'='jdbc','url'='%s','table-name'='%s','username'='weir','password'='weir',
  'sink.delivery-guarantee'='at-least-once');
INSERT INTO j SELECT o.order_id, o.cust_id, c.name, o.amount FROM ord o JOIN cust c ON o.cust_id = c.cust_id;`,
		filepath.Join(dir, "ord.csv"), filepath.Join(dir, "cust.csv"), jdbcURL(t, dsn), table)
	if _, err := runScript(t, script); err != nil {
		t.Fatal(err)
	}
	if got := orderRows(t, db, table); !slices.Equal(got, want) {
		t.Fatalf("%s after the job (%d rows):\n%s\nwant (%d rows):\n%s", table, len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
}

// writeMovingOrders writes ord.csv and cust.csv into dir: 40 orders that
// each change customer several times, 8 customers whose names change; it
// returns the expected joined rows, sorted.
func writeMovingOrders(t *testing.T, dir string) []string {
	rnd := rand.New(rand.NewSource(1))
	names := map[int]string{}
	var cust, ord strings.Builder
	for c := 1; c <= 8; c++ {
		names[c] = fmt.Sprintf("n%d", c)
		fmt.Fprintf(&cust, "%d,%s\n", c, names[c])
	}
	type order struct{ cust, amount int }
	orders := map[int]order{}
	for range 400 {
		if rnd.Intn(8) == 0 {
			c := 1 + rnd.Intn(8)
			names[c] += "x"
			fmt.Fprintf(&cust, "%d,%s\n", c, names[c])
			continue
		}
		o := order{cust: 1 + rnd.Intn(8), amount: rnd.Intn(100)}
		id := 1 + rnd.Intn(40)
		orders[id] = o
		fmt.Fprintf(&ord, "%d,%d,%d\n", id, o.cust, o.amount)
	}
	for name, b := range map[string]*strings.Builder{"ord.csv": &ord, "cust.csv": &cust} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for id, o := range orders {
		want = append(want, fmt.Sprintf("%d,%d,%s,%d", id, o.cust, names[o.cust], o.amount))
	}
	slices.Sort(want)
	return want
}

// orderRows reads the sink table as sorted lines.
func orderRows(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query("SELECT order_id, cust_id, name, amount FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, cust, amount int64
		var name string
		if err := rows.Scan(&id, &cust, &name, &amount); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d,%d,%s,%d", id, cust, name, amount))
	}
	slices.Sort(out)
	return out
}
