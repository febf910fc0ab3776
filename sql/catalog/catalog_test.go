package catalog

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/sql/parser"
)

func create(t *testing.T, c *Catalog, src string) error {
	t.Helper()
	stmt, err := parser.ParseStatement(src)
	if err != nil {
		return err // the parser already rejects some mistakes
	}
	switch s := stmt.(type) {
	case *parser.CreateTable:
		return c.CreateTable(s)
	case *parser.CreateView:
		return c.CreateView(s)
	}
	t.Fatalf("not a CREATE: %T", stmt)
	return nil
}

func TestCreateTableAndLookup(t *testing.T) {
	c := New()
	err := create(t, c, `CREATE TABLE bills (bill_id STRING, amount DECIMAL(18, 2), ts TIMESTAMP(3),
		WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (bill_id) NOT ENFORCED) WITH ('connector' = 'datagen')`)
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := c.Table(parser.Name{"bills"})
	if !ok || tb.Connector() != "datagen" || len(tb.Physical()) != 3 || tb.PrimaryKey[0] != "bill_id" || tb.Watermark.Column != "ts" {
		t.Fatalf("table %+v", tb)
	}
	if err := create(t, c, `CREATE TABLE bills (x INT) WITH ('connector' = 'print')`); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("duplicate: %v", err)
	}
	if err := create(t, c, `CREATE TABLE IF NOT EXISTS bills (x INT) WITH ('connector' = 'print')`); err != nil {
		t.Fatalf("IF NOT EXISTS: %v", err)
	}
	if s := c.Suggest("bils"); s != "bills" {
		t.Fatalf("suggest %q", s)
	}
}

func TestValidationErrors(t *testing.T) {
	c := New()
	cases := map[string]string{
		`CREATE TABLE t (a INT, a INT) WITH ('connector' = 'print')`:                        `duplicate column 'a'`,
		`CREATE TABLE t (a INT, PRIMARY KEY (b) NOT ENFORCED) WITH ('connector' = 'print')`: `PRIMARY KEY column 'b' is not a column`,
		`CREATE TABLE t (a INT)`: `no 'connector' option`,
		`CREATE TABLE t (a INT, WATERMARK FOR ts AS ts) WITH ('connector' = 'print')`: `WATERMARK must reference a column`,
	}
	for src, want := range cases {
		err := create(t, c, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to mention %s", src, err, want)
		}
	}
}
