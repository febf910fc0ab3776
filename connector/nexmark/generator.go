package nexmark

import (
	"fmt"
	"math"
	"time"
)

// Constants of Nexmark's generator.
const (
	firstPersonID   = 1000
	firstAuctionID  = 1000
	firstCategoryID = 10
	numCategories   = 5
	idLead          = 10  // people and auctions not yet created that may be named
	hotBlock        = 100 // hot sellers, bidders and auctions are the first of each block of 100
)

// Generator makes the events of one configuration. It holds no mutable
// state: Event(split, k) is a pure function, so a Generator is safe for
// concurrent use and any event can be made alone.
//
// Timeline and ids follow Flink Nexmark's split configuration: split i of n
// owns the event ids firstID_i+1 … firstID_i+len_i, where every split but
// the last has EventsNum/n events and the last takes the remainder, and
// firstID_i = 1 + i·(EventsNum/n). All splits share one timeline: the k-th
// event of every split (k from 0) has event number 1+k and timestamp
// BaseTime + trunc((1+k)·interEventDelayUs)/1000 with interEventDelayUs =
// 1e6/FirstEventRate·n. Ordered by (k, split) the stream's timestamps never
// decrease; when EventsNum is a multiple of n that order is simply "split
// i holds the stream's events i, i+n, i+2n, …".
type Generator struct {
	cfg       Config
	total     int64   // sum of the proportions
	delayUs   float64 // inter-event delay of one split, µs
	splitLen  []int64
	firstID   []int64
	auctionsN int64 // events until NumInFlightAuctions more auctions exist
}

// NewGenerator returns the generator of cfg (after EnsureDefaults).
func NewGenerator(cfg Config) (*Generator, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := int64(cfg.Splits)
	g := &Generator{
		cfg:     cfg,
		total:   int64(cfg.PersonProportion + cfg.AuctionProportion + cfg.BidProportion),
		delayUs: 1e6 / float64(cfg.FirstEventRate) * float64(cfg.Splits),
	}
	g.auctionsN = int64(cfg.NumInFlightAuctions) * g.total / int64(cfg.AuctionProportion)
	max := cfg.EventsNum
	if max == 0 {
		// Flink's "unbounded": a maximum scaled down so sizes cannot overflow.
		max = math.MaxInt64 / (g.total * int64(maxInt(cfg.AvgPersonSize, cfg.AvgAuctionSize, cfg.AvgBidSize)))
	}
	per, id := max/n, int64(1)
	for i := range cfg.Splits {
		l := per
		if i == cfg.Splits-1 {
			l = max - per*(n-1)
		}
		g.splitLen = append(g.splitLen, l)
		g.firstID = append(g.firstID, id)
		id += l
	}
	return g, nil
}

func maxInt(xs ...int) int {
	m := xs[0]
	for _, x := range xs[1:] {
		m = max(m, x)
	}
	return m
}

// Config returns the generator's configuration, defaults filled in.
func (g *Generator) Config() Config { return g.cfg }

// Splits returns the number of splits.
func (g *Generator) Splits() int { return g.cfg.Splits }

// SplitLen returns how many events split i holds.
func (g *Generator) SplitLen(split int) int64 { return g.splitLen[split] }

// EventID returns the id of the k-th event of a split: it decides the
// event's type and entity ids and seeds its random draws.
func (g *Generator) EventID(split int, k int64) int64 { return g.firstID[split] + 1 + k }

// Timestamp returns the event time (ms) of the k-th event of any split.
func (g *Generator) Timestamp(k int64) int64 {
	return g.cfg.BaseTime + int64(float64(1+k)*g.delayUs)/1000
}

// Event returns the k-th event (k from 0) of a split. It panics if split or
// k is out of range.
func (g *Generator) Event(split int, k int64) Event { return g.draw(split, k, nil) }

// draw returns the k-th event of a split; a bid is drawn into *b, or a new
// Bid when b is nil.
func (g *Generator) draw(split int, k int64, b *Bid) Event {
	if split < 0 || split >= len(g.splitLen) || k < 0 || k >= g.splitLen[split] {
		panic(fmt.Sprintf("nexmark: event %d of split %d out of range", k, split))
	}
	id := g.EventID(split, k)
	ts := g.Timestamp(k)
	r := seeded(uint64(id))
	switch rem := id % g.total; {
	case rem < int64(g.cfg.PersonProportion):
		return Event{Type: PersonEvent, Person: g.person(&r, id, ts)}
	case rem < int64(g.cfg.PersonProportion+g.cfg.AuctionProportion):
		return Event{Type: AuctionEvent, Auction: g.auction(&r, id, k, ts)}
	default:
		if b == nil {
			b = new(Bid)
		}
		g.bid(&r, id, ts, b)
		return Event{Type: BidEvent, Bid: b}
	}
}

