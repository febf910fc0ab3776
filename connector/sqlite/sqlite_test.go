package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

var cols = []types.Field{
	{Name: "account_id", Type: types.Type{Kind: types.String}},
	{Name: "total", Type: types.Type{Kind: types.Decimal, Precision: 38, Scale: 2}},
	{Name: "bill_count", Type: types.Type{Kind: types.BigInt}},
}

func TestCheckpointReplayIsSkippedAndMoneyExact(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE account_totals (account_id TEXT PRIMARY KEY, total TEXT NOT NULL, bill_count INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	s := &UpsertSink{DB: db, Table: "account_totals", Columns: cols, Key: []string{"account_id"}, Name: "totals"}
	wctx := operator.WriterContext{JobID: "billing", Context: ctx, Parallelism: 1}
	w, err := s.CreateWriter(wctx)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.CreateCommitter(wctx)
	for _, r := range []event.Row{
		{Kind: event.Insert, Fields: []any{"a", decimal.RequireFromString("0.10"), int64(1)}},
		{Kind: event.UpdateBefore, Fields: []any{"a", decimal.RequireFromString("0.10"), int64(1)}},
		{Kind: event.UpdateAfter, Fields: []any{"a", decimal.RequireFromString("0.30"), int64(2)}},
		{Kind: event.Insert, Fields: []any{"b", decimal.RequireFromString("99999999999999999.99"), int64(1)}},
	} {
		w.Write(event.Record{Value: r})
	}
	committables, _ := w.PrepareCommit(1)
	for i := 0; i < 2; i++ { // the second commit is a replay: skipped
		if err := c.Commit(ctx, 1, committables); err != nil {
			t.Fatal(err)
		}
	}
	w.Write(event.Record{Value: event.Row{Kind: event.Delete, Fields: []any{"b", nil, nil}}})
	more, _ := w.PrepareCommit(2)
	if err := c.Commit(ctx, 2, more); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, 1, committables); err != nil { // an older replay changes nothing
		t.Fatal(err)
	}
	rows, _ := db.Query(`SELECT account_id, total, bill_count FROM account_totals ORDER BY account_id`)
	var got []string
	for rows.Next() {
		var id, total string
		var n int64
		rows.Scan(&id, &total, &n)
		got = append(got, id+"="+total+"/"+decimal.NewFromInt(n).String())
	}
	if len(got) != 1 || got[0] != "a=0.30/2" {
		t.Fatalf("table %v, want [a=0.30/2]", got)
	}
	var last int64
	db.QueryRow(`SELECT checkpoint_id FROM ` + Checkpoints).Scan(&last)
	if last != 2 {
		t.Fatalf("bookkeeping says %d, want 2", last)
	}
}

// TestWALKeepsDatesAndDecimals: a checkpoint's rows go through the
// write-ahead log as text and come back as the same SQL values; a DATE
// was written as a timestamp, which a DATE column cannot read back.
func TestWALKeepsDatesAndDecimals(t *testing.T) {
	c := rowCodec{cols: []types.Field{
		{Name: "d", Type: types.Type{Kind: types.Date}},
		{Name: "v", Type: types.Type{Kind: types.Decimal, Precision: 5, Scale: 2}},
		{Name: "ts", Type: types.Type{Kind: types.Timestamp, Precision: 3}},
	}}
	day := time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)
	in := event.Row{Kind: event.Insert, Fields: []any{day, decimal.RequireFromString("80.40"), day.Add(1500 * time.Millisecond)}}
	v, rest, err := c.Decode(c.Encode(nil, in))
	if err != nil || len(rest) != 0 {
		t.Fatalf("decode: %v (%d bytes left)", err, len(rest))
	}
	out := v.(event.Row)
	if !out.Fields[0].(time.Time).Equal(day) || out.Fields[1].(decimal.Decimal).String() != "80.4" ||
		!out.Fields[2].(time.Time).Equal(day.Add(1500*time.Millisecond)) {
		t.Fatalf("read back %v", out)
	}
}
