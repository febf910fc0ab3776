package expr_test

import (
	"testing"
	"time"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// BenchmarkNexmark measures the per-row cost of Nexmark's scalar
// expressions on one bid.
func BenchmarkNexmark(b *testing.B) {
	s := &expr.Scope{Columns: viewScope("bid", bidRow)}
	bid := []any{int64(1001), int64(2001), int64(1_500_000), "Google",
		"https://www.nexmark.com/vhi/wfp/jly/item.htm?query=1&channel_id=1073741824",
		time.Date(2015, 7, 15, 21, 3, 7, 500_000_000, time.UTC), "cccx"}
	for _, bc := range []struct{ name, src string }{
		{"q1", "0.908 * price"},
		{"q2", "MOD(auction, 123) = 0"},
		{"q10", "DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')"},
		{"q14", "0.908 * price > 1000000 AND 0.908 * price < 50000000"},
		{"q21", "REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is not null or lower(channel) in ('apple', 'google', 'facebook', 'baidu')"},
		{"q22", "SPLIT_INDEX(url, '/', 3)"},
	} {
		e, err := parser.ParseExpr(bc.src)
		if err != nil {
			b.Fatal(err)
		}
		c, err := expr.Compile(e, s)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Eval(bid); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
