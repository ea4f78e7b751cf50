#!/usr/bin/env bash
# pypto benchmarks (`make bench`). Generates synthetic LLM-decode traces (cached
# in bench/data/), then measures, with bench/measure.py (wall time, MB/s, CPU
# time, peak RSS of the child):
#   1. linearity: `pypto analyze` on Kineto JSON of each size in BENCH_SIZES_MB;
#   2. on the largest trace, in one run on the same file: `pypto analyze`
#      (from step 1), `pypto analyze --json` on the .json.gz against
#      `gzip -dc file.gz > /dev/null`, the naive simdjson DOM loader, Python's
#      json.load, and HolisticTraceAnalysis (HTA);
#   3. `pypto analyze`, `pypto diagnose` and `pypto report` on a large synthetic Ascend kernel_details.csv;
#   3b. `pypto analyze`, `pypto diagnose` and `pypto report` on a synthetic
#      torch_npu trace_view.json (an *_ascend_pt directory);
#   3c. `pypto analyze` and `pypto diagnose` on a synthetic profiler DB, and
#      msprof-analyze (advisor, cluster_time_summary) on the same folder.
# Prints the table with the targets (PASS/MISS) and writes it to
# bench/results/latest.md (raw records: bench/results/latest.jsonl).
#
# Environment (all optional):
#   PYPTO, PY, BUILD       the CLI, the Python with HTA installed, the build dir
#                          holding bench/ tools (make bench sets them)
#   BENCH_SIZES_MB         trace sizes in MB (1 MB = 1e6 bytes), default "100 300 1000"
#   BENCH_SEED             generator seed, default 1
#   BENCH_ASCEND_ROWS      kernel_details.csv rows (at least; whole steps), default 1000000
#   BENCH_CSV_LINEAR_ROWS  larger kernel_details.csv row counts for the CSV's linearity lines (with
#                          BENCH_ASCEND_ROWS the first size), default "3000000 9000000" (1 GB and 3 GB)
#   BENCH_TRACE_VIEW_MB    size of the synthetic trace_view.json in MB (whole steps), default 300
#   BENCH_DB_ROWS          TASK rows of the synthetic profiler DB (whole steps), default 1000000
#   BENCH_MSPROF_TIMEOUT_S limit for each msprof-analyze run, default 1800
#   MSPROF_ANALYZE         the msprof-analyze to measure (make bench: build/msprof-venv/bin/msprof-analyze)
#   BENCH_TIMEOUT_S        limit per measured command, default 900
#   BENCH_HTA_TIMEOUT_S    limit for HTA, default 600 (HTA is ~100x slower)
#   BENCH_PY_MEM_LIMIT_MB  address-space cap for json.load and HTA, default 16000
#   BENCH_SHAPE_MB         size of each Kineto shape trace of block 3d in MB, default 300
#   BENCH_SKIP             space-separated lines to skip: hta pyjson dom gzip ascend csvlin trace_view db msprof shapes
#                          memory python serving seed
set -euo pipefail

cd "$(dirname "$0")/.."
PYPTO=${PYPTO:-build/release/pypto}
PY=${PY:-.venv/bin/python}
BUILD=${BUILD:-build/release}
SIZES=${BENCH_SIZES_MB:-"100 300 1000"}
SEED=${BENCH_SEED:-1}
ASCEND_ROWS=${BENCH_ASCEND_ROWS:-1000000}
CSV_LINEAR_ROWS=${BENCH_CSV_LINEAR_ROWS:-"3000000 9000000"}
TRACE_VIEW_MB=${BENCH_TRACE_VIEW_MB:-300}
TIMEOUT=${BENCH_TIMEOUT_S:-900}
# pypto's own lines run this many times each; the record is the median (the
# figures of one run on a shared 2-core machine spread by 30 % either way).
REPEAT=${BENCH_REPEAT:-3}
HTA_TIMEOUT=${BENCH_HTA_TIMEOUT_S:-600}
# json.load of a 1 GB trace peaks near 6 GB RSS and HTA a little above; 16 GB
# of address space lets both finish while keeping a shared 24 GB machine alive.
PY_MEM_LIMIT=${BENCH_PY_MEM_LIMIT_MB:-16000}
SKIP=" ${BENCH_SKIP:-} "
DATA=bench/data
RESULTS=bench/results
GEN=$BUILD/bench/gen_kineto_trace
GEN_ASCEND=$BUILD/bench/gen_ascend_kernel_details
GEN_TRACE_VIEW=$BUILD/bench/gen_ascend_trace_view
DOM=$BUILD/bench/naive_dom_load
MEASURE="$PY bench/measure.py"

