// Command billing is the billing job in the Go DataStream API: bills from
// Kafka, de-duplicated by bill_id across checkpoints, summed per account,
// upserted into MariaDB/MySQL exactly once. examples/billing/billing.sql is
// the same job in SQL.
//
//	scripts/services.sh up && eval "$(scripts/services.sh env)"
//	go run ./cmd/weir tool gen-bills --bills 200000 --truth truth.csv
//	go run ./examples/billing -checkpoints /tmp/billing-ck
//	go run ./cmd/weir chaos --mysql "$WEIR_MYSQL_DSN" --truth truth.csv -- \
//	    go run ./examples/billing -checkpoints /tmp/billing-ck
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/jdbc"
	"github.com/weirstream/weir/connector/kafka"
	"github.com/weirstream/weir/examples/billing/pipeline"
)

func main() {
	brokers := flag.String("brokers", os.Getenv("WEIR_KAFKA_BROKERS"), "Kafka bootstrap servers")
	topic := flag.String("topic", "bills", "topic with the bill events")
	dsn := flag.String("mysql", os.Getenv("WEIR_MYSQL_DSN"), "MariaDB/MySQL DSN (go-sql-driver form)")
	table := flag.String("table", "account_totals", "table of totals (created if missing)")
	checkpoints := flag.String("checkpoints", "billing-checkpoints", "checkpoint directory")
	restore := flag.String("restore", "", `"latest" to resume from the newest checkpoint ("latest-or-empty": or start empty when there is none)`)
	interval := flag.Duration("interval", time.Second, "checkpoint interval")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *brokers, *topic, *dsn, *table, *checkpoints, *restore, *interval); err != nil {
		slog.Error("billing failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, brokers, topic, dsn, table, checkpoints, restore string, interval time.Duration) error {
	if brokers == "" || dsn == "" {
		return fmt.Errorf("set -brokers and -mysql (or WEIR_KAFKA_BROKERS and WEIR_MYSQL_DSN)")
	}
	if err := createTable(dsn, table); err != nil {
		return err
	}
	env := weir.NewEnvironment(weir.Parallelism(2), weir.CheckpointInterval(interval), weir.CheckpointDir(checkpoints),
		weir.Guarantee(weir.ExactlyOnce), weir.Restore(restore))
	src, err := kafka.NewSource[pipeline.Bill](kafka.Brokers(strings.Split(brokers, ",")...), kafka.Topics(topic), kafka.Bounded())
	if err != nil {
		return err
	}
	sink, err := jdbc.New(jdbc.URL(dsn), jdbc.Table(table), jdbc.Columns("account_id", "total", "bill_count"),
		jdbc.PrimaryKey("account_id"), jdbc.Guarantee(weir.ExactlyOnce), jdbc.Name("account_totals"))
	if err != nil {
		return err
	}
	bills := weir.FromSource[pipeline.Bill](env, src, "bills", weir.UID("bills"))
	totals := pipeline.Totals(bills, 24*time.Hour)
	rows := weir.Map(totals, pipeline.AccountTotal.Row, weir.UID("to-row"))
	weir.SinkTo(rows, sink, "account_totals", weir.UID("account-totals"))
	res, err := env.Execute(ctx, "billing")
	if err != nil {
		return err
	}
	slog.Info("billing finished", "checkpoints", len(res.Checkpoints), "restarts", res.Restarts)
	return nil
}

func createTable(dsn, table string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec("CREATE TABLE IF NOT EXISTS " + table +
		" (account_id VARCHAR(64) PRIMARY KEY, total DECIMAL(38,2) NOT NULL, bill_count BIGINT NOT NULL)")
	return err
}
