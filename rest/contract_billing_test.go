package rest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // MariaDB
	"github.com/shopspring/decimal"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/examples/billing/pipeline"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/rest/api"
)

// The REST contract on the billing job (examples/billing/billing.sql) on
// the real Kafka and MariaDB, submitted next to a running SQL aggregation:
// every endpoint's JSON checked against its plan, the bills its source
// read, its checkpoint directory; and the totals it wrote equal the
// ground truth.
func TestContractBillingJob(t *testing.T) {
	brokers, dsn := testsvc.Kafka(t), testsvc.MySQL(t)
	suffix := fmt.Sprint(time.Now().UnixNano())
	topic, dlq, table := "rest-bills-"+suffix, "rest-bills-dlq-"+suffix, "rest_totals_"+suffix
	events, _ := pipeline.Generate(pipeline.GenOptions{Bills: 3000, Accounts: 50, DupRate: 0.05, DupDelay: 500,
		Spread: time.Second, Seed: 14})
	produceBills(t, brokers, topic, dlq, events)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE " + table + " (account_id VARCHAR(64) PRIMARY KEY, total DECIMAL(38,2) NOT NULL, bill_count BIGINT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + table) })

	src, err := os.ReadFile("../examples/billing/billing.sql")
	if err != nil {
		t.Fatal(err)
	}
	ck := t.TempDir()
	script := os.Expand(string(src), func(k string) string {
		return map[string]string{"WEIR_KAFKA_BROKERS": brokers, "WEIR_BILLING_CHECKPOINTS": ck,
			"WEIR_BILLING_JDBC_URL": "jdbc:mysql://" + hostOf(dsn) + "/weir"}[k]
	})
	script = strings.NewReplacer("'topic' = 'bills'", "'topic' = '"+topic+"'", "'bills-dlq'", "'"+dlq+"'",
		"'table-name' = 'account_totals'", "'table-name' = '"+table+"'").Replace(script)

	c := newCluster(t)
	agg := c.submit(endlessJob, map[string]string{"pipeline.name": "endless"})
	id := c.submit(script, map[string]string{"execution.checkpointing.interval": "200 ms"})
	waitFor(t, "the billing job to finish", func() bool { return c.state(id) == api.StateFinished })
	if st := c.state(agg); st != api.StateRunning {
		t.Errorf("the other job is %s, want RUNNING", st)
	}
	checkContract(t, c, id, planOf(t, script, "billing"), contractWant{name: "billing", sourceRecords: int64(len(events)),
		ckDir: filepath.Join(ck, id)})
	checkTotals(t, db, table, pipeline.Truth(events))
}

func produceBills(t *testing.T, brokers, topic, dlq string, events []pipeline.Bill) {
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
}

// hostOf cuts host:port out of a go-sql-driver DSN (user:pw@tcp(host:port)/db).
func hostOf(dsn string) string {
	_, rest, _ := strings.Cut(dsn, "tcp(")
	host, _, _ := strings.Cut(rest, ")")
	return host
}

func checkTotals(t *testing.T, db *sql.DB, table string, want map[string]pipeline.Total) {
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
