// Package cdc owns what the change-data-capture sources (postgres-cdc,
// mysql-cdc) share: the order of primary keys, checkpointed keys made
// typed again, and the error of an option the database does not match.
package cdc

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// OptionError is a WITH option with a bad or missing value, or a database
// that does not match it (a missing table, a user without a right). It is
// not restartable: a restart would fail the same way.
type OptionError struct {
	// Connector names the source when Table is "" (outside SQL). Option
	// is the option to fix ("PRIMARY KEY" for the table's key).
	Connector, Table, Option, Value, Msg string
	Err                                  error // the database's error, if any
}

// Unwrap returns operator.ErrNonRestartable and the cause.
func (e *OptionError) Unwrap() []error { return []error{operator.ErrNonRestartable, e.Err} }

// Error implements error.
func (e *OptionError) Error() string {
	where := e.Connector
	if e.Table != "" {
		where = fmt.Sprintf("table %q", e.Table)
	}
	msg := e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Value == "" {
		return fmt.Sprintf("%s: '%s': %s", where, e.Option, msg)
	}
	return fmt.Sprintf("%s: '%s' = '%s': %s", where, e.Option, e.Value, msg)
}

// CompareKeys orders two primary keys of int64, string (by bytes) and
// decimal values, column by column.
func CompareKeys(a, b []any) int {
	for i := range a {
		if c := compareValue(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func compareValue(a, b any) int {
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case decimal.Decimal:
		return x.Cmp(b.(decimal.Decimal))
	}
	panic(fmt.Sprintf("cdc: key value %T", a))
}

// KeyParser makes checkpointed key values (JSON numbers, decoded with
// UseNumber, and strings) typed again, by the key columns' types.
func KeyParser(connector string, kt []types.Type) func([]any) ([]any, error) {
	return func(vals []any) ([]any, error) {
		if len(vals) != len(kt) {
			return nil, fmt.Errorf("%s: checkpointed key %v has %d columns; the table's key has %d", connector, vals, len(vals), len(kt))
		}
		out := make([]any, len(vals))
		for i, v := range vals {
			s := fmt.Sprint(v)
			if n, ok := v.(json.Number); ok {
				s = n.String()
			}
			x, err := format.ParseScalar(s, kt[i])
			if err != nil {
				return nil, fmt.Errorf("%s: checkpointed key %v: %w", connector, vals, err)
			}
			out[i] = x
		}
		return out, nil
	}
}
