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

// TestUpsertKafkaOptions: the upsert-kafka factories refuse what Flink
// refuses, with messages naming the table and the fix.
func TestUpsertKafkaOptions(t *testing.T) {
	const with = `'connector' = 'upsert-kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'localhost:1', 'value.format' = 'json'`
	for _, c := range []struct{ ddl, insert, want string }{
		{`CREATE TABLE u (k STRING, v BIGINT) WITH (` + with + `)`, `INSERT INTO out SELECT * FROM u`,
			`table "u": upsert-kafka needs a PRIMARY KEY`},
		{`CREATE TABLE u (k STRING, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH (` + with + `, 'scan.startup.mode' = 'latest-offset')`,
			`INSERT INTO out SELECT * FROM u`, `'scan.startup.mode' = 'latest-offset' is not supported`},
		{`CREATE TABLE u (k STRING, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH (` + with + `, 'value.fields-include' = 'SOME')`,
			`INSERT INTO out SELECT * FROM u`, `'value.fields-include' = 'SOME': want ALL or EXCEPT_KEY`},
		{`CREATE TABLE u (k STRING, PRIMARY KEY (k) NOT ENFORCED) WITH (` + with + `, 'value.fields-include' = 'EXCEPT_KEY')`,
			`INSERT INTO out (k) SELECT * FROM u`, `leaves no value column`},
		{`CREATE TABLE u (k STRING, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH (` + with + `, 'key.fields-prefix' = 'k_')`,
			`INSERT INTO out SELECT * FROM u`, `Weir does not support these options of Flink's 'upsert-kafka' connector yet: key.fields-prefix;`},
		{`CREATE TABLE u (k STRING, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'localhost:1')`,
			`INSERT INTO out SELECT * FROM u`, `set 'value.format'`},
		{`CREATE TABLE u (k STRING, v BIGINT) WITH (` + with + `)`, `INSERT INTO u SELECT * FROM out`,
			`table "u": upsert-kafka needs a PRIMARY KEY`},
	} {
		h := newHarness(t)
		s := h.session()
		script := c.ddl + ";\nCREATE TABLE out (k STRING, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'collect');\n" + c.insert + ";"
		if err := s.Execute(script); err != nil {
			t.Fatalf("%s: %v", c.ddl, err)
		}
		_, _, err := s.Job("options")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n%s\ngot %v, want an error containing %q", c.ddl, c.insert, err, c.want)
		}
	}
}

// TestUpsertKafkaExceptKeyRoundTrip writes an updating GROUP BY to
// upsert-kafka with a raw key and a value without the key column
// ('value.fields-include' = 'EXCEPT_KEY'), checks the records, and reads
// the topic back as a changelog through the upsert-kafka source.
func TestUpsertKafkaExceptKeyRoundTrip(t *testing.T) {
	brokers := testsvc.Kafka(t)
	e := &e2e{t: t, brokers: brokers}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	e.cl, e.totals = cl, fmt.Sprintf("upsert-except-key-%d", time.Now().UnixNano())
	e.adm = kadm.NewClient(cl)
	e.createTopic(e.totals, 1)

	h := newHarness(t)
	h.file("bills.csv", billsCSV)
	table := fmt.Sprintf(`CREATE TABLE totals (account_id STRING, total DECIMAL(38, 2), n BIGINT,
  PRIMARY KEY (account_id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = '%s',
  'properties.bootstrap.servers' = '%s', 'key.format' = 'raw', 'value.format' = 'json',
  'value.fields-include' = 'EXCEPT_KEY', 'scan.bounded.mode' = 'latest-offset');
`, e.totals, brokers)
	h.mustRun(billsDDL + table + `
SET 'parallelism.default' = '1';
INSERT INTO totals SELECT account_id, SUM(amount), COUNT(*) FROM bills GROUP BY account_id;`)

	var recs []string
	for _, r := range readAll(t, cl, e.totals) {
		recs = append(recs, string(r.Key)+"="+string(r.Value))
	}
	expect(t, "upsert-kafka records (raw key, value without the key)", recs, []string{
		`acc-1={"total":10.5,"n":1}`, `acc-2={"total":1.25,"n":1}`, `acc-1={"total":12.5,"n":2}`,
		`acc-2={"total":4.25,"n":2}`, `acc-1={"total":13.5,"n":3}`,
	})

	h.mustRun(table + `
SET 'parallelism.default' = '1';
CREATE TABLE changelog (account_id STRING, total DECIMAL(38, 2), n BIGINT) WITH ('connector' = 'collect');
INSERT INTO changelog SELECT * FROM totals;`)
	expect(t, "changelog read back", h.rows("changelog"), []string{
		"+I[acc-1, 10.50, 1]", "+I[acc-2, 1.25, 1]", "-U[acc-1, 10.50, 1]", "+U[acc-1, 12.50, 2]",
		"-U[acc-2, 1.25, 1]", "+U[acc-2, 4.25, 2]", "-U[acc-1, 12.50, 2]", "+U[acc-1, 13.50, 3]",
	})
}

// readAll reads every record of a one-partition topic up to its end.
func readAll(t *testing.T, cl *kgo.Client, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	rd, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(testsvc.Kafka(t), ",")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out []*kgo.Record
	for next := int64(0); next < end.Offset; {
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: at %d of %d", topic, next, end.Offset)
		}
		fs.EachRecord(func(r *kgo.Record) {
			out, next = append(out, r), r.Offset+1
		})
	}
	return out
}
