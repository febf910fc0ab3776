// Package testsvc hands integration tests the addresses of the external
// services they need: Apache Kafka, MariaDB (MySQL protocol), PostgreSQL, an
// S3-compatible object store and a schema registry with Confluent's API.
//
// The addresses come from the environment variables printed by
// scripts/services.sh:
//
//	scripts/services.sh up
//	eval "$(scripts/services.sh env)"
//	go test ./...
//
// When a variable is missing, the calling test is skipped on a developer
// machine and fails when CI=true, so CI can never silently skip integration
// tests. When a variable is set but the service does not accept TCP
// connections, the test fails.
package testsvc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kadm"
)

// Environment variables read by this package (written by scripts/services.sh env).
const (
	EnvKafkaBrokers = "WEIR_KAFKA_BROKERS"
	EnvMySQLDSN     = "WEIR_MYSQL_DSN"
	EnvPostgresDSN  = "WEIR_POSTGRES_DSN"
	// EnvPrometheus, if set, is the prometheus binary to run; else the
	// one on PATH (scripts/services.sh up installs Debian's).
	EnvPrometheus = "WEIR_PROMETHEUS"
	// EnvS3Endpoint is the S3 server's URL; EnvS3Bucket a bucket that
	// exists there; EnvS3AccessKey, EnvS3SecretKey and EnvS3Region the
	// credentials and region to sign with.
	EnvS3Endpoint  = "WEIR_S3_ENDPOINT"
	EnvS3Bucket    = "WEIR_S3_BUCKET"
	EnvS3AccessKey = "WEIR_S3_ACCESS_KEY"
	EnvS3SecretKey = "WEIR_S3_SECRET_KEY"
	EnvS3Region    = "WEIR_S3_REGION"
	// EnvSchemaRegistry is the base URL of a schema registry with
	// Confluent's REST API (Apicurio Registry's ccompat API).
	EnvSchemaRegistry = "WEIR_SCHEMA_REGISTRY_URL"
)

// DialTimeout bounds the reachability check of each service address.
const DialTimeout = 5 * time.Second

const howTo = "run `eval \"$(scripts/services.sh env)\"` after `scripts/services.sh up`"

// Kafka returns the comma-separated Kafka bootstrap brokers ("host:port,...").
func Kafka(t testing.TB) string {
	t.Helper()
	brokers := lookup(t, EnvKafkaBrokers)
	var addrs []string
	for _, b := range strings.Split(brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			addrs = append(addrs, b)
		}
	}
	if len(addrs) == 0 {
		t.Fatalf("%s=%q lists no broker; %s", EnvKafkaBrokers, brokers, howTo)
	}
	for _, a := range addrs {
		reachable(t, EnvKafkaBrokers, "Kafka", a)
	}
	return brokers
}

// MySQL returns a go-sql-driver/mysql DSN ("user:pass@tcp(host:port)/db")
// for the MariaDB test server.
func MySQL(t testing.TB) string {
	t.Helper()
	dsn := lookup(t, EnvMySQLDSN)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("%s is not a valid go-sql-driver/mysql DSN: %v", EnvMySQLDSN, err)
	}
	if cfg.Net == "tcp" || cfg.Net == "" {
		reachable(t, EnvMySQLDSN, "MariaDB", cfg.Addr)
	}
	return dsn
}

// Postgres returns a PostgreSQL connection string
// ("postgres://user:pass@host:port/db?sslmode=disable") usable with pgx.
func Postgres(t testing.TB) string {
	t.Helper()
	dsn := lookup(t, EnvPostgresDSN)
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("%s is not a valid PostgreSQL connection string: %v", EnvPostgresDSN, err)
	}
	if !strings.HasPrefix(cfg.Host, "/") { // a unix socket directory needs no dial check
		reachable(t, EnvPostgresDSN, "PostgreSQL", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	}
	return dsn
}

