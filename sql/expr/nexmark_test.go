package expr_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// The Nexmark benchmark's scalar expressions (/work/shared/nexmark/
// queries.sql), each compiled against the columns its query sees.

var (
	personRow  = ty("ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>")
	auctionRow = ty("ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>")
	bidRow     = ty("ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>")
)

func datagenScope() *expr.Scope {
	return &expr.Scope{Columns: []expr.Column{
		{Qualifier: "datagen", Name: "event_type", Type: ty("INT")},
		{Qualifier: "datagen", Name: "person", Type: personRow},
		{Qualifier: "datagen", Name: "auction", Type: auctionRow},
		{Qualifier: "datagen", Name: "bid", Type: bidRow},
		{Qualifier: "datagen", Name: "dateTime", Type: ty("TIMESTAMP(3)")},
	}}
}

// viewScope is a view's columns, qualified by alias.
func viewScope(alias string, row types.Type, extra ...expr.Column) []expr.Column {
	var cols []expr.Column
	for _, f := range row.Fields {
		cols = append(cols, expr.Column{Qualifier: alias, Name: f.Name, Type: f.Type})
	}
	for _, c := range extra {
		c.Qualifier = alias
		cols = append(cols, c)
	}
	return cols
}

func TestNexmarkExpressions(t *testing.T) {
	bid := viewScope("bid", bidRow, expr.Column{Name: "p_time", Type: ty("TIMESTAMP_LTZ(3)")})
	A := viewScope("A", auctionRow)
	P := viewScope("P", personRow, expr.Column{Name: "starttime", Type: ty("TIMESTAMP(3)")},
		expr.Column{Name: "endtime", Type: ty("TIMESTAMP(3)")})
	B := viewScope("B", bidRow)
	B1 := []expr.Column{{Qualifier: "B1", Name: "maxprice", Type: ty("BIGINT")}, {Qualifier: "B1", Name: "dateTime", Type: ty("TIMESTAMP(3)")}}
	A8 := []expr.Column{{Qualifier: "A", Name: "seller", Type: ty("BIGINT")}, {Qualifier: "A", Name: "starttime", Type: ty("TIMESTAMP(3)")},
		{Qualifier: "A", Name: "endtime", Type: ty("TIMESTAMP(3)")}}
	S := []expr.Column{{Qualifier: "S", Name: "key", Type: ty("BIGINT")}, {Qualifier: "S", Name: "value", Type: ty("VARCHAR")}}
	Q5 := []expr.Column{{Qualifier: "AuctionBids", Name: "num", Type: ty("BIGINT NOT NULL")}, {Qualifier: "MaxBids", Name: "maxn", Type: ty("BIGINT NOT NULL")}}
	cat := func(cs ...[]expr.Column) *expr.Scope {
		s := &expr.Scope{Functions: map[string]*expr.Function{"COUNT_CHAR": countChar}}
		for _, c := range cs {
			s.Columns = append(s.Columns, c...)
		}
		return s
	}
	cases := []struct {
		query string
		scope *expr.Scope
		src   string
		typ   string
	}{
		{"ddl", datagenScope(), "CASE WHEN event_type = 0 THEN person.`dateTime` WHEN event_type = 1 THEN auction.`dateTime` ELSE bid.`dateTime` END", "TIMESTAMP(3)"},
		{"ddl", datagenScope(), "`dateTime` - INTERVAL '4' SECOND", "TIMESTAMP(3)"},
		{"views", datagenScope(), "event_type = 0", "BOOLEAN"},
		{"views", datagenScope(), "person.emailAddress", "STRING"},
		{"views", datagenScope(), "auction.expires", "TIMESTAMP(3)"},
		{"views", datagenScope(), "bid.price", "BIGINT"},
		{"q1", cat(bid), "0.908 * price", "DECIMAL(22, 3)"},
		{"q2", cat(bid), "MOD(auction, 123) = 0", "BOOLEAN"},
		{"q3", cat(A, P), "A.seller = P.id", "BOOLEAN"},
		{"q3", cat(A, P), "A.category = 10 and (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')", "BOOLEAN"},
		{"q4", cat(A, B), "A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires", "BOOLEAN"},
		{"q5", cat(Q5), "AuctionBids.num >= MaxBids.maxn", "BOOLEAN NOT NULL"},
		{"q7", cat(B, B1), "B.price = B1.maxprice", "BOOLEAN"},
		{"q7", cat(B, B1), "B.`dateTime` BETWEEN B1.`dateTime`  - INTERVAL '10' SECOND AND B1.`dateTime`", "BOOLEAN"},
		{"q8", cat(P, A8), "P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime", "BOOLEAN"},
		{"q10", cat(bid), "DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')", "STRING"},
		{"q10", cat(bid), "DATE_FORMAT(`dateTime`, 'HH:mm')", "STRING"},
		{"q12", cat(bid), "PROCTIME()", "TIMESTAMP_LTZ(3) *PROCTIME* NOT NULL"},
		{"q13", cat(B, S), "mod(B.auction, 10000) = S.key", "BOOLEAN"},
		{"q14", cat(bid), "CASE WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime' WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime' ELSE 'otherTime' END", "VARCHAR(9) NOT NULL"},
		{"q14", cat(bid), "count_char(extra, 'c')", "BIGINT"},
		{"q14", cat(bid), "0.908 * price > 1000000 AND 0.908 * price < 50000000", "BOOLEAN"},
		{"q15", cat(bid), "price >= 10000 and price < 1000000", "BOOLEAN"},
		{"q21", cat(bid), "CASE WHEN lower(channel) = 'apple' THEN '0' WHEN lower(channel) = 'google' THEN '1' WHEN lower(channel) = 'facebook' THEN '2' WHEN lower(channel) = 'baidu' THEN '3' ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) END", "STRING"},
		{"q21", cat(bid), "REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is not null or lower(channel) in ('apple', 'google', 'facebook', 'baidu')", "BOOLEAN"},
		{"q22", cat(bid), "SPLIT_INDEX(url, '/', 3)", "STRING"},
		{"q23", cat(A, B), "A.dateTime", "TIMESTAMP(3)"},
	}
	for _, tc := range cases {
		e, err := parser.ParseExpr(tc.src)
		if err != nil {
			t.Errorf("%s: %s: %v", tc.query, tc.src, err)
			continue
		}
		c, err := expr.Compile(e, tc.scope)
		if err != nil {
			t.Errorf("%s: %s: %v", tc.query, tc.src, err)
			continue
		}
		if c.Type.String() != tc.typ {
			t.Errorf("%s: %s: type %s, want %s", tc.query, tc.src, c.Type, tc.typ)
		}
		// Every expression evaluates on an all-NULL row without error.
		if _, err := c.Eval(make([]any, len(tc.scope.Columns))); err != nil {
			t.Errorf("%s: %s: on NULLs: %v", tc.query, tc.src, err)
		}
	}
}

