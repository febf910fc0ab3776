#!/usr/bin/env bash
# Throughput at 1 M against 10 M events, measured as the fourteenth
# session's README section does: each query's Weir child run directly at
# both sizes, alternately, REPS times; prints each run's process CPU-s
# (user + sys), user and sys seconds and, per query, the medians (with
# the range of the runs) and the change in events per core-second. Run from the repository's root:
#
#   bench/nexmark/scale.sh 3 q4 q7 q16
#   CHECKPOINT=0 bench/nexmark/scale.sh 2 q7 q18   # checkpoints off
#
# CHECKPOINT is the checkpoint interval (default 1s; 0: off). Without
# checkpoints the change is the state's size alone; at 1 s a 1 M-event run
# (a few seconds of wall time at most) checkpoints a few times, a 10 M-event
# one every second.
# Needs an idle machine: single runs vary by about ±10 %. Each summary line
# also gives the change by user CPU alone and the kernel's (sys) CPU-s per
# million events at each size: on a virtual machine the kernel's share
# holds the first touch of each fresh page, whose cost the host sets
# (README, twentieth session).
set -euo pipefail
reps=${1:?usage: [CHECKPOINT=1s] scale.sh REPS QUERY...}
checkpoint=${CHECKPOINT:-1s}
shift
bin=$(mktemp -d)/nexmark
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./bench/nexmark
log=$(mktemp)
for q in "$@"; do
  for _ in $(seq "$reps"); do
    for n in 1000000 10000000; do
      /usr/bin/time -o "$log.t" -f "%U %S" "$bin" weir-child -query "$q" -events "$n" -checkpoint "$checkpoint" \
        -memory-limit 8589934592 > /dev/null
      echo "$q $n $(awk '{print $1 + $2, $1, $2}' "$log.t")" | tee -a "$log"
    done
  done
done
python3 - "$log" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
user = collections.defaultdict(list)
kernel = collections.defaultdict(list)
for line in open(sys.argv[1]):
    q, n, cpu, usr, sy = line.split()
    runs[q, int(n)].append(float(cpu))
    user[q, int(n)].append(float(usr))
    kernel[q, int(n)].append(float(sy))
def spread(n, cpus):
    return f"{n / max(cpus) / 1e3:.1f}-{n / min(cpus) / 1e3:.1f}K"
for q in dict.fromkeys(q for q, _ in runs):
    small, big = statistics.median(runs[q, 1000000]), statistics.median(runs[q, 10000000])
    a, b = 1e6 / small, 1e7 / big
    print(f"{q}: 1 M {a / 1e3:.1f}K ev/s/core ({spread(1e6, runs[q, 1000000])}), "
          f"10 M {b / 1e3:.1f}K ({spread(1e7, runs[q, 10000000])}), change {100 * (b / a - 1):+.1f} %; "
          f"by user CPU {100 * (statistics.median(user[q, 1000000]) * 10 / statistics.median(user[q, 10000000]) - 1):+.1f} %, "
          f"sys per M events {statistics.median(kernel[q, 1000000]):.2f} / "
          f"{statistics.median(kernel[q, 10000000]) / 10:.2f} s")
PY
rm -f "$log" "$log.t"
