package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The driver logs every connection a restarted server closed; the soak
// restarts the server on purpose.
func init() { _ = mysql.SetLogger(log.New(io.Discard, "", 0)) }

// ErrPrerequisite marks what scripts/services.sh up installs and is missing.
var ErrPrerequisite = errors.New("soak: prerequisite missing")

// paths locates the programs scripts/services.sh up installed: the soak
// runs private instances of them and never touches the shared services.
type paths struct {
	Java, KafkaLib, MariaDBD, MariaDBInstallDB string
}

// findPaths runs `scripts/services.sh paths` from the repository root.
func findPaths(root string) (paths, error) {
	out, err := exec.Command("bash", filepath.Join(root, "scripts", "services.sh"), "paths").Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return paths{}, fmt.Errorf("%w: scripts/services.sh paths: %s", ErrPrerequisite, msg)
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	return paths{Java: kv["JAVA"], KafkaLib: kv["KAFKA_LIB"], MariaDBD: kv["MARIADBD"], MariaDBInstallDB: kv["MARIADB_INSTALL_DB"]}, nil
}

// freePort asks the kernel for a port nobody listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// proc is a service process in a process group of its own.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startProc(dir, logName string, name string, args ...string) (*proc, error) {
	logf, err := os.OpenFile(filepath.Join(dir, logName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL} // no orphan if the soak dies
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	return p, nil
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop signals the process group and waits for the exit; after grace it
// sends SIGKILL.
func (p *proc) stop(sig syscall.Signal, grace time.Duration) {
	if p == nil || !p.alive() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// waitReady polls ready until it succeeds, the process dies or timeout.
func waitReady(p *proc, what, logPath string, timeout time.Duration, ready func() bool) error {
	deadline := time.Now().Add(timeout)
	for !ready() {
		if !p.alive() {
			return fmt.Errorf("%s exited during startup (see %s)", what, logPath)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v (see %s)", what, timeout, logPath)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// kafkaBroker is a private single-node KRaft broker.
type kafkaBroker struct {
	paths            paths
	dir              string
	port, ctrlPort   int
	proc             *proc
	starts           int
	readyWithin      time.Duration
	lastStartElapsed time.Duration
}

func (k *kafkaBroker) addr() string { return fmt.Sprintf("127.0.0.1:%d", k.port) }

func newKafkaBroker(p paths, dir string) (*kafkaBroker, error) {
	k := &kafkaBroker{paths: p, dir: dir, readyWithin: 3 * time.Minute}
	var err error
	if k.port, err = freePort(); err != nil {
		return nil, err
	}
	if k.ctrlPort, err = freePort(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "server.properties"), []byte(k.config()), 0o644); err != nil {
		return nil, err
	}
	log4j := "status = warn\nappender.out.type = Console\nappender.out.name = OUT\nappender.out.layout.type = PatternLayout\n" +
		"appender.out.layout.pattern = [%d] %p %m (%c)%n\nrootLogger.level = INFO\nrootLogger.appenderRef.out.ref = OUT\n" +
		"logger.state.name = state.change.logger\nlogger.state.level = WARN\nlogger.request.name = kafka.request.logger\nlogger.request.level = WARN\n"
	if err := os.WriteFile(filepath.Join(dir, "log4j2.properties"), []byte(log4j), 0o644); err != nil {
		return nil, err
	}
	return k, k.format()
}

// config is scripts/services.sh's broker configuration on private ports,
// with small internal topics so that a bounce reloads them fast, and small
// segments: after a SIGKILL the broker recovers the whole active segment,
// which in a long soak would otherwise grow to every record written (13 s
// of recovery at cycle 350 on a loaded machine).
func (k *kafkaBroker) config() string {
	return fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[2]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=%[3]s
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=2
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=2
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.segment.bytes=1048576
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
num.network.threads=2
num.io.threads=2
`, k.port, k.ctrlPort, filepath.Join(k.dir, "data"))
}

func (k *kafkaBroker) java(args ...string) []string {
	return append([]string{"-Xms128m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.awt.headless=true", "-Dlog4j2.configurationFile=" + filepath.Join(k.dir, "log4j2.properties"),
		"-cp", filepath.Join(k.paths.KafkaLib, "*")}, args...)
}

func (k *kafkaBroker) format() error {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := base64.RawURLEncoding.EncodeToString(b)
	if id[0] == '-' {
		id = "A" + id[1:]
	}
	out, err := exec.Command(k.paths.Java, k.java("kafka.tools.StorageTool", "format", "-t", id,
		"-c", filepath.Join(k.dir, "server.properties"))...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kafka storage format in %s: %v: %s", k.dir, err, out)
	}
	return nil
}

// start launches the broker and waits until it serves metadata.
func (k *kafkaBroker) start() error {
	t0 := time.Now()
	p, err := startProc(k.dir, "kafka.log", k.paths.Java, k.java("kafka.Kafka", filepath.Join(k.dir, "server.properties"))...)
	if err != nil {
		return err
	}
	k.proc = p
	k.starts++
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr()), kgo.RetryTimeout(time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	err = waitReady(p, "private kafka", filepath.Join(k.dir, "kafka.log"), k.readyWithin, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		m, err := adm.BrokerMetadata(ctx)
		return err == nil && len(m.Brokers) == 1
	})
	k.lastStartElapsed = time.Since(t0)
	return err
}

// bounce stops the broker with sig (SIGKILL: hard, SIGTERM: clean) and
// starts it again.
func (k *kafkaBroker) bounce(sig syscall.Signal) error {
	k.proc.stop(sig, time.Minute)
	return retry(3, k.start, func(sig syscall.Signal, d time.Duration) { k.proc.stop(sig, d) })
}

// retry runs start up to n times; a failed attempt's process is killed.
func retry(n int, start func() error, kill func(syscall.Signal, time.Duration)) error {
	var err error
	for i := 0; i < n; i++ {
		if err = start(); err == nil {
			return nil
		}
		kill(syscall.SIGKILL, time.Minute)
	}
	return err
}

func (k *kafkaBroker) close() { k.proc.stop(syscall.SIGTERM, 30*time.Second) }

// mariaDB is a private MariaDB server with the weir user and database.
type mariaDB struct {
	paths  paths
	dir    string
	port   int
	proc   *proc
	starts int
}

func (m *mariaDB) sock() string { return filepath.Join(m.dir, "mysqld.sock") }

// rootDSN connects as root over the socket.
func (m *mariaDB) rootDSN() string { return "root@unix(" + m.sock() + ")/" }

// DSN is the weir user's go-sql-driver DSN.
func (m *mariaDB) DSN() string { return fmt.Sprintf("weir:weir@tcp(127.0.0.1:%d)/weir", m.port) }

func newMariaDB(p paths, dir string) (*mariaDB, error) {
	m := &mariaDB{paths: p, dir: dir}
	var err error
	if m.port, err = freePort(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out, err := exec.Command(p.MariaDBInstallDB, "--no-defaults", "--datadir="+filepath.Join(dir, "data"),
		"--user="+userName(), "--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("mariadb-install-db in %s: %v: %s", dir, err, out)
	}
	return m, nil
}

func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	out, err := exec.Command("id", "-un").Output()
	if err != nil {
		return "root"
	}
	return strings.TrimSpace(string(out))
}

func (m *mariaDB) start() error {
	_ = os.Remove(m.sock())
	p, err := startProc(m.dir, "mariadbd.out", m.paths.MariaDBD, "--no-defaults", "--datadir="+filepath.Join(m.dir, "data"),
		"--socket="+m.sock(), "--port="+strconv.Itoa(m.port), "--bind-address=127.0.0.1", "--user="+userName(),
		"--pid-file="+filepath.Join(m.dir, "mariadb.pid"), "--log-error="+filepath.Join(m.dir, "mariadb.err"),
		"--skip-name-resolve", "--max-connections=200", "--innodb-buffer-pool-size=64M",
		"--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci")
	if err != nil {
		return err
	}
	m.proc = p
	m.starts++
	db, err := sql.Open("mysql", m.rootDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	return waitReady(p, "private mariadb", filepath.Join(m.dir, "mariadb.err"), 2*time.Minute, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return db.PingContext(ctx) == nil
	})
}

// setup creates the weir user and database, as scripts/services.sh does,
// and the billing job's table.
func (m *mariaDB) setup() error {
	db, err := sql.Open("mysql", m.rootDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS weir",
		"CREATE USER IF NOT EXISTS 'weir'@'127.0.0.1' IDENTIFIED BY 'weir'",
		"CREATE USER IF NOT EXISTS 'weir'@'localhost' IDENTIFIED BY 'weir'",
		"GRANT ALL PRIVILEGES ON *.* TO 'weir'@'127.0.0.1' WITH GRANT OPTION",
		"GRANT ALL PRIVILEGES ON *.* TO 'weir'@'localhost' WITH GRANT OPTION",
		"FLUSH PRIVILEGES",
		"CREATE TABLE weir.account_totals (account_id VARCHAR(64) PRIMARY KEY, total DECIMAL(38,2) NOT NULL, bill_count BIGINT NOT NULL)",
	} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("private mariadb: %s: %w", q, err)
		}
	}
	return nil
}

// restart stops the server with sig (SIGKILL: crash recovery at start,
// SIGTERM: clean shutdown) and starts it again.
func (m *mariaDB) restart(sig syscall.Signal) error {
	m.proc.stop(sig, time.Minute)
	return retry(3, m.start, func(sig syscall.Signal, d time.Duration) { m.proc.stop(sig, d) })
}

func (m *mariaDB) close() { m.proc.stop(syscall.SIGTERM, 30*time.Second) }
