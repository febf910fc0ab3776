package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
)

// A bad Kafka record in a SQL job: the error's advice names the table's
// WITH options, not the Go API.
func TestKafkaBadRecordAdviceInSQL(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("bad-record-%d", time.Now().UnixNano())
	cl := createTopic(t, brokers, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("not json")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	_, err := runScript(t, fmt.Sprintf(`
CREATE TABLE bills (account_id STRING, amount DECIMAL(18,2)) WITH ('connector'='kafka','topic'='%s',
  'properties.bootstrap.servers'='%s','format'='json','scan.startup.mode'='earliest-offset','scan.bounded.mode'='latest-offset');
CREATE TABLE out (account_id STRING, amount DECIMAL(18,2)) WITH ('connector'='blackhole');
INSERT INTO out SELECT * FROM bills;`, topic, brokers))
	const want = `(to continue past such records set 'scan.bad-record.policy' = 'skip', or 'dead-letter' with ` +
		`'scan.bad-record.dead-letter-topic', on table "bills" ('json.ignore-parse-errors' = 'true' skips too))`
	if err == nil || !strings.Contains(err.Error(), "kafka source: bad record at topic "+topic+" partition 0 offset 0: ") ||
		!strings.HasSuffix(err.Error(), want) {
		t.Fatalf("got %v\nwant a bad record error ending with %s", err, want)
	}
}

// A row larger than 'properties.max.request.size' in a SQL job: the error
// names the table's options ('properties.max.request.size',
// 'sink.bad-record.policy'), not the Go API; with the policy 'skip' the row
// is dropped and the others written.
func TestKafkaSinkTooLargeAdviceInSQL(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("too-large-%d", time.Now().UnixNano())
	createTopic(t, brokers, topic)
	script := func(policy string) string {
		return fmt.Sprintf(`
CREATE TABLE out (id INT, s STRING) WITH ('connector'='kafka','topic'='%s','properties.bootstrap.servers'='%s',
  'format'='json','properties.max.request.size'='2000'%s);
INSERT INTO out SELECT id, REPEAT('x', n) FROM (VALUES (1, 10), (2, 3000), (3, 10)) AS v(id, n);`, topic, brokers, policy)
	}
	_, err := runScript(t, script(""))
	const want = `(raise 'properties.max.request.size' on table "out" and the topic's max.message.bytes) ` +
		`(to drop such records set 'sink.bad-record.policy' = 'skip' on table "out")`
	if err == nil || !strings.Contains(err.Error(), "more than max.request.size 2000 ") || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("got %v\nwant a too-large error ending with %s", err, want)
	}
	if _, err := runScript(t, script(",'sink.bad-record.policy'='skip'")); err != nil {
		t.Fatalf("'sink.bad-record.policy' = 'skip': %v", err)
	}
}

// A SQL kafka sink into a topic that does not exist names the topic.
func TestKafkaSinkMissingTopicInSQL(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("no-such-topic-%d", time.Now().UnixNano())
	_, err := runScript(t, fmt.Sprintf(`
CREATE TABLE out (id INT) WITH ('connector'='kafka','topic'='%s','properties.bootstrap.servers'='%s','format'='json');
INSERT INTO out VALUES (1);`, topic, brokers))
	if want := fmt.Sprintf("topic %q does not exist", topic); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error saying %s", err, want)
	}
}
