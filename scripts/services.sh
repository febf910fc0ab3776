#!/usr/bin/env bash
# services.sh - run the external services Weir's integration tests need
# (Apache Kafka in KRaft mode, MariaDB, PostgreSQL, an S3-compatible object
# store: moto's server mode, a schema registry with Confluent's API: Apicurio
# Registry) on loopback, without systemd and without Docker.
#
#   scripts/services.sh up       start whatever is not running (idempotent)
#   scripts/services.sh up postgres mariadb   start only those
#   scripts/services.sh down     stop all of them and wait for them to exit
#   scripts/services.sh status   print up/down per service; exit 0 iff all up
#   scripts/services.sh env      print export lines for the tests:
#                                  eval "$(scripts/services.sh env)"
#   scripts/services.sh paths    print KEY=VALUE lines locating what `up` installed
#                                (java, the Kafka jars, mariadbd, mariadb-install-db),
#                                for programs that run private instances of their own
#                                (bench/soak); fails when something is missing
#
# State (configs, data, logs, pid files) lives under WEIR_SERVICES_DIR
# (default ~/.cache/weir/services); downloads (Kafka jars) are cached under
# ${XDG_CACHE_HOME:-~/.cache}/weir (moto in a Python venv there, from PyPI).
# Missing Debian packages (mariadb-server, postgresql, a JRE, maven, python3-venv,
# prometheus — whose server the metrics tests start themselves, never as a
# system service — chromium, the headless browser of the dashboard test, and
# tmux, the SQL client test's terminal) are installed with apt-get when
# running as root.
#
# Environment knobs:
#   WEIR_SERVICES_DIR            data dir
#   WEIR_KAFKA_VERSION           Kafka version from Maven Central (default 4.1.2)
#   WEIR_KAFKA_PORT              broker port (default 19092)
#   WEIR_KAFKA_CONTROLLER_PORT   KRaft controller port (default 19093)
#   WEIR_MYSQL_PORT              MariaDB port (default 13306)
#   WEIR_POSTGRES_PORT           PostgreSQL port (default 15432)
#   WEIR_S3_PORT                 S3 (moto) port (default 19900); bucket "weir"
#   WEIR_MOTO_VERSION            moto version from PyPI (default 5.2.5)
#   WEIR_REGISTRY_PORT           schema registry port (default 18081)
#   WEIR_APICURIO_VERSION        Apicurio Registry version from Maven Central (default 3.0.9)
#   WEIR_SERVICES_TIMEOUT        readiness timeout per service, seconds (default 120)
set -euo pipefail

HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
DATA_DIR="${WEIR_SERVICES_DIR:-$HOME/.cache/weir/services}"
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/weir"
HOST=127.0.0.1
TIMEOUT="${WEIR_SERVICES_TIMEOUT:-120}"

KAFKA_VERSION="${WEIR_KAFKA_VERSION:-4.1.2}"
KAFKA_PORT="${WEIR_KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${WEIR_KAFKA_CONTROLLER_PORT:-19093}"
LOG4J_VERSION=2.24.3
MYSQL_PORT="${WEIR_MYSQL_PORT:-13306}"
POSTGRES_PORT="${WEIR_POSTGRES_PORT:-15432}"
S3_PORT="${WEIR_S3_PORT:-19900}"
S3_BUCKET=weir
MOTO_VERSION="${WEIR_MOTO_VERSION:-5.2.5}"
REGISTRY_PORT="${WEIR_REGISTRY_PORT:-18081}"
APICURIO_VERSION="${WEIR_APICURIO_VERSION:-3.0.9}"

KAFKA_DIR="$DATA_DIR/kafka"
KAFKA_LIB="$CACHE_DIR/kafka-$KAFKA_VERSION/lib"
MARIADB_DIR="$DATA_DIR/mariadb"
PG_DIR="$DATA_DIR/postgres"
S3_DIR="$DATA_DIR/s3"
MOTO_VENV="$CACHE_DIR/moto-$MOTO_VERSION"
REGISTRY_DIR="$DATA_DIR/registry"
APICURIO_HOME="$CACHE_DIR/apicurio-registry-$APICURIO_VERSION"

log() { printf '[services] %s\n' "$*" >&2; }
die() {
	printf '[services] ERROR: %s\n' "$*" >&2
	exit 1
}

# ---------------------------------------------------------------- helpers

# port_open PORT: true when something accepts TCP connections on HOST:PORT.
port_open() {
	timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null
}

# pid_alive PID PATTERN: true when PID runs and its command line contains PATTERN
# (guards against a stale pid file whose pid was reused by another process).
pid_alive() {
	local pid="$1" pattern="$2"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	[[ -r /proc/$pid/cmdline ]] || return 0
	local cmd
	cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
	[[ "$cmd" == *"$pattern"* ]] && return 0
	# Mid-exec (setsid exec'ing a server) the command line reads empty for
	# a moment; only a zombie's stays empty. CI once read "exited during
	# startup" from that window, with an empty server log.
	[[ -z "$cmd" ]] && { pid_running "$pid"; return; }
	# A child this script forked that has not exec'd yet still shows this
	# script's own command line; right after `cmd &` it is starting, not dead.
	[[ "$cmd" == "$(tr '\0' ' ' <"/proc/$$/cmdline")" ]]
}

