package postgrescdc

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/weirstream/weir/connector/cdc"
	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/types"
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
var compareKeys = cdc.CompareKeys

// keyParser makes checkpointed key values typed again.
func keyParser(kt []types.Type) func([]any) ([]any, error) { return cdc.KeyParser("postgres-cdc", kt) }
