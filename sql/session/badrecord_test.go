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
		`'scan.bad-record.dead-letter-topic', on table "bills" (for json, 'json.ignore-parse-errors' = 'true' skips too))`
	if err == nil || !strings.Contains(err.Error(), "kafka source: bad record at topic "+topic+" partition 0 offset 0: ") ||
		!strings.HasSuffix(err.Error(), want) {
		t.Fatalf("got %v\nwant a bad record error ending with %s", err, want)
	}
}
