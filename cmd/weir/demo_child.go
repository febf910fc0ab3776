package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/kafka"
	"github.com/weirstream/weir/connector/sqlite"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/examples/billing/pipeline"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/types"
)

type childFlags struct{ brokers, db, checkpoints, restore string }

// newBillingChildCommand is the billing job process that `weir demo
// billing` starts, kills and restarts. It prints one progress line per
// event on stdout: "restored N", "checkpoint N <bills read>", "finished".
func newBillingChildCommand() *cobra.Command {
	var f childFlags
	cmd := &cobra.Command{
		Use:    "billing-child",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   func(cmd *cobra.Command, _ []string) error { return runBillingChild(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.brokers, "brokers", "", "Kafka brokers")
	fl.StringVar(&f.db, "db", "", "SQLite database file")
	fl.StringVar(&f.checkpoints, "checkpoints", "", "checkpoint directory")
	fl.StringVar(&f.restore, "restore", "", "restore from")
	return cmd
}

// totalsColumns are account_totals' columns.
var totalsColumns = []types.Field{
	{Name: "account_id", Type: types.Type{Kind: types.String}},
	{Name: "total", Type: types.Type{Kind: types.Decimal, Precision: 38, Scale: 2}},
	{Name: "bill_count", Type: types.Type{Kind: types.BigInt}},
}

func runBillingChild(ctx context.Context, f childFlags) error {
	db, err := sqlite.Open(f.db)
	if err != nil {
		return err
	}
	defer db.Close()
	var read atomic.Int64
	env := weir.NewEnvironment().SetParallelism(2).
		EnableCheckpointing(400*time.Millisecond, weir.ExactlyOnce, f.checkpoints)
	opts := env.RuntimeOptions()
	opts.Restore = f.restore
	opts.Logger = logger(true)
	opts.Restart = runtime.NoRestart{}
	opts.Listener = func(e runtime.Event) {
		switch e.Kind {
		case runtime.EventRestored:
			fmt.Printf("restored %d\n", e.Checkpoint)
		case runtime.EventCheckpointCompleted:
			fmt.Printf("checkpoint %d %d\n", e.Checkpoint, read.Load())
		case runtime.EventFinished:
			fmt.Println("finished")
		}
	}
	src, err := kafka.NewSource[pipeline.Bill](kafka.Brokers(f.brokers), kafka.Topics("bills"), kafka.Bounded())
	if err != nil {
		return err
	}
	bills := weir.FromSource[pipeline.Bill](env, src, "bills", weir.WithUID("bills"))
	paced := weir.Map(bills, func(b pipeline.Bill) pipeline.Bill {
		if read.Add(1)%4 == 0 {
			time.Sleep(time.Millisecond) // pace the demo so the kill lands mid-stream
		}
		return b
	}).UID("pace")
	totals := pipeline.Totals(paced, 24*time.Hour)
	rows := weir.Map(totals, func(t pipeline.AccountTotal) event.Row { return t.Row() }).UID("to-row")
	sink := &sqlite.UpsertSink{DB: db, Table: "account_totals", Columns: totalsColumns, Key: []string{"account_id"}, Name: "account_totals"}
	weir.SinkTo(rows, sink, "account_totals").UID("account-totals-sink")
	_, err = env.Execute(ctx, "billing")
	if err != nil {
		fmt.Fprintln(os.Stderr, "billing job:", err)
	}
	return err
}
