package pipeline

import (
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir"
)

// AccountTotal is one row of account_totals: the running total of an
// account's distinct bills.
type AccountTotal struct {
	AccountID string
	Total     decimal.Decimal
	Count     int64
}

// Row converts the total to a changelog row (+U: an upsert by account_id)
// with fields account_id, total, bill_count.
func (t AccountTotal) Row() weir.Row {
	return weir.Row{Kind: weir.UpdateAfter, Fields: []any{t.AccountID, t.Total, t.Count}}
}

// Totals is the billing job's logic: drop bills whose bill_id was seen
// before — in keyed state, so across batches and checkpoints, for dedupTTL
// — then keep a running SUM(amount) and COUNT(*) per account.
func Totals(bills weir.DataStream[Bill], dedupTTL time.Duration) weir.DataStream[AccountTotal] {
	byBill := weir.KeyBy(bills, func(b Bill) string { return b.BillID })
	firsts := weir.KeyedProcess(byBill, func() weir.KeyedProcessFunction[Bill, string, Bill] {
		return &dedup{ttl: dedupTTL}
	}, weir.Name("Deduplicate"), weir.UID("dedup"))
	byAccount := weir.KeyBy(firsts, func(b Bill) string { return b.AccountID })
	return weir.Aggregate(byAccount, sumCount{}, weir.Name("SumPerAccount"), weir.UID("sum-per-account"))
}

// dedup keeps a seen-flag per bill id with a time-to-live.
type dedup struct {
	ttl  time.Duration
	seen weir.ValueState[bool]
}

func (d *dedup) Open(ctx *weir.RuntimeContext) error {
	var opts []weir.StateOpt
	if d.ttl > 0 {
		opts = append(opts, weir.StateTTL(d.ttl))
	}
	d.seen = weir.ValueStateOf[bool](ctx, "seen", opts...)
	return nil
}

func (d *dedup) ProcessElement(b Bill, _ *weir.KeyedContext[string], out weir.Emitter[Bill]) error {
	if _, dup := d.seen.Value(); dup {
		return nil
	}
	d.seen.Update(true)
	out.Emit(b)
	return nil
}

func (d *dedup) OnTimer(time.Time, *weir.KeyedContext[string], weir.Emitter[Bill]) error { return nil }

// sumCount aggregates bills into an account total.
type sumCount struct{}

func (sumCount) CreateAccumulator() AccountTotal { return AccountTotal{Total: decimal.Zero} }
func (sumCount) Add(b Bill, acc AccountTotal) AccountTotal {
	return AccountTotal{AccountID: b.AccountID, Total: acc.Total.Add(b.Amount), Count: acc.Count + 1}
}
func (sumCount) GetResult(acc AccountTotal) AccountTotal { return acc }
func (sumCount) Merge(a, b AccountTotal) AccountTotal {
	return AccountTotal{AccountID: a.AccountID, Total: a.Total.Add(b.Total), Count: a.Count + b.Count}
}
