package main

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/connector/nexmark"
	"github.com/weirstream/weir/types"
)

// Results computed straight from the generator, without any engine: the
// ground truth of the queries simple enough to compute by hand, in the
// canonical text of changelog.go (sorted, kind left out).

// streamBids returns every bid of the stream queries.sql's source table
// generates with events and tps, in no particular order.
func streamBids(events, tps int64) ([]*nexmark.Bid, error) {
	cfg, err := nexmark.ParseOptions(map[string]string{
		"first-event.rate": strconv.FormatInt(tps, 10), "next-event.rate": strconv.FormatInt(tps, 10),
		"events.num": strconv.FormatInt(events, 10), "person.proportion": "1", "auction.proportion": "3", "bid.proportion": "46",
	})
	if err != nil {
		return nil, err
	}
	g, err := nexmark.NewGenerator(cfg)
	if err != nil {
		return nil, err
	}
	var out []*nexmark.Bid
	for s := range g.Splits() {
		for k := int64(0); k < g.SplitLen(s); k++ {
			if e := g.Event(s, k); e.Type == nexmark.BidEvent {
				out = append(out, e.Bid)
			}
		}
	}
	return out, nil
}

var (
	bigintT = types.Type{Kind: types.BigInt}
	tsT     = types.Type{Kind: types.Timestamp, Precision: 3}
	strT    = types.Type{Kind: types.Varchar}
	euroT   = types.Type{Kind: types.Decimal, Precision: 23, Scale: 3}
)

func textRow(vals []any, ts []types.Type) string {
	s := ""
	for i, v := range vals {
		if i > 0 {
			s += "\t"
		}
		s += canonical(v, ts[i])
	}
	return s
}

// oracles compute a query's final result from the generator. q12's is
// per bidder, as normalisers["q12"] leaves it.
var oracles = map[string]func(bids []*nexmark.Bid) []string{
	"q0": func(bids []*nexmark.Bid) []string {
		return oracleRows(bids, func(b *nexmark.Bid) (string, bool) {
			return textRow([]any{b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra}, []types.Type{bigintT, bigintT, bigintT, tsT, strT}), true
		})
	},
	"q1": func(bids []*nexmark.Bid) []string {
		return oracleRows(bids, func(b *nexmark.Bid) (string, bool) {
			euro := decimal.NewFromInt(b.Price).Mul(decimal.RequireFromString("0.908"))
			return textRow([]any{b.Auction, b.Bidder, euro, b.DateTime, b.Extra}, []types.Type{bigintT, bigintT, euroT, tsT, strT}), true
		})
	},
	"q2": func(bids []*nexmark.Bid) []string {
		return oracleRows(bids, func(b *nexmark.Bid) (string, bool) {
			return textRow([]any{b.Auction, b.Price}, []types.Type{bigintT, bigintT}), b.Auction%123 == 0
		})
	},
	"q12": func(bids []*nexmark.Bid) []string {
		n := map[int64]int64{}
		for _, b := range bids {
			n[b.Bidder]++
		}
		var out []string
		for bidder, c := range n {
			out = append(out, fmt.Sprintf("%d\t%d", bidder, c))
		}
		sort.Strings(out)
		return out
	},
}

func oracleRows(bids []*nexmark.Bid, row func(*nexmark.Bid) (string, bool)) []string {
	var out []string
	for _, b := range bids {
		if r, ok := row(b); ok {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// oracleResult is query q's result computed from the generator, or nil.
func oracleResult(q string, events, tps int64) (*Result, error) {
	f := oracles[q]
	if f == nil {
		return nil, nil
	}
	bids, err := streamBids(events, tps)
	if err != nil {
		return nil, err
	}
	return &Result{Rows: f(bids), Appended: true}, nil
}

func mustDecimal(s string) decimal.Decimal { return decimal.RequireFromString(s) }