# pid_running: the process exists, is not a zombie (state Z or X) and is
# not a kernel thread (kthreadd, pid 2, or its child), whose command line is
# empty too: a stale pid file's pid may have been reused by one.
pid_running() {
	local stat fields
	stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
	read -r -a fields <<<"${stat##*) }"
	[[ "${fields[0]}" != [ZX] && "$1" != 2 && "${fields[1]}" != 2 ]]
}

read_pid() {
	if [[ -s "$1" ]]; then
		head -n1 "$1" | tr -dc '0-9'
	fi
	return 0
}

# wait_exit PID SECONDS: wait for PID to go away; SIGKILL it after SECONDS.
wait_exit() {
	local pid="$1" secs="$2" i
	for ((i = 0; i < secs * 5; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.2
	done
	log "pid $pid did not exit within ${secs}s; sending SIGKILL"
	kill -9 "$pid" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.2
	done
	die "pid $pid survived SIGKILL"
}

tail_log() {
	local f
	for f in "$@"; do
		[[ -f "$f" ]] || continue
		printf -- '----- last lines of %s -----\n' "$f" >&2
		tail -n 60 "$f" >&2 || true
		printf -- '-----\n' >&2
	done
}

APT_UPDATED=0
# apt_install PKG...: install Debian packages without starting their services.
apt_install() {
	[[ $(id -u) -eq 0 ]] || die "need the Debian packages '$*' but not running as root; install them first"
	command -v apt-get >/dev/null || die "need the packages '$*' and apt-get is missing"
	local policy=/usr/sbin/policy-rc.d created=0
	if [[ ! -e $policy ]]; then
		# Keep the packages' maintainer scripts from starting system-wide
		# daemons (e.g. a MariaDB on 3306); we run our own instances.
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		created=1
	fi
	local rc=0
	if [[ $APT_UPDATED -eq 0 ]]; then
		log "apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null >&2 || rc=$?
		APT_UPDATED=1
	fi
	if [[ $rc -eq 0 ]]; then
		log "apt-get install $*"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@" </dev/null >&2 || rc=$?
	fi
	[[ $created -eq 1 ]] && rm -f "$policy"
	[[ $rc -eq 0 ]] || die "apt-get install $* failed (exit $rc)"
}

# wait_until SECONDS DESCRIPTION CHECK_FN ALIVE_FN LOGS...: poll CHECK_FN until it
# succeeds; fail early when ALIVE_FN says the process died; print logs on failure.
wait_until() {
	local secs="$1" what="$2" check="$3" alive="$4"
	shift 4
	local deadline=$((SECONDS + secs))
	while ! "$check"; do
		if ! "$alive"; then
			tail_log "$@"
			die "$what exited during startup"
		fi
		if ((SECONDS >= deadline)); then
			tail_log "$@"
			die "$what not ready after ${secs}s"
		fi
		sleep 0.5
	done
}

# ---------------------------------------------------------------- Kafka

kafka_pid() { read_pid "$KAFKA_DIR/kafka.pid"; }
kafka_alive() { pid_alive "$(kafka_pid)" "$KAFKA_DIR/server.properties"; }
kafka_up() { kafka_alive && port_open "$KAFKA_PORT"; }

kafka_java() {
	if ! command -v java >/dev/null; then
		apt_install openjdk-17-jre-headless
	fi
	command -v java
}

# kafka_fetch: put kafka_2.13 and its runtime dependencies into $KAFKA_LIB
# using Maven; skipped entirely when the jars are already there.
kafka_fetch() {
	if [[ -f "$KAFKA_LIB/.complete" ]]; then
		return 0
	fi
	command -v mvn >/dev/null || apt_install maven
	local dir="$CACHE_DIR/kafka-$KAFKA_VERSION"
	mkdir -p "$dir"
	cat >"$dir/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by weir scripts/services.sh: resolves the Kafka broker jars. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.weir.services</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>3.8.1</version>
      </plugin>
    </plugins>
  </build>
</project>
EOF
	log "resolving Kafka $KAFKA_VERSION jars with Maven (first run only)"
	rm -rf "$KAFKA_LIB.tmp"
	if ! mvn -q -B -f "$dir/pom.xml" dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$KAFKA_LIB.tmp" </dev/null >"$dir/mvn.log" 2>&1; then
		tail_log "$dir/mvn.log"
		die "maven could not resolve org.apache.kafka:kafka_2.13:$KAFKA_VERSION"
	fi
	ls "$KAFKA_LIB.tmp"/kafka_2.13-*.jar >/dev/null 2>&1 || die "maven produced no kafka_2.13 jar in $KAFKA_LIB.tmp"
	rm -rf "$KAFKA_LIB"
	mv "$KAFKA_LIB.tmp" "$KAFKA_LIB"
	touch "$KAFKA_LIB/.complete"
}

kafka_config() {
	mkdir -p "$KAFKA_DIR/data"
	cat >"$KAFKA_DIR/server.properties" <<EOF
# Generated by weir scripts/services.sh; rewritten on every start.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_DIR/data
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
delete.topic.enable=true
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
EOF
	cat >"$KAFKA_DIR/log4j2.properties" <<'EOF'
# Generated by weir scripts/services.sh: everything to stdout (the log file).
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.state.name = state.change.logger
logger.state.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
}

# kafka_cluster_id: a random Kafka cluster id (base64url of 16 bytes, 22 chars).
kafka_cluster_id() {
	local id
	while :; do
		id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
		[[ ${#id} -eq 22 && "$id" != -* ]] && break
	done
	echo "$id"
}

# kafka_launch: start the broker in the background (kafka_wait waits for it),
# so the JVM boots while the databases start.
kafka_launch() {
	if kafka_up; then
		log "kafka: already up on $HOST:$KAFKA_PORT"
		return 0
	fi
	if kafka_alive; then
		log "kafka: process $(kafka_pid) running but port $KAFKA_PORT closed; waiting for it"
		return 0
	fi
	port_open "$KAFKA_PORT" && die "kafka: port $KAFKA_PORT is taken by another process (set WEIR_KAFKA_PORT)"
	port_open "$KAFKA_CONTROLLER_PORT" &&
		die "kafka: controller port $KAFKA_CONTROLLER_PORT is taken by another process (set WEIR_KAFKA_CONTROLLER_PORT)"
	kafka_fetch
	kafka_config
	local java
	java="$(kafka_java)"
	if [[ ! -f "$KAFKA_DIR/data/meta.properties" ]]; then
		local cid
		cid="$(kafka_cluster_id)"
		log "kafka: formatting storage (cluster id $cid)"
		"$java" -Xmx256m -cp "$KAFKA_LIB/*" -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" \
			kafka.tools.StorageTool format -t "$cid" -c "$KAFKA_DIR/server.properties" \
			>"$KAFKA_DIR/format.log" 2>&1 </dev/null ||
			{ tail_log "$KAFKA_DIR/format.log"; die "kafka: storage format failed"; }
	fi
	[[ -f "$KAFKA_DIR/kafka.log" ]] && mv -f "$KAFKA_DIR/kafka.log" "$KAFKA_DIR/kafka.log.1"
	log "kafka: starting $KAFKA_VERSION on $HOST:$KAFKA_PORT"
	(
		cd "$KAFKA_DIR"
		# setsid: a session of its own, so killing the caller's process group
		# (a finished shell job, a CI step) does not take the broker with it.
		setsid nohup "$java" -Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
			-Djava.awt.headless=true -Dkafka.logs.dir="$KAFKA_DIR" \
			-Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" \
			-cp "$KAFKA_LIB/*" kafka.Kafka "$KAFKA_DIR/server.properties" \
			>"$KAFKA_DIR/kafka.log" 2>&1 </dev/null &
		echo $! >"$KAFKA_DIR/kafka.pid"
	)
}

kafka_ready() { port_open "$KAFKA_PORT" && grep -q 'Kafka Server started' "$KAFKA_DIR/kafka.log" 2>/dev/null; }

kafka_wait() {
	kafka_alive || die "kafka: not running (see $KAFKA_DIR/kafka.log)"
	# The "Kafka Server started" line is written once the broker has caught up
	# with the metadata log and opened its listeners.
	wait_until "$TIMEOUT" kafka kafka_ready kafka_alive "$KAFKA_DIR/kafka.log"
	log "kafka: up on $HOST:$KAFKA_PORT (pid $(kafka_pid))"
}

kafka_stop() {
	local pid
	pid="$(kafka_pid)"
	if pid_alive "$pid" "$KAFKA_DIR/server.properties"; then
		log "kafka: stopping pid $pid"
		kill -TERM "$pid" 2>/dev/null || true
		wait_exit "$pid" 60
	fi
	rm -f "$KAFKA_DIR/kafka.pid"
}

# ---------------------------------------------------------------- MariaDB

mariadb_bin() { # mariadb_bin NAME FALLBACK: path of a MariaDB program
	local n
	for n in "$@"; do
		if command -v "$n" >/dev/null; then
			command -v "$n"
			return 0
		fi
		[[ -x /usr/sbin/$n ]] && { echo "/usr/sbin/$n"; return 0; }
	done
	return 1
}

mariadb_ensure_installed() {
	if ! mariadb_bin mariadbd mysqld >/dev/null || ! mariadb_bin mariadb mysql >/dev/null ||
		! mariadb_bin mariadb-install-db mysql_install_db >/dev/null; then
		apt_install mariadb-server mariadb-client
	fi
	mariadb_bin mariadbd mysqld >/dev/null || die "mariadb: server binary not found after install"
}

mariadb_pid() { read_pid "$MARIADB_DIR/mariadb.pid"; }
mariadb_alive() { pid_alive "$(mariadb_pid)" "$MARIADB_DIR/data"; }
mariadb_up() { mariadb_alive && port_open "$MYSQL_PORT"; }
mariadb_client() {
	"$(mariadb_bin mariadb mysql)" --no-defaults -uroot --socket="$MARIADB_DIR/mysqld.sock" "$@"
}
mariadb_ping() {
	"$(mariadb_bin mariadb-admin mysqladmin)" --no-defaults -uroot --socket="$MARIADB_DIR/mysqld.sock" \
		--connect-timeout=2 ping >/dev/null 2>&1 && port_open "$MYSQL_PORT"
}

mariadb_start() {
	if mariadb_up; then
		log "mariadb: already up on $HOST:$MYSQL_PORT"
		mariadb_check_binlog
		return 0
	fi
	mariadb_ensure_installed
	if ! mariadb_alive; then
		port_open "$MYSQL_PORT" && die "mariadb: port $MYSQL_PORT is taken by another process (set WEIR_MYSQL_PORT)"
		mkdir -p "$MARIADB_DIR"
		if [[ ! -d "$MARIADB_DIR/data/mysql" ]]; then
			log "mariadb: initializing $MARIADB_DIR/data"
			rm -rf "$MARIADB_DIR/data"
			"$(mariadb_bin mariadb-install-db mysql_install_db)" --no-defaults --datadir="$MARIADB_DIR/data" \
				--user="$(id -un)" --auth-root-authentication-method=normal --skip-test-db \
				>"$MARIADB_DIR/install-db.log" 2>&1 ||
				{ tail_log "$MARIADB_DIR/install-db.log"; die "mariadb: mariadb-install-db failed"; }
		fi
		rm -f "$MARIADB_DIR/mariadb.pid" "$MARIADB_DIR/mysqld.sock"
		[[ -f "$MARIADB_DIR/mariadb.err" ]] && mv -f "$MARIADB_DIR/mariadb.err" "$MARIADB_DIR/mariadb.err.1"
		log "mariadb: starting on $HOST:$MYSQL_PORT"
		local mariadbd
		mariadbd="$(mariadb_bin mariadbd mysqld)"
		(
			cd "$MARIADB_DIR"
			setsid nohup "$mariadbd" --no-defaults --datadir="$MARIADB_DIR/data" \
				--socket="$MARIADB_DIR/mysqld.sock" --port="$MYSQL_PORT" --bind-address="$HOST" \
				--user="$(id -un)" --pid-file="$MARIADB_DIR/mariadb.pid" --log-error="$MARIADB_DIR/mariadb.err" \
				--skip-name-resolve --max-connections=200 --innodb-buffer-pool-size=128M \
				--character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
				--log-bin=mysql-bin --binlog-format=ROW --binlog-row-image=FULL --server-id=1 \
				--binlog-expire-logs-seconds=86400 \
				>"$MARIADB_DIR/mariadbd.out" 2>&1 </dev/null &
			echo $! >"$MARIADB_DIR/mariadb.pid"
		)
	fi
	wait_until "$TIMEOUT" mariadb mariadb_ping mariadb_alive "$MARIADB_DIR/mariadb.err" "$MARIADB_DIR/mariadbd.out"
	mariadb_client --batch >"$MARIADB_DIR/setup.log" 2>&1 <<'EOF' || { tail_log "$MARIADB_DIR/setup.log"; die "mariadb: creating database/user weir failed"; }
CREATE DATABASE IF NOT EXISTS weir;
CREATE USER IF NOT EXISTS 'weir'@'127.0.0.1' IDENTIFIED BY 'weir';
CREATE USER IF NOT EXISTS 'weir'@'localhost' IDENTIFIED BY 'weir';
CREATE USER IF NOT EXISTS 'weir'@'%' IDENTIFIED BY 'weir';
GRANT ALL PRIVILEGES ON *.* TO 'weir'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO 'weir'@'localhost' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO 'weir'@'%' WITH GRANT OPTION;
FLUSH PRIVILEGES;
EOF
	log "mariadb: up on $HOST:$MYSQL_PORT (pid $(mariadb_pid))"
}

# mariadb_check_binlog: a server started by an older services.sh runs without
# the row binlog the mysql-cdc tests read; it gets it at its next start (the
# flags are passed on every start, so an existing data dir gets them too).
mariadb_check_binlog() {
	local v
	v="$(mariadb_client --batch --skip-column-names -e "SELECT @@log_bin, @@binlog_format" 2>/dev/null || true)"
	[[ "$v" == $'1\tROW' ]] ||
		log "mariadb: WARNING: running without log_bin/binlog_format=ROW ($v); the CDC tests need them: restart it (scripts/services.sh down; scripts/services.sh up)"
}

mariadb_stop() {
	local pid
	pid="$(mariadb_pid)"
	if pid_alive "$pid" "$MARIADB_DIR/data"; then
		log "mariadb: stopping pid $pid"
		kill -TERM "$pid" 2>/dev/null || true
		wait_exit "$pid" 60
	fi
	rm -f "$MARIADB_DIR/mariadb.pid"
}

# ---------------------------------------------------------------- PostgreSQL

pg_bindir() {
	local d
	d="$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n1)"
	[[ -n "$d" && -x "$d/postgres" ]] && echo "$d"
}

pg_ensure_installed() {
	pg_bindir >/dev/null || apt_install postgresql
	pg_bindir >/dev/null || die "postgres: no server found under /usr/lib/postgresql/*/bin after install"
}

# PostgreSQL refuses to run as root: use the Debian package's postgres user,
# or a dedicated system user.
pg_user() {
	if [[ $(id -u) -ne 0 ]]; then
		id -un
	elif id postgres >/dev/null 2>&1; then
		echo postgres
	else
		id weir-pg >/dev/null 2>&1 ||
			useradd --system --no-create-home --home-dir "$PG_DIR" --shell /usr/sbin/nologin weir-pg ||
			die "postgres: could not create system user weir-pg"
		echo weir-pg
	fi
}

pg_as() { # pg_as USER CMD...: run CMD as USER (PostgreSQL won't run as root)
	local u="$1"
	shift
	if [[ "$u" == "$(id -un)" ]]; then
		"$@"
	else
		runuser -u "$u" -- "$@"
	fi
}

# pg_make_traversable USER: the server user must be able to reach $PG_DIR;
# when an ancestor (typically /root, mode 700) blocks it, grant search (x)
# permission only - via an ACL when setfacl exists, else o+x.
pg_make_traversable() {
	local u="$1" d="" part
	pg_as "$u" test -x "$PG_DIR" && return 0
	local -a parts
	IFS=/ read -r -a parts <<<"${PG_DIR#/}"
	for part in "${parts[@]}"; do # walk the ancestors top-down
		d="$d/$part"
		pg_as "$u" test -x "$d" && continue
		[[ "$d" == "$PG_DIR" ]] && break
		if command -v setfacl >/dev/null; then
			log "postgres: granting user $u search access (ACL u:$u:x) to $d"
			setfacl -m "u:$u:x" "$d"
		else
			log "postgres: granting search permission (o+x, not read) on $d so user $u can reach $PG_DIR"
			chmod o+x "$d"
		fi
	done
	pg_as "$u" test -x "$PG_DIR" || die "postgres: user $u cannot reach $PG_DIR"
}

pg_pid() { read_pid "$PG_DIR/data/postmaster.pid"; }
pg_alive() { pid_alive "$(pg_pid)" "$PG_DIR/data"; }
pg_up() { pg_alive && port_open "$POSTGRES_PORT"; }

pg_start() {
	if pg_up; then
		log "postgres: already up on $HOST:$POSTGRES_PORT"
		pg_check_logical
		return 0
	fi
	pg_ensure_installed
	local bin u
	bin="$(pg_bindir)"
	u="$(pg_user)"
	mkdir -p "$PG_DIR"
	chown "$u:" "$PG_DIR"
	chmod 700 "$PG_DIR"
	pg_make_traversable "$u"
	if ! pg_alive; then
		port_open "$POSTGRES_PORT" && die "postgres: port $POSTGRES_PORT is taken by another process (set WEIR_POSTGRES_PORT)"
		if [[ ! -f "$PG_DIR/data/PG_VERSION" ]]; then
			log "postgres: initdb $PG_DIR/data ($bin)"
			rm -rf "$PG_DIR/data"
			pg_as "$u" "$bin/initdb" -D "$PG_DIR/data" -U postgres -E UTF8 --locale=C.UTF-8 \
				--auth-local=trust --auth-host=scram-sha-256 >"$PG_DIR/initdb.log" 2>&1 ||
				{ tail_log "$PG_DIR/initdb.log"; die "postgres: initdb failed"; }
		fi
		# A postmaster.pid left by a killed server whose pid now belongs to
		# another process would make the postmaster refuse to start.
		rm -f "$PG_DIR/data/postmaster.pid"
		pg_as "$u" mkdir -p "$PG_DIR/run"
		log "postgres: starting on $HOST:$POSTGRES_PORT"
		pg_as "$u" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t "$TIMEOUT" \
			-o "-c port=$POSTGRES_PORT -c listen_addresses=$HOST -c unix_socket_directories=$PG_DIR/run -c max_prepared_transactions=64 -c max_connections=200 -c wal_level=logical -c max_replication_slots=64 -c max_wal_senders=64 -c max_slot_wal_keep_size=1024" \
			start >"$PG_DIR/pg_ctl.log" 2>&1 </dev/null ||
			{ tail_log "$PG_DIR/pg_ctl.log" "$PG_DIR/postgres.log"; die "postgres: pg_ctl start failed"; }
	fi
	pg_ready() { "$bin/pg_isready" -q -h "$HOST" -p "$POSTGRES_PORT" -t 2; }
	wait_until "$TIMEOUT" postgres pg_ready pg_alive "$PG_DIR/postgres.log"
	pg_as "$u" "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR/run" -p "$POSTGRES_PORT" -U postgres -d postgres \
		>"$PG_DIR/setup.log" 2>&1 <<'EOF' || { tail_log "$PG_DIR/setup.log"; die "postgres: creating role/database weir failed"; }
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'weir') THEN
    CREATE ROLE weir LOGIN SUPERUSER REPLICATION PASSWORD 'weir';
  ELSE
    ALTER ROLE weir LOGIN SUPERUSER REPLICATION PASSWORD 'weir';
  END IF;
END
$$;
SELECT 'CREATE DATABASE weir OWNER weir' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'weir')\gexec
EOF
	log "postgres: up on $HOST:$POSTGRES_PORT (pid $(pg_pid))"
}

# pg_check_logical: a server started by an older services.sh runs with
# wal_level=replica; it gets logical at its next start (the settings are
# passed on every start, so an existing data dir gets them too).
pg_check_logical() {
	local v
	v="$(pg_as "$(pg_user)" "$(pg_bindir)/psql" -X -At -h "$PG_DIR/run" -p "$POSTGRES_PORT" -U postgres -d postgres \
		-c 'SHOW wal_level' 2>/dev/null || true)"
	[[ "$v" == logical ]] ||
		log "postgres: WARNING: running with wal_level=$v; the CDC tests need logical: restart it (scripts/services.sh down; scripts/services.sh up)"
}

pg_stop() {
	local pid bin
	pid="$(pg_pid)"
	pid_alive "$pid" "$PG_DIR/data" || return 0
	log "postgres: stopping pid $pid"
	bin="$(pg_bindir || true)"
	if [[ -n "$bin" ]]; then
		pg_as "$(pg_user)" "$bin/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
	else
		kill -INT "$pid" 2>/dev/null || true
	fi
	wait_exit "$pid" 30
}

# ---------------------------------------------------------------- S3 (moto)

# moto's server mode (Apache-2.0, from PyPI) speaks the S3 REST API,
# conditional writes (If-None-Match: *) included. It keeps objects in
# memory: a restart starts empty, and s3_start creates the bucket again.
s3_pid() { read_pid "$S3_DIR/moto.pid"; }
s3_alive() { pid_alive "$(s3_pid)" "moto_server"; }
s3_up() { s3_alive && port_open "$S3_PORT"; }

# s3_install: a venv with moto[server] under $MOTO_VENV, once.
s3_install() {
	[[ -f "$MOTO_VENV/.complete" ]] && return 0
	if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
		apt_install python3 python3-venv
	fi
	log "s3: installing moto[server]==$MOTO_VERSION into $MOTO_VENV (first run only)"
	rm -rf "$MOTO_VENV"
	python3 -m venv "$MOTO_VENV" >&2 || die "s3: python3 -m venv $MOTO_VENV failed"
	"$MOTO_VENV/bin/pip" install -q --disable-pip-version-check "moto[server]==$MOTO_VERSION" </dev/null >&2 ||
		die "s3: pip install moto[server]==$MOTO_VERSION failed"
	touch "$MOTO_VENV/.complete"
}

# s3_serialized_server prints moto's server with one request handled at a
# time. moto 5.2.5 lists a bucket by iterating its keys while other
# threads delete them: concurrent tests (checkpoint GC in one package, a
# listing in another) got HTTP 500 "KeyError" from ListObjectsV2. Requests
# are short on loopback; connections are still served by threads.
s3_serialized_server() {
	cat <<'EOF'
import sys
import threading

import moto.server as server

_one_at_a_time = threading.Lock()


class SerializedApplication(server.DomainDispatcherApplication):
    def __call__(self, environ, start_response):
        with _one_at_a_time:
            return list(super().__call__(environ, start_response))


server.DomainDispatcherApplication = SerializedApplication
sys.exit(server.main())
EOF
}

s3_start() {
	if ! s3_alive; then
		port_open "$S3_PORT" && die "s3: port $S3_PORT is taken by another process (set WEIR_S3_PORT)"
		s3_install
		mkdir -p "$S3_DIR"
		log "s3: starting moto on $HOST:$S3_PORT"
		# In a subshell, as kafka and mariadb: no job control there, so the
		# child is never a process-group leader and setsid execs in place
		# (it forks otherwise, and $! would be a setsid that has exited).
		s3_serialized_server >"$S3_DIR/moto_server_serialized.py"
		(
			setsid "$MOTO_VENV/bin/python" "$S3_DIR/moto_server_serialized.py" -H "$HOST" -p "$S3_PORT" \
				>"$S3_DIR/moto.log" 2>&1 </dev/null &
			echo $! >"$S3_DIR/moto.pid"
		)
	fi
	s3_ready() { port_open "$S3_PORT"; }
	wait_until "$TIMEOUT" s3 s3_ready s3_alive "$S3_DIR/moto.log"
	# Create the bucket (a no-op when it exists); moto does not check signatures.
	"$MOTO_VENV/bin/python" - "http://$HOST:$S3_PORT/$S3_BUCKET" <<'EOF' || die "s3: creating bucket $S3_BUCKET failed"
import sys, urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="PUT"), timeout=30).read()
EOF
	log "s3: up on $HOST:$S3_PORT, bucket $S3_BUCKET (pid $(s3_pid))"
}

s3_stop() {
	local pid
	pid="$(s3_pid)"
	pid_alive "$pid" "moto_server" || return 0
	log "s3: stopping pid $pid"
	kill -TERM "$pid" 2>/dev/null || true
	wait_exit "$pid" 30
}

# ---------------------------------------------------------------- schema registry

# Apicurio Registry (Apache-2.0) serves Confluent's schema registry API
# under /apis/ccompat/v7. Maven Central has its runnable distribution (the
# Quarkus runner jar and its lib/) as io.apicurio:apicurio-registry-app:
# <version>:tar.gz:all. It keeps schemas in an in-memory H2 database: a
# restart starts empty. registry_start sets the global compatibility rule to
# BACKWARD, Confluent's default (Apicurio has none by default).
registry_pid() { read_pid "$REGISTRY_DIR/registry.pid"; }
registry_alive() { pid_alive "$(registry_pid)" "apicurio-registry-app"; }
registry_url() { echo "http://$HOST:$REGISTRY_PORT/apis/ccompat/v7"; }
registry_ready() { curl -fsS -o /dev/null "$(registry_url)/subjects" 2>/dev/null; }
registry_up() { registry_alive && registry_ready; }

# registry_fetch: unpack the distribution into $APICURIO_HOME, once.
registry_fetch() {
	[[ -f "$APICURIO_HOME/.complete" ]] && return 0
	command -v mvn >/dev/null || apt_install maven
	command -v curl >/dev/null || apt_install curl
	local art="io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all"
	log "registry: fetching $art with Maven (first run only)"
	mkdir -p "$APICURIO_HOME.tmp"
	if ! mvn -q -B dependency:copy -Dartifact="$art" -DoutputDirectory="$APICURIO_HOME.tmp" \
		</dev/null >"$APICURIO_HOME.tmp/mvn.log" 2>&1; then
		tail_log "$APICURIO_HOME.tmp/mvn.log"
		die "maven could not fetch $art"
	fi
	tar -xzf "$APICURIO_HOME.tmp"/apicurio-registry-app-*-all.tar.gz -C "$APICURIO_HOME.tmp" ||
		die "registry: unpacking the Apicurio distribution failed"
	rm -f "$APICURIO_HOME.tmp"/apicurio-registry-app-*-all.tar.gz
	ls "$APICURIO_HOME.tmp"/apicurio-registry-app-*-runner.jar >/dev/null 2>&1 ||
		die "registry: no runner jar in the Apicurio distribution"
	rm -rf "$APICURIO_HOME"
	mv "$APICURIO_HOME.tmp" "$APICURIO_HOME"
	touch "$APICURIO_HOME/.complete"
}

registry_start() {
	if ! registry_alive; then
		port_open "$REGISTRY_PORT" && die "registry: port $REGISTRY_PORT is taken by another process (set WEIR_REGISTRY_PORT)"
		registry_fetch
		mkdir -p "$REGISTRY_DIR"
		local java jar
		java="$(kafka_java)"
		jar="$(ls "$APICURIO_HOME"/apicurio-registry-app-*-runner.jar | head -n1)"
		log "registry: starting Apicurio Registry $APICURIO_VERSION on $HOST:$REGISTRY_PORT"
		(
			cd "$REGISTRY_DIR"
			setsid "$java" -Xms64m -Xmx384m -Dquarkus.http.host="$HOST" -Dquarkus.http.port="$REGISTRY_PORT" \
				-Dquarkus.log.level=WARN -Dquarkus.http.access-log.enabled=false -jar "$jar" >"$REGISTRY_DIR/registry.log" 2>&1 </dev/null &
			echo $! >"$REGISTRY_DIR/registry.pid"
		)
	fi
	# Quarkus boots in 20-60 s on a busy 2-core machine: twice the usual wait.
	wait_until $((TIMEOUT * 2)) registry registry_ready registry_alive "$REGISTRY_DIR/registry.log"
	curl -fsS -o /dev/null -X PUT -H 'Content-Type: application/vnd.schemaregistry.v1+json' \
		-d '{"compatibility":"BACKWARD"}' "$(registry_url)/config" ||
		die "registry: setting the global compatibility to BACKWARD failed"
	log "registry: up at $(registry_url) (pid $(registry_pid))"
}

registry_stop() {
	local pid
	pid="$(registry_pid)"
	pid_alive "$pid" "apicurio-registry-app" || return 0
	log "registry: stopping pid $pid"
	kill -TERM "$pid" 2>/dev/null || true
	wait_exit "$pid" 30
}

# ---------------------------------------------------------------- commands

# prometheus_ensure_installed: the Prometheus server the metrics acceptance test
# runs as its own process (a private config and port); never started here.
prometheus_ensure_installed() {
	command -v prometheus >/dev/null || apt_install prometheus
	command -v prometheus >/dev/null || die "prometheus: binary not found after install"
}

# chromium_ensure_installed: the headless browser the dashboard acceptance test
# (cmd/weir TestDashboardStopWithSavepoint, through chromedp) starts itself.
chromium_ensure_installed() {
	command -v chromium >/dev/null || apt_install chromium
	command -v chromium >/dev/null || die "chromium: binary not found after install"
}

# tmux_ensure_installed: the terminal the SQL client's end-to-end test types
# into (cmd/weir TestSQLClientInTerminal: send-keys, capture-pane).
tmux_ensure_installed() {
	command -v tmux >/dev/null || apt_install tmux
	command -v tmux >/dev/null || die "tmux: binary not found after install"
}

# cmd_up [SERVICE...]: start the named services (kafka, mariadb, postgres, s3, registry),
# or all of them. Naming some lets a test run private instances on other ports
# (WEIR_SERVICES_DIR and WEIR_*_PORT) beside the shared ones.
cmd_up() {
	mkdir -p "$DATA_DIR" "$CACHE_DIR"
	local t0=$SECONDS svc
	if [[ $# -gt 0 ]]; then
		for svc in "$@"; do
			case "$svc" in
			kafka) kafka_launch && kafka_up || kafka_wait ;;
			mariadb) mariadb_start ;;
			postgres) pg_start ;;
			s3) s3_start ;;
			registry) registry_start ;;
			*) die "unknown service '$svc' (want kafka, mariadb, postgres, s3 or registry)" ;;
			esac
		done
		log "$* up (${DATA_DIR}) in $((SECONDS - t0))s"
		return 0
	fi
	prometheus_ensure_installed
	chromium_ensure_installed
	tmux_ensure_installed
	local kafka_was_up=0
	kafka_up && kafka_was_up=1
	kafka_launch
	mariadb_start
	pg_start
	s3_start
	registry_start
	if [[ $kafka_was_up -eq 0 ]]; then
		kafka_wait
	fi
	log "all services up (${DATA_DIR}) in $((SECONDS - t0))s"
}

