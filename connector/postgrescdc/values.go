package postgrescdc

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/sql/types"
)

// pgValue reads a column's value from PostgreSQL's text form (what the
// snapshot selects with ::text and what pgoutput sends) as the Weir value
// of the declared type.
func pgValue(s string, t types.Type) (any, error) {
	switch t.Kind {
	case types.Boolean:
		switch s {
		case "t", "true":
			return true, nil
		case "f", "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean", s)
	case types.Bytes:
		b, ok := strings.CutPrefix(s, `\x`)
		if !ok {
			return nil, fmt.Errorf("bytea %q is not in hex form (bytea_output = hex)", s)
		}
		return hex.DecodeString(b)
	case types.TimestampLTZ:
		return parseTimestampTZ(s)
	case types.Timestamp:
		if i := strings.LastIndexAny(s, "+-"); i > 10 { // a timestamptz column read as TIMESTAMP
			ts, err := parseTimestampTZ(s)
			return ts, err
		}
	}
	return format.ParseScalar(s, t)
}

// parseTimestampTZ reads timestamptz text ("2024-01-02 10:00:00.5+00").
func parseTimestampTZ(s string) (any, error) {
	for _, l := range []string{"2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999Z07:00"} {
		if ts, err := time.Parse(l, s); err == nil {
			return ts.UTC(), nil
		}
	}
	return format.ParseScalar(s, types.Type{Kind: types.Timestamp})
}

// compareKeys orders two primary keys as the snapshot query's ORDER BY
// does (strings by bytes: the query orders them COLLATE "C").
func compareKeys(a, b []any) int {
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
	panic(fmt.Sprintf("postgres-cdc: key value %T", a))
}

// keyParser makes checkpointed key values (JSON numbers and strings) typed
// again, by the key columns' types.
func keyParser(kt []types.Type) func([]any) ([]any, error) {
	return func(vals []any) ([]any, error) {
		if len(vals) != len(kt) {
			return nil, fmt.Errorf("postgres-cdc: checkpointed key %v has %d columns; the table's key has %d", vals, len(vals), len(kt))
		}
		out := make([]any, len(vals))
		for i, v := range vals {
			s := fmt.Sprint(v)
			if n, ok := v.(json.Number); ok {
				s = n.String()
			}
			x, err := format.ParseScalar(s, kt[i])
			if err != nil {
				return nil, fmt.Errorf("postgres-cdc: checkpointed key %v: %w", vals, err)
			}
			out[i] = x
		}
		return out, nil
	}
}
