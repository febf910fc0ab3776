package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/weirstream/weir/internal/testsvc"
)

// TestAvroConfluentKafka runs 'format' = 'avro-confluent' from SQL through
// the real Kafka and the real schema registry (Apicurio's Confluent API,
// BACKWARD): a job writes bills (registering version 1 of '<topic>-value'),
// a second job with a column added with a default in 'avro-confluent.schema'
// writes more (version 2), and readers of either version read every
// message: the new reader sees the default in the old messages, the old
// reader skips the new field. A third schema that retypes a column is
// refused with the subject and its version named; a message that is not in
// the wire format fails the reading job with its topic, partition and
// offset, and 'scan.bad-record.policy' = 'skip' reads past it.
func TestAvroConfluentKafka(t *testing.T) {
	brokers, registry := testsvc.Kafka(t), testsvc.SchemaRegistry(t)
	topic := fmt.Sprintf("avro-confluent-%d", time.Now().UnixNano())
	cl := createTopic(t, brokers, topic)
	subject := topic + "-value"
	src, err := sr.NewClient(sr.URLs(registry))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range src.SetCompatibility(context.Background(), sr.SetCompatibility{Level: sr.CompatBackward}, subject) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	table := func(name, columns, extra string) string {
		return fmt.Sprintf(`CREATE TABLE %s (%s) WITH ('connector' = 'kafka', 'topic' = '%s',
  'properties.bootstrap.servers' = '%s', 'format' = 'avro-confluent', 'avro-confluent.url' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'%s);
`, name, columns, topic, brokers, registry, extra)
	}
	const v1 = `id STRING NOT NULL, amount DECIMAL(10, 2), ts TIMESTAMP(3)`
	const v2 = v1 + `, currency STRING NOT NULL`
	v2Schema := `, 'avro-confluent.schema' = '{"type":"record","name":"org.apache.flink.avro.generated.record","fields":[` +
		`{"name":"id","type":"string"},` +
		`{"name":"amount","type":["null",{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}],"default":null},` +
		`{"name":"ts","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},` +
		`{"name":"currency","type":"string","default":"EUR"}]}'`

	newHarness(t).mustRun(table("bills", v1, "") +
		`INSERT INTO bills VALUES ('b-1', 12.50, TIMESTAMP '2026-12-02 07:00:00.250'), ('b-2', CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS TIMESTAMP(3)));`)
	newHarness(t).mustRun(table("bills", v2, v2Schema) + `INSERT INTO bills VALUES ('b-3', 0.05, TIMESTAMP '2026-12-02 07:00:01', 'USD');`)
	if vs, err := src.SubjectVersions(context.Background(), subject); err != nil || len(vs) != 2 {
		t.Fatalf("versions of %s: %v, %v; want 2", subject, vs, err)
	}

	read := func(columns, extra string) ([]string, error) {
		h := newHarness(t)
		_, err := h.run(table("bills", columns, extra) + `CREATE TABLE out (` + columns + `) WITH ('connector' = 'collect-append');
INSERT INTO out SELECT * FROM bills;`)
		if err != nil {
			return nil, err
		}
		return sorted(h.rows("out")), nil
	}
	got, err := read(v2, v2Schema)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "version 2's reader", got, []string{"+I[b-1, 12.50, 2026-12-02 07:00:00.250, EUR]", "+I[b-2, NULL, NULL, EUR]",
		"+I[b-3, 0.05, 2026-12-02 07:00:01.000, USD]"})
	got, err = read(v1, "")
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "version 1's reader", got, []string{"+I[b-1, 12.50, 2026-12-02 07:00:00.250]", "+I[b-2, NULL, NULL]",
		"+I[b-3, 0.05, 2026-12-02 07:00:01.000]"})

	// The refusal is no record's fault: 'sink.bad-record.policy' = 'skip'
	// must not drop every row instead.
	_, err = newHarness(t).run(table("bills", `id STRING NOT NULL, amount BIGINT`, `, 'sink.bad-record.policy' = 'skip'`) +
		`INSERT INTO bills VALUES ('b-4', 1);`)
	want := fmt.Sprintf(`avro-confluent: the schema registry at %s refuses the table's schema for subject %q: `+
		`it is not compatible with version 2 (the latest) under the subject's compatibility rule: `, registry, subject)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("incompatible schema: got %v\nwant an error containing %s", err, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(`{"id":"b-5"}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	_, err = read(v1, "")
	want = fmt.Sprintf(`kafka source: bad record at topic %s partition 0 offset 3: avro-confluent: the message starts with byte 0x7b, `+
		`not the magic byte 0 of the Confluent wire format`, topic)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("bad message: got %v\nwant an error containing %s", err, want)
	}
	got, err = read(v1, `, 'scan.bad-record.policy' = 'skip'`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("skipping the bad message: got %v", got)
	}

	// A registry that cannot be reached is no message's fault either: the
	// job fails under 'skip' rather than skip every message.
	h := newHarness(t)
	_, err = h.run(strings.Replace(table("bills", v1, `, 'scan.bad-record.policy' = 'skip'`), registry, "http://127.0.0.1:1", 1) +
		`CREATE TABLE out (` + v1 + `) WITH ('connector' = 'collect-append');
INSERT INTO out SELECT * FROM bills;`)
	want = fmt.Sprintf(`kafka source: reading topic %s partition 0 offset 0: avro-confluent: schema registry at http://127.0.0.1:1 `+
		`('avro-confluent.url'): fetching schema id `, topic)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("unreachable registry: got %v (rows %v)\nwant an error containing %s", err, h.rows("out"), want)
	}
}

