// Package billgen makes the bills of Weir's billing job: the bill model
// (JSON as the Kafka topic carries it), a seeded generator with duplicates
// and out-of-order event time, and the ground truth — the totals per
// account recomputed from the bills, independently of any job. The billing
// example (examples/billing/pipeline), the chaos tool and the REST
// contract tests share it.
package billgen

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Bill is one bill event. Amount is exact decimal money, never float.
type Bill struct {
	BillID    string          `json:"bill_id"`
	AccountID string          `json:"account_id"`
	Amount    decimal.Decimal `json:"amount"`
	Currency  string          `json:"currency"`
	// TS is the event time, written in SQL form "2006-01-02 15:04:05.000"
	// as Flink's JSON format reads it.
	TS time.Time `json:"-"`
}

// TimeLayout is the SQL timestamp form used on the wire.
const TimeLayout = "2006-01-02 15:04:05.000"

type wireBill struct {
	BillID    string          `json:"bill_id"`
	AccountID string          `json:"account_id"`
	Amount    decimal.Decimal `json:"amount"`
	Currency  string          `json:"currency"`
	TS        string          `json:"ts"`
}

// MarshalJSON writes the bill with its timestamp in SQL form.
func (b Bill) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireBill{b.BillID, b.AccountID, b.Amount, b.Currency, b.TS.UTC().Format(TimeLayout)})
}

// UnmarshalJSON reads a bill; amount may be a JSON number or string (read
// exactly), ts must be in SQL form.
func (b *Bill) UnmarshalJSON(data []byte) error {
	var w wireBill
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	ts, err := time.Parse(TimeLayout, w.TS)
	if err != nil {
		return fmt.Errorf("bill %q: ts %q is not %q: %w", w.BillID, w.TS, TimeLayout, err)
	}
	if w.BillID == "" || w.AccountID == "" {
		return fmt.Errorf("bill without bill_id or account_id: %s", data)
	}
	*b = Bill{w.BillID, w.AccountID, w.Amount, w.Currency, ts}
	return nil
}

// GenOptions configures the generator.
type GenOptions struct {
	Bills     int           // distinct bills
	Accounts  int           // accounts the bills spread over
	DupRate   float64       // fraction of bills sent twice (0.05 = 5 %)
	DupDelay  int           // a duplicate is re-sent this many events later (at most)
	Spread    time.Duration // event time disorder: a bill's ts is up to Spread before its position's time
	Seed      int64
	StartTime time.Time
}

// Generate returns the event stream (with duplicates, in send order) and the
// number of duplicates in it.
func Generate(o GenOptions) (events []Bill, dups int) {
	rnd := rand.New(rand.NewSource(o.Seed))
	if o.StartTime.IsZero() {
		o.StartTime = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	}
	pending := map[int][]Bill{} // position → duplicates to send there
	for i := 0; i < o.Bills; i++ {
		b := newBill(rnd, o, i)
		events = append(events, b)
		if rnd.Float64() < o.DupRate {
			at := i + 1 + rnd.Intn(max(1, o.DupDelay))
			pending[at] = append(pending[at], b)
			dups++
		}
		events = append(events, pending[i]...)
		delete(pending, i)
	}
	for _, at := range sortedKeys(pending) {
		events = append(events, pending[at]...)
	}
	return events, dups
}

func newBill(rnd *rand.Rand, o GenOptions, i int) Bill {
	cents := rnd.Int63n(100_000) + 1 // 0.01 … 1000.00
	base := o.StartTime.Add(time.Duration(i) * 10 * time.Millisecond)
	var jitter time.Duration
	if o.Spread > 0 {
		jitter = time.Duration(rnd.Int63n(int64(o.Spread)))
	}
	return Bill{
		BillID:    fmt.Sprintf("bill-%08d", i),
		AccountID: fmt.Sprintf("acc-%04d", rnd.Intn(max(1, o.Accounts))),
		Amount:    decimal.New(cents, -2),
		Currency:  "EUR",
		TS:        base.Add(-jitter).Truncate(time.Millisecond),
	}
}

func sortedKeys(m map[int][]Bill) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// Total is one account's expected row in account_totals.
type Total struct {
	AccountID string
	Total     decimal.Decimal
	Count     int64
}

// Truth computes the expected totals from the events independently of any
// stream processing: each bill id counts once.
func Truth(events []Bill) map[string]Total {
	seen := map[string]bool{}
	out := map[string]Total{}
	for _, b := range events {
		if seen[b.BillID] {
			continue
		}
		seen[b.BillID] = true
		t := out[b.AccountID]
		t.AccountID = b.AccountID
		t.Total = t.Total.Add(b.Amount)
		t.Count++
		out[b.AccountID] = t
	}
	return out
}

// FormatTruth writes totals as CSV (account_id,total,count), sorted.
func FormatTruth(t map[string]Total) string {
	var sb strings.Builder
	sb.WriteString("account_id,total,count\n")
	ids := make([]string, 0, len(t))
	for id := range t {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(&sb, "%s,%s,%d\n", id, t[id].Total.StringFixed(2), t[id].Count)
	}
	return sb.String()
}
