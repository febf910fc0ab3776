package nexmark

import "time"

// Event types, the values of the event_type column.
const (
	PersonEvent  = 0
	AuctionEvent = 1
	BidEvent     = 2
)

// Person is a new user of the auction site. Field names and types follow
// Flink Nexmark's model (com.github.nexmark.flink.model.Person).
type Person struct {
	ID           int64
	Name         string
	EmailAddress string
	CreditCard   string
	City         string
	State        string
	DateTime     time.Time // UTC, millisecond precision: TIMESTAMP(3)
	Extra        string
}

// Auction is an item put up for sale.
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	InitialBid  int64 // cents
	Reserve     int64 // cents
	DateTime    time.Time
	Expires     time.Time
	Seller      int64 // a Person.ID
	Category    int64
	Extra       string
}

// Bid is a bid on an auction.
type Bid struct {
	Auction  int64 // an Auction.ID
	Bidder   int64 // a Person.ID (offset by 1000 more than sellers: see GENERATOR.md)
	Price    int64 // cents
	Channel  string
	URL      string
	DateTime time.Time
	Extra    string
}

// Event is one element of the Nexmark stream: exactly one of Person,
// Auction and Bid is set, as Type says.
type Event struct {
	Type    int
	Person  *Person
	Auction *Auction
	Bid     *Bid
}

// DateTime returns the event's time.
func (e Event) DateTime() time.Time {
	switch e.Type {
	case PersonEvent:
		return e.Person.DateTime
	case AuctionEvent:
		return e.Auction.DateTime
	}
	return e.Bid.DateTime
}

// Columns are the physical columns of Flink Nexmark's source table, in order
// (queries/ddl_gen.sql). The table also declares a computed column
// `dateTime` (the set entity's dateTime) with the watermark
// `dateTime - INTERVAL '4' SECOND`; that is the SQL layer's to derive.
var Columns = []string{"event_type", "person", "auction", "bid"}

// Field names of the person, auction and bid ROW columns, in order.
var (
	PersonFields  = []string{"id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra"}
	AuctionFields = []string{"id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller", "category", "extra"}
	BidFields     = []string{"auction", "bidder", "price", "channel", "url", "dateTime", "extra"}
)