skipped() { [[ "$SKIP" == *" $1 "* ]]; }
say() { printf '[bench] %s\n' "$*" >&2; }

for tool in "$PYPTO" "$GEN" "$GEN_ASCEND" "$DOM"; do
  [[ -x "$tool" ]] || { say "missing $tool (build first: make build)"; exit 1; }
done
if ! skipped trace_view && [[ ! -x "$GEN_TRACE_VIEW" ]]; then
  say "missing $GEN_TRACE_VIEW (build first: make build)"; exit 1
fi
[[ -x "$PY" ]] || { say "missing $PY (make venv)"; exit 1; }

mkdir -p "$DATA" "$RESULTS"
JSONL=$RESULTS/latest.jsonl
: > "$JSONL"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

# ---- data --------------------------------------------------------------------
# A cached file is reused unless the generator was rebuilt after it was written.
fresh() { [[ -s "$1" && "$1" -nt "$2" ]]; }

trace_for() { echo "$DATA/llm_decode_${1}MB_seed${SEED}.pt.trace.json"; }

say "sanity check of the generator (small trace, Python json + invariants)"
small=$DATA/llm_decode_check_seed${SEED}.pt.trace.json
fresh "$small" "$GEN" || "$GEN" --out "$small" --steps 3 --seed "$SEED" --quiet
"$PY" bench/check_kineto_trace.py "$small" >&2

largest=0
for mb in $SIZES; do
  f=$(trace_for "$mb")
  if ! fresh "$f" "$GEN"; then
    say "generating $f"
    "$GEN" --out "$f" --bytes "${mb}M" --seed "$SEED"
  fi
  (( mb > largest )) && largest=$mb
done
big=$(trace_for "$largest")
big_gz=$big.gz
if ! skipped gzip && ! fresh "$big_gz" "$big"; then
  say "compressing $big (gzip -6, once)"
  gzip -6 -c "$big" > "$big_gz.tmp" && mv "$big_gz.tmp" "$big_gz"
fi
big_bytes=$(stat -c %s "$big")

ascend_dir=$DATA/llm_decode_${ASCEND_ROWS}rows_ascend_pt
ascend_csv=$ascend_dir/ASCEND_PROFILER_OUTPUT/kernel_details.csv
if ! skipped ascend && ! fresh "$ascend_csv" "$GEN_ASCEND"; then
  say "generating $ascend_csv"
  mkdir -p "$(dirname "$ascend_csv")"
  "$GEN_ASCEND" --out "$ascend_csv" --rows "$ASCEND_ROWS" --seed "$SEED"
fi

# torch_npu trace_view.json, laid out as the profiler writes it so that the
# ascend-pt importer reads it as a run: DIR_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json.
tv_dir=$DATA/llm_decode_${TRACE_VIEW_MB}MB_seed${SEED}_ascend_pt
tv_json=$tv_dir/ASCEND_PROFILER_OUTPUT/trace_view.json
if ! skipped trace_view && ! fresh "$tv_json" "$GEN_TRACE_VIEW"; then
  say "generating $tv_json"
  mkdir -p "$(dirname "$tv_json")"
  "$GEN_TRACE_VIEW" --out "$tv_json" --bytes "${TRACE_VIEW_MB}M" --seed "$SEED"
fi

# Warm the page cache so that every tool reads from memory (figures are for
# parsing, not for the disk).
warm() { cat "$@" > /dev/null; }

run() {  # run LABEL TOOL SIZE_MB BYTES [measure options] -- CMD...
  local label=$1 tool=$2 size=$3 bytes=$4 repeat=1
  shift 4
  [[ "$tool" == pypto* ]] && repeat=$REPEAT  # the peers (HTA, json.load, msprof-analyze) once: minutes each
  say "measuring $label"
  $MEASURE --label "$label" --bytes "$bytes" --json-out "$JSONL" --extra "tool=$tool" --extra "size_mb=$size" \
    --repeat "$repeat" "$@" || true
}