// PostgresLogical returns the PostgreSQL test server's connection string
// after checking that it decodes logically (wal_level = logical, which
// scripts/services.sh sets): the postgres-cdc tests need it. A server
// started by an older services.sh runs with replica until restarted: the
// test is skipped then, and fails under CI=true.
func PostgresLogical(t testing.TB) string {
	t.Helper()
	dsn := Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgresDSN, err)
	}
	defer c.Close(context.Background())
	res, err := c.Exec(ctx, "SHOW wal_level").ReadAll()
	if err != nil || len(res) != 1 || len(res[0].Rows) != 1 {
		t.Fatalf("%s: SHOW wal_level: %v", EnvPostgresDSN, err)
	}
	if level := string(res[0].Rows[0][0]); level != "logical" {
		msg := fmt.Sprintf("PostgreSQL at %s runs with wal_level = %s; the CDC tests need logical: "+
			"restart it with `scripts/services.sh down; scripts/services.sh up`", EnvPostgresDSN, level)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dsn
}

// S3Server is an S3-compatible server and a bucket on it.
type S3Server struct {
	// Endpoint is the server's URL, e.g. "http://127.0.0.1:19900".
	Endpoint string
	Bucket   string
	// AccessKey, SecretKey and Region sign requests.
	AccessKey, SecretKey, Region string
}

// S3 returns the S3-compatible test server (moto, started by
// scripts/services.sh) and its bucket.
func S3(t testing.TB) S3Server {
	t.Helper()
	s := S3Server{Endpoint: lookup(t, EnvS3Endpoint), Bucket: lookup(t, EnvS3Bucket),
		AccessKey: lookup(t, EnvS3AccessKey), SecretKey: lookup(t, EnvS3SecretKey), Region: lookup(t, EnvS3Region)}
	host, ok := strings.CutPrefix(s.Endpoint, "http://")
	if !ok {
		t.Fatalf("%s=%q: want http://host:port", EnvS3Endpoint, s.Endpoint)
	}
	reachable(t, EnvS3Endpoint, "the S3 server", strings.TrimSuffix(host, "/"))
	return s
}

// SchemaRegistry returns the base URL of the schema registry
// ("http://127.0.0.1:18081/apis/ccompat/v7"), whose global compatibility
// rule is BACKWARD (scripts/services.sh sets it, as Confluent's default).
func SchemaRegistry(t testing.TB) string {
	t.Helper()
	u := strings.TrimRight(lookup(t, EnvSchemaRegistry), "/")
	rest, ok := strings.CutPrefix(u, "http://")
	if !ok {
		t.Fatalf("%s=%q: want http://host:port/path", EnvSchemaRegistry, u)
	}
	host, _, _ := strings.Cut(rest, "/")
	reachable(t, EnvSchemaRegistry, "the schema registry", host)
	return u
}

// lookup returns the value of env, skipping (or, under CI, failing) the test
// when it is not set.
func lookup(t testing.TB, env string) string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(env))
	if v != "" {
		return v
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not set; CI requires it: %s", env, howTo)
	}
	t.Skipf("%s not set; skipping (to run it: %s)", env, howTo)
	return ""
}

// reachable fails the test when addr does not accept a TCP connection.
func reachable(t testing.TB, env, service, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, DialTimeout)
	if err != nil {
		t.Fatalf("%s is set but %s at %s is unreachable: %v; start it with `scripts/services.sh up`", env, service, addr, err)
	}
	_ = c.Close()
}

// Prometheus returns the path of a Prometheus server binary for a test to
// start its own instance of: $WEIR_PROMETHEUS, or prometheus on PATH. When
// there is none the test is skipped, or fails under CI=true.
func Prometheus(t testing.TB) string {
	t.Helper()
	if p := strings.TrimSpace(os.Getenv(EnvPrometheus)); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%q: %v", EnvPrometheus, p, err)
		}
		return p
	}
	p, err := exec.LookPath("prometheus")
	if err == nil {
		return p
	}
	const install = "install it with `scripts/services.sh up` (Debian's prometheus package) or set " + EnvPrometheus
	if os.Getenv("CI") == "true" {
		t.Fatalf("no prometheus binary on PATH; CI requires it: %s", install)
	}
	t.Skipf("no prometheus binary on PATH; skipping (to run it: %s)", install)
	return ""
}

