#!/usr/bin/env bash
# Records real Debezium output for Weir's debezium-json fixtures (issue 18):
#   bench/debezium/record.sh postgres|mysql [OUT_DIR]
# OUT_DIR defaults to sql/session/testdata/debezium. Needs the services of
# scripts/services.sh (WEIR_POSTGRES_DSN, WEIR_MYSQL_DSN). The table (default
# dbz_bills, DEBEZIUM_TABLE to change it) is created, captured and dropped;
# on PostgreSQL so are its replication slot and publication.
# Builds first when target/ is missing (online once: Maven Central).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kind="${1:?usage: record.sh postgres|mysql [OUT_DIR]}"
out="${2:-$here/../../sql/session/testdata/debezium}"
table="${DEBEZIUM_TABLE:-dbz_bills}"
jar="$here/target/weir-debezium-recorder-0.1.0.jar"
if [[ ! -f "$jar" || ! -f "$here/target/classpath.txt" ]]; then
  (cd "$here" && mvn -q -B package) >&2
fi
# user:password@host:port/db from the services' DSNs.
case "$kind" in
  postgres)
    dsn="${WEIR_POSTGRES_DSN:?WEIR_POSTGRES_DSN unset: eval \"\$(bash scripts/services.sh env)\"}"
    rest="${dsn#postgres://}"; rest="${rest%%\?*}"
    url="jdbc:postgresql://${rest#*@}";;
  mysql)
    dsn="${WEIR_MYSQL_DSN:?WEIR_MYSQL_DSN unset: eval \"\$(bash scripts/services.sh env)\"}"
    rest="${dsn/@tcp(/@}"; rest="${rest/)\//\/}"
    url="jdbc:mysql://${rest#*@}";;
  *) echo "record.sh: unknown database $kind: want postgres or mysql" >&2; exit 2;;
esac
creds="${rest%%@*}"
db="${rest##*/}"
exec java -Dorg.slf4j.simpleLogger.defaultLogLevel="${DEBEZIUM_LOG_LEVEL:-warn}" \
  -cp "$jar:$(cat "$here/target/classpath.txt")" weir.debezium.Record \
  "$kind" "$url" "${creds%%:*}" "${creds#*:}" "$db" "$table" "$out"