# ---- 1. linearity (pypto analyze on each size) --------------------------------
for mb in $SIZES; do
  f=$(trace_for "$mb")
  warm "$f"
  run "lin:$mb" "pypto analyze" "$mb" "$(stat -c %s "$f")" --timeout "$TIMEOUT" --quiet -- "$PYPTO" analyze "$f"
done

# ---- 2. peers on the largest trace -----------------------------------------------
if ! skipped gzip; then
  warm "$big_gz"
  run gzip "gzip -dc > /dev/null" "$largest" "$big_bytes" --timeout "$TIMEOUT" -- \
    bash -c 'exec gzip -dc "$1" > /dev/null' _ "$big_gz"
  run pypto_gz "pypto analyze --json (.json.gz)" "$largest" "$big_bytes" --timeout "$TIMEOUT" --quiet -- \
    "$PYPTO" analyze --json "$big_gz"
fi
warm "$big"
skipped dom || run dom "naive simdjson DOM" "$largest" "$big_bytes" --timeout "$TIMEOUT" --quiet -- "$DOM" "$big"
skipped pyjson || run pyjson "python json.load" "$largest" "$big_bytes" --timeout "$TIMEOUT" \
  --mem-limit-mb "$PY_MEM_LIMIT" --stderr-log "$RESULTS/pyjson.stderr.log" --quiet -- \
  "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1], "rb")); print(len(d["traceEvents"]))' "$big"
if ! skipped hta; then
  if "$PY" -c 'import hta' 2>/dev/null; then
    run hta "HTA TraceAnalysis" "$largest" "$big_bytes" --timeout "$HTA_TIMEOUT" \
      --mem-limit-mb "$PY_MEM_LIMIT" --stderr-log "$RESULTS/hta.stderr.log" --quiet -- \
      "$PY" bench/hta_load.py "$big"
  else
    say "HTA not installed in $PY (make bench installs it): skipped"
  fi
fi

# ---- 3. Ascend kernel_details.csv --------------------------------------------------
if ! skipped ascend; then
  warm "$ascend_csv"
  # Exit 3/5 (no profile found / unsupported format) means no importer claimed
  # the directory: report.py prints "skipped: ascend importer not available".
  run ascend "pypto analyze (Ascend CSV)" "$(( $(stat -c %s "$ascend_csv") / 1000000 ))" \
    "$(stat -c %s "$ascend_csv")" --timeout "$TIMEOUT" --quiet --stderr-log "$RESULTS/ascend.stderr.log" \
    --extra "rows=$(( $(wc -l < "$ascend_csv") - 1 ))" -- "$PYPTO" analyze "$ascend_dir"
  # diagnose and report on the same folder (issue target: at most 1.5x analyze);
  # tabled with the trace_view and DB lines below.
  csv_rows=$(( $(wc -l < "$ascend_csv") - 1 ))
  csv_report=$DATA/ascend_csv_report.tmp.html
  run csv:diagnose "pypto diagnose (Ascend CSV)" "$(( $(stat -c %s "$ascend_csv") / 1000000 ))" \
    "$(stat -c %s "$ascend_csv")" --timeout "$TIMEOUT" --quiet --stderr-log "$RESULTS/csv_diagnose.stderr.log" \
    --extra "rows=$csv_rows" -- "$PYPTO" diagnose "$ascend_dir"
  run csv:report "pypto report (Ascend CSV)" "$(( $(stat -c %s "$ascend_csv") / 1000000 ))" \
    "$(stat -c %s "$ascend_csv")" --timeout "$TIMEOUT" --quiet --stderr-log "$RESULTS/csv_report.stderr.log" \
    --extra "rows=$csv_rows" -- "$PYPTO" report "$ascend_dir" -o "$csv_report" --force
  rm -f "$csv_report"
  # Linearity to 3 GB (issue target): analyze on larger files of the same
  # generator; the first size is the line above. Each file is generated once.
  if ! skipped csvlin; then
    for rows in $CSV_LINEAR_ROWS; do
      lin_dir=$DATA/llm_decode_${rows}rows_ascend_pt
      lin_csv=$lin_dir/ASCEND_PROFILER_OUTPUT/kernel_details.csv
      if ! fresh "$lin_csv" "$GEN_ASCEND"; then
        say "generating $lin_csv"
        mkdir -p "$(dirname "$lin_csv")"
        "$GEN_ASCEND" --out "$lin_csv" --rows "$rows" --seed "$SEED"
      fi
      warm "$lin_csv"
      run "csvlin:$rows" "pypto analyze (Ascend CSV)" "$(( $(stat -c %s "$lin_csv") / 1000000 ))" \
        "$(stat -c %s "$lin_csv")" --timeout "$TIMEOUT" --quiet --extra "rows=$(( $(wc -l < "$lin_csv") - 1 ))" \
        -- "$PYPTO" analyze "$lin_dir"
    done
  fi
  # Splitting alone, one thread against read ahead (bench/csv_split.cc): printed, not tabled.
  if [ -x "$BUILD/bench/csv_split" ]; then
    "$BUILD/bench/csv_split" "$ascend_csv" 3 2> "$RESULTS/csv_split.stderr.log" | tee "$RESULTS/csv_split.txt" |
      while IFS= read -r line; do say "$line"; done
  fi
