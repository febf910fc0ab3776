package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/examples/billing/pipeline"
)

func newToolCommand() *cobra.Command {
	tool := &cobra.Command{Use: "tool", Short: "Helpers: generate test data"}
	tool.AddCommand(newGenBillsCommand())
	return tool
}

type genBillsFlags struct {
	brokers, topic, truth string
	partitions            int32
	opts                  pipeline.GenOptions
}

func newGenBillsCommand() *cobra.Command {
	var f genBillsFlags
	cmd := &cobra.Command{
		Use:   "gen-bills",
		Short: "Produce bill events with duplicates into a Kafka topic and write the expected totals",
		Long: `Produces --bills distinct bills over --accounts accounts into --topic; a fraction
--dup-rate of them is sent a second time, up to --dup-delay events later (as a retrying
producer would), and event times are out of order by up to --spread. The expected
account_totals (each bill counted once) are written as CSV to --truth.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return genBills(cmd.Context(), cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.brokers, "brokers", os.Getenv("WEIR_KAFKA_BROKERS"), "Kafka bootstrap servers (default $WEIR_KAFKA_BROKERS)")
	fl.StringVar(&f.topic, "topic", "bills", "topic to produce to")
	fl.Int32Var(&f.partitions, "partitions", 3, "partitions of the topic if it is created")
	fl.StringVar(&f.truth, "truth", "truth.csv", "file for the expected totals")
	fl.IntVar(&f.opts.Bills, "bills", 200000, "distinct bills")
	fl.IntVar(&f.opts.Accounts, "accounts", 1000, "accounts")
	fl.Float64Var(&f.opts.DupRate, "dup-rate", 0.05, "fraction of bills sent twice")
	fl.IntVar(&f.opts.DupDelay, "dup-delay", 5000, "a duplicate follows its original by up to this many events")
	fl.DurationVar(&f.opts.Spread, "spread", 5*time.Second, "event-time disorder")
	fl.Int64Var(&f.opts.Seed, "seed", 1, "random seed (same seed, same bills)")
	return cmd
}

func genBills(ctx context.Context, cmd *cobra.Command, f genBillsFlags) error {
	if f.brokers == "" {
		return fmt.Errorf("no brokers: pass --brokers or set WEIR_KAFKA_BROKERS")
	}
	events, dups := pipeline.Generate(f.opts)
	if err := ProduceBills(ctx, f.brokers, f.topic, f.partitions, events); err != nil {
		return err
	}
	if err := os.WriteFile(f.truth, []byte(pipeline.FormatTruth(pipeline.Truth(events))), 0o644); err != nil {
		return err
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "produced %d bills (%d duplicates) to %s; expected totals in %s\n",
		len(events), dups, f.topic, f.truth)
	return err
}

// ProduceBills creates topic (if missing) and produces the events in order,
// keyed by account, with an idempotent producer.
func ProduceBills(ctx context.Context, brokers, topic string, partitions int32, events []pipeline.Bill) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic),
		kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil && !isTopicExists(err) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for _, b := range events {
		v, err := json.Marshal(b)
		if err != nil {
			return err
		}
		cl.Produce(ctx, &kgo.Record{Key: []byte(b.AccountID), Value: v}, nil)
	}
	return cl.Flush(ctx)
}

func isTopicExists(err error) bool { return errors.Is(err, kerr.TopicAlreadyExists) }
