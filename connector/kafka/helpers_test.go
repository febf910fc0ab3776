package kafka

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
)

// cluster is a test's handle on the real broker.
type cluster struct {
	t       testing.TB
	brokers string
	cl      *kgo.Client
	adm     *kadm.Client
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	b := testsvc.Kafka(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(b, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &cluster{t: t, brokers: b, cl: cl, adm: kadm.NewClient(cl)}
}

var nonName = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// topic creates a topic with a name unique to the test and deletes it at
// the end.
func (c *cluster) topic(suffix string, partitions int) string {
	c.t.Helper()
	return c.topicWith(suffix, partitions, nil)
}

// topicWith is topic with topic configurations (key → value).
func (c *cluster) topicWith(suffix string, partitions int, configs map[string]*string) string {
	c.t.Helper()
	name := fmt.Sprintf("weir-%s-%s-%d", nonName.ReplaceAllString(c.t.Name(), "_"), suffix, rand.Int63())
	testsvc.CreateTopic(c.t, c.adm, name, partitions, configs)
	return name
}

// produce writes values round-robin over the partitions, in order.
func (c *cluster) produce(topic string, partitions int, values []string) {
	c.t.Helper()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: []byte(v)}
	}
	c.produceRecords(recs...)
}

func (c *cluster) produceRecords(recs ...*kgo.Record) {
	c.t.Helper()
	if err := c.tryProduce(recs...); err != nil {
		c.t.Fatalf("producing: %v", err)
	}
}

func (c *cluster) tryProduce(recs ...*kgo.Record) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

// produceTo writes values to one partition, one record at a time, retrying
// while the producer's metadata lags behind a partition just created. Each
// try produces a new record: franz-go keeps the context of the produce call
// in a record that has none (Record.Context), and a record tried again
// would carry the last try's, canceled when it returned ("context
// canceled" on every retry: TestSourcePartitionDiscovery failed so in a CI
// run whose first produce to the new partition came before the producer
// knew of it).
func (c *cluster) produceTo(topic string, partition int32, values ...string) {
	c.t.Helper()
	for _, v := range values {
		for i := 0; ; i++ {
			err := c.tryProduce(&kgo.Record{Topic: topic, Partition: partition, Value: []byte(v)})
			if err == nil {
				break
			}
			if i == 50 {
				c.t.Fatalf("producing to %s-%d: %v", topic, partition, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// readCommitted reads every committed record of topic, up to its last
// stable offsets.
func (c *cluster) readCommitted(topic string) []*kgo.Record {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ends := c.settledEnds(topic)
	want := map[int32]int64{}
	consume := map[int32]kgo.Offset{}
	for p, o := range ends {
		if o > 0 {
			want[p] = o
			consume[p] = kgo.NewOffset().AtStart()
		}
	}
	if len(want) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.brokers, ",")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: consume}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	next := map[int32]int64{}
	for done := false; !done; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			c.t.Fatalf("reading %s: got to %v of %v: %v", topic, next, want, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				out = append(out, r)
			}
		})
		done = true
		for p, end := range want {
			done = done && next[p] >= end
		}
	}
	return out
}

// endOffsets lists the last stable offsets (committed) or high watermarks.
// settledEnds returns the topic's last stable offsets once they reach the
// high watermarks (for up to 30 s): a transaction's commit returns before
// its markers are written to the partitions, so the stable offsets read
// right after it may not include it yet (an exactly-once test then read 0
// records of a committed transaction under load).
func (c *cluster) settledEnds(topic string) map[int32]int64 {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		lso, hwm := c.endOffsets(topic, true), c.endOffsets(topic, false)
		if maps.Equal(lso, hwm) || time.Now().After(deadline) {
			return lso
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *cluster) endOffsets(topic string, committed bool) map[int32]int64 {
	c.t.Helper()
	a, err := newAdmin([]kgo.Opt{kgo.SeedBrokers(strings.Split(c.brokers, ",")...)}, "", committed)
	if err != nil {
		c.t.Fatal(err)
	}
	defer a.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tps, err := a.partitions(ctx, []string{topic})
	if err != nil {
		c.t.Fatal(err)
	}
	offs, err := a.listOffsets(ctx, tps, -1)
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[int32]int64{}
	for tp, o := range offs {
		out[tp.Partition] = o
	}
	return out
}

// openTransactions lists partitions whose last stable offset is behind the
// high watermark: an open transaction holds back read_committed readers.
func (c *cluster) openTransactions(topic string) map[int32][2]int64 {
	c.t.Helper()
	lso, hw := c.endOffsets(topic, true), c.endOffsets(topic, false)
	out := map[int32][2]int64{}
	for p := range hw {
		if lso[p] != hw[p] {
			out[p] = [2]int64{lso[p], hw[p]}
		}
	}
	return out
}

// values returns the record values as strings.
func values(recs []*kgo.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Value)
	}
	return out
}

// compare checks got holds every value of want exactly once (exact) or at
// least once, and nothing else; it returns the number of duplicates.
func compare(t testing.TB, want, got []string, exact bool) int {
	t.Helper()
	count := map[string]int{}
	for _, v := range got {
		count[v]++
	}
	dups, missing := 0, 0
	for _, v := range want {
		switch n := count[v]; {
		case n == 0:
			if missing++; missing <= 5 {
				t.Errorf("value %q lost", v)
			}
		case n > 1:
			dups += n - 1
		}
		delete(count, v)
	}
	if missing > 0 {
		t.Errorf("%d of %d values lost", missing, len(want))
	}
	if len(count) > 0 {
		t.Errorf("%d values not in the input, e.g. %v", len(count), firstKeys(count, 3))
	}
	if exact && dups > 0 {
		t.Errorf("%d duplicates; exactly-once wants none", dups)
	}
	return dups
}

func firstKeys(m map[string]int, n int) []string {
	var out []string
	for k := range m {
		if len(out) == n {
			break
		}
		out = append(out, k)
	}
	return out
}

func seqValues(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%06d", prefix, i)
	}
	return out
}

func rawString(b []byte) (string, error) { return string(b), nil }

// openTransaction begins a transaction on id with one record in topic and
// leaves it open; the test ends it with the returned client (closed at
// the end of the test).
func (c *cluster) openTransaction(id, topic string) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.brokers), kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	if err := cl.BeginTransaction(); err != nil {
		c.t.Fatal(err)
	}
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte("open")}).FirstErr(); err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// progressContext is a context for a job that fails a test only when the
// job stops making progress: it is cancelled when progress has not been
// called for stall (a wall-clock limit on the whole job fails on a loaded
// machine that is slow but not stuck). Call progress from the job's
// listener; the context ends with the test.
func progressContext(t testing.TB, stall time.Duration) (ctx context.Context, progress func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	kick := make(chan struct{}, 1)
	go func() {
		timer := time.NewTimer(stall)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-kick:
				timer.Reset(stall)
			case <-timer.C:
				cancel(fmt.Errorf("no progress (no job event) for %v", stall))
				return
			}
		}
	}()
	return ctx, func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
}
