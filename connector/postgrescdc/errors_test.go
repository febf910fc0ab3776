package postgrescdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/cdc/cdctest"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// firstError polls a reader of o until it fails.
func firstError(t *testing.T, f *fixture, o Options) error {
	t.Helper()
	saved := f.opts
	f.opts = o
	r := f.openReader(nil)
	f.opts = saved
	defer r.Close()
	deadline := time.After(20 * time.Second)
	for {
		if _, err := r.Poll(&cdctest.Collector{}); err != nil {
			return err
		}
		select {
		case <-r.Available():
		case <-deadline:
			t.Fatal("no error after 20 s")
		}
	}
}

// What the database does not allow fails the job at once (not
// restartable) with the option to fix named.
func TestBadTableOrRights(t *testing.T) {
	f := newFixture(t, 1)
	role := "weir_norepl_" + f.slot[len("weir_cdc_"):]
	f.exec(fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD 'pw' NOREPLICATION", role))
	f.exec(fmt.Sprintf("GRANT SELECT ON %s TO %s", f.table, role))
	t.Cleanup(func() { _, _ = f.db.Exec(context.Background(), "DROP OWNED BY "+role+"; DROP ROLE "+role) })
	noKey := f.table + "_nokey"
	f.exec("CREATE TABLE " + noKey + " (id BIGINT, k INT, amount BIGINT, note TEXT)")
	t.Cleanup(func() { _, _ = f.db.Exec(context.Background(), "DROP TABLE "+noKey) })
	for _, c := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"wrong table", func(o *Options) { o.Table = "no_such_table" }, `'table-name' = 'no_such_table': no table public.no_such_table`},
		{"wrong schema", func(o *Options) { o.Schema = "nope" }, `no table nope.`},
		{"user without REPLICATION", func(o *Options) { o.Username, o.Password = role, "pw" }, `'username' = '` + role + `': the user may not use replication slots`},
		{"undeclared column", func(o *Options) { o.Fields = append(o.Fields[:3:3], types.Field{Name: "nope", Type: text}) }, `column "nope" is declared but`},
		{"table without a key", func(o *Options) { o.Table = noKey }, `'PRIMARY KEY': the declared key (id) is not the primary key`},
		{"key not the table's", func(o *Options) { o.PrimaryKey = []string{"k"} }, `the declared key (k) is not the primary key of "public"."` + f.table + `" (id)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := f.opts
			c.edit(&o)
			err := firstError(t, f, o)
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
			if !errors.Is(err, operator.ErrNonRestartable) {
				t.Fatalf("error %q is restartable", err)
			}
		})
	}
	f.exec("ALTER TABLE " + f.table + " REPLICA IDENTITY DEFAULT")
	err := firstError(t, f, f.opts)
	if !strings.Contains(err.Error(), "REPLICA IDENTITY FULL") {
		t.Fatalf("error %q does not ask for REPLICA IDENTITY FULL", err)
	}
}

// Options are checked before the job runs, each error naming its option.
func TestFromMapErrors(t *testing.T) {
	base := map[string]string{"hostname": "h", "username": "u", "database-name": "d", "table-name": "t", "slot.name": "s"}
	fields := []types.Field{{Name: "id", Type: bigint}}
	for _, c := range []struct {
		set  map[string]string
		pk   []string
		want string
	}{
		{map[string]string{"slot.name": ""}, []string{"id"}, `'slot.name': required`},
		{map[string]string{"slot.name": "My-Slot"}, []string{"id"}, `'slot.name' = 'My-Slot': a slot name is lower-case`},
		{map[string]string{"port": "x"}, []string{"id"}, `'port' = 'x': want a port number`},
		{map[string]string{"decoding.plugin.name": "wal2json"}, []string{"id"}, `'decoding.plugin.name' = 'wal2json': Weir decodes pgoutput only`},
		{map[string]string{"scan.startup.mode": "timestamp"}, []string{"id"}, `'scan.startup.mode' = 'timestamp': want initial or latest-offset`},
		{nil, nil, `'PRIMARY KEY': a postgres-cdc table needs a primary key`},
	} {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range c.set {
			m[k] = v
		}
		_, err := FromMap(m, "src", fields, c.pk)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.set, err, c.want)
		}
	}
}
