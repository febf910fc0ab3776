package mysqlcdc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// What the database does not match fails the job at once (not
// restartable) with the option to fix named.
func TestBadTable(t *testing.T) {
	f := newFixture(t, 1)
	f.exec("CREATE TABLE " + f.dbName + ".bills_2 (id BIGINT PRIMARY KEY)")
	f.exec("CREATE TABLE " + f.dbName + ".nokey (id BIGINT, k INT, amount BIGINT, note TEXT)")
	for _, c := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"wrong table", func(o *Options) { o.Table = "no_such_table" }, `'table-name' = 'no_such_table': no table matches it in a database matching 'database-name' = '` + f.dbName + `'`},
		{"two tables", func(o *Options) { o.Table = "bills.*" }, `'table-name' = 'bills.*': matches 2 tables (` + f.dbName + `.bills, ` + f.dbName + `.bills_2)`},
		{"undeclared column", func(o *Options) { o.Fields = append(o.Fields[:3:3], types.Field{Name: "nope", Type: text}) }, `column "nope" is declared but`},
		{"table without a key", func(o *Options) { o.Table = "nokey" }, `'PRIMARY KEY': the declared key (id) is not the primary key of ` + "`" + f.dbName + "`.`nokey` (none)"},
		{"key not the table's", func(o *Options) { o.PrimaryKey = []string{"k"} }, `the declared key (k) is not the primary key`},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := f.opts
			c.edit(&o)
			s, err := NewSource(o)
			if err == nil {
				_, err = s.Enumerate(context.Background())
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v does not say %q", err, c.want)
			}
			if !errors.Is(err, operator.ErrNonRestartable) {
				t.Fatalf("error %q is restartable", err)
			}
		})
	}
}

// Each subtask reads the binlog as a replica of its own: a 'server-id'
// range smaller than the parallelism is refused, naming the option.
func TestServerIDPerSubtask(t *testing.T) {
	o := Options{ServerIDs: [2]uint32{5400, 5401}, Name: "src"}
	if id, err := o.serverID(1, 2); err != nil || id != 5401 {
		t.Fatalf("subtask 1 of 2: id %d, %v", id, err)
	}
	_, err := o.serverID(2, 3)
	want := `table "src": 'server-id' = '5400-5401': the source runs in 3 subtasks and each needs its own replica id: give a range of at least 3 ids, e.g. '5400-5402'`
	if err == nil || err.Error() != want || !errors.Is(err, operator.ErrNonRestartable) {
		t.Fatalf("error %v, want %q", err, want)
	}
	s := &Source{Options: o}
	if _, err := s.CreateReader(operator.ReaderContext{Subtask: event.SubtaskID{Index: 0}, Parallelism: 3}); err == nil {
		t.Fatal("a reader of 3 subtasks with 2 ids")
	}
}
