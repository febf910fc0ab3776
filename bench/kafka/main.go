// Command kafka benchmarks Weir's Kafka connector on a real broker: a
// Kafka→Kafka copy job (bounded source, 1 s checkpoints) with the
// exactly-once or the at-least-once sink, timed from job start until its
// last transaction (or flush) is committed. It prints one JSON line.
//
//	go run ./bench/kafka -records 1000000 -guarantee exactly-once
//	go run ./bench/kafka -produce-only -records 1000000 -in bench-in   (what run.sh does first)
//	go run ./bench/kafka -in bench-in -records 1000000 -guarantee at-least-once
//
// Without -in it creates a topic and produces -records values first.
// bench/kafka/run.sh runs Weir with both guarantees and Kafka Streams
// (bench/kstreams) on the same input, back to back.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/kafka"
	"github.com/weirstream/weir/delivery"
)

type config struct {
	brokers     string
	records     int
	guarantee   string
	in, out     string
	partitions  int
	parallelism int
	interval    time.Duration
	valueSize   int
	produceOnly bool
	verify      bool
	deleteList  string
}

func main() {
	var c config
	flag.StringVar(&c.brokers, "brokers", envOr("WEIR_KAFKA_BROKERS", "127.0.0.1:19092"), "bootstrap brokers")
	flag.IntVar(&c.records, "records", 1_000_000, "records to copy (and to produce without -in)")
	flag.StringVar(&c.guarantee, "guarantee", "exactly-once", "sink delivery guarantee: exactly-once or at-least-once")
	flag.StringVar(&c.in, "in", "", "input topic holding -records records (default: create one and produce)")
	flag.StringVar(&c.out, "out", "", "output topic (default: a new one)")
	flag.IntVar(&c.partitions, "partitions", 4, "partitions of topics this program creates")
	flag.IntVar(&c.parallelism, "parallelism", 2, "job parallelism (source and sink subtasks)")
	flag.DurationVar(&c.interval, "checkpoint-interval", time.Second, "checkpoint interval")
	flag.IntVar(&c.valueSize, "value-size", 100, "bytes per produced value")
	flag.BoolVar(&c.produceOnly, "produce-only", false, "create -in, produce -records values into it, and exit")
	flag.BoolVar(&c.verify, "verify", true, "after the run, count the output's committed records")
	flag.StringVar(&c.deleteList, "delete-topics", "", "delete these comma-separated topics and exit (run.sh's cleanup)")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench/kafka:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(c config) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.brokers, ",")...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if c.deleteList != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := adm.DeleteTopics(ctx, strings.Split(c.deleteList, ",")...)
		return err
	}
	stamp := time.Now().Format("20060102-150405")
	if c.produceOnly || c.in == "" {
		if c.in == "" {
			c.in = "bench-in-" + stamp
		}
		if err := produce(adm, c); err != nil {
			return err
		}
		if c.produceOnly {
			fmt.Printf("{\"produced\":%d,\"topic\":%q}\n", c.records, c.in)
			return nil
		}
	}
	if c.out == "" {
		c.out = fmt.Sprintf("bench-out-weir-%s-%s", c.guarantee, stamp)
	}
	if err := createTopic(adm, c.out, c.partitions); err != nil {
		return err
	}
	res, err := copyJob(c)
	if err != nil {
		return err
	}
	if c.verify {
		n, err := countCommitted(c.brokers, adm, c.out)
		if err != nil {
			return err
		}
		res.OutputRecords = n
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// result is the JSON line the program prints.
type result struct {
	Engine           string  `json:"engine"`
	Guarantee        string  `json:"guarantee"`
	Records          int     `json:"records"`
	Parallelism      int     `json:"parallelism"`
	CheckpointMillis int64   `json:"checkpoint_interval_ms"`
	Seconds          float64 `json:"seconds"`
	RecordsPerSecond float64 `json:"records_per_second"`
	Checkpoints      int     `json:"checkpoints"`
	OutputRecords    int64   `json:"output_records,omitempty"`
}

// copyJob runs the copy once: a bounded source of the input's records
// (up to its last stable offsets) into the sink, parallelism c.parallelism.
func copyJob(c config) (*result, error) {
	g, err := delivery.Parse(c.guarantee)
	if err != nil {
		return nil, err
	}
	src, err := kafka.NewSource[[]byte](kafka.Brokers(c.brokers), kafka.Topics(c.in), kafka.Bounded())
	if err != nil {
		return nil, err
	}
	sink, err := kafka.NewSink[[]byte](kafka.Brokers(c.brokers), kafka.Topic(c.out), kafka.Guarantee(g),
		kafka.TransactionalIDPrefix(c.out), kafka.TransactionTimeout(time.Minute), kafka.CheckpointInterval(c.interval))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "weir-bench-kafka-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	env := weir.NewEnvironment().SetParallelism(c.parallelism).EnableCheckpointing(c.interval, weir.ExactlyOnce, dir)
	weir.SinkTo(weir.FromSource[[]byte](env, src, "in", weir.WithUID("in")), sink, "out").UID("out")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := env.Execute(ctx, "bench-kafka-copy")
	if err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	return &result{Engine: "weir", Guarantee: g.String(), Records: c.records, Parallelism: c.parallelism,
		CheckpointMillis: c.interval.Milliseconds(), Seconds: secs, RecordsPerSecond: float64(c.records) / secs,
		Checkpoints: len(res.Checkpoints)}, nil
}

func createTopic(adm *kadm.Client, name string, partitions int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("creating topic %s: %w", name, err)
	}
	return nil
}

// produce creates c.in and writes c.records values of c.valueSize bytes,
// without keys, spread over its partitions.
func produce(adm *kadm.Client, c config) error {
	if err := createTopic(adm, c.in, c.partitions); err != nil {
		return err
	}
	p, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.brokers, ",")...), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		return err
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pad := strings.Repeat("x", max(0, c.valueSize-12))
	errc := make(chan error, 1)
	for i := range c.records {
		v := fmt.Appendf(nil, "%011d %s", i, pad)
		p.Produce(ctx, &kgo.Record{Topic: c.in, Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errc <- err:
				default:
				}
			}
		})
	}
	if err := p.Flush(ctx); err != nil {
		return err
	}
	select {
	case err := <-errc:
		return fmt.Errorf("producing: %w", err)
	default:
	}
	return nil
}

// countCommitted reads the topic read_committed up to its last stable
// offsets and counts the data records (markers excluded).
func countCommitted(brokers string, adm *kadm.Client, topic string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	want := map[int32]int64{}
	consume := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition], consume[o.Partition] = o.Offset, kgo.NewOffset().AtStart()
		}
	})
	rd, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: consume}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	var n int64
	next := map[int32]int64{}
	for done := len(want) == 0; !done; {
		fs := rd.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("counting %s: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				n++
			}
		})
		done = true
		for p, end := range want {
			done = done && next[p] >= end
		}
	}
	return n, nil
}
