#!/usr/bin/env bash
# make demo: the main job on a built-in default. Generates a synthetic
# LLM-decode trace (a Qwen2-7B-shaped decoder on one H100, eager attention,
# prefill then decode steps: bench/gen_kineto_trace.cc), then analyzes it,
# diagnoses it when the diagnosis engine is built in, and exports a
# Perfetto-loadable trace with the critical path marked. Outputs go to out/demo/.
set -euo pipefail
PYPTO=${PYPTO:-build/release/pypto}
GEN=${GEN:-build/release/bench/gen_kineto_trace}
OUT=${OUT:-out/demo}
STEPS=${DEMO_STEPS:-12}

mkdir -p "$OUT"
trace="$OUT/llm_decode.pt.trace.json.gz"
echo "== generating a synthetic LLM-decode trace ($STEPS token steps, eager attention) -> $trace"
"$GEN" --out "$trace" --steps "$STEPS" --attention eager --quiet

echo
echo "== pypto analyze $trace"
"$PYPTO" analyze "$trace"

if "$PYPTO" diagnose --help >/dev/null 2>&1; then
  echo
  echo "== pypto diagnose $trace"
  "$PYPTO" diagnose "$trace"
fi

echo
echo "== pypto export-trace -> $OUT/llm_decode.perfetto.json (open it in ui.perfetto.dev or chrome://tracing)"
"$PYPTO" export-trace "$trace" -o "$OUT/llm_decode.perfetto.json" --force

# A real recorded profile too, when the shared fixtures sit beside the checkout.
real=../shared/fixtures/kineto/tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
if [ -f "$real" ]; then
  echo
  echo "== pypto analyze (real H100 trace of Qwen1.5-0.5B inference) $real"
  "$PYPTO" analyze --top 5 "$real"
fi
