package rest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // MariaDB
	"github.com/shopspring/decimal"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/internal/billgen"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/rest/api"
)

// The REST contract on the billing job (examples/billing/billing.sql) on
// the real Kafka and MariaDB, submitted next to a running SQL aggregation:
// every endpoint's JSON checked against its plan, the bills its source
// read, its checkpoint directory; and the totals it wrote equal the
// ground truth.
func TestContractBillingJob(t *testing.T) {
	recordContractTest(t) // before the services: a skip here leaves the route check out
	brokers, dsn := testsvc.Kafka(t), testsvc.MySQL(t)
	suffix := fmt.Sprint(time.Now().UnixNano())
	topic, dlq, table := "rest-bills-"+suffix, "rest-bills-dlq-"+suffix, "rest_totals_"+suffix
	events, _ := billgen.Generate(billgen.GenOptions{Bills: 3000, Accounts: 50, DupRate: 0.05, DupDelay: 500,
		Spread: time.Second, Seed: 14})
	recs := produceBills(t, brokers, topic, dlq, events)
	db := openTable(t, dsn, table)
	ck := t.TempDir()
	script := billingScript(t, billingNames{brokers: brokers, dsn: dsn, checkpoints: ck, topic: topic, dlq: dlq, table: table})

	c := newCluster(t)
	agg := c.submit(endlessJob, map[string]string{"pipeline.name": "endless"})
	id := c.submit(script, map[string]string{"execution.checkpointing.interval": "200 ms"})
	waitFor(t, "the billing job to finish", func() bool { return c.state(id) == api.StateFinished })
	if st := c.state(agg); st != api.StateRunning {
		t.Errorf("the other job is %s, want RUNNING", st)
	}
	jg := planOf(t, script, "billing")
	checkContract(t, c, id, jg, contractWant{name: "billing", sourceRecords: int64(len(events)), ckDir: filepath.Join(ck, id),
		minCompleted: 1})
	checkKafkaSource(t, c, id, jg, topic, recs)
	checkTotals(t, db, table, billgen.Truth(events))
}

// billingNames are what billingScript puts into examples/billing/billing.sql.
type billingNames struct {
	brokers, dsn, checkpoints, topic, dlq, table string
	// unbounded drops the source's bounded mode: the job runs on after
	// reading the topic.
	unbounded bool
}

// billingScript is the billing job's script with its services, topics
// and table named by n.
func billingScript(t *testing.T, n billingNames) string {
	src, err := os.ReadFile("../examples/billing/billing.sql")
	if err != nil {
		t.Fatal(err)
	}
	script := os.Expand(string(src), func(k string) string {
		return map[string]string{"WEIR_KAFKA_BROKERS": n.brokers, "WEIR_BILLING_CHECKPOINTS": n.checkpoints,
			"WEIR_BILLING_JDBC_URL": "jdbc:mysql://" + hostOf(n.dsn) + "/weir"}[k]
	})
	repl := []string{"'topic' = 'bills'", "'topic' = '" + n.topic + "'", "'bills-dlq'", "'" + n.dlq + "'",
		// sink.name keys the sink's XA ids and bookkeeping rows with the
		// job's name (billing in every test): unique like the table.
		"'table-name' = 'account_totals'", "'table-name' = '" + n.table + "', 'sink.name' = '" + n.table + "'"}
	if n.unbounded {
		repl = append(repl, "'scan.bounded.mode' = 'latest-offset',", "")
	}
	script = strings.NewReplacer(repl...).Replace(script)
	if n.unbounded && strings.Contains(script, "scan.bounded") {
		t.Fatal("the billing script is still bounded")
	}
	return script
}

// produceBills writes the bills to topic (2 partitions) and returns the
// records as written (with partition and offset).
func produceBills(t *testing.T, brokers, topic, dlq string, events []billgen.Bill) []*kgo.Record {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	testsvc.CreateTopic(t, adm, topic, 2, nil)
	testsvc.CreateTopic(t, adm, dlq, 1, nil)
	var recs []*kgo.Record
	for _, b := range events {
		v, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Key: []byte(b.AccountID), Value: v})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// checkKafkaSource: the Kafka source vertex's read-bytes are the bytes of
// the records produced (keys and values), and its metrics show, per
// partition, the offset it read up to — the partition's record count —
// and no lag left, as the vertex metrics endpoint names them
// (<subtask>.<operator>.KafkaSourceReader.topic.<t>.partition.<p>.…).
func checkKafkaSource(t *testing.T, c *cluster, id string, jg *graph.JobGraph, topic string, recs []*kgo.Record) {
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+id, &d)
	var bytes int64
	perPartition := map[int32]int64{}
	for _, r := range recs {
		bytes += int64(len(r.Key) + len(r.Value))
		perPartition[r.Partition]++
	}
	j, err := c.m.Job(id)
	if err != nil {
		t.Fatal(err)
	}
	for i, gv := range jg.Vertices {
		if !gv.IsSource() {
			continue
		}
		v := d.Vertices[i]
		if v.Metrics.ReadBytes != bytes {
			t.Errorf("source %s read-bytes %d, want the %d bytes produced", v.Name, v.Metrics.ReadBytes, bytes)
		}
		op := subtaskGroup(t, j, v.Name, 0).Operators[0].Name
		values := map[string]string{}
		var list []api.Metric
		get(t, c, "/v1/jobs/"+id+"/vertices/"+v.ID+"/metrics", &list)
		var ids []string
		for _, m := range list {
			if strings.Contains(m.ID, ".KafkaSourceReader.topic.") {
				ids = append(ids, m.ID)
			}
		}
		var got []api.Metric
		get(t, c, "/v1/jobs/"+id+"/vertices/"+v.ID+"/metrics?get="+url.QueryEscape(strings.Join(ids, ",")), &got)
		for _, m := range got {
			values[m.ID] = m.Value
		}
		for p, n := range perPartition {
			found := false
			for k := range v.Parallelism {
				prefix := fmt.Sprintf("%d.%s.KafkaSourceReader.topic.%s.partition.%d.", k, op, topic, p)
				if off, ok := values[prefix+"currentOffset"]; ok {
					found = true
					if off != fmt.Sprint(n) || values[prefix+"records-lag"] != "0" {
						t.Errorf("%s: currentOffset %s, records-lag %s; want %d and 0", prefix, off, values[prefix+"records-lag"], n)
					}
				}
			}
			if !found {
				t.Errorf("no subtask of %s shows partition %d of %s: %v", v.Name, p, topic, ids)
			}
		}
	}
}

// hostOf cuts host:port out of a go-sql-driver DSN (user:pw@tcp(host:port)/db).
func hostOf(dsn string) string {
	_, rest, _ := strings.Cut(dsn, "tcp(")
	host, _, _ := strings.Cut(rest, ")")
	return host
}

func checkTotals(t *testing.T, db *sql.DB, table string, want map[string]billgen.Total) {
	rows, err := db.Query("SELECT account_id, total, bill_count FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, total string
		var count int64
		if err := rows.Scan(&id, &total, &count); err != nil {
			t.Fatal(err)
		}
		n++
		w, ok := want[id]
		got, _ := decimal.NewFromString(total)
		if !ok || !got.Equal(w.Total) || count != w.Count {
			t.Errorf("%s: %s/%d, want %s/%d", id, total, count, w.Total, w.Count)
		}
	}
	if n != len(want) {
		t.Errorf("%s has %d accounts, want %d", table, n, len(want))
	}
}
