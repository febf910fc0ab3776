package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
)

// TestTemporalJoinUpsertKafka joins orders from a Kafka topic with the
// rates of an upsert-kafka table, as of each order's time: the versioned
// table of Flink's docs, on the real broker. Each order gets the rate of
// its currency valid at its time, computed here by hand: EUR is 100 from
// 00:00:00 and 110 from 00:00:10, USD 7 from 00:00:05, GBP has none.
func TestTemporalJoinUpsertKafka(t *testing.T) {
	brokers := testsvc.Kafka(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	suffix := time.Now().UnixNano()
	rates, orders := fmt.Sprintf("tj-rates-%d", suffix), fmt.Sprintf("tj-orders-%d", suffix)
	adm := kadm.NewClient(cl)
	testsvc.CreateTopic(t, adm, rates, 1, nil)
	testsvc.CreateTopic(t, adm, orders, 1, nil)
	produce := func(topic string, kv ...string) {
		var recs []*kgo.Record
		for i := 0; i < len(kv); i += 2 {
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(kv[i]), Value: []byte(kv[i+1])})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	rate := func(cur string, r int, ts string) (string, string) {
		return fmt.Sprintf(`{"cur":%q}`, cur), fmt.Sprintf(`{"cur":%q,"rate":%d,"ts":"2024-01-01 %s"}`, cur, r, ts)
	}
	var kv []string
	for _, r := range []struct {
		cur  string
		rate int
		ts   string
	}{{"EUR", 100, "00:00:00"}, {"USD", 7, "00:00:05"}, {"EUR", 110, "00:00:10"}} {
		k, v := rate(r.cur, r.rate, r.ts)
		kv = append(kv, k, v)
	}
	produce(rates, kv...)
	order := func(id int, cur, ts string) []string {
		return []string{"", fmt.Sprintf(`{"id":%d,"cur":%q,"ts":"2024-01-01 %s"}`, id, cur, ts)}
	}
	var okv []string
	for _, o := range [][]string{order(1, "EUR", "00:00:05"), order(2, "EUR", "00:00:12"), order(3, "USD", "00:00:01"),
		order(4, "USD", "00:00:06"), order(5, "GBP", "00:00:20"), order(6, "EUR", "00:00:10")} {
		okv = append(okv, o...)
	}
	produce(orders, okv...)

	h := newHarness(t)
	h.mustRun(fmt.Sprintf(`
SET 'parallelism.default' = '2';
CREATE TABLE rates (cur STRING, rate INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts,
  PRIMARY KEY (cur) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = '%s',
  'properties.bootstrap.servers' = '%s', 'key.format' = 'json', 'value.format' = 'json',
  'scan.bounded.mode' = 'latest-offset');
CREATE TABLE orders (id INT, cur STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s',
  'format' = 'json', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE priced (id INT, cur STRING, rate INT) WITH ('connector' = 'collect');
INSERT INTO priced SELECT o.id, o.cur, r.rate FROM orders AS o
  LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur;`, rates, brokers, orders, brokers))
	expect(t, "orders priced as of their time", sorted(h.rows("priced")), []string{
		"+I[1, EUR, 100]", "+I[2, EUR, 110]", "+I[3, USD, NULL]", "+I[4, USD, 7]", "+I[5, GBP, NULL]", "+I[6, EUR, 110]",
	})
}