fi

# ---- 3b. Ascend trace_view.json (torch_npu timeline) ---------------------------------
# The three commands on the same *_ascend_pt directory; MB/s over the JSON's
# size. The records are in latest.jsonl (labels trace_view:*) and on the lines
# measure.py prints; report.py's tables do not list them.
if ! skipped trace_view; then
  tv_bytes=$(stat -c %s "$tv_json")
  tv_mb=$(( tv_bytes / 1000000 ))
  # `pypto report` refuses an existing output without --force: a scratch file.
  tv_report=$DATA/trace_view_report.tmp.html
  warm "$tv_json"
  run trace_view:analyze "pypto analyze (Ascend trace_view)" "$tv_mb" "$tv_bytes" --timeout "$TIMEOUT" --quiet \
    --stderr-log "$RESULTS/trace_view_analyze.stderr.log" -- "$PYPTO" analyze "$tv_dir"
  run trace_view:diagnose "pypto diagnose (Ascend trace_view)" "$tv_mb" "$tv_bytes" --timeout "$TIMEOUT" --quiet \
    --stderr-log "$RESULTS/trace_view_diagnose.stderr.log" -- "$PYPTO" diagnose "$tv_dir"
  run trace_view:report "pypto report (Ascend trace_view)" "$tv_mb" "$tv_bytes" --timeout "$TIMEOUT" --quiet \
    --stderr-log "$RESULTS/trace_view_report.stderr.log" -- "$PYPTO" report "$tv_dir" -o "$tv_report" --force
  rm -f "$tv_report"
fi

# ---- 3d. Kineto trace shapes: analyze / diagnose / report ----------------------------
# The same generator at BENCH_SHAPE_MB in five shapes (docs/bench.md): the default
# (28 layers, input shapes on), thin (no input shapes, 6 layers: ~380 steps in
# 300 MB), no ProfilerStep marks at all (the whole window is one step),
# continuous batching (each step's batch drawn from 1..4096, so op shapes differ
# step to step) and many shapes (one layer a step and a batch drawn from
# 1..10^6: ~1500 steps, 10^5 distinct Input Dims in 300 MB). Labels
# shape:NAME:COMMAND; report.py gives diagnose and report as multiples of
# analyze on the same file.
SHAPE_MB=${BENCH_SHAPE_MB:-300}
if ! skipped shapes; then
  shape_report=$DATA/shape_report.tmp.html
  for shape in default thin no_step vary_batch many_shapes; do
    case $shape in
      default) flags=() ;;
      thin) flags=(--thin --layers 6) ;;
      no_step) flags=(--thin --layers 6 --no-profiler-step) ;;
      vary_batch) flags=(--layers 6 --vary-batch 4096) ;;
      many_shapes) flags=(--layers 1 --vary-batch 1000000) ;;
    esac
    sf=$DATA/llm_decode_${SHAPE_MB}MB_seed${SEED}_${shape}.pt.trace.json
    if ! fresh "$sf" "$GEN"; then
      say "generating $sf (${shape})"
      "$GEN" --out "$sf" --bytes "${SHAPE_MB}M" --seed "$SEED" "${flags[@]}"
    fi
    sb=$(stat -c %s "$sf")
    warm "$sf"
    run "shape:$shape:analyze" "pypto analyze" "$SHAPE_MB" "$sb" --timeout "$TIMEOUT" --quiet -- "$PYPTO" analyze "$sf"
    run "shape:$shape:diagnose" "pypto diagnose" "$SHAPE_MB" "$sb" --timeout "$TIMEOUT" --quiet -- "$PYPTO" diagnose "$sf"
    run "shape:$shape:report" "pypto report" "$SHAPE_MB" "$sb" --timeout "$TIMEOUT" --quiet -- \
      "$PYPTO" report "$sf" -o "$shape_report" --force
    rm -f "$shape_report"
  done