// TopicReadyTimeout bounds how long CreateTopic waits for a new topic's
// partitions to be served.
const TopicReadyTimeout = 30 * time.Second

// CreateTopic creates topic with the given partitions (replication 1) and
// topic configurations, deletes it when the test ends, and returns once
// every partition has a leader that serves it (WaitTopicReady): a broker
// under load answers a produce right after CreateTopic with
// UNKNOWN_TOPIC_OR_PARTITION while the new partitions are still being set up.
func CreateTopic(t testing.TB, adm *kadm.Client, topic string, partitions int, configs map[string]*string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), TopicReadyTimeout)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating topic %s: %v", topic, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopic(ctx, topic)
	})
	if err := WaitTopicReady(ctx, adm, topic, partitions); err != nil {
		t.Fatalf("topic %s was created but is not ready after %v: %v", topic, TopicReadyTimeout, err)
	}
}

// WaitTopicReady polls until the metadata of topic shows its partitions
// (0 … partitions-1) each with a leader, and each leader answers a
// ListOffsets for its partition; it returns the last reason it was not
// ready when ctx ends.
func WaitTopicReady(ctx context.Context, adm *kadm.Client, topic string, partitions int) error {
	for {
		why := topicNotReady(ctx, adm, topic, partitions)
		if why == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), why)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// topicNotReady says why topic is not ready yet, or nil.
func topicNotReady(ctx context.Context, adm *kadm.Client, topic string, partitions int) error {
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return err
	}
	td, ok := tds[topic]
	switch {
	case !ok:
		return fmt.Errorf("metadata does not list the topic")
	case td.Err != nil:
		return td.Err
	case len(td.Partitions) != partitions:
		return fmt.Errorf("metadata lists %d of %d partitions", len(td.Partitions), partitions)
	}
	for p, pd := range td.Partitions {
		if pd.Err != nil {
			return fmt.Errorf("partition %d: %w", p, pd.Err)
		}
		if pd.Leader < 0 {
			return fmt.Errorf("partition %d has no leader", p)
		}
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return err
	}
	if err := ends.Error(); err != nil {
		return err
	}
	for p := range partitions {
		if _, ok := ends.Lookup(topic, int32(p)); !ok {
			return fmt.Errorf("partition %d has no end offset", p)
		}
	}
	return nil
}

// PGCapture is a PostgreSQL table captured by a postgres-cdc test: its
// connection, the table's unique name and the replication slot named after it.
type PGCapture struct {
	DB    *pgx.Conn
	DSN   string
	Table string
	Slot  string
}

// PostgresCDCTable creates a uniquely named table prefix_<n> on the
// logical-decoding PostgreSQL by running each statement of ddl with %[1]s
// standing for the table name, and names its replication slot weir_<table>.
// When the test ends it drops the slot (if no longer active), the slot's
// publication and the table.
func PostgresCDCTable(t testing.TB, prefix string, ddl ...string) *PGCapture {
	t.Helper()
	dsn := PostgresLogical(t)
	ctx := context.Background()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	table := fmt.Sprintf("%s_%d_%04x", prefix, time.Now().UnixNano()%1e9, rand.Uint32()%0xffff)
	c := &PGCapture{DB: db, DSN: dsn, Table: table, Slot: "weir_" + table}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, _ = db.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active", c.Slot)
		_, _ = db.Exec(ctx, "DROP PUBLICATION IF EXISTS "+c.Slot+"_pub")
		_, _ = db.Exec(ctx, "DROP TABLE IF EXISTS "+c.Table)
		_ = db.Close(ctx)
	})
	for _, q := range ddl {
		q = fmt.Sprintf(q, table)
		if _, err := db.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return c
}
