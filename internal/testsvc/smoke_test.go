package testsvc_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
)

// unique returns a name unique to this test run, usable as a topic, table,
// XA xid or PostgreSQL gid.
func unique(prefix string) string {
	return fmt.Sprintf("%s_%d_%08x", prefix, time.Now().UnixNano(), rand.Uint32())
}

// TestKafkaTransactions checks that the broker supports transactions: records
// of a committed transaction are visible to a read_committed consumer, those
// of an aborted one are not.
func TestKafkaTransactions(t *testing.T) {
	brokers := strings.Split(testsvc.Kafka(t), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	admCl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admCl.Close) // after the topic deletion below (cleanups run last-in first-out)
	adm := kadm.NewClient(admCl)
	topic := unique("weir-smoke")
	resp, err := adm.CreateTopic(ctx, 1, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer dcancel()
		if _, err := adm.DeleteTopics(dctx, topic); err != nil {
			t.Logf("delete topic %s: %v", topic, err)
		}
	})

	producer, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.TransactionalID(unique("weir-smoke-txn")),
		kgo.DefaultProduceTopic(topic),
		kgo.TransactionTimeout(30*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()

	txn := func(values []string, commit kgo.TransactionEndTry) {
		t.Helper()
		if err := producer.BeginTransaction(); err != nil {
			t.Fatalf("begin transaction: %v", err)
		}
		recs := make([]*kgo.Record, len(values))
		for i, v := range values {
			recs[i] = &kgo.Record{Value: []byte(v), Partition: 0}
		}
		pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
		defer pcancel()
		if err := producer.ProduceSync(pctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce %v: %v", values, err)
		}
		if err := producer.EndTransaction(pctx, commit); err != nil {
			t.Fatalf("end transaction (commit=%v): %v", commit, err)
		}
	}
	committed1 := []string{"c1-a", "c1-b", "c1-c"}
	aborted := []string{"ab-a", "ab-b"}
	committed2 := []string{"c2-a"} // after the aborted batch: proves the consumer skips it
	txn(committed1, kgo.TryCommit)
	txn(aborted, kgo.TryAbort)
	txn(committed2, kgo.TryCommit)
	want := slices.Concat(committed1, committed2)

	consumer, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var got []string
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	for len(got) < len(want) {
		fetches := consumer.PollFetches(cctx)
		if cctx.Err() != nil {
			t.Fatalf("consumed %q, want %q: %v", got, want, cctx.Err())
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			t.Fatalf("fetch %s/%d: %v", topic, partition, err)
		})
		fetches.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	// Nothing else may follow: poll briefly for stray records.
	sctx, scancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer scancel()
	consumer.PollFetches(sctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed consumer got %q, want %q", got, want)
	}
}

// TestMySQLXARecover checks MariaDB XA: a prepared XA transaction survives
// the disconnect of its session, is listed by XA RECOVER, is invisible until
// XA COMMIT and then visible.
func TestMySQLXARecover(t *testing.T) {
	dsn := testsvc.MySQL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // after the table drop below
	table := unique("weir_smoke")
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id INT PRIMARY KEY, v VARCHAR(64)) ENGINE=InnoDB"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	xid := unique("weir-xa")
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		_, _ = db.ExecContext(cctx, "XA ROLLBACK '"+xid+"'") // only matters when the test failed midway
		if _, err := db.ExecContext(cctx, "DROP TABLE IF EXISTS "+table); err != nil {
			t.Logf("drop table %s: %v", table, err)
		}
	})

	// The XA branch runs on its own pool so that closing the pool ends the session.
	xadb, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := xadb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var connID int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&connID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"XA START '" + xid + "'",
		"INSERT INTO " + table + " (id, v) VALUES (1, 'prepared')",
		"XA END '" + xid + "'",
		"XA PREPARE '" + xid + "'",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_ = conn.Close()
	if err := xadb.Close(); err != nil {
		t.Fatalf("close XA session: %v", err)
	}

	count := func() int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("count rows: %v", err)
		}
		return n
	}
	if !slices.Contains(xaRecover(ctx, t, db), xid) {
		t.Fatalf("XA RECOVER does not list %s after its session closed", xid)
	}
	if n := count(); n != 0 {
		t.Fatalf("prepared row visible before XA COMMIT: %d rows", n)
	}

	// The server tears the closed session down after the client has gone;
	// until it has, the session still owns the prepared branch, and MariaDB
	// has answered an XA COMMIT racing that teardown with OK while the row
	// never appeared and the table stayed locked. Commit only once the
	// session is gone from the process list.
	waitSessionGone(ctx, t, db, connID)
	if _, err := db.ExecContext(ctx, "XA COMMIT '"+xid+"'"); err != nil {
		t.Fatalf("XA COMMIT %s: %v", xid, err)
	}
	if n := count(); n != 1 {
		t.Fatalf("after XA COMMIT: %d rows, want 1", n)
	}
	if slices.Contains(xaRecover(ctx, t, db), xid) {
		t.Fatalf("XA RECOVER still lists %s after XA COMMIT", xid)
	}
}