fi

# ---- 3c. Ascend profiler database (ascend_pytorch_profiler_0.db) --------------------
# One rank of a tensor-parallel decode job as torch_npu writes it with
# export_type=db (DB_ascend_pt/: profiler_info_0.json, profiler_metadata.json,
# ASCEND_PROFILER_OUTPUT/{ascend_pytorch_profiler_0.db, analysis.db}), at least
# BENCH_DB_ROWS TASK rows (whole steps), from bench/gen_ascend_profiler_db. Measured
# on that one folder: `pypto analyze`, `pypto diagnose` and, when msprof-analyze is
# installed (MSPROF_ANALYZE; `make bench` puts it in a venv of its own,
# build/msprof-venv), `msprof-analyze advisor all` and `msprof-analyze cluster -m
# cluster_time_summary`: Huawei's analyzer on the same data. BENCH_SKIP="db" leaves
# the block out, BENCH_SKIP="msprof" only msprof-analyze (limit BENCH_MSPROF_TIMEOUT_S).
DB_ROWS=${BENCH_DB_ROWS:-1000000}
MSPROF_TIMEOUT=${BENCH_MSPROF_TIMEOUT_S:-1800}
GEN_DB=$BUILD/bench/gen_ascend_profiler_db
MSA=${MSPROF_ANALYZE:-$(command -v msprof-analyze || true)}
if ! skipped db; then
  [[ -x "$GEN_DB" ]] || { say "missing $GEN_DB (build first: make build)"; exit 1; }
  db_dir=$DATA/llm_decode_db_${DB_ROWS}rows_seed${SEED}_ascend_pt
  db_file=$db_dir/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db
  # profiler_metadata.json is written last: a run cut short leaves it stale.
  if ! fresh "$db_dir/profiler_metadata.json" "$GEN_DB"; then
    say "generating $db_dir"
    "$GEN_DB" --run-dir "$db_dir" --rows "$DB_ROWS" --seed "$SEED"
  fi
  db_files=("$db_file" "$db_dir/ASCEND_PROFILER_OUTPUT/analysis.db")
  db_bytes=$(( $(stat -c %s "${db_files[0]}") + $(stat -c %s "${db_files[1]}") ))
  db_mb=$(( db_bytes / 1000000 ))
  db_rows=$("$PY" -c 'import sqlite3, sys
print(sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True).execute("SELECT count(*) FROM TASK").fetchone()[0])' "$db_file")
  warm "${db_files[@]}"
  run db_analyze "pypto analyze (Ascend DB)" "$db_mb" "$db_bytes" --timeout "$TIMEOUT" --quiet \
    --stderr-log "$RESULTS/db_analyze.stderr.log" --extra "rows=$db_rows" -- "$PYPTO" analyze "$db_dir"
  run db_diagnose "pypto diagnose (Ascend DB)" "$db_mb" "$db_bytes" --timeout "$TIMEOUT" --quiet \
    --stderr-log "$RESULTS/db_diagnose.stderr.log" --extra "rows=$db_rows" -- "$PYPTO" diagnose "$db_dir"
  if ! skipped msprof; then
    if [[ -n "$MSA" && -x "$MSA" ]]; then
      # Their outputs go to bench/results, never into the cached data folder.
      msa_out=$RESULTS/msprof
      rm -rf "$msa_out" && mkdir -p "$msa_out/advisor" "$msa_out/cluster"
      run db_msprof_advisor "msprof-analyze advisor all" "$db_mb" "$db_bytes" --timeout "$MSPROF_TIMEOUT" \
        --mem-limit-mb "$PY_MEM_LIMIT" --quiet --stderr-log "$RESULTS/msprof_advisor.stderr.log" \
        --extra "rows=$db_rows" -- "$MSA" advisor all -d "$db_dir" -o "$msa_out/advisor" -l en
      run db_msprof_cluster "msprof-analyze cluster_time_summary" "$db_mb" "$db_bytes" --timeout "$MSPROF_TIMEOUT" \
        --mem-limit-mb "$PY_MEM_LIMIT" --quiet --stderr-log "$RESULTS/msprof_cluster.stderr.log" \
        --extra "rows=$db_rows" -- "$MSA" cluster -d "$db_dir" -m cluster_time_summary --export_type text \
        -o "$msa_out/cluster"
      # msprof-analyze exits 0 even when a recipe finds nothing: say so.
      compgen -G "$msa_out/cluster/cluster_analysis_output/ClusterTimeSummary/*.csv" > /dev/null ||
        say "msprof-analyze cluster_time_summary wrote no CSV (see $RESULTS/msprof_cluster.stderr.log)"
      compgen -G "$msa_out/advisor/mstt_advisor_*.html" > /dev/null ||
        say "msprof-analyze advisor wrote no report (see $RESULTS/msprof_advisor.stderr.log)"
    else
      say "msprof-analyze not found (set MSPROF_ANALYZE to a venv's bin/msprof-analyze): skipped"
    fi
  fi
