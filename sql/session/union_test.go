package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/planner"
)

// goRow prints a row as its fields' Go types and values, so a test sees
// what a sink's writer is handed, not how print formats it.
func goRow(v any) string {
	row := v.(event.Row)
	parts := make([]string, len(row.Fields))
	for i, f := range row.Fields {
		parts[i] = goValue(f)
	}
	return row.Kind.String() + "[" + strings.Join(parts, ", ") + "]"
}

// goValue prints v with its Go type; a decimal with its own scale, as
// formats write it (format.FormatDecimal).
func goValue(v any) string {
	if d, ok := v.(decimal.Decimal); ok {
		return fmt.Sprintf("decimal.Decimal %s", d.StringFixed(max(0, -d.Exponent())))
	}
	return fmt.Sprintf("%T %v", v, v)
}

// goValues runs script with a 'go-values' sink connector and returns what
// each of its tables received, sorted.
func (h *harness) goValues(script string) map[string][]string {
	h.t.Helper()
	s := h.session()
	sinks := map[string]*rowsSink{}
	s.Connectors.Sinks["go-values"] = func(t *catalog.Table) (planner.SinkSpec, error) {
		k := &rowsSink{show: goRow}
		sinks[t.Name] = k
		return planner.SinkSpec{Sink: k, AcceptsUpdates: true}, nil
	}
	if err := s.Execute(strings.ReplaceAll(script, "$DIR", h.dir)); err != nil {
		h.t.Fatal(err)
	}
	if _, err := s.Run(h.t.Context(), "test", nil); err != nil {
		h.t.Fatal(err)
	}
	out := map[string][]string{}
	for name, k := range sinks {
		out[name] = sorted(k.rows)
	}
	return out
}

// TestUnionValuesHaveTheCommonType: every row leaving a UNION ALL carries
// values of the column's common type, whichever input it came from (Flink
// casts each input to the union's row type), so a sink is handed the Go
// values of its declared types: an INT side's numbers as decimals in a
// DECIMAL column and as float64 in a DOUBLE one, a DECIMAL(5, 2) side's
// values with four fractional digits in a DECIMAL(7, 4) one.
func TestUnionValuesHaveTheCommonType(t *testing.T) {
	h := newHarness(t)
	h.file("small.csv", "1,1.5,2,0.25,a\n")
	h.file("big.csv", "3000000000,7,0.5,1.5,abc\n")
	got := h.goValues(`
CREATE TABLE small (id INT, price DECIMAL(5, 2), ratio INT, rate DECIMAL(5, 2), code CHAR(1))
  WITH ('connector' = 'filesystem', 'path' = '$DIR/small.csv', 'format' = 'csv');
CREATE TABLE big (id BIGINT, price INT, ratio DOUBLE, rate DECIMAL(6, 4), code STRING)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/big.csv', 'format' = 'csv');
CREATE TABLE merged (id BIGINT, price DECIMAL(12, 2), ratio DOUBLE, rate DECIMAL(7, 4), code STRING)
  WITH ('connector' = 'go-values');
CREATE TABLE distinct_ids (id BIGINT) WITH ('connector' = 'go-values');
INSERT INTO merged SELECT * FROM small UNION ALL SELECT * FROM big;
INSERT INTO distinct_ids SELECT id FROM small UNION SELECT CAST(1 AS BIGINT) FROM big;`)
	expect(t, "union all", got["merged"], []string{
		"+I[int64 1, decimal.Decimal 1.50, float64 2, decimal.Decimal 0.2500, string a]",
		"+I[int64 3000000000, decimal.Decimal 7.00, float64 0.5, decimal.Decimal 1.5000, string abc]",
	})
	// UNION is UNION ALL and DISTINCT: the INT 1 and the BIGINT 1 are one row.
	expect(t, "union", got["distinct_ids"], []string{"+I[int64 1]"})
}
