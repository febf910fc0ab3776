#!/usr/bin/env bash
# Throughput at 1 M against 10 M events, measured as the fourteenth
# session's README section does: each query's Weir child run directly at
# both sizes, REPS times, each 10 M run between two 1 M runs (a 1 M run
# takes about one to seven CPU-s, and the machine's pace can drift by more than
# the goal's 10 % within minutes; README, twenty-seventh session). Prints
# each run's process CPU-s (user + sys), user and sys seconds and, per
# query, the medians (with the range of the runs) and the change in
# events per core-second. Run from the repository's root:
#
#   bench/nexmark/scale.sh 3 q4 q7 q16
#   CHECKPOINT=0 bench/nexmark/scale.sh 2 q7 q18   # checkpoints off
#   CHECKPOINT="1s 0" bench/nexmark/scale.sh 2 q9  # both, alternated
#   SAMPLES=/tmp/samples.txt bench/nexmark/scale.sh 2 q8   # keep each run's JSON (label, events, JSON)
#
# CHECKPOINT is the checkpoint interval (default 1s; 0: off). Without
# checkpoints the change is the state's size alone; at 1 s a 1 M-event run
# (a few seconds of wall time at most) checkpoints a few times, a 10 M-event
# one every second. Several intervals ("1s 0") are run in turn within each
# repetition (in reverse order every other one), each run labelled
# query@interval: two invocations minutes apart can differ by more than
# checkpoints cost (README, thirty-first session); runs alternated share
# the machine's drift. With 0 among them, a last line per query gives the
# CPU the checkpoints added at each size.
# Needs an idle machine: single runs vary by about ±10 %. Each summary line
# also gives the change by user CPU alone and the kernel's (sys) CPU-s per
# million events at each size: on a virtual machine the kernel's share
# holds the first touch of each fresh page, whose cost the host sets
# (README, twentieth session).
#
# A paired line per query sets each 10 M run against the two 1 M runs
# either side of it (their CPU-s averaged) and gives the median of those
# changes: the machine's pace drifts over minutes, and the runs next to a
# 10 M run share its pace more than the medians of all runs do (README,
# fortieth session).
#
# Every run samples its progress every 200 ms. A line per query gives the
# harness's steady rate at each size (SteadyRate: events per CPU-second
# from the first sample past a tenth of the run's events to its end, the
# warm-up left out as bench/nexmark's report leaves it out) and its
# change. For the 10 M runs a last line per query compares, within those
# runs, the events per CPU-second over
# source events 1–3 M with those over 7–9 M (medians; CPU interpolated
# between samples): the state's growth alone, with checkpoints at the
# same pace in both spans, leaving out the first million (state nearly
# empty; a 1 M run completes a checkpoint or two, of little state) and
# the end of input (it fires every window). A run with no sample between
# 9 M events and the sources' last event is left out, and counted.
#
# PERF=1 (any value but empty) runs each run under `perf record -e
# cpu-clock` (perf must be installed) and prints after each run its minor
# faults and the seconds the kernel spent clearing fresh pages
# (clear_page*) and copying into the page cache (copy_{folio,page}_from_
# iter*: the checkpoints' writes). Per query a last line gives the
# clearing per fault at each size (medians; on this machine 0.2-0.7 µs
# where the host backs the memory, 0.7-2.8 where it does not), the
# copying per million events, and the paired change with the clearing
# left out of each run's CPU, then with the copying left out too. On this
# virtual machine a page the host no longer backs costs the guest several
# times as much to clear, and a process whose memory grows past what the
# host still backs (3.5 to 9.5 GiB here, varying within minutes) pays
# that on the rest. The copying is partly the host's too, but mostly the
# checkpoints' work, which a 1 M run, often shorter than the interval,
# hardly does: the second change leaves real work out (README,
# forty-first session).
set -euo pipefail
reps=${1:?usage: [CHECKPOINT="1s"|"0"|"1s 0"] [PERF=1] scale.sh REPS QUERY...}
read -r -a checkpoints <<< "${CHECKPOINT:-1s}"
if [ "${#checkpoints[@]}" -eq 0 ]; then
  checkpoints=(1s)
fi
shift
tmp=$(mktemp -d)
trap '[ -z "${SAMPLES:-}" ] || [ ! -f "$tmp/log.samples" ] || cp "$tmp/log.samples" "$SAMPLES"; rm -rf "$tmp"' EXIT
bin=$tmp/nexmark
log=$tmp/log
: > "$log.samples"
: > "$log.perf"
profiler=()
if [ -n "${PERF:-}" ]; then
  command -v perf > /dev/null || { echo "scale.sh: PERF is set but perf is not installed" >&2; exit 1; }
  # -N: no copy of the binary in ~/.debug per invocation.
  profiler=(perf record -q -N -e cpu-clock -F 499 -o "$tmp/perf.data" --)