// countChar is Nexmark q14's UDF: how often a character occurs in a string.
var countChar = &expr.Function{
	Result: func(args []types.Type) (types.Type, error) {
		if len(args) != 2 || !args[0].IsString() || !args[1].IsString() {
			return types.Type{}, fmt.Errorf("takes (STRING, STRING)")
		}
		return types.Type{Kind: types.BigInt, Nullable: true}, nil
	},
	Eval: func(args []any) (any, error) {
		if args[0] == nil || args[1] == nil {
			return nil, nil
		}
		return int64(strings.Count(args[0].(string), args[1].(string))), nil
	},
	Deterministic: true,
}

// TestNexmarkBid evaluates q1, q14, q21 and q22 on one bid.
func TestNexmarkBid(t *testing.T) {
	s := &expr.Scope{Columns: viewScope("bid", bidRow), Functions: map[string]*expr.Function{"count_char": countChar}}
	bid := []any{int64(1001), int64(2001), int64(1_500_000), "Google",
		"https://www.nexmark.com/vhi/wfp/jly/item.htm?query=1&channel_id=1073741824",
		time.Date(2015, 7, 15, 21, 3, 7, 500_000_000, time.UTC), "cccx"}
	cases := map[string]string{
		"0.908 * price":                                                 "1362000.000",
		"CAST(0.908 * price AS DECIMAL(23, 3))":                         "1362000.000",
		"0.908 * price > 1000000 AND 0.908 * price < 50000000":          "TRUE",
		"count_char(extra, 'c')":                                        "3",
		"REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)":             "1073741824",
		"CASE WHEN lower(channel) = 'google' THEN '1' ELSE 'other' END": "1",
		"SPLIT_INDEX(url, '/', 3)":                                      "vhi",
		"SPLIT_INDEX(url, '/', 4)":                                      "wfp",
		"SPLIT_INDEX(url, '/', 5)":                                      "jly",
		"DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')":                         "2015-07-15",
		"DATE_FORMAT(`dateTime`, 'HH:mm')":                              "21:03",
		"CASE WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime' WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime' ELSE 'otherTime' END": "nightTime",
	}
	for src, want := range cases {
		e, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		c, err := expr.Compile(e, s)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		v, err := c.Eval(bid)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if got := expr.ValueString(v, c.Type, nil); got != want {
			t.Errorf("%s = %s, want %s", src, got, want)
		}
	}
}

// TestCastToSink fits q1's DECIMAL(22, 3) to the sink's DECIMAL(23, 3).
func TestCastToSink(t *testing.T) {
	s := &expr.Scope{Columns: viewScope("bid", bidRow)}
	e, _ := parser.ParseExpr("0.908 * price")
	c, err := expr.Compile(e, s)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := expr.CastTo(c, ty("DECIMAL(23, 3)"), s)
	if err != nil {
		t.Fatal(err)
	}
	if sink.Type.String() != "DECIMAL(23, 3)" {
		t.Errorf("type %s", sink.Type)
	}
	v, err := sink.Eval([]any{nil, nil, int64(7), nil, nil, nil, nil})
	if err != nil || !v.(decimal.Decimal).Equal(decimal.RequireFromString("6.356")) {
		t.Errorf("got %v %v", v, err)
	}
	if _, err := expr.CastTo(c, ty("BOOLEAN"), s); err != nil {
		t.Errorf("DECIMAL to BOOLEAN: %v", err)
	}
	if _, err := expr.CastTo(c, ty("DATE"), s); err == nil {
		t.Errorf("DECIMAL to DATE converted")
	}
}
