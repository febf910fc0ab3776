package planner

import (
	"fmt"

	"github.com/weirstream/weir/connector/jdbc"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/exec"
)

// jdbcLookup queries a JDBC table by key for a lookup join (Flink's
// JdbcRowDataLookupFunction): SELECT its physical columns WHERE the key
// columns equal the row's key, through the PARTIAL cache when
// 'lookup.cache' (or the legacy 'lookup.cache.max-rows') asks for one.
func jdbcLookup(t *catalog.Table, keys []int) (func() (exec.LookupFunc, error), error) {
	o, err := jdbc.ParseLookupOptions(t.Options)
	if err != nil {
		return nil, fmt.Errorf("table %q: %w", t.Name, err)
	}
	for _, f := range t.Physical() {
		o.Columns, o.Types = append(o.Columns, f.Name), append(o.Types, f.Type)
	}
	o.Keys = keys
	l, err := jdbc.NewLookup(o)
	if err != nil {
		return nil, fmt.Errorf("table %q: %w", t.Name, err)
	}
	return func() (exec.LookupFunc, error) {
		f, err := l.Open()
		if err != nil {
			return nil, err
		}
		return f, nil
	}, nil
}