// lastPerson0 is the id (from 0) of the last person created at or before
// event id.
func (g *Generator) lastPerson0(id int64) int64 {
	epoch, off := id/g.total, id%g.total
	if p := int64(g.cfg.PersonProportion); off >= p {
		off = p - 1
	}
	return epoch*int64(g.cfg.PersonProportion) + off
}

// lastAuction0 is the id (from 0) of the last auction created at or before
// event id.
func (g *Generator) lastAuction0(id int64) int64 {
	epoch, off := id/g.total, id%g.total
	p, a := int64(g.cfg.PersonProportion), int64(g.cfg.AuctionProportion)
	switch {
	case off < p:
		epoch--
		off = a - 1
	case off >= p+a:
		off = a - 1
	default:
		off -= p
	}
	return epoch*a + off
}

// nextPerson0 picks one of the active people, or one of the next few.
func (g *Generator) nextPerson0(r *rng, id int64) int64 {
	num := g.lastPerson0(id) + 1
	active := min(num, int64(g.cfg.NumActivePeople))
	return num - active + r.longn(active+idLead)
}

// nextAuction0 picks one of the auctions in flight, or one of the next few.
func (g *Generator) nextAuction0(r *rng, id int64) int64 {
	last := g.lastAuction0(id)
	lo := max(last-int64(g.cfg.NumInFlightAuctions), 0)
	return lo + r.longn(last-lo+1+idLead)
}

func millis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func (g *Generator) person(r *rng, id, ts int64) *Person {
	p := &Person{ID: g.lastPerson0(id) + firstPersonID, DateTime: millis(ts)}
	p.Name = firstNames[r.intn(len(firstNames))] + " " + lastNames[r.intn(len(lastNames))]
	p.EmailAddress = r.str(7, ' ') + "@" + r.str(5, ' ') + ".com"
	var cc [19]byte
	for i := range 4 {
		if i > 0 {
			cc[i*5-1] = ' '
		}
		v := r.intn(10000)
		for j := 3; j >= 0; j-- {
			cc[i*5+j] = byte('0' + v%10)
			v /= 10
		}
	}
	p.CreditCard = string(cc[:])
	p.City = cities[r.intn(len(cities))]
	p.State = states[r.intn(len(states))]
	size := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State)
	p.Extra = r.extra(size, g.cfg.AvgPersonSize)
	return p
}

func (g *Generator) auction(r *rng, id, k, ts int64) *Auction {
	a := &Auction{ID: g.lastAuction0(id) + firstAuctionID, DateTime: millis(ts)}
	if r.intn(g.cfg.HotSellersRatio) > 0 {
		a.Seller = g.lastPerson0(id) / hotBlock * hotBlock
	} else {
		a.Seller = g.nextPerson0(r, id)
	}
	a.Seller += firstPersonID
	a.Category = firstCategoryID + int64(r.intn(numCategories))
	a.InitialBid = r.price()
	// An auction lasts until about when NumInFlightAuctions more auctions
	// have been created: uniform on [1, 2·horizon] ms.
	horizon := g.Timestamp(k+g.auctionsN) - ts
	a.Expires = millis(ts + 1 + r.longn(max(2*horizon, 1)))
	a.ItemName = r.str(20, ' ')
	a.Description = r.str(100, ' ')
	a.Reserve = a.InitialBid + r.price()
	a.Extra = r.extra(8+len(a.ItemName)+len(a.Description)+40, g.cfg.AvgAuctionSize)
	return a
}

func (g *Generator) bid(r *rng, id, ts int64, b *Bid) {
	*b = Bid{DateTime: millis(ts)}
	if r.intn(g.cfg.HotAuctionRatio) > 0 {
		b.Auction = g.lastAuction0(id) / hotBlock * hotBlock
	} else {
		b.Auction = g.nextAuction0(r, id)
	}
	b.Auction += firstAuctionID
	if r.intn(g.cfg.HotBiddersRatio) > 0 {
		b.Bidder = g.lastPerson0(id)/hotBlock*hotBlock + 1
	} else {
		b.Bidder = g.nextPerson0(r, id)
	}
	// Flink Nexmark adds FIRST_PERSON_ID twice to bidders (GENERATOR.md);
	// kept, so that bids join people exactly as rarely as in Flink's runs.
	b.Bidder += 2 * firstPersonID
	b.Price = r.price()
	t := theTables()
	if r.intn(2) > 0 {
		i := r.intn(len(hotChannels))
		b.Channel, b.URL = hotChannels[i], t.hotURLs[i]
	} else {
		c := r.intn(numChannels)
		b.Channel, b.URL = t.channelNames[c], t.channelURLs[c]
	}
	b.Extra = r.extra(32, g.cfg.AvgBidSize)
}
