#!/usr/bin/env bash
# Runs every libFuzzer target for FUZZ_SECONDS each (ASan + UBSan build from
# `make fuzz`) and prints, per target: executions, crashes, timeouts, OOMs and
# leaks (0 expected). New corpus entries go to a work folder in the build tree;
# the committed seeds (fuzz/corpus/<target>) and crash inputs
# (fuzz/regressions/<target>) are read only. A finding is kept under
# $FUZZ_BUILD/artifacts/<target>/: minimise it, commit it to
# fuzz/regressions/<target>/, fix the bug (docs/reliability.md).
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZ_BUILD=${FUZZ_BUILD:-build/asan}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_JOBS=${FUZZ_JOBS:-2}            # targets run side by side (one core each)
# Per-input limits: 10 s is ~1000x the slowest seed in this build; 2048 MB is
# far above what a 4 KB input should ever need (libFuzzer's default is also 2048).
FUZZ_TIMEOUT_S=${FUZZ_TIMEOUT_S:-10}
FUZZ_RSS_LIMIT_MB=${FUZZ_RSS_LIMIT_MB:-2048}
FUZZ_MAX_LEN=${FUZZ_MAX_LEN:-16384}  # the largest seed is 12.8 KB (the saved-profile SQLite database)
TARGETS=${FUZZ_TARGETS:-"detect kineto ascend_csv trace_view ascend_db pypto_db graph_report"}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
  local t=$1 bin="$FUZZ_BUILD/fuzz/fuzz_$1" work="$FUZZ_BUILD/work/$1" art="$FUZZ_BUILD/artifacts/$1/"
  mkdir -p "$work" "$art"
  local inputs=("$work" "fuzz/corpus/$t")
  [ -d "fuzz/regressions/$t" ] && inputs+=("fuzz/regressions/$t")
  "$bin" -max_total_time="$FUZZ_SECONDS" -timeout="$FUZZ_TIMEOUT_S" -rss_limit_mb="$FUZZ_RSS_LIMIT_MB" \
    -max_len="$FUZZ_MAX_LEN" -print_final_stats=1 -artifact_prefix="$art" "${inputs[@]}" \
    > "$FUZZ_BUILD/log_$t.txt" 2>&1
  echo $? > "$FUZZ_BUILD/rc_$t.txt"
}

for t in $TARGETS; do
  [ -x "$FUZZ_BUILD/fuzz/fuzz_$t" ] || { echo "fuzz: $FUZZ_BUILD/fuzz/fuzz_$t not built (run make fuzz)"; exit 2; }
  rm -f "$FUZZ_BUILD/artifacts/$t/"* 2>/dev/null
done
echo "fuzz: $FUZZ_SECONDS s per target, $FUZZ_JOBS at a time, -timeout=$FUZZ_TIMEOUT_S -rss_limit_mb=$FUZZ_RSS_LIMIT_MB"
running=0
for t in $TARGETS; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$FUZZ_JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait

status=0
printf '%-14s %12s %8s %8s %9s %6s %6s %8s %s\n' target execs exec/s crashes timeouts ooms leaks corpus "peak MB"
for t in $TARGETS; do
  log="$FUZZ_BUILD/log_$t.txt" art="$FUZZ_BUILD/artifacts/$t"
  stat() { awk -v k="stat::$1:" '$1 == k {v = $2} END {print v}' "$log"; }
  execs=$(stat number_of_executed_units) rate=$(stat average_exec_per_sec) rss=$(stat peak_rss_mb)
  crashes=$(find "$art" -name 'crash-*' | wc -l)
  timeouts=$(find "$art" -name 'timeout-*' | wc -l)
  ooms=$(find "$art" -name 'oom-*' | wc -l)
  leaks=$(find "$art" -name 'leak-*' | wc -l)
  corpus=$(find "$FUZZ_BUILD/work/$t" -type f | wc -l)
  rc=$(cat "$FUZZ_BUILD/rc_$t.txt")
  printf '%-14s %12s %8s %8s %9s %6s %6s %8s %s\n' "$t" "${execs:-?}" "${rate:-?}" "$crashes" "$timeouts" "$ooms" "$leaks" "$corpus" "${rss:-?}"
  if [ "$rc" != 0 ] || [ $((crashes + timeouts + ooms + leaks)) -gt 0 ] || [ -z "$execs" ]; then
    status=1
    echo "  FINDING in $t (exit $rc): see $log and $art/"
    grep -m1 -A12 'ERROR: \|runtime error\|==ERROR' "$log" | sed 's/^/    /'
  fi
done
exit $status
