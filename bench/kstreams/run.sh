#!/usr/bin/env bash
# Runs the Kafka Streams copy (weir.bench.kstreams.Copy) from the built jar:
#   bench/kstreams/run.sh --in bench-in --out bench-out-kstreams --records 1000000
# Builds first when target/ is missing (online once: Maven Central).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jar="$here/target/weir-kstreams-bench-0.1.0.jar"
if [[ ! -f "$jar" || ! -f "$here/target/classpath.txt" ]]; then
  (cd "$here" && mvn -q -B package -Dkafka.version="${WEIR_KAFKA_VERSION:-4.1.2}") >&2
fi
exec java ${WEIR_KSTREAMS_JAVA_OPTS:--Xmx1g} -cp "$jar:$(cat "$here/target/classpath.txt")" weir.bench.kstreams.Copy "$@"
