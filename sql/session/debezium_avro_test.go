package session

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/weirstream/weir/internal/testsvc"
)

// debeziumEnvelope is the writer's schema of a Debezium MySQL connector's
// change events under Kafka Connect's AvroConverter (its shape, names and
// connect.* properties as Debezium's documentation shows them): an
// Envelope of before/after Value records, source, op, ts_ms, transaction.
const debeziumEnvelope = `{"type":"record","name":"Envelope","namespace":"dbserver1.shop.bills","fields":[
 {"name":"before","type":["null",{"type":"record","name":"Value","fields":[
   {"name":"id","type":"int"},
   {"name":"account","type":["null","string"],"default":null},
   {"name":"amount","type":["null",{"type":"bytes","scale":2,"precision":10,"connect.version":1,
     "connect.parameters":{"scale":"2","connect.decimal.precision":"10"},
     "connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}],"default":null}],
   "connect.name":"dbserver1.shop.bills.Value"}],"default":null},
 {"name":"after","type":["null","Value"],"default":null},
 {"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.mysql","fields":[
   {"name":"version","type":"string"},{"name":"connector","type":"string"},{"name":"name","type":"string"},
   {"name":"ts_ms","type":"long"},{"name":"db","type":"string"},{"name":"table","type":["null","string"],"default":null},
   {"name":"file","type":"string"},{"name":"pos","type":"long"}],"connect.name":"io.debezium.connector.mysql.Source"}},
 {"name":"op","type":"string"},
 {"name":"ts_ms","type":["null","long"],"default":null},
 {"name":"transaction","type":["null",{"type":"record","name":"block","namespace":"event","fields":[
   {"name":"id","type":"string"},{"name":"total_order","type":"long"},{"name":"data_collection_order","type":"long"}]}],
   "default":null}],
 "connect.name":"dbserver1.shop.bills.Envelope"}`

// TestDebeziumAvroConfluentKafka: change events in Debezium's Avro envelope
// (registered in the real registry, in the Confluent wire format, with a
// tombstone after the delete) are read by 'debezium-avro-confluent' as a
// changelog into a GROUP BY, whose updating result is written to another
// topic in the same format (registering Flink's envelope) and read back.
func TestDebeziumAvroConfluentKafka(t *testing.T) {
	brokers, registry := testsvc.Kafka(t), testsvc.SchemaRegistry(t)
	suffix := time.Now().UnixNano()
	in, out := fmt.Sprintf("dbz-avro-bills-%d", suffix), fmt.Sprintf("dbz-avro-totals-%d", suffix)
	cl := createTopic(t, brokers, in)
	createTopic(t, brokers, out)
	src, err := sr.NewClient(sr.URLs(registry))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := src.RegisterSchema(ctx, in+"-value", sr.Schema{Schema: debeziumEnvelope}, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	writer := avro.MustParse(debeziumEnvelope)
	value := func(id int, account string, cents int64) map[string]any {
		return map[string]any{"dbserver1.shop.bills.Value": map[string]any{"id": id,
			"account": map[string]any{"string": account}, "amount": map[string]any{"bytes.decimal": big.NewRat(cents, 100)}}}
	}
	var pos int64
	event := func(op string, before, after map[string]any) *kgo.Record {
		pos += 100
		m := map[string]any{"op": op, "ts_ms": map[string]any{"long": int64(1764489600000)}, "transaction": nil,
			"source": map[string]any{"version": "2.7.0.Final", "connector": "mysql", "name": "dbserver1", "ts_ms": int64(1764489600000),
				"db": "shop", "table": map[string]any{"string": "bills"}, "file": "mysql-bin.000003", "pos": pos}}
		m["before"], m["after"] = nil, nil
		if before != nil {
			m["before"] = before
		}
		if after != nil {
			m["after"] = after
		}
		b, err := avro.Marshal(writer, m)
		if err != nil {
			t.Fatal(err)
		}
		hdr := []byte{0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(hdr[1:], uint32(id))
		return &kgo.Record{Topic: in, Value: append(hdr, b...)}
	}
	recs := []*kgo.Record{
		event("r", nil, value(1, "acc-1", 1000)),
		event("c", nil, value(2, "acc-2", 550)),
		event("u", value(1, "acc-1", 1000), value(1, "acc-1", 1200)),
		event("d", value(2, "acc-2", 550), nil),
		{Topic: in}, // the tombstone Debezium writes after a delete
		event("c", nil, value(3, "acc-1", 125)),
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	table := func(name, columns, topic string) string {
		return fmt.Sprintf(`CREATE TABLE %s (%s) WITH ('connector' = 'kafka', 'topic' = '%s',
  'properties.bootstrap.servers' = '%s', 'format' = 'debezium-avro-confluent', 'debezium-avro-confluent.url' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
`, name, columns, topic, brokers, registry)
	}
	h := newHarness(t)
	h.mustRun(table("bills", "id INT NOT NULL, account STRING, amount DECIMAL(10, 2)", in) +
		table("totals", "account STRING, total DECIMAL(38, 2), n BIGINT NOT NULL", out) +
		`CREATE TABLE seen (account STRING, total DECIMAL(38, 2), n BIGINT NOT NULL) WITH ('connector' = 'collect');
INSERT INTO seen SELECT account, SUM(amount), COUNT(*) FROM bills GROUP BY account;
INSERT INTO totals SELECT account, SUM(amount), COUNT(*) FROM bills GROUP BY account;`)
	// Bill 1's update takes acc-1's only row back (-U of the bill: the count
	// drops to 0, so the group is deleted, as Flink's GroupAggregate does)
	// before it inserts it again (+U of the bill).
	expect(t, "GROUP BY over the Debezium Avro changelog", h.rows("seen"), []string{
		"+I[acc-1, 10.00, 1]", "+I[acc-2, 5.50, 1]", "-D[acc-1, 10.00, 1]", "+I[acc-1, 12.00, 1]",
		"-D[acc-2, 5.50, 1]", "-U[acc-1, 12.00, 1]", "+U[acc-1, 13.25, 2]"})

	h = newHarness(t)
	h.mustRun(table("totals", "account STRING, total DECIMAL(38, 2), n BIGINT NOT NULL", out) +
		`CREATE TABLE back (account STRING, total DECIMAL(38, 2), n BIGINT NOT NULL) WITH ('connector' = 'collect');
INSERT INTO back SELECT * FROM totals;`)
	// Flink's serializer writes -U and -D as deletes, +U as an insert.
	expect(t, "the result topic read back", h.rows("back"), []string{
		"+I[acc-1, 10.00, 1]", "+I[acc-2, 5.50, 1]", "-D[acc-1, 10.00, 1]", "+I[acc-1, 12.00, 1]",
		"-D[acc-2, 5.50, 1]", "-D[acc-1, 12.00, 1]", "+I[acc-1, 13.25, 2]"})
	if vs, err := src.SubjectVersions(ctx, out+"-value"); err != nil || len(vs) != 1 {
		t.Fatalf("subject %s-value: versions %v, %v; want the envelope registered once", out, vs, err)
	}
}
