package nexmark

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustGen(t testing.TB, cfg Config) *Generator {
	t.Helper()
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The published SplitMix64 reference output for state 1234567.
func TestSplitMix64Reference(t *testing.T) {
	r := rng{s: 1234567}
	want := []uint64{6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821}
	for i, w := range want {
		if got := r.next(); got != w {
			t.Fatalf("draw %d = %d, want %d", i, got, w)
		}
	}
}

func TestIntnUniformAndInRange(t *testing.T) {
	r := seeded(42)
	var counts [7]int
	for range 70000 {
		counts[r.intn(7)]++
	}
	for v, c := range counts {
		if c < 9500 || c > 10500 {
			t.Fatalf("value %d drawn %d times of 70000", v, c)
		}
	}
	for _, n := range []int64{1, 2, math.MaxInt32 - 1, math.MaxInt32, 1 << 40} {
		for range 1000 {
			if v := r.longn(n); v < 0 || v >= n {
				t.Fatalf("longn(%d) = %d", n, v)
			}
		}
	}
}

func TestPow10MatchesMathPow(t *testing.T) {
	r := seeded(7)
	for range 100000 {
		y := r.float64() * 6
		got, want := pow10(y), math.Pow(10, y)
		if math.Abs(got-want) > want*1e-15 {
			t.Fatalf("pow10(%v) = %v, math.Pow %v", y, got, want)
		}
	}
	for _, y := range []float64{0, 1, 2, 5, 5.999999999} {
		if got, want := pow10(y), math.Pow(10, y); math.Abs(got-want) > want*1e-15 {
			t.Fatalf("pow10(%v) = %v, want %v", y, got, want)
		}
	}
}

// handConfig has 50 events per split: split s owns event ids 50s+2 … 50s+51,
// so the k-th event of every split has id ≡ k+2 (mod 50) and the same type.
var handConfig = Config{EventsNum: 400}

// The first 24 events (k = 0, 1, 2 of every split), worked out from
// GENERATOR.md by hand: interEventDelayUs = 1e6/10000·8 = 800, so
// ts(k) = trunc((k+1)·800)/1000 = 0, 1, 2 ms; id 50s+2 and 50s+3 are
// auctions 3s+1 and 3s+2 (+1000); 50s+4 is a bid.
func TestFirstEventsByHand(t *testing.T) {
	g := mustGen(t, handConfig)
	type want struct {
		typ  int
		id   int64 // auction id (auctions)
		tsMs int64
	}
	var wants []want
	for _, w := range [][8]int64{
		{1001, 1004, 1007, 1010, 1013, 1016, 1019, 1022}, // k = 0
		{1002, 1005, 1008, 1011, 1014, 1017, 1020, 1023}, // k = 1
	} {
		for _, id := range w {
			wants = append(wants, want{AuctionEvent, id, int64(len(wants) / 8)})
		}
	}
	for range 8 {
		wants = append(wants, want{BidEvent, 0, 2})
	}
	for i, w := range wants {
		s, k := i%8, int64(i/8)
		ev := g.Event(s, k)
		if ev.Type != w.typ || !ev.DateTime().Equal(time.UnixMilli(DefaultBaseTime+w.tsMs)) {
			t.Fatalf("event %d (split %d, k %d): type %d at %v, want type %d at +%d ms", i, s, k, ev.Type, ev.DateTime(), w.typ, w.tsMs)
		}
		switch ev.Type {
		case AuctionEvent:
			checkHandAuction(t, ev.Auction, s, w.id)
		case BidEvent:
			checkHandBid(t, ev.Bid, s)
		}
	}
	// k = 48: id 50(s+1), the split's only person, id 1001+s, at
	// trunc(49·800)/1000 = 39 ms; k = 49: id 50s+51, auction 3(s+1)+1000 at
	// 40 ms.
	for s := range 8 {
		if p := g.Event(s, 48).Person; p == nil || p.ID != 1001+int64(s) || p.DateTime.UnixMilli() != DefaultBaseTime+39 {
			t.Fatalf("split %d k 48: %+v", s, g.Event(s, 48))
		}
		if a := g.Event(s, 49).Auction; a == nil || a.ID != 1003+3*int64(s) || a.DateTime.UnixMilli() != DefaultBaseTime+40 {
			t.Fatalf("split %d k 49: %+v", s, g.Event(s, 49))
		}
	}
}

// checkHandAuction: the last person of split s is s (base 0), so the hot
// seller is 1000 and a random one 1000 … 1000+s+10; horizon =
// trunc(1667·800)/1000 − 0 = 1333 ms, so expires − dateTime ∈ [1, 2666].
func checkHandAuction(t *testing.T, a *Auction, s int, id int64) {
	t.Helper()
	life := a.Expires.Sub(a.DateTime).Milliseconds()
	switch {
	case a.ID != id:
		t.Fatalf("split %d: auction id %d, want %d", s, a.ID, id)
	case a.Seller < 1000 || a.Seller > 1010+int64(s):
		t.Fatalf("auction %d: seller %d", id, a.Seller)
	case a.Category < 10 || a.Category > 14:
		t.Fatalf("auction %d: category %d", id, a.Category)
	case life < 1 || life > 2666:
		t.Fatalf("auction %d lasts %d ms", id, life)
	case a.InitialBid < 100 || a.InitialBid > 1e8 || a.Reserve <= a.InitialBid:
		t.Fatalf("auction %d: prices %d, %d", id, a.InitialBid, a.Reserve)
	}
}

// checkHandBid: the last auction is 3s+2, so the hot auction is 1000 and a
// random one 1000 … 1000+3s+12; the hot bidder is 0+1+2000 = 2001, a random
// one 2000 … 2000+s+10.
func checkHandBid(t *testing.T, b *Bid, s int) {
	t.Helper()
	switch {
	case b.Auction < 1000 || b.Auction > 1012+3*int64(s):
		t.Fatalf("split %d: bid on auction %d", s, b.Auction)
	case b.Bidder < 2000 || b.Bidder > 2010+int64(s):
		t.Fatalf("split %d: bidder %d", s, b.Bidder)
	case len(b.Extra) < 54 || len(b.Extra) > 81:
		t.Fatalf("split %d: extra of %d bytes", s, len(b.Extra))
	}
}

// TestDrawOrder replays GENERATOR.md's draws for one event of each type
// with the event's own rng and compares every field: it pins the order.
func TestDrawOrder(t *testing.T) {
	g := mustGen(t, Config{EventsNum: 800})
	tab := theTables()
	seen := map[int]bool{}
	for k := int64(0); len(seen) < 3; k++ {
		ev := g.Event(0, k)
		if seen[ev.Type] {
			continue
		}
		seen[ev.Type] = true
		id := g.EventID(0, k)
		r := seeded(uint64(id))
		switch ev.Type {
		case PersonEvent:
			name := firstNames[r.intn(11)] + " " + lastNames[r.intn(9)]
			email := r.str(7, ' ') + "@" + r.str(5, ' ') + ".com"
			cc := fmt.Sprintf("%04d %04d %04d %04d", r.intn(10000), r.intn(10000), r.intn(10000), r.intn(10000))
			city, state := cities[r.intn(10)], states[r.intn(6)]
			extra := r.extra(8+len(name)+len(email)+len(cc)+len(city)+len(state), 200)
			want := Person{ID: id/50 + 1000, Name: name, EmailAddress: email, CreditCard: cc, City: city, State: state, DateTime: ev.Person.DateTime, Extra: extra}
			if *ev.Person != want {
				t.Fatalf("person\n got %+v\nwant %+v", *ev.Person, want)
			}
		case AuctionEvent:
			a := ev.Auction
			hot := r.intn(4) > 0
			if !hot {
				r.longn(min(id/50+1, 1000) + 10)
			}
			cat := 10 + int64(r.intn(5))
			bid := r.price()
			r.longn(2 * (g.Timestamp(k+1666) - g.Timestamp(k))) // expires
			item, desc := r.str(20, ' '), r.str(100, ' ')
			reserve := bid + r.price()
			extra := r.extra(8+len(item)+len(desc)+40, 500)
			if a.Category != cat || a.InitialBid != bid || a.ItemName != item || a.Description != desc || a.Reserve != reserve || a.Extra != extra {
				t.Fatalf("auction %+v: want category %d, bid %d, item %q, desc %q, reserve %d", *a, cat, bid, item, desc, reserve)
			}
		case BidEvent:
			b := ev.Bid
			if r.intn(2) == 0 { // not the hot auction: one in flight
				last := g.lastAuction0(id)
				r.longn(last - max(last-100, 0) + 11)
			}
			if r.intn(4) == 0 { // not the hot bidder: an active person
				r.longn(min(id/50+1, 1000) + 10)
			}
			price := r.price()
			var ch, url string
			if r.intn(2) > 0 {
				i := r.intn(4)
				ch, url = hotChannels[i], tab.hotURLs[i]
			} else {
				c := r.intn(10000)
				ch, url = fmt.Sprint("channel-", c), tab.channelURLs[c]
			}
			extra := r.extra(32, 100)
			if b.Price != price || b.Channel != ch || b.URL != url || b.Extra != extra {
				t.Fatalf("bid %+v: want price %d, channel %q, url %q", *b, price, ch, url)
			}
		}
	}
}

func TestProportionsAndIDs(t *testing.T) {
	g := mustGen(t, Config{EventsNum: 8 * 5000})
	seenPerson, seenAuction := map[int64]bool{}, map[int64]bool{}
	for s := range 8 {
		for start := int64(0); start+50 <= g.SplitLen(s); start += 37 {
			var n [3]int
			for k := start; k < start+50; k++ {
				n[g.Event(s, k).Type]++
			}
			if n != [3]int{1, 3, 46} {
				t.Fatalf("split %d events %d…%d: %v people/auctions/bids, want 1:3:46", s, start, start+49, n)
			}
		}
		lastP, lastA := int64(-1), int64(-1)
		for k := range g.SplitLen(s) {
			switch ev := g.Event(s, k); ev.Type {
			case PersonEvent:
				if lastP >= 0 && ev.Person.ID != lastP+1 || seenPerson[ev.Person.ID] {
					t.Fatalf("split %d: person id %d after %d", s, ev.Person.ID, lastP)
				}
				lastP, seenPerson[ev.Person.ID] = ev.Person.ID, true
			case AuctionEvent:
				if lastA >= 0 && ev.Auction.ID != lastA+1 || seenAuction[ev.Auction.ID] {
					t.Fatalf("split %d: auction id %d after %d", s, ev.Auction.ID, lastA)
				}
				lastA, seenAuction[ev.Auction.ID] = ev.Auction.ID, true
			case BidEvent:
				// A bid names an auction in flight or up to 10 ahead.
				if b := ev.Bid; b.Auction > lastA+10 || b.Auction < lastA-100 && b.Auction%100 != 0 {
					t.Fatalf("split %d: bid on auction %d when the last is %d", s, b.Auction, lastA)
				}
			}
		}
	}
	if len(seenPerson) != 8*5000/50 || len(seenAuction) != 3*8*5000/50 {
		t.Fatalf("%d people and %d auctions", len(seenPerson), len(seenAuction))
	}
}

func TestTimestampsNeverDecrease(t *testing.T) {
	g := mustGen(t, Config{EventsNum: 80000, FirstEventRate: 12345})
	prev := int64(math.MinInt64)
	for k := range g.SplitLen(0) {
		for s := range 8 {
			ev := g.Event(s, k)
			ts := ev.DateTime().UnixMilli()
			if ts < prev || ts != g.Timestamp(k) {
				t.Fatalf("split %d k %d at %d after %d", s, k, ts, prev)
			}
			if ev.Type == AuctionEvent && !ev.Auction.Expires.After(ev.Auction.DateTime) {
				t.Fatalf("auction %d expires at its start", ev.Auction.ID)
			}
			prev = ts
		}
	}
	// 10,000 events of every split at 12,345/s over 8 splits: the last is
	// at trunc(10000·648.0324…)/1000 ms.
	rate := 12345.0
	if got, want := g.Timestamp(9999)-DefaultBaseTime, int64(10000*(1e6/rate*8))/1000; got != want || want != 6480 {
		t.Fatalf("last timestamp +%d ms, want +%d", got, want)
	}
}

// Every event is a pure function of (config, split, k).
func TestEventsRepeatable(t *testing.T) {
	a, b := mustGen(t, Config{EventsNum: 4000}), mustGen(t, Config{EventsNum: 4000})
	for s := range 8 {
		for k := int64(0); k < 500; k += 3 {
			if x, y := a.Event(s, k), b.Event(s, k); !reflect.DeepEqual(x, y) {
				t.Fatalf("split %d k %d differs: %+v vs %+v", s, k, x, y)
			}
		}
	}
}

func TestSplitSizesAndUnbounded(t *testing.T) {
	g := mustGen(t, Config{EventsNum: 1003})
	var sum int64
	for s := range 8 {
		want := int64(125)
		if s == 7 {
			want = 128 // the last split takes the remainder, as in Flink
		}
		if g.SplitLen(s) != want {
			t.Fatalf("split %d holds %d", s, g.SplitLen(s))
		}
		sum += g.SplitLen(s)
	}
	if sum != 1003 || g.EventID(7, 0) != 1+7*125+1 {
		t.Fatalf("sum %d, first id of split 7 %d", sum, g.EventID(7, 0))
	}
	u := mustGen(t, Config{})
	if u.SplitLen(0) < 1e12 || u.Event(3, 1e12).Type > BidEvent {
		t.Fatal("unbounded generator")
	}
}

func TestRow(t *testing.T) {
	g := mustGen(t, handConfig)
	for _, k := range []int64{0, 2, 48} {
		ev := g.Event(0, k)
		row := ev.Row()
		if len(row) != len(Columns) || row[0] != int64(ev.Type) {
			t.Fatalf("row %v", row)
		}
		for i := 1; i < 4; i++ {
			if (row[i] != nil) != (i-1 == ev.Type) {
				t.Fatalf("event type %d: column %s = %v", ev.Type, Columns[i], row[i])
			}
		}
		fields := [][]string{PersonFields, AuctionFields, BidFields}[ev.Type]
		sub := row[1+ev.Type].([]any)
		if len(sub) != len(fields) {
			t.Fatalf("%d values for %d fields", len(sub), len(fields))
		}
		for i, v := range sub {
			switch v.(type) {
			case int64, string:
			case time.Time:
				if v.(time.Time).Location() != time.UTC || !strings.EqualFold(fields[i][:2], "da") && fields[i] != "expires" {
					t.Fatalf("field %s = %v", fields[i], v)
				}
			default:
				t.Fatalf("field %s has type %T", fields[i], v)
			}
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	g := mustGen(b, Config{})
	theTables() // made once per process
	b.ReportAllocs()
	var k int64
	for b.Loop() {
		_ = g.Event(int(k%8), k/8)
		k++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
