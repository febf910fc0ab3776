package session

import (
	"context"
	"fmt"
	"math/big"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/shopspring/decimal"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
)

// The Avro schemas Flink derives for the tables of TestAvroKafkaGroupBy
// (written out here, not taken from Weir, so the test's codec —
// hamba/avro's generic one — is independent of the format under test).
const (
	avroBillSchema = `{"type":"record","name":"org.apache.flink.avro.generated.record","fields":[
  {"name":"bill_id","type":["null","string"],"default":null},
  {"name":"account_id","type":["null","string"],"default":null},
  {"name":"amount","type":["null",{"type":"bytes","logicalType":"decimal","precision":18,"scale":2}],"default":null},
  {"name":"ts","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null}]}`
	avroTotalSchema = `{"type":"record","name":"org.apache.flink.avro.generated.record","fields":[
  {"name":"total","type":["null",{"type":"bytes","logicalType":"decimal","precision":38,"scale":2}],"default":null},
  {"name":"n","type":"long"}]}`
)

// TestAvroKafkaGroupBy: bills in Avro (Flink's 'avro' format: the binary
// record, no header), written by hamba/avro's codec, are summed per
// account by a SQL job into an upsert-kafka topic whose values are Avro
// and whose keys are raw; hamba/avro reads the values back, and the last
// value of each key equals the totals computed from the bills.
func TestAvroKafkaGroupBy(t *testing.T) {
	brokers := testsvc.Kafka(t)
	suffix := fmt.Sprint(time.Now().UnixNano())
	in, out := "avro-bills-"+suffix, "avro-totals-"+suffix
	cl := createTopic(t, brokers, in)
	createTopic(t, brokers, out)
	billSchema, totalSchema := avro.MustParse(avroBillSchema), avro.MustParse(avroTotalSchema)

	rng := rand.New(rand.NewSource(2))
	want := map[string]total{}
	var recs []*kgo.Record
	for i := 0; i < 3000; i++ {
		acc, cents := fmt.Sprintf("acc-%02d", rng.Intn(40)), int64(rng.Intn(200000))-20000
		v, err := avro.Marshal(billSchema, map[string]any{"bill_id": fmt.Sprintf("b-%05d", i), "account_id": acc,
			"amount": big.NewRat(cents, 100), "ts": time.UnixMilli(1764489600000 + int64(i)).UTC()})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: in, Value: v})
		w := want[acc]
		want[acc] = total{w.cents + cents, w.count + 1}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.mustRun(fmt.Sprintf(`
SET 'parallelism.default' = '2';
CREATE TABLE bills (bill_id STRING, account_id STRING, amount DECIMAL(18, 2), ts TIMESTAMP(3)) WITH (
  'connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s', 'format' = 'avro',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE totals (account_id STRING, total DECIMAL(38, 2), n BIGINT NOT NULL, PRIMARY KEY (account_id) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%[2]s',
  'key.format' = 'raw', 'value.format' = 'avro', 'value.fields-include' = 'EXCEPT_KEY');
INSERT INTO totals SELECT account_id, SUM(amount), COUNT(*) FROM bills GROUP BY account_id;`, in, brokers, out))

	got := map[string]string{}
	for _, r := range readAll(t, cl, out) {
		var v map[string]any
		if err := avro.Unmarshal(totalSchema, r.Value, &v); err != nil {
			t.Fatalf("value of %s: %x: %v", r.Key, r.Value, err)
		}
		sum, ok := v["total"].(*big.Rat)
		if !ok {
			t.Fatalf("value of %s: total is %T %v", r.Key, v["total"], v["total"])
		}
		got[string(r.Key)] = fmt.Sprintf("%s|%d", decimal.NewFromBigRat(sum, 2).StringFixed(2), v["n"])
	}
	wantText := map[string]string{}
	for acc, w := range want {
		wantText[acc] = w.String()
	}
	(&e2e{t: t}).compare("upsert-kafka topic in avro, read with hamba/avro", got, wantText)
}

// TestAvroOptions: the avro format's options and what it refuses, in the
// table's terms.
func TestAvroOptions(t *testing.T) {
	const kafka = `'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'localhost:1', 'format' = 'avro'`
	for _, c := range []struct{ ddl, want string }{
		{`CREATE TABLE s (a INT) WITH (` + kafka + `, 'avro.encoding' = 'json')`, `'avro.encoding' = 'json' is not supported: only 'binary'`},
		{`CREATE TABLE s (a INT) WITH (` + kafka + `, 'avro.codec' = 'snappy')`, `Weir does not support these options of Flink's 'kafka' connector yet: avro.codec`},
		{`CREATE TABLE s (a TIMESTAMP(9)) WITH (` + kafka + `)`, `column "a": Avro does not support TIMESTAMP with precision 9, only up to 6: declare it TIMESTAMP(6) or less`},
		{`CREATE TABLE s (a INT) WITH ('connector' = 'filesystem', 'path' = '/tmp', 'format' = 'avro')`, `Avro container files are not supported yet`},
		{`CREATE TABLE s (a INT) WITH (` + kafka + `, 'avro.timestamp_mapping.legacy' = 'no')`, `'avro.timestamp_mapping.legacy' must be true or false`},
	} {
		s := newHarness(t).session()
		if err := s.Execute(c.ddl + ";\nCREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\nINSERT INTO o SELECT 1 FROM s;"); err != nil {
			t.Fatalf("%s: %v", c.ddl, err)
		}
		if _, _, err := s.Job("avro"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\ngot %v, want an error containing %q", c.ddl, err, c.want)
		}
	}
}
