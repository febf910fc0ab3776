package session

import (
	"strings"
	"testing"
)

// TestJSONTimestampStandardOption: 'json.timestamp-format.standard' is
// taken from SQL (it was refused as "not supported yet" while the format
// already honoured it): ISO-8601 reads 'T'-separated timestamps that SQL
// (the default) refuses, and an unknown value fails at its line:col.
func TestJSONTimestampStandardOption(t *testing.T) {
	h := newHarness(t)
	h.file("t.json", `{"id":1,"ts":"2026-01-02T03:04:05.678"}`+"\n")
	ddl := func(std string) string {
		return `CREATE TABLE src (id INT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '$DIR/t.json',
  'format' = 'json'` + std + `);
CREATE TABLE out (id INT, ts TIMESTAMP(3)) WITH ('connector' = 'collect');
SET 'parallelism.default' = '1';
INSERT INTO out SELECT * FROM src;`
	}
	h.mustRun(ddl(`, 'json.timestamp-format.standard' = 'ISO-8601'`))
	expect(t, "ISO-8601", h.rows("out"), []string{"+I[1, 2026-01-02 03:04:05.678]"})
	if _, err := h.run(ddl("")); err == nil || !strings.Contains(err.Error(), "json.timestamp-format.standard") {
		t.Fatalf("a 'T' timestamp under the default SQL standard: %v, want an error naming the option", err)
	}
	_, err := h.run(ddl(`, 'json.timestamp-format.standard' = 'ISO8601'`))
	if err == nil || !strings.Contains(err.Error(), "line 2:") || !strings.Contains(err.Error(), "'ISO8601' is not supported") {
		t.Fatalf("an unknown standard: %v, want it refused at its line:col", err)
	}
}