fi

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
"$PY" bench/report.py "$JSONL" "$RESULTS/latest.md" \
  --env "commit=$COMMIT (checkout when the run started; the binaries are whatever was built)" \
  --env "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" \
  --env "cores=$(nproc)" --env "mem_gb=$(awk '/MemTotal/ {printf "%.0f", $2/1048576}' /proc/meminfo)" \
  --env "loadavg_before=$LOAD_BEFORE" --env "loadavg_after=$LOAD_AFTER" \
  --env "sizes_mb=$SIZES" --env "seed=$SEED"

# ---- 4. memory scaling (added with docs/reliability.md) ------------------------------
# Peak RSS of `pypto analyze` at 10^5, 10^6 and 10^7 events, bytes per event
# against a stated budget, linearity; BENCH_SKIP=memory leaves it out.
if ! skipped memory; then
  PYPTO=$PYPTO PY=$PY BUILD=$BUILD bash bench/memory_scaling.sh || say "memory scaling: MISS (see above)"
fi

# ---- 5. Python side: collection overhead and the fused norm kernel ------------------
# Profiling overhead on a generate loop (unprofiled vs sampled 1-in-N vs fully
# profiled; the brief's bound for sampled mode is 3%), and µs per call of the
# fused RMSNorm against torch. Figures are printed; BENCH_SKIP="python" leaves it out.
if ! skipped python; then
  say "collection overhead (transformers Llama, sampled 1 in 20)"
  PYTHONPATH=python "$PY" bench/collection_overhead.py --model hf --sample-every 20 || say "collection overhead: failed"
  say "collection overhead (hand-written decoder, sampled 1 in 200)"
  PYTHONPATH=python "$PY" bench/collection_overhead.py --model handwritten --sample-every 200 || say "collection overhead: failed"
  say "step finding without a model handle (global module hooks vs per-model hooks, profiler idle)"
  PYTHONPATH=python "$PY" bench/step_finding_overhead.py || say "step finding overhead: failed"
  say "fused norm kernel"
  PYTHONPATH=python "$PY" bench/fusion_bench.py || say "fusion bench: failed"
fi

# ---- 6. continuous profiling in a service (added with docs/serving.md) ---------------
# Throughput of a request loop (worker threads calling a wrapped transformers Llama
# generate) unwrapped vs pypto.serving at its default sampling and at denser settings;
# the issue's bound at the default is 3%. Figures are printed; BENCH_SKIP="serving" leaves it out.
if ! skipped serving; then
  say "serving overhead (request loop, unwrapped vs sampled every 1000 / 100 / 20 requests)"
  PYTHONPATH=python "$PY" bench/serving_overhead.py || say "serving overhead: failed"
fi

# ---- 7. the brief's own code at the brief's sizes (added with issue 13) ---------------
# ../shared/reference/seed_usage_cpu.py with 10 generate calls x 128 new tokens per profiled
# window: its wall time, the baseline p50 and the size of each file it saves (the saved
# profiles are the traces). BENCH_SKIP="seed" leaves it out.
if ! skipped seed; then
  say "the brief's code (seed_usage_cpu.py) at 10 runs x 128 tokens"
  PYTHONPATH=python "$PY" bench/seed_usage.py || say "seed usage: failed"
fi