cmd_down() {
	kafka_stop
	mariadb_stop
	pg_stop
	s3_stop
	registry_stop
	log "all services down"
}

cmd_status() {
	local rc=0
	report() { # report NAME UPFN ADDR
		if "$2"; then
			printf '%-9s up    %s\n' "$1" "$3"
		else
			printf '%-9s down  %s\n' "$1" "$3"
			rc=1
		fi
	}
	report kafka kafka_up "$HOST:$KAFKA_PORT"
	report mariadb mariadb_up "$HOST:$MYSQL_PORT"
	report postgres pg_up "$HOST:$POSTGRES_PORT"
	report s3 s3_up "http://$HOST:$S3_PORT/$S3_BUCKET"
	report registry registry_up "$(registry_url)"
	return $rc
}

cmd_env() {
	cat <<EOF
export WEIR_KAFKA_BROKERS='$HOST:$KAFKA_PORT'
export WEIR_MYSQL_DSN='weir:weir@tcp($HOST:$MYSQL_PORT)/weir'
export WEIR_POSTGRES_DSN='postgres://weir:weir@$HOST:$POSTGRES_PORT/weir?sslmode=disable'
export WEIR_S3_ENDPOINT='http://$HOST:$S3_PORT'
export WEIR_S3_BUCKET='$S3_BUCKET'
export WEIR_S3_ACCESS_KEY='weir'
export WEIR_S3_SECRET_KEY='weirweir'
export WEIR_S3_REGION='us-east-1'
export WEIR_SCHEMA_REGISTRY_URL='$(registry_url)'
export WEIR_SERVICES=1
EOF
}

