#!/usr/bin/env bash
# Runs a main of the Flink side of the Nexmark benchmark from the built jar:
#   ./run.sh RunQuery --query q0 --events 1000000
#   ./run.sh GenCheck --events 1000000 --count 1000
# Build first: mvn -q package (online the first time; -o after).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
main="$1"
shift
jar="$here/target/weir-flink-bench-0.1.0.jar"
if [[ ! -f "$jar" || ! -f "$here/target/classpath.txt" ]]; then
  echo "run.sh: build first: (cd $here && mvn -q -o package)" >&2
  exit 2
fi
exec java ${WEIR_FLINK_JAVA_OPTS:-} \
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
  --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
  --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
  -cp "$jar:$(cat "$here/target/classpath.txt")" "weir.bench.flink.$main" "$@"
