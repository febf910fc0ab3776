package billgen

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestGenerateDuplicatesAndTruth(t *testing.T) {
	events, dups := Generate(GenOptions{Bills: 2000, Accounts: 10, DupRate: 0.05, DupDelay: 300, Spread: time.Second, Seed: 1})
	if len(events) != 2000+dups || dups < 60 || dups > 140 {
		t.Fatalf("%d events with %d duplicates", len(events), dups)
	}
	count := map[string]int{}
	for _, b := range events {
		count[b.BillID]++
	}
	if len(count) != 2000 {
		t.Fatalf("%d distinct bills, want 2000", len(count))
	}
	truth := Truth(events)
	var n int64
	sum := decimal.Zero
	for _, tot := range truth {
		n += tot.Count
		sum = sum.Add(tot.Total)
	}
	distinct := decimal.Zero
	seen := map[string]bool{}
	for _, b := range events {
		if !seen[b.BillID] {
			seen[b.BillID] = true
			distinct = distinct.Add(b.Amount)
		}
	}
	if n != 2000 || !sum.Equal(distinct) {
		t.Fatalf("truth counts %d bills summing %s, want 2000 summing %s", n, sum, distinct)
	}
	again, _ := Generate(GenOptions{Bills: 2000, Accounts: 10, DupRate: 0.05, DupDelay: 300, Spread: time.Second, Seed: 1})
	if FormatTruth(Truth(again)) != FormatTruth(truth) {
		t.Fatal("generator is not repeatable for a seed")
	}
}

func TestBillJSONRoundTripExact(t *testing.T) {
	b := Bill{BillID: "b1", AccountID: "a1", Amount: decimal.RequireFromString("1234567890123.45"), Currency: "EUR",
		TS: time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"bill_id":"b1","account_id":"a1","amount":"1234567890123.45","currency":"EUR","ts":"2026-01-02 03:04:05.678"}`; string(data) != want {
		t.Fatalf("json %s, want %s", data, want)
	}
	var back Bill
	if err := json.Unmarshal([]byte(`{"bill_id":"b1","account_id":"a1","amount":1234567890123.45,"currency":"EUR","ts":"2026-01-02 03:04:05.678"}`), &back); err != nil {
		t.Fatal(err)
	}
	if !back.Amount.Equal(b.Amount) || !back.TS.Equal(b.TS) {
		t.Fatalf("round trip %+v, want %+v", back, b)
	}
	if err := json.Unmarshal([]byte(`{"bill_id":"b1","account_id":"a1","amount":1,"ts":"2026-01-02T03:04:05Z"}`), &back); err == nil {
		t.Fatal("ISO timestamp accepted; the wire form is SQL's")
	}
}
