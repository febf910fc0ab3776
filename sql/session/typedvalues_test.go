package session

import (
	"bytes"
	"strings"
	"testing"

	"github.com/weirstream/weir/connector/print"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/planner"
)

// printed runs script with the real print connector writing into a
// buffer and returns the printed lines.
func (h *harness) printed(script string) []string {
	h.t.Helper()
	var out bytes.Buffer
	s := h.session()
	printSink := s.Connectors.Sinks["print"]
	s.Connectors.Sinks["print"] = func(t *catalog.Table) (planner.SinkSpec, error) {
		spec, err := printSink(t)
		if err == nil {
			spec.Sink.(*print.Sink).Out = &out
		}
		return spec, err
	}
	if err := s.Execute(strings.ReplaceAll(script, "$DIR", h.dir)); err != nil {
		h.t.Fatal(err)
	}
	if _, err := s.Run(h.t.Context(), "test", nil); err != nil {
		h.t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// TestSourceDecimalsTakeTheDeclaredType: a DECIMAL(p, s) read by a format
// is DecimalData.fromBigDecimal(v, p, s) in Flink: rounded HALF_UP to s,
// NULL when the rounded value needs more than p digits (csv and json give
// NULL, not a parse error). Arithmetic then sees the rounded value, and
// print shows a DECIMAL(p, s) with s fractional digits (BigDecimal's
// toString at scale s).
func TestSourceDecimalsTakeTheDeclaredType(t *testing.T) {
	h := newHarness(t)
	h.file("dec2.csv", "a,80.4\nb,7\nc,1.005\nd,1.999\ne,12345.678\n")
	got := h.printed(`
CREATE TABLE t (k STRING, v DECIMAL(5,2)) WITH ('connector'='filesystem','path'='$DIR/dec2.csv','format'='csv');
CREATE TABLE p (k STRING, v DECIMAL(5,2), v2 DECIMAL(5,2), w DECIMAL(10,3)) WITH ('connector'='print');
INSERT INTO p SELECT k, v, CAST(v AS DECIMAL(5,2)), v * 2 FROM t;`)
	expect(t, "csv decimals", got, []string{
		"+I[a, 80.40, 80.40, 160.800]",
		"+I[b, 7.00, 7.00, 14.000]",
		"+I[c, 1.01, 1.01, 2.020]", // 1.005 rounds half up to 1.01 on reading
		"+I[d, 2.00, 2.00, 4.000]",
		"+I[e, null, null, null]", // 12345.68 needs 7 digits > 5
	})

	h.file("dec.json", `{"k":"c","v":1.005}`+"\n"+`{"k":"s","v":"2.345"}`+"\n"+`{"k":"e","v":1234.5}`+"\n")
	got = h.printed(`
CREATE TABLE j (k STRING, v DECIMAL(5,2)) WITH ('connector'='filesystem','path'='$DIR/dec.json','format'='json');
CREATE TABLE q (k STRING, v DECIMAL(5,2), s DECIMAL(6,2)) WITH ('connector'='print');
INSERT INTO q SELECT k, v, v + v FROM j;`)
	expect(t, "json decimals", got, []string{
		"+I[c, 1.01, 2.02]",
		"+I[s, 2.35, 4.70]", // a JSON string is read as the number it spells
		"+I[e, null, null]", // 1234.50 needs 6 digits > 5
	})
}

// TestDatesPrintAsDates: print shows a DATE as yyyy-MM-dd (Flink's print
// connector prints java.time.LocalDate), whether read, cast from a
// TIMESTAMP or computed with an interval; a TIMESTAMP as
// java.time.LocalDateTime's toString (the fraction in groups of three
// digits as it needs them, whatever the precision).
func TestDatesPrintAsDates(t *testing.T) {
	h := newHarness(t)
	h.file("dt.csv", "1,2024-03-05,2024-03-05 10:11:12.5\n")
	got := h.printed(`
CREATE TABLE t (id INT, d DATE, ts TIMESTAMP(3)) WITH ('connector'='filesystem','path'='$DIR/dt.csv','format'='csv');
CREATE TABLE o (id INT, d DATE, d2 DATE, d3 DATE, ts TIMESTAMP(3), ts0 TIMESTAMP(0)) WITH ('connector'='print');
INSERT INTO o SELECT id, d, CAST(ts AS DATE), d + INTERVAL '1' DAY, ts, CAST(ts AS TIMESTAMP(0)) FROM t;`)
	expect(t, "dates", got, []string{"+I[1, 2024-03-05, 2024-03-05, 2024-03-06, 2024-03-05T10:11:12.500, 2024-03-05T10:11:12]"})
}