fi
go build -o "$bin" ./bench/nexmark
# kernel_pages appends a run's minor faults and its kernel's seconds
# clearing fresh pages and copying into the page cache (perf's samples,
# in ns) to $log.perf, nan when perf cannot read its record.
kernel_pages() {
  local faults pages
  faults=$(awk '{print $3}' "$log.t")
  if ! pages=$(perf report -i "$tmp/perf.data" --no-children --sort sym --stdio -F period,sym 2> "$tmp/perf.err" |
    awk '$2 == "[k]" && $3 ~ /^clear_page/ {c += $1} $2 == "[k]" && $3 ~ /^copy_(folio|page)_from_iter/ {w += $1}
      END {printf "%.3f %.3f", c / 1e9, w / 1e9}'); then
    echo "scale.sh: perf report failed for $1 at $2 events: $(head -c 300 "$tmp/perf.err")" >&2
    pages="nan nan"
  fi
  echo "$1 $2 $faults $pages" >> "$log.perf"
  read -r clear copy <<< "$pages"
  echo "$1 $2 perf: $faults minor faults, clearing $clear s, copying $copy s"
}
for q in "$@"; do
  for rep in $(seq "$reps"); do
    order=("${checkpoints[@]}")
    if [ $((rep % 2)) -eq 0 ]; then
      for ((i = 0; i < ${#checkpoints[@]}; i++)); do
        order[i]=${checkpoints[${#checkpoints[@]} - 1 - i]}
      done
    fi
    for checkpoint in "${order[@]}"; do
      label=$q
      if [ "${#checkpoints[@]}" -gt 1 ]; then
        label=$q@$checkpoint
      fi
      for n in 1000000 10000000 1000000; do
        "${profiler[@]}" /usr/bin/time -o "$log.t" -f "%U %S %R" "$bin" weir-child -query "$q" -events "$n" -checkpoint "$checkpoint" \
          -memory-limit 8589934592 -sample 200ms > "$log.json"
        echo "$label $n $(awk '{print $1 + $2, $1, $2}' "$log.t")" | tee -a "$log"
        if [ -n "${PERF:-}" ]; then
          kernel_pages "$label" "$n"
        fi
        echo "$label $n $(tail -n 1 "$log.json")" >> "$log.samples"
      done
    done
  done
done
python3 - "$log" "$log.samples" "$log.perf" <<'PY'
import collections, json, math, statistics, sys
runs = collections.defaultdict(list)
user = collections.defaultdict(list)
kernel = collections.defaultdict(list)
order_runs = collections.defaultdict(list)  # each label's runs in the order run
for line in open(sys.argv[1]):
    q, n, cpu, usr, sy = line.split()
    order_runs[q].append((int(n), float(cpu)))
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
def triplets(seq):
    """The paired changes of a label's runs, and how many runs were left
    out: for each 10 M run between two 1 M runs (1 M, 10 M, 1 M, as the
    loop above runs them), the change in events per CPU-s from the two 1 M
    runs (their CPU-s averaged) to the 10 M run. Each 10 M run is set
    against the runs just before and after it, so a drift of the machine's
    pace over minutes moves each pair far less than it moves the medians
    of runs taken across it."""
    out, left = [], 0
    for i in range(0, len(seq), 3):
        three = seq[i:i + 3]
        if [n for n, _ in three] != [1000000, 10000000, 1000000]:
            left += len(three)
            continue
        (_, c1), (_, c2), (_, c3) = three
        out.append(100 * (10 * (c1 + c3) / 2 / c2 - 1))
    return out, left
for q, seq in order_runs.items():
    paired, left = triplets(seq)
    note = f"; {left} run(s) left out, not in a 1 M, 10 M, 1 M triple" if left else ""
    if paired:
        print(f"{q} paired (each 10 M run against the 1 M runs either side of it): "
              f"median {statistics.median(paired):+.1f} % (runs: " + ", ".join(f"{c:+.1f}" for c in paired) + ")" + note)
def cpu_at(samples, events):
    """The process CPU-s when the sources had emitted events (linear
    between samples); None when the sample past them is one taken after
    the sources had emitted their last event, whose CPU holds the end of
    input's firing, or when there is none."""
    last = samples[-1][1] if samples else 0
    prev = (0.0, 0.0)
    for _, e, c in samples:
        if e >= events:
            if e >= last:
                return None
            return prev[1] + (c - prev[1]) * (events - prev[0]) / (e - prev[0])
        prev = (e, c)
    return None
def steady_rate(samples, warmup):
    """The harness's steady rate (SteadyRate in timeline.go): events per
    CPU-s from the first sample past warmup events to the run's last."""
    for _, e, c in samples[:-1]:
        if e >= warmup and samples[-1][2] > c:
            return (samples[-1][1] - e) / (samples[-1][2] - c)
    return 0
spans = collections.defaultdict(list)
dropped = collections.Counter()
order = {}
steady = collections.defaultdict(list)
unsteady = collections.Counter()
for line in open(sys.argv[2]):
    q, n, doc = line.split(" ", 2)
    samples = json.loads(doc)["samples"]
    rate = steady_rate(samples, int(n) // 10)
    if rate:
        steady[q, int(n)].append(rate)
    else:
        unsteady[q, int(n)] += 1
    if n != "10000000":
        continue
    order.setdefault(q, len(order))
    cpu = [cpu_at(samples, m * 1e6) for m in (1, 3, 7, 9)]
    if None in cpu:
        dropped[q] += 1
        continue
    spans[q].append((2e6 / (cpu[1] - cpu[0]), 2e6 / (cpu[3] - cpu[2])))
for q in order:
    pairs = spans[q]
    if not pairs:
        print(f"{q} within 10 M: no run with samples between 9 M events and the sources' last one ({dropped[q]} left out)")
        continue
    early, late = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
    print(f"{q} within 10 M: events 1-3 M {early / 1e3:.1f}K ev/s/core, 7-9 M {late / 1e3:.1f}K, "
          f"change {100 * (late / early - 1):+.1f} % (runs: "
          + ", ".join(f"{100 * (b / a - 1):+.1f}" for a, b in pairs) + ")"
          + (f"; {dropped[q]} run(s) left out, not sampled between 9 M events and the end" if dropped[q] else ""))
for q in dict.fromkeys(q for q, _ in list(steady) + list(unsteady)):
    a, b = steady[q, 1000000], steady[q, 10000000]
    left = unsteady[q, 1000000] + unsteady[q, 10000000]
    note = f"; {left} run(s) left out, no sample past the warm-up before the last" if left else ""
    if not a or not b:
        print(f"{q} steady: no steady rate at one of the sizes{note}")
        continue
    sa, sb = statistics.median(a), statistics.median(b)
    print(f"{q} steady (a tenth of each run's events left out, as the harness's Steady): "
          f"1 M {sa / 1e3:.1f}K ev/s/core, 10 M {sb / 1e3:.1f}K, change {100 * (sb / sa - 1):+.1f} %{note}")
for label in dict.fromkeys(q for q, _ in runs):
    q, _, interval = label.partition("@")
    offs = [q + "@" + z for z in ("0", "0s") if (q + "@" + z, 1000000) in runs]
    if not interval or interval in ("0", "0s") or not offs:
        continue
    off = offs[0]
    cost = [100 * (statistics.median(runs[label, n]) / statistics.median(runs[off, n]) - 1) for n in (1000000, 10000000)]
    print(f"{q}: checkpoints every {interval} add {cost[0]:+.1f} % CPU at 1 M events, {cost[1]:+.1f} % at 10 M")
host = collections.defaultdict(list)  # each label's runs in order: (events, faults, clearing s, copying s)
for line in open(sys.argv[3]):
    q, n, faults, clear, copy = line.split()
    host[q].append((int(n), int(faults), float(clear), float(copy)))
for q, rows in host.items():
    seq = order_runs[q]
    if [r[0] for r in rows] != [n for n, _ in seq] or any(math.isnan(r[2] + r[3]) for r in rows):
        print(f"{q} pages: the perf reports do not match the runs (or perf failed on one), left out")
        continue
    cleared, left = triplets([(n, cpu - clear) for (n, cpu), (_, _, clear, _) in zip(seq, rows)])
    both, _ = triplets([(n, cpu - clear - copy) for (n, cpu), (_, _, clear, copy) in zip(seq, rows)])
    if not cleared:
        continue
    def med(m, f):
        return statistics.median([f(r) for r in rows if r[0] == m] or [0])
    per_fault = [med(m, lambda r: 1e6 * r[2] / r[1] if r[1] else 0) for m in (1000000, 10000000)]
    copying = [med(m, lambda r: r[3] * 1e6 / r[0]) for m in (1000000, 10000000)]
    note = f"; {left} run(s) left out, not in a 1 M, 10 M, 1 M triple" if left else ""
    print(f"{q} pages: clearing {per_fault[0]:.2f} / {per_fault[1]:.2f} us per fault, copying {copying[0]:.3f} / "
          f"{copying[1]:.3f} s per M events (1 M / 10 M, medians); paired without the clearing: median "
          f"{statistics.median(cleared):+.1f} % (runs: " + ", ".join(f"{c:+.1f}" for c in cleared) + "); "
          f"without the copying too: {statistics.median(both):+.1f} %" + note)
PY
