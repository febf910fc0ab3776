package nexmark

import (
	"fmt"
	"reflect"
	"testing"
)

// plainRow is Row as it was before the values shared one allocation:
// each value boxed on its own. Row must give rows equal to it in every
// way the SQL layer looks at a value.
func plainRow(e Event) []any {
	row := []any{int64(e.Type), nil, nil, nil}
	switch e.Type {
	case PersonEvent:
		p := e.Person
		row[1] = []any{p.ID, p.Name, p.EmailAddress, p.CreditCard, p.City, p.State, p.DateTime, p.Extra}
	case AuctionEvent:
		a := e.Auction
		row[2] = []any{a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime, a.Expires, a.Seller, a.Category, a.Extra}
	case BidEvent:
		b := e.Bid
		row[3] = []any{b.Auction, b.Bidder, b.Price, b.Channel, b.URL, b.DateTime, b.Extra}
	}
	return row
}

func TestRowEqualsPlainBoxing(t *testing.T) {
	g := testGenerator(t, 5000)
	rows := make([][]any, 0, 5000)
	for i := int64(0); i < 5000; i++ {
		e := g.Event(0, i)
		got, want := e.Row(), plainRow(e)
		if !reflect.DeepEqual(got, want) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("event %d: Row %v, want %v", i, got, want)
		}
		entity := got[e.Type+1].([]any)
		for j, v := range want[e.Type+1].([]any) {
			w := entity[j]
			if w != v || reflect.TypeOf(w) != reflect.TypeOf(v) {
				t.Fatalf("event %d field %d: %#v (%T) != %#v (%T)", i, j, w, w, v, v)
			}
			m := map[any]bool{v: true}
			if !m[w] {
				t.Fatalf("event %d field %d: not the same map key", i, j)
			}
		}
		rows = append(rows, got)
	}
	// Rows stay independent: appending to one, or overwriting a field,
	// changes no other row and no other value.
	r := rows[10]
	entity := r[rows[10][0].(int64)+1].([]any)
	_ = append(r, "x")
	_ = append(entity, "y")
	entity[0] = "changed"
	for i, row := range rows {
		if i != 10 && !reflect.DeepEqual(row, plainRow(g.Event(0, int64(i)))) {
			t.Fatalf("row %d changed by writing row 10", i)
		}
	}
}

func BenchmarkRow(b *testing.B) {
	g := testGenerator(b, 1000)
	events := make([]Event, 1000)
	for i := range events {
		events[i] = g.Event(0, int64(i))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = events[i%len(events)].Row()
		i++
	}
}

func testGenerator(t testing.TB, events int64) *Generator {
	g, err := NewGenerator(Config{EventsNum: events, Splits: 1})
	if err != nil {
		t.Fatal(err)
	}
	return g
}
