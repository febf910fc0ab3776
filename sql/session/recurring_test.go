package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/runtime"
)

// Failures that can only recur, with checkpointing on and the default
// restart strategy (exponential-delay): each restarted every second
// forever. Now the second failure at the same position fails the job once,
// naming the position, the error and the option that lets it continue.

// runRecurring runs script with checkpoints every 100 ms into dir and
// checks that the job failed once, after one restart, with a
// RecurringFailureError at position whose message contains each of want.
func runRecurring(t *testing.T, dir, script, position string, want ...string) {
	t.Helper()
	s := New()
	if err := s.Execute("SET 'execution.checkpointing.interval' = '100 ms';\n" +
		"SET 'execution.checkpointing.dir' = '" + filepath.Join(dir, "ck") + "';\n" + script); err != nil {
		t.Fatal(err)
	}
	// A guard against the old endless loop, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	res, err := s.Run(ctx, "recurring", nil)
	var rec *runtime.RecurringFailureError
	if !errors.As(err, &rec) || ctx.Err() != nil {
		t.Fatalf("got %v (context: %v), want a recurring failure", err, ctx.Err())
	}
	if rec.Position != position || res.Restarts != 1 || len(res.Failures) != 2 {
		t.Fatalf("recurred at %q after %d restarts (%d failures), want %q after 1: %v", rec.Position, res.Restarts,
			len(res.Failures), position, err)
	}
	msg := err.Error()
	for _, w := range append([]string{"the same failure recurred at " + position + " after a restart"}, want...) {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q\ndoes not say %q", msg, w)
		}
	}
}

func TestRecurringMalformedCSVLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bills.csv")
	if err := os.WriteFile(path, []byte("a,1\nb,2\nc,x\nd,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runRecurring(t, dir, fmt.Sprintf(`
CREATE TABLE bills (id STRING, n INT) WITH ('connector'='filesystem','path'='%s','format'='csv');
CREATE TABLE out (id STRING, n INT) WITH ('connector'='blackhole');
INSERT INTO out SELECT * FROM bills;`, path), "file "+path+" line 3",
		`(to continue past such lines set 'csv.ignore-parse-errors' = 'true' on table "bills")`)
}

func TestRecurringKafkaPoisonRecord(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("poison-%d", time.Now().UnixNano())
	cl := createTopic(t, brokers, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(`{"id":"a","n":1}`)},
		&kgo.Record{Topic: topic, Value: []byte("not json")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	runRecurring(t, t.TempDir(), fmt.Sprintf(`
CREATE TABLE bills (id STRING, n INT) WITH ('connector'='kafka','topic'='%s','properties.bootstrap.servers'='%s',
  'format'='json','scan.startup.mode'='earliest-offset');
CREATE TABLE out (id STRING, n INT) WITH ('connector'='blackhole');
INSERT INTO out SELECT * FROM bills;`, topic, brokers), "topic "+topic+" partition 0 offset 1",
		`to continue past such records set 'scan.bad-record.policy' = 'skip'`)
}

func TestRecurringOversizedSinkRecord(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("oversized-%d", time.Now().UnixNano())
	createTopic(t, brokers, topic)
	runRecurring(t, t.TempDir(), fmt.Sprintf(`
CREATE TABLE gen (s STRING) WITH ('connector'='datagen','number-of-rows'='3','fields.s.length'='3000');
CREATE TABLE out (s STRING) WITH ('connector'='kafka','topic'='%s','properties.bootstrap.servers'='%s',
  'format'='json','properties.max.request.size'='2048');
INSERT INTO out SELECT * FROM gen;`, topic, brokers), "Kafka sink topic "+topic+" (a record of about 3101 bytes)",
		`more than max.request.size 2048 (raise 'properties.max.request.size' on table "out" and the topic's max.message.bytes)`,
		`(to drop such records set 'sink.bad-record.policy' = 'skip' on table "out")`)
}

func TestRecurringMissingSinkTopic(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("missing-%d", time.Now().UnixNano())
	runRecurring(t, t.TempDir(), fmt.Sprintf(`
CREATE TABLE gen (s STRING) WITH ('connector'='datagen','number-of-rows'='3');
CREATE TABLE out (s STRING) WITH ('connector'='kafka','topic'='%s','properties.bootstrap.servers'='%s','format'='json');
INSERT INTO out SELECT * FROM gen;`, topic, brokers), "Kafka sink topic "+topic,
		fmt.Sprintf(`topic %q does not exist (create it first; the kafka sink does not create topics)`, topic))
}

func TestRecurringUnwritableCheckpointDir(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if err := os.MkdirAll(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	readOnly(t, ck)
	runRecurring(t, dir, `
CREATE TABLE gen (s STRING) WITH ('connector'='datagen','rows-per-second'='10');
CREATE TABLE out (s STRING) WITH ('connector'='blackhole');
INSERT INTO out SELECT * FROM gen;`, "checkpoint directory "+ck,
		"the checkpoint directory "+ck+" is not writable", "set the checkpoint directory ('execution.checkpointing.dir'")
}

// readOnly makes dir unwritable until the test ends: mode 0555, and for
// root, which ignores modes, the immutable attribute (chattr +i).
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	probe := filepath.Join(dir, "probe")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		return
	}
	_ = os.Remove(probe)
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot make %s unwritable for this user (root without chattr): %v %s", dir, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", dir).Run() })
}