// TestAvroConfluentOptions: the format's options in the table's terms.
func TestAvroConfluentOptions(t *testing.T) {
	const kafka = `'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'localhost:1', 'format' = 'avro-confluent'`
	for _, c := range []struct{ ddl, want string }{
		{`CREATE TABLE s (a INT) WITH (` + kafka + `)`, `format avro-confluent needs 'avro-confluent.url'`},
		{`CREATE TABLE s (a INT) WITH (` + kafka + `, 'avro-confluent.url' = 'http://localhost:1', 'avro-confluent.ssl.keystore.location' = '/k')`,
			`Weir does not support these options of Flink's 'kafka' connector yet: avro-confluent.ssl.keystore.location`},
		{`CREATE TABLE s (a INT) WITH (` + kafka + `, 'avro-confluent.url' = 'http://localhost:1', 'avro-confluent.subjct' = 'x')`,
			`'avro-confluent.subject' instead of 'avro-confluent.subjct'`},
		{`CREATE TABLE s (a INT) WITH ('connector' = 'filesystem', 'path' = '/tmp', 'format' = 'avro-confluent')`,
			`'avro-confluent' is a format of messages (a schema id, then a record), not of files`},
		{`CREATE TABLE s (a INT) WITH ('connector' = 'filesystem', 'path' = '/tmp', 'format' = 'debezium-avro-confluent')`,
			`'debezium-avro-confluent' is a format of messages (a schema id, then a record), not of files`},
		{`CREATE TABLE s (a INT) WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'localhost:1', ` +
			`'format' = 'debezium-avro-confluent', 'avro-confluent.url' = 'http://localhost:1')`,
			`Unsupported options found for 'kafka'. Unsupported options: avro-confluent.url. Supported options: connector, debezium-avro-confluent.basic-auth.credentials-source`},
	} {
		s := newHarness(t).session()
		if err := s.Execute(c.ddl + ";\nCREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\nINSERT INTO o SELECT * FROM s;"); err != nil {
			t.Fatalf("%s: %v", c.ddl, err)
		}
		if _, _, err := s.Job("avro"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\ngot %v, want an error containing %q", c.ddl, err, c.want)
		}
	}
}
