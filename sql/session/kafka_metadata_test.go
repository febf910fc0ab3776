package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
)

// Metadata columns of a Kafka table, as Flink's Kafka connector defines
// them, read from records whose partition, offset, timestamp and headers
// the test chose when producing them.
func TestKafkaMetadataColumnsRead(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("meta-read-%d", time.Now().UnixNano())
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	testsvc.CreateTopic(t, kadm.NewClient(cl), topic, 2, nil)
	at := func(ms int64) time.Time { return time.UnixMilli(1764633600000 + ms) } // 2025-12-02 00:00:00 UTC
	recs := []*kgo.Record{
		{Partition: 0, Value: []byte(`{"id":1}`), Timestamp: at(1), Headers: []kgo.RecordHeader{{Key: "k", Value: []byte("a")}, {Key: "k", Value: []byte("b")}}},
		{Partition: 1, Value: []byte(`{"id":2}`), Timestamp: at(250)},
		{Partition: 0, Value: []byte(`{"id":3}`), Timestamp: at(999), Headers: []kgo.RecordHeader{{Key: "x", Value: []byte("yz")}}},
	}
	for _, r := range recs {
		r.Topic = topic
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	r := newSQLScript()
	out, err := r.run(fmt.Sprintf(`
CREATE TABLE src (
  id INT,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  ts_plain TIMESTAMP(3) METADATA FROM 'timestamp' VIRTUAL,
  `+"`partition`"+` INT METADATA VIRTUAL,
  `+"`offset`"+` BIGINT METADATA VIRTUAL,
  hdrs MAP<STRING, BYTES> METADATA FROM 'headers',
  tt STRING METADATA FROM 'timestamp-type' VIRTUAL,
  `+"`topic`"+` STRING METADATA VIRTUAL,
  epoch INT METADATA FROM 'leader-epoch' VIRTUAL,
  ms AS EXTRACT(MILLISECOND FROM ts_plain),
  WATERMARK FOR ts AS ts
) WITH ('connector'='kafka','topic'='%s','properties.bootstrap.servers'='%s','format'='json',
  'scan.startup.mode'='earliest-offset','scan.bounded.mode'='latest-offset');
CREATE TABLE out (id INT, ts TIMESTAMP_LTZ(3), ts_plain TIMESTAMP(3), p INT, o BIGINT, h STRING, tt STRING, same_topic BOOLEAN, has_epoch BOOLEAN, ms BIGINT)
  WITH ('connector'='values');
INSERT INTO out SELECT id, ts, ts_plain, `+"`partition`"+`, `+"`offset`"+`,
  CAST(hdrs['k'] AS STRING) || '/' || COALESCE(CAST(hdrs['x'] AS STRING), '-'), tt, `+"`topic`"+` = '%[1]s', epoch >= 0, ms FROM src;`, topic, brokers), true)
	if err != nil {
		t.Fatal(err)
	}
	// Computed independently: partition and offset as produced (offsets
	// count per partition from 0), the timestamps as set (UTC, the
	// session's zone by default), a repeated header key its last value.
	want := `out:
[1, 2025-12-02 00:00:00.001, 2025-12-02 00:00:00.001, 0, 0, b/-, CreateTime, true, true, 1]
[2, 2025-12-02 00:00:00.250, 2025-12-02 00:00:00.250, 1, 0, NULL, CreateTime, true, true, 250]
[3, 2025-12-02 00:00:00.999, 2025-12-02 00:00:00.999, 0, 1, NULL, CreateTime, true, true, 999]
`
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

// Writable metadata: an INSERT sets each record's timestamp and headers
// from the 'timestamp' and 'headers' columns; VIRTUAL read-only columns
// are left out of the INSERT.
func TestKafkaMetadataColumnsWrite(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("meta-write-%d", time.Now().UnixNano())
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	keep := "-1" // the timestamps written are older than the default retention
	testsvc.CreateTopic(t, kadm.NewClient(cl), topic, 1, map[string]*string{"retention.ms": &keep})
	_, err = runScript(t, fmt.Sprintf(`
CREATE TABLE sink (
  id INT,
  `+"`offset`"+` BIGINT METADATA VIRTUAL,
  ts TIMESTAMP(3) METADATA FROM 'timestamp',
  headers MAP<STRING, BYTES> METADATA
) WITH ('connector'='kafka','topic'='%s','properties.bootstrap.servers'='%s','format'='json');
INSERT INTO sink SELECT id, TIMESTAMP '2025-12-02 10:00:00.125' + INTERVAL '1' SECOND * id,
  MAP['trace', CAST(CONCAT('t', CAST(id AS STRING)) AS BYTES), 'a', CAST('x' AS BYTES)]
FROM (VALUES (1), (2)) AS v(id);`, topic, brokers))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	for len(got) < 2 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var hs []string
			for _, h := range r.Headers {
				hs = append(hs, h.Key+"="+string(h.Value))
			}
			got = append(got, fmt.Sprintf("%s %s %s", r.Value, r.Timestamp.UTC().Format("2006-01-02 15:04:05.000"), strings.Join(hs, ",")))
		})
	}
	slices.Sort(got)
	// The TIMESTAMP column is read in the session zone (UTC) as the
	// record's instant; headers are written sorted by key.
	want := []string{
		`{"id":1} 2025-12-02 10:00:01.125 a=x,trace=t1`,
		`{"id":2} 2025-12-02 10:00:02.125 a=x,trace=t2`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("records of %s:\n%s\nwant\n%s", topic, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A debezium-json Kafka table reads its format's metadata as
// 'value.<key>' beside the connector's: every row of a message (an
// update's -U and +U) carries that message's.
func TestKafkaDebeziumMetadataColumns(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("meta-dbz-%d", time.Now().UnixNano())
	cl := createTopic(t, brokers, topic)
	msg := func(before, after string, op string, srcMs, tsMs int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf(
			`{"before":%s,"after":%s,"op":"%s","ts_ms":%d,"source":{"db":"shop","table":"items","ts_ms":%d,"server_id":7}}`,
			before, after, op, tsMs, srcMs))}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx,
		msg("null", `{"id":1,"qty":5}`, "c", 1764633600000, 1764633600500),
		msg(`{"id":1,"qty":5}`, `{"id":1,"qty":7}`, "u", 1764633601000, 1764633601250),
		msg("null", `{"id":2,"qty":1}`, "c", 1764633602000, 1764633602125),
	).FirstErr(); err != nil {
		t.Fatal(err)
	}
	r := newSQLScript()
	out, err := r.run(fmt.Sprintf(`
CREATE TABLE items (
  id INT, qty INT,
  op_ts TIMESTAMP_LTZ(3) METADATA FROM 'value.source.timestamp' VIRTUAL,
  ingested TIMESTAMP_LTZ(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL,
  db STRING METADATA FROM 'value.source.database' VIRTUAL,
  tbl STRING METADATA FROM 'value.source.table' VIRTUAL,
  props MAP<STRING, STRING> METADATA FROM 'value.source.properties' VIRTUAL,
  off BIGINT METADATA FROM 'offset' VIRTUAL
) WITH ('connector'='kafka','topic'='%s','properties.bootstrap.servers'='%s','format'='debezium-json',
  'scan.startup.mode'='earliest-offset','scan.bounded.mode'='latest-offset');
CREATE TABLE out (id INT, qty INT, op_ts TIMESTAMP_LTZ(3), ingested TIMESTAMP_LTZ(3), src STRING, server STRING, off BIGINT)
  WITH ('connector'='values', 'sink-insert-only'='false');
INSERT INTO out SELECT id, qty, op_ts, ingested, db || '.' || tbl, props['server_id'], off FROM items;`, topic, brokers), false)
	if err != nil {
		t.Fatal(err)
	}
	want := `out:
+I[1, 5, 2025-12-02 00:00:00.000, 2025-12-02 00:00:00.500, shop.items, 7, 0]
-U[1, 5, 2025-12-02 00:00:01.000, 2025-12-02 00:00:01.250, shop.items, 7, 1]
+U[1, 7, 2025-12-02 00:00:01.000, 2025-12-02 00:00:01.250, shop.items, 7, 1]
+I[2, 1, 2025-12-02 00:00:02.000, 2025-12-02 00:00:02.125, shop.items, 7, 2]
`
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

// upsert-kafka has the kafka connector's metadata, as in Flink: an INSERT
// writes each record's 'timestamp' and 'headers', and a read gives every
// row its record's metadata — a -U or -D row the metadata of the record
// it replaces (Flink's ChangelogNormalize keeps whole rows).
func TestUpsertKafkaMetadataColumns(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("h2-upsert-meta-%d", time.Now().UnixNano())
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	keep := "-1" // the timestamps written are older than the default retention
	testsvc.CreateTopic(t, kadm.NewClient(cl), topic, 1, map[string]*string{"retention.ms": &keep})
	table := fmt.Sprintf(`CREATE TABLE u (
  id INT, v STRING,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  hdrs MAP<STRING, BYTES> METADATA FROM 'headers',
  off BIGINT METADATA FROM 'offset' VIRTUAL,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector'='upsert-kafka','topic'='%s','properties.bootstrap.servers'='%s',
  'key.format'='json','value.format'='json','scan.bounded.mode'='latest-offset');
`, topic, brokers)
	if _, err := runScript(t, table+`SET 'parallelism.default' = '1';
INSERT INTO u SELECT id, v, TO_TIMESTAMP_LTZ(1764633600000 + id * 1000 + n, 3), MAP['h', CAST(v AS BYTES)]
FROM (VALUES (1, 'a', 0), (2, 'b', 0), (1, 'c', 5)) AS x(id, v, n);`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tomb := &kgo.Record{Topic: topic, Key: []byte(`{"id":2}`), Timestamp: time.UnixMilli(1764633609000)}
	if err := cl.ProduceSync(ctx, tomb).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var recs []string
	for _, r := range readAll(t, cl, topic) {
		var hs []string
		for _, h := range r.Headers {
			hs = append(hs, h.Key+"="+string(h.Value))
		}
		recs = append(recs, fmt.Sprintf("%s=%s %d %s", r.Key, r.Value, r.Timestamp.UnixMilli(), strings.Join(hs, ",")))
	}
	expect(t, "records written", recs, []string{
		`{"id":1}={"id":1,"v":"a"} 1764633601000 h=a`, `{"id":2}={"id":2,"v":"b"} 1764633602000 h=b`,
		`{"id":1}={"id":1,"v":"c"} 1764633601005 h=c`, `{"id":2}= 1764633609000 `,
	})
	out, err := newSQLScript().run(table+`SET 'parallelism.default' = '1';
CREATE TABLE out (id INT, v STRING, ts TIMESTAMP_LTZ(3), h STRING, off BIGINT) WITH ('connector'='values', 'sink-insert-only'='false');
INSERT INTO out SELECT id, v, ts, CAST(hdrs['h'] AS STRING), off FROM u;`, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `out:
+I[1, a, 2025-12-02 00:00:01.000, a, 0]
+I[2, b, 2025-12-02 00:00:02.000, b, 1]
-U[1, a, 2025-12-02 00:00:01.000, a, 0]
+U[1, c, 2025-12-02 00:00:01.005, c, 2]
-D[2, b, 2025-12-02 00:00:02.000, b, 1]
`
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}