# cmd_paths: where the installed programs are, without installing anything.
cmd_paths() {
	local java mariadbd installdb
	[[ -f "$KAFKA_LIB/.complete" ]] || die "no Kafka jars in $KAFKA_LIB: run scripts/services.sh up first"
	java="$(command -v java)" || die "no java on PATH: run scripts/services.sh up first"
	mariadbd="$(mariadb_bin mariadbd mysqld)" || die "no mariadbd: run scripts/services.sh up first"
	installdb="$(mariadb_bin mariadb-install-db mysql_install_db)" || die "no mariadb-install-db: run scripts/services.sh up first"
	[[ -f "$MOTO_VENV/.complete" ]] || die "no moto in $MOTO_VENV: run scripts/services.sh up first"
	cat <<EOF
JAVA=$java
KAFKA_LIB=$KAFKA_LIB
KAFKA_VERSION=$KAFKA_VERSION
MARIADBD=$mariadbd
MARIADB_INSTALL_DB=$installdb
MOTO_SERVER=$MOTO_VENV/bin/moto_server
EOF
}

usage() {
	echo "usage: $0 up [kafka|mariadb|postgres|s3|registry ...]|down|status|env|paths" >&2
	exit 2
}

[[ $# -ge 1 ]] || usage
[[ $# -eq 1 || "$1" == up ]] || usage
case "$1" in
up) shift; cmd_up "$@" ;;
down) cmd_down ;;
status) cmd_status ;;
env) cmd_env ;;
paths) cmd_paths ;;
*) usage ;;
esac
