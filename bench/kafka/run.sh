#!/usr/bin/env bash
# bench/kafka/run.sh — Kafka→Kafka copy on the real broker, three ways, back to back:
# Weir exactly-once, Weir at-least-once (bench/kafka, 1 s checkpoints) and Kafka Streams
# exactly_once_v2 (bench/kstreams, commit.interval.ms=1000), all on the same input topic.
#
#   scripts/services.sh up && eval "$(scripts/services.sh env)"
#   bench/kafka/run.sh [RECORDS]            (default 1000000)
#
# Knobs: PARTITIONS (input/output partitions, default 4), PARALLELISM (Weir subtasks and
# Kafka Streams threads, default 2), VALUE_SIZE (bytes, default 100), REPEAT (rounds, default 1),
# KEEP=1 keeps the topics, KSTREAMS_ARGS adds Kafka Streams properties as "--streams.KEY VALUE"
# (e.g. "--streams.producer.batch.size 1048576"; default: Kafka's defaults).
#
# Prints each run's JSON line, then records/s per engine (best of the rounds), the ratios, and
# the load average before each run. Needs go, java 17 and maven.
set -euo pipefail
N="${1:-1000000}"
PARTITIONS="${PARTITIONS:-4}"
PARALLELISM="${PARALLELISM:-2}"
VALUE_SIZE="${VALUE_SIZE:-100}"
REPEAT="${REPEAT:-1}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
brokers="${WEIR_KAFKA_BROKERS:-127.0.0.1:19092}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

bin="$work/weir-bench-kafka"
(cd "$root" && go build -o "$bin" ./bench/kafka)
ks="$root/bench/kstreams"
if [[ ! -f "$ks/target/classpath.txt" ]]; then
	(cd "$ks" && mvn -q -B package -Dkafka.version="${WEIR_KAFKA_VERSION:-4.1.2}") >&2
fi

in="bench-in-$(date +%Y%m%d-%H%M%S)"
topics="$in"
echo "producing $N records of $VALUE_SIZE bytes into $in ($PARTITIONS partitions)" >&2
"$bin" -brokers "$brokers" -produce-only -records "$N" -in "$in" -partitions "$PARTITIONS" -value-size "$VALUE_SIZE" >&2

results="$work/results.jsonl"
load() { cut -d' ' -f1-3 /proc/loadavg; }
for ((r = 1; r <= REPEAT; r++)); do
	for g in exactly-once at-least-once; do
		out="$in-weir-$g-$r"
		topics="$topics,$out"
		before="$(load)"
		echo "round $r: weir $g (load average $before)" >&2
		line="$("$bin" -brokers "$brokers" -in "$in" -out "$out" -records "$N" -guarantee "$g" \
			-partitions "$PARTITIONS" -parallelism "$PARALLELISM")"
		echo "$line"
		echo "{\"load\":\"$before\",\"run\":$line}" >>"$results"
	done
	out="$in-kstreams-$r"
	topics="$topics,$out"
	before="$(load)"
	echo "round $r: kafka streams exactly_once_v2 (load average $before)" >&2
	line="$("$ks/run.sh" --brokers "$brokers" --in "$in" --out "$out" --records "$N" \
		--partitions "$PARTITIONS" --threads "$PARALLELISM" --commit-interval-ms 1000 ${KSTREAMS_ARGS:-})"
	echo "$line"
	echo "{\"load\":\"$before\",\"run\":$line}" >>"$results"
done

python3 - "$results" <<'PY'
import json, sys
best = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    r = d["run"]
    name = f'{r["engine"]} {r["guarantee"]}'
    if r.get("output_records", r["records"]) != r["records"]:
        print(f'WARNING: {name} wrote {r["output_records"]} records, not {r["records"]}')
    if name not in best or r["records_per_second"] > best[name][0]:
        best[name] = (r["records_per_second"], d["load"], r.get("records_per_second_from_first_record"))
print()
for name, (rps, load, steady) in best.items():
    extra = f", {steady:,.0f} records/s from its first record" if steady else ""
    print(f"{name:32s} {rps:12,.0f} records/s   (load average before the run: {load}{extra})")
ks = best.get("kafka-streams exactly_once_v2", (0,))[0]
eos = best.get("weir exactly-once", (0,))[0]
alo = best.get("weir at-least-once", (0,))[0]
if ks:
    print(f"\nWeir exactly-once / Kafka Streams exactly_once_v2 = {eos / ks:.2f}x")
    print(f"Weir at-least-once / Kafka Streams exactly_once_v2 = {alo / ks:.2f}x")
if alo:
    print(f"Weir exactly-once / Weir at-least-once = {eos / alo:.2f}x")
PY

if [[ "${KEEP:-0}" != 1 ]]; then
	"$bin" -brokers "$brokers" -delete-topics "$topics" >&2 || true
fi
