package planner

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// With 'value.format', Flink writes the format's options with a 'value.'
// prefix: they are accepted and reach the format; the unprefixed form
// still works.
func TestValueFormatOptionsTakePrefix(t *testing.T) {
	for _, key := range []string{"value.json.fail-on-missing-field", "json.fail-on-missing-field"} {
		tb := &catalog.Table{Name: "k", Columns: []*parser.ColumnDef{{Name: "a", Type: types.Type{Kind: types.BigInt}}},
			Options: map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "b:1",
				"value.format": "json", key: "true"}}
		if err := checkOptions(tb); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		f, err := valueFormat(tb)
		if err != nil {
			t.Fatal(err)
		}
		if j, ok := f.(*format.JSON); !ok || !j.FailOnMissingField {
			t.Errorf("%s: format %#v, want JSON failing on a missing field", key, f)
		}
	}
	// The prefix of another scope is not this one's.
	tb := &catalog.Table{Name: "k", Options: map[string]string{"connector": "kafka", "topic": "t",
		"properties.bootstrap.servers": "b:1", "format": "json", "value.json.fail-on-missing-field": "true"}}
	if err := checkOptions(tb); err == nil || !strings.Contains(err.Error(), "Unsupported options: value.json.fail-on-missing-field") {
		t.Errorf("value.-prefixed option with 'format': %v", err)
	}
}
