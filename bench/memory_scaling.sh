#!/usr/bin/env bash
# Peak resident memory of `pypto analyze` at 10^5, 10^6 and 10^7 trace events
# (docs/reliability.md, "Memory"). Generates gzip'd synthetic Kineto traces
# with gen_kineto_trace (--steps chosen from a one-step probe to reach each
# event count; the 10^7 trace is ~3.5 GB of JSON, ~0.25 GB gzip'd), measures
# `pypto analyze --json` under measure.py and prints bytes per event. Checks:
#   - budget: the marginal bytes per event between consecutive sizes (the
#     slope of peak RSS over events; the fixed base -- binary, read buffers,
#     tables' initial capacity, ~40 MB -- is not per-event memory) and the
#     peak RSS per event at the largest size are <= MEM_BUDGET_BYTES_PER_EVENT;
#   - linearity: the marginal bytes per event grows at most
#     MEM_LINEARITY_FACTOR from one size pair to the next.
#
# Environment: PYPTO, PY, BUILD (as run_bench.sh), MEM_EVENTS (default
# "100000 1000000 10000000"), MEM_BUDGET_BYTES_PER_EVENT, MEM_DATA (cache dir).
set -euo pipefail
cd "$(dirname "$0")/.."

PYPTO=${PYPTO:-build/release/pypto}
PY=${PY:-python3}
BUILD=${BUILD:-build/release}
GEN=$BUILD/bench/gen_kineto_trace
DATA=${MEM_DATA:-bench/data}
EVENTS=${MEM_EVENTS:-"100000 1000000 10000000"}
# Budget: 400 bytes of peak RSS per event. The model keeps ~100-150 bytes per
# event (fixed-size columnar rows + interned strings, see docs/architecture.md)
# and the graph about as much again (parents, links, per-op indexes); 400 B/event
# is 4 GB at 10^7 events, which still fits a laptop analysing a 3.5 GB trace.
BUDGET=${MEM_BUDGET_BYTES_PER_EVENT:-400}
# Marginal bytes/event may grow at most 1.5x from one size pair to the next.
LINEARITY=${MEM_LINEARITY_FACTOR:-1.5}
TIMEOUT=${MEM_TIMEOUT_S:-1800}
OUT=${MEM_RESULTS:-bench/results/memory_scaling.jsonl}

say() { printf '[memory] %s\n' "$*" >&2; }
[ -x "$GEN" ] || { say "$GEN not built"; exit 2; }
[ -x "$PYPTO" ] || { say "$PYPTO not built"; exit 2; }
mkdir -p "$DATA" "$(dirname "$OUT")"
: > "$OUT"

# Events per step (decode steps after the prefill step 0) from two probes.
probe() { "$GEN" --out /dev/null --steps "$1" 2>&1 | sed -n 's/.* \([0-9]*\) events.*/\1/p'; }
e2=$(probe 2); e3=$(probe 3)
per_step=$((e3 - e2)); base=$((e2 - 2 * per_step))
say "generator: $per_step events per decode step, $base in the first"

rows=()
for n in $EVENTS; do
  steps=$(( (n - base + per_step - 1) / per_step )); [ "$steps" -lt 1 ] && steps=1
  file="$DATA/mem_${n}.json.gz"
  if [ ! -s "$file" ] || [ "$GEN" -nt "$file" ]; then
    say "generating $file ($steps steps)"
    "$GEN" --out "$file" --steps "$steps" 2> "$file.gen.txt"
  fi
  actual=$(sed -n 's/.* \([0-9]*\) events.*/\1/p' "$file.gen.txt")
  raw_bytes=$(gzip -dc "$file" | wc -c)
  say "pypto analyze --json on $file ($actual events, $((raw_bytes / 1000000)) MB JSON)"
  line=$("$PY" bench/measure.py --bytes "$raw_bytes" --label "mem_$n" --timeout "$TIMEOUT" --quiet \
           --json-out "$OUT" --extra "events=$actual" -- "$PYPTO" analyze --json "$file" 2>&1 >/dev/null) ||
    { say "pypto analyze failed: $line"; exit 1; }
  rss_mb=$(echo "$line" | grep -o 'max_rss_mb=[0-9.]*' | cut -d= -f2)
  rows+=("$actual $rss_mb $raw_bytes")
done

"$PY" - "$BUDGET" "$LINEARITY" "${rows[@]}" <<'PYEOF'
import sys
budget, factor = float(sys.argv[1]), float(sys.argv[2])
rows = [(int(e), float(m), int(b)) for e, m, b in (r.split() for r in sys.argv[3:])]
ok = True
print(f"{'events':>12} {'JSON MB':>9} {'peak RSS MB':>12} {'B/event':>9} {'marginal B/event':>17}  budget {budget:.0f} B/event")
prev = None
marginals = []
for events, rss_mb, raw in rows:
    rss = rss_mb * 1e6
    per = rss / events
    marginal = ""
    if prev:
        m = (rss - prev[1]) / (events - prev[0])
        marginals.append(m)
        marginal = f"{m:.0f}"
        if m > budget:
            ok = False
            print(f"  OVER BUDGET: marginal {m:.0f} > {budget:.0f} bytes per event")
    print(f"{events:>12} {raw/1e6:>9.0f} {rss/1e6:>12.0f} {per:>9.0f} {marginal:>17}")
    prev = (events, rss)
if rows and rows[-1][1] * 1e6 / rows[-1][0] > budget:
    ok = False
    print(f"  OVER BUDGET at the largest size: {rows[-1][1] * 1e6 / rows[-1][0]:.0f} bytes per event")
for a, b in zip(marginals, marginals[1:]):
    if b > a * factor:
        ok = False
        print(f"  NOT LINEAR: marginal bytes/event grew {b/a:.2f}x (limit {factor}x)")
print("memory scaling:", "PASS" if ok else "MISS")
sys.exit(0 if ok else 1)
PYEOF