// waitSessionGone waits, at most 30 s, until the server no longer lists
// connection id in information_schema.processlist.
func waitSessionGone(ctx context.Context, t *testing.T, db *sql.DB, id int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.processlist WHERE id = ?", id).Scan(&n)
		if err != nil {
			t.Fatalf("reading the process list: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still lists connection %d, closed 30 s ago, in information_schema.processlist: "+
				"it has not processed the disconnect, so the prepared branch cannot be committed from another session yet", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func xaRecover(ctx context.Context, t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, "XA RECOVER")
	if err != nil {
		t.Fatalf("XA RECOVER: %v", err)
	}
	defer rows.Close()
	var xids []string
	for rows.Next() {
		var formatID, gtridLen, bqualLen int64
		var data []byte
		if err := rows.Scan(&formatID, &gtridLen, &bqualLen, &data); err != nil {
			t.Fatalf("scan XA RECOVER: %v", err)
		}
		xids = append(xids, string(data[:gtridLen]))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("XA RECOVER rows: %v", err)
	}
	return xids
}

// TestPostgresPreparedTransaction checks PostgreSQL two-phase commit: a
// prepared transaction survives its session, shows in pg_prepared_xacts, is
// invisible until COMMIT PREPARED and then visible.
func TestPostgresPreparedTransaction(t *testing.T) {
	dsn := testsvc.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	table := unique("weir_smoke")
	if _, err := conn.Exec(ctx, "CREATE TABLE "+table+" (id int PRIMARY KEY, v text)"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	gid := unique("weir-gid")
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		c, err := pgx.Connect(cctx, dsn)
		if err != nil {
			t.Logf("cleanup connect: %v", err)
			return
		}
		defer c.Close(cctx)
		var n int
		if err := c.QueryRow(cctx, "SELECT count(*) FROM pg_prepared_xacts WHERE gid = $1", gid).Scan(&n); err == nil && n > 0 {
			_, _ = c.Exec(cctx, "ROLLBACK PREPARED '"+gid+"'")
		}
		if _, err := c.Exec(cctx, "DROP TABLE IF EXISTS "+table); err != nil {
			t.Logf("drop table %s: %v", table, err)
		}
	})

	txConn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"BEGIN",
		"INSERT INTO " + table + " (id, v) VALUES (1, 'prepared')",
		"PREPARE TRANSACTION '" + gid + "'",
	} {
		if _, err := txConn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := txConn.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}

	prepared := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_xacts WHERE gid = $1", gid).Scan(&n); err != nil {
			t.Fatalf("query pg_prepared_xacts: %v", err)
		}
		return n
	}
	count := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("count rows: %v", err)
		}
		return n
	}
	if n := prepared(); n != 1 {
		t.Fatalf("pg_prepared_xacts lists %s %d times, want 1", gid, n)
	}
	if n := count(); n != 0 {
		t.Fatalf("prepared row visible before COMMIT PREPARED: %d rows", n)
	}
	if _, err := conn.Exec(ctx, "COMMIT PREPARED '"+gid+"'"); err != nil {
		t.Fatalf("COMMIT PREPARED: %v", err)
	}
	if n := count(); n != 1 {
		t.Fatalf("after COMMIT PREPARED: %d rows, want 1", n)
	}
	if n := prepared(); n != 0 {
		t.Fatalf("pg_prepared_xacts still lists %s after COMMIT PREPARED", gid)
	}
}

// TestCreateTopicIsReady checks CreateTopic's readiness wait: every
// partition of the new topic accepts a produce at once (a client that
// never retries an unknown partition), and WaitTopicReady on a topic that
// does not exist ends with its context, saying why.
func TestCreateTopicIsReady(t *testing.T) {
	brokers := strings.Split(testsvc.Kafka(t), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.UnknownTopicRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	topic := unique("weir-ready")
	testsvc.CreateTopic(t, adm, topic, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for p := range int32(3) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("producing to %s-%d right after CreateTopic: %v", topic, p, err)
		}
	}

	missing := unique("weir-missing")
	short, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	err = testsvc.WaitTopicReady(short, adm, missing, 1)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last:") {
		t.Fatalf("WaitTopicReady(%s) = %v; want the deadline and the last reason", missing, err)
	}
}
