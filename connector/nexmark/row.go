package nexmark

import (
	"time"
	"unsafe"

	"github.com/weirstream/weir/event"
)

// Row boxes an event's values into the []any the SQL layer reads. Boxing
// an int64 or a time.Time into an interface allocates a copy of it; for
// the ~8 allocations per event of one copy each, Row allocates the
// event's integers and times together in one block (fixed) and points
// the interfaces into it (event.BoxAt), and the row and its entity's row share
// one backing array. Strings of the event's own (names, extras) are
// boxed one by one, so that a string kept in state keeps only its own
// bytes alive; the fixed block holds only integers, times and strings
// shared by every event, so keeping one of its values keeps at most its
// neighbours' few bytes alive. A bid, most of the stream, takes two
// allocations in all (newBidRow): its fixed block (whose extra is a
// substring of the generator's text, so shared too) and one block with
// the row, the bid ROW's slice header and the event.Row a row source's
// record carries.

var (
	int64Word  = any(int64(0))
	timeWord   = any(time.Time{})
	stringWord = any("")
	sliceWord  = any([]any(nil))
)

func boxInt(p *int64) any      { return event.BoxAt(int64Word, unsafe.Pointer(p)) }
func boxTime(p *time.Time) any { return event.BoxAt(timeWord, unsafe.Pointer(p)) }
func boxString(p *string) any  { return event.BoxAt(stringWord, unsafe.Pointer(p)) }
func boxSlice(p *[]any) any    { return event.BoxAt(sliceWord, unsafe.Pointer(p)) }

type personFixed struct {
	id int64
	dt time.Time
}

type auctionFixed struct {
	id, initialBid, reserve, seller, category int64
	dt, expires                               time.Time
}

// bidFixed also holds the bid's channel, URL and extra: they come from
// the generator's tables (extra is a substring of its text, see
// rng.extra), shared by every bid, so keeping one alive keeps no bytes of
// this event alive.
type bidFixed struct {
	auction, bidder, price int64
	dt                     time.Time
	channel, url, extra    string
}

// bidRow is a bid as the source table's row, vals[:4], whose bid column
// is the ROW vals[4:] (nested is that slice, for its interface to point
// to), and as the record value of a row source (row).
type bidRow struct {
	row    event.Row
	nested []any
	vals   [4 + 7]any
}

// newBidRow returns b's row in two allocations (see above).
func newBidRow(b *Bid) *bidRow {
	f := &bidFixed{auction: b.Auction, bidder: b.Bidder, price: b.Price, dt: b.DateTime, channel: b.Channel, url: b.URL, extra: b.Extra}
	r := &bidRow{}
	v := &r.vals
	v[0] = int64(BidEvent)
	r.nested = v[4:len(v):len(v)]
	v[3] = boxSlice(&r.nested)
	v[4], v[5], v[6], v[7], v[8], v[9], v[10] = boxInt(&f.auction), boxInt(&f.bidder), boxInt(&f.price),
		boxString(&f.channel), boxString(&f.url), boxTime(&f.dt), boxString(&f.extra)
	r.row = event.Row{Kind: event.Insert, Fields: v[:4:4]}
	return r
}

// Row returns the event as a row of the Nexmark source table's columns
// (Columns), with the value conventions of sql/types: event_type INT and
// BIGINTs as int64, VARCHARs as string, TIMESTAMP(3) as time.Time in UTC,
// ROWs as []any, and nil for the two unset entities.
func (e Event) Row() []any {
	switch e.Type {
	case PersonEvent:
		p := e.Person
		f := &personFixed{id: p.ID, dt: p.DateTime}
		buf := make([]any, 4+8)
		buf[4], buf[5], buf[6], buf[7], buf[8], buf[9], buf[10], buf[11] = boxInt(&f.id), p.Name, p.EmailAddress, p.CreditCard, p.City, p.State, boxTime(&f.dt), p.Extra
		return eventRow(buf, e.Type)
	case AuctionEvent:
		a := e.Auction
		f := &auctionFixed{id: a.ID, initialBid: a.InitialBid, reserve: a.Reserve, seller: a.Seller, category: a.Category,
			dt: a.DateTime, expires: a.Expires}
		buf := make([]any, 4+10)
		buf[4], buf[5], buf[6], buf[7], buf[8] = boxInt(&f.id), a.ItemName, a.Description, boxInt(&f.initialBid), boxInt(&f.reserve)
		buf[9], buf[10], buf[11], buf[12], buf[13] = boxTime(&f.dt), boxTime(&f.expires), boxInt(&f.seller), boxInt(&f.category), a.Extra
		return eventRow(buf, e.Type)
	case BidEvent:
		return newBidRow(e.Bid).row.Fields
	}
	return []any{int64(e.Type), nil, nil, nil}
}

// eventRow is buf[:4] with event_type typ and the entity's row, buf[4:],
// in the entity's column (1 person, 2 auction, 3 bid). Both slices are
// capped, so appending to either copies.
func eventRow(buf []any, typ int) []any {
	row := buf[:4:4]
	row[0] = int64(typ)
	row[typ+1] = buf[4:len(buf):len(buf)]
	return row
}

// rowValue returns the k-th event of a split as a row source emits it: an
// event.Row (+I) of Row's fields. A bid takes the two allocations of
// newBidRow: its Bid is drawn on the stack.
func (g *Generator) rowValue(split int, k int64) any {
	var b Bid
	e := g.draw(split, k, &b)
	if e.Type == BidEvent {
		return event.BoxRow(&newBidRow(e.Bid).row)
	}
	return event.Row{Kind: event.Insert, Fields: e.Row()}
}
