"""The closed tuning loop on CPU, end to end (the README's `make demo`).

For each example model (random weights, no downloads):
  1. baseline: unprofiled per-token latency of `generate`, then a profile of it
     (pypto.Profiler: every forward call = one token step);
  2. diagnosis against this machine's calibrated peaks (pypto.diagnostics);
  3. the HTML report of the baseline;
  4. ranked recommendations with their artifacts (pypto.advisor);
  5. apply what pypto can apply by itself (pypto.optimizers.apply_all_optimizations:
     fused norms, KV-cache layout, SDPA attention) and check the generated tokens
     are unchanged;
  6. re-profile and re-time the same workload;
  7. comparison: per-token latency p50/p90/p99 before/after with a significance
     test, estimated vs measured gain per applied action, and a before/after HTML.

Run: python examples/closed_loop.py [--model hf|handwritten|both] [--small] [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import json
import statistics
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

import torch  # noqa: E402

import pypto  # noqa: E402
from pypto.advisor import TuningAdvisor  # noqa: E402
from pypto.collection import Profiler  # noqa: E402
from pypto.comparison import ProfileComparer  # noqa: E402
from pypto.diagnostics import HotspotDetector  # noqa: E402
from pypto.hardware import ensure_calibrated  # noqa: E402
from pypto.optimizers import apply_all_optimizations  # noqa: E402
from pypto._progress import Progress  # noqa: E402

# The brief's four hotspot kinds and the issue types that show each.
HOTSPOT_KINDS = {
    "MatMul tiling below peak": {"matmul_tiling"},
    "memory-bound decode attention": {"attention_memory_bound"},
    "KV-cache layout / copies": {"kv_cache_layout"},
    "norm launch overhead": {"norm_launch_overhead", "fusible_sequence:rms_norm", "fusible_sequence:layer_norm"},
}

# Workloads. The default is sized so that decode is dominated by what pypto finds on
# CPU (per-op dispatch of unfused norms and attention, KV copies growing with the
# context) and runs in well under a minute per model on 2 cores; --small is the test size.
WORKLOADS = {
    "default": dict(batch=8, prompt=256, new_tokens=32, timing_runs=5),
    "small": dict(batch=2, prompt=24, new_tokens=8, timing_runs=3),
}


# The progress line of the phase running now (stderr, a terminal only, off with PYPTO_NO_PROGRESS=1:
# pypto._progress), e.g. "pypto demo: hf, baseline timing: 3/5 rounds". Logs and pipes see nothing of it.
_active_progress: List[Progress] = []


def log(msg: str) -> None:
    for progress in _active_progress:   # wipe the progress line first, so the log line starts clean
        progress.finish()
    print(msg, flush=True)


@contextlib.contextmanager
def phase(label: str, total: Optional[int] = None, unit: str = "rounds") -> Iterator[Progress]:
    """A progress line "pypto demo: LABEL: done/total UNIT" for one long phase, wiped at its end."""
    with Progress(f"pypto demo: {label}", total=total, unit=unit) as progress:
        _active_progress.append(progress)
        try:
            yield progress
        finally:
            _active_progress.remove(progress)


def build(name: str, small: bool):
    if name == "hf":
        from examples.models.hf_llama import build_hf_llama, make_prompt
        overrides = dict(num_hidden_layers=2) if small else {}
        model = build_hf_llama(**overrides)
        vocab = model.config.vocab_size

        def generate(ids, n):
            return model.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False)

        return model, generate, lambda b, p: make_prompt(b, p, vocab=vocab, seed=1), model.config
    from examples.models.handwritten_decoder import build_handwritten_decoder
    overrides = dict(num_hidden_layers=2) if small else {}
    model = build_handwritten_decoder(**overrides)

    def generate(ids, n):
        return model.generate(ids, max_new_tokens=n)

    return model, generate, lambda b, p: model.make_prompt(b, p, seed=1), model.config


def time_generate(generate: Callable, ids: torch.Tensor, new_tokens: int, runs: int,
                  progress: Optional[Progress] = None) -> Dict[str, List[float]]:
    """Unprofiled wall times of `runs` rounds: the prefill (generate of one token), the whole
    generate, and the decode time per token = (whole - prefill) / (new_tokens - 1), in ms.
    `progress` advances once per round."""
    prefill, whole, decode = [], [], []
    for _ in range(runs):
        start = time.perf_counter()
        generate(ids, 1)
        one = (time.perf_counter() - start) * 1000.0
        start = time.perf_counter()
        generate(ids, new_tokens)
        full = (time.perf_counter() - start) * 1000.0
        prefill.append(one)
        whole.append(full)
        decode.append(max(full - one, 0.0) / max(new_tokens - 1, 1))
        if progress is not None:
            progress.advance()
    return {"prefill": prefill, "whole": whole, "decode": decode}


def median(values: List[float]) -> float:
    return statistics.median(values)


def spread(values: List[float]) -> str:
    return f"{median(values):.2f} ms (min {min(values):.2f}, max {max(values):.2f})"


def profile(model: Any, generate: Callable, ids: torch.Tensor, new_tokens: int, out_dir: str,
            progress: Optional[Progress] = None):
    """A profile of one generate. `progress` advances once per forward call (one token step) while the
    progress line shows; no hook is added to the model otherwise."""
    hook = None
    if progress is not None and progress.enabled:
        hook = model.register_forward_hook(lambda *_: progress.advance())
    try:
        with Profiler(model=model, output_dir=out_dir) as prof:
            generate(ids, new_tokens)
    finally:
        if hook is not None:
            hook.remove()
    return prof.get_results()


def measure(model: Any, generate: Callable, ids: torch.Tensor, new_tokens: int, runs: int, profile_dir: str,
            label: str = ""):
    """Unprofiled timings, then a profile of the same workload; prints both. The progress line says
    "pypto demo: LABEL timing: 2/5 rounds", then "pypto demo: LABEL profile: 3/8 token steps"."""
    with phase(f"{label} timing", total=runs, unit="rounds") as progress:
        times = time_generate(generate, ids, new_tokens, runs, progress)
    with phase(f"{label} profile", total=new_tokens, unit="token steps") as progress:
        results = profile(model, generate, ids, new_tokens, profile_dir, progress)
    log(f"      unprofiled, {runs} runs: decode {spread(times['decode'])} per token, "
        f"prefill {spread(times['prefill'])}")
    log(f"      profiled decode steps: {fmt_stats(results.get_latency_stats()['decode'])}")
    return times, results


def kinds_found(report) -> List[str]:
    found = []
    keys = set()
    for issue in report.issues:
        keys.add(issue.issue_type)
        keys.add(f"{issue.issue_type}:{issue.raw.get('op_type', '')}")
    for kind, types in HOTSPOT_KINDS.items():
        if keys & types:
            found.append(kind)
    return found


def fmt_stats(stats: Dict[str, Any]) -> str:
    return f"p50 {stats['p50']:.2f}  p90 {stats['p90']:.2f}  p99 {stats['p99']:.2f} ms"


def run(name: str, args: argparse.Namespace) -> Dict[str, Any]:
    work = WORKLOADS["small" if args.small else "default"]
    out = os.path.join(args.out, name)
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model, generate, make_prompt, config = build(name, args.small)
    ids = make_prompt(work["batch"], work["prompt"])
    n = work["new_tokens"]
    title = "transformers LlamaForCausalLM (eager attention, dynamic cache)" if name == "hf" else \
        "hand-written Llama-style decoder (pow-mean-rsqrt-mul RMSNorm, cat-grown KV cache, unfused attention)"
    log(f"\n=== {title}\n    batch {work['batch']}, prompt {work['prompt']} tokens, {n} new tokens")

    with torch.no_grad():
        reference = generate(ids, n)                      # warm-up and the reference output
        log("[1/7] baseline: timing and profile")
        before, base = measure(model, generate, ids, n, work["timing_runs"], os.path.join(out, "baseline_profile"),
                               label=f"{name}, baseline")

        log("[2/7] diagnosis")
        diagnosis = HotspotDetector().detect(base.call_graph)
        for issue in diagnosis.issues[:8]:
            log(f"      [{issue.severity:<6}] {issue.issue_type:<24} {issue.op_name[:34]:<34} "
                f"est. saving {issue.estimated_saved_us / 1000:8.2f} ms ({issue.saving_method})")
        found = kinds_found(diagnosis)
        log(f"      hotspot kinds of the brief found: {len(found)}/4: {', '.join(found) or 'none'}")

        log("[3/7] report")
        report_path = os.path.join(out, "baseline_report.html")
        base.call_graph.report(report_path, force=True)
        log(f"      wrote {report_path}")

        log("[4/7] recommendations")
        advisor = TuningAdvisor(base.call_graph, config)
        advice = advisor.advise(os.path.join(out, "artifacts"), force=True)
        for rec in advice.recommendations[:8]:
            log(f"      #{rec.rank} {rec.hotspot_type:<24} x{rec.estimated_speedup:.3f}  {rec.description}")
        log(f"      artifacts: {', '.join(os.path.basename(a) for a in advice.artifacts) or 'none'}")

        log("[5/7] apply")
        with phase(f"{name}, apply", unit="recommendations") as progress:
            applied = apply_all_optimizations(model, advice.recommendations, model_config=config,
                                              return_report=True, progress=progress)
        for line in str(applied).splitlines():
            log("      " + line)
        optimized = generate(ids, n)
        same = torch.equal(reference, optimized)
        log(f"      generated tokens unchanged: {same}")

        log("[6/7] re-profile")
        generate(ids, n)                                  # warm-up of the optimized model
        after, opt = measure(model, generate, ids, n, work["timing_runs"], os.path.join(out, "optimized_profile"),
                             label=f"{name}, optimized")

    log("[7/7] comparison")
    comparison = ProfileComparer(base.call_graph, opt.call_graph,
                                 applied_actions=applied.compare_actions() or None).generate_comparison_report()
    cmp_path = comparison.save(os.path.join(out, "comparison.html"), force=True)
    data = comparison.data
    b, c = data["baseline"]["latency_ms"], data["candidate"]["latency_ms"]
    log(f"      per-token latency (profiled steps, {data['step_basis']}): "
        f"p50 {b['p50']:.2f} -> {c['p50']:.2f}  p90 {b['p90']:.2f} -> {c['p90']:.2f}  "
        f"p99 {b['p99']:.2f} -> {c['p99']:.2f} ms")
    log(f"      measured speedup x{comparison.measured_speedup:.2f} ({comparison.verdict})")
    decode_speedup = median(before["decode"]) / median(after["decode"])
    prefill_speedup = median(before["prefill"]) / median(after["prefill"])
    whole_speedup = median(before["whole"]) / median(after["whole"])
    log(f"      unprofiled: decode per token {median(before['decode']):.2f} -> {median(after['decode']):.2f} ms "
        f"(x{decode_speedup:.2f}), prefill {median(before['prefill']):.1f} -> {median(after['prefill']):.1f} ms "
        f"(x{prefill_speedup:.2f}), whole generate x{whole_speedup:.2f}")
    for action in data.get("actions", []):
        est = action.get("estimated_per_step_ns")
        meas = action.get("measured_per_step_ns")
        est_s = f"{est / 1e6:.2f} ms" if isinstance(est, (int, float)) else "n/a"
        meas_s = f"{meas / 1e6:.2f} ms" if isinstance(meas, (int, float)) else "n/a"
        log(f"      action {action['id']:<18} estimated {est_s:>10}/step, measured {meas_s:>10}/step: "
            f"{action.get('verdict', '')}")
    log(f"      wrote {cmp_path}")
    return {"model": name, "kinds": found, "same_tokens": same, "decode_speedup": decode_speedup,
            "prefill_speedup": prefill_speedup, "whole_speedup": whole_speedup,
            "measured_speedup": comparison.measured_speedup, "significant": comparison.significant,
            "before": before, "after": after, "report": report_path, "comparison": cmp_path}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["hf", "handwritten", "both"], default="both")
    ap.add_argument("--small", action="store_true", help="a small, fast configuration (tests)")
    ap.add_argument("--out", default=os.path.join(REPO, "out", "demo"), help="where reports and artifacts go")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    args = ap.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    cal = ensure_calibrated()
    if cal:
        log(f"calibrated this CPU: {cal['fp32_flops'] / 1e9:.1f} GFLOP/s fp32 peak, "
            f"{cal['memory_bandwidth'] / 1e9:.1f} GB/s (stored in {cal['path']})")
    results = [run(m, args) for m in (["hf", "handwritten"] if args.model == "both" else [args.model])]
    log("\n=== summary")
    for r in results:
        log(f"  {r['model']:<12} kinds found {len(r['kinds'])}/4, tokens unchanged {r['same_tokens']}; unprofiled "
            f"speedup: decode x{r['decode_speedup']:.2f}, prefill x{r['prefill_speedup']:.2f}, generate "
            f"x{r['whole_speedup']:.2f}; profiled decode steps x{r['measured_speedup']:.2f} "
            f"({'significant' if r['significant'] else 'not significant'} at alpha 0.05)")
    summary_path = os.path.join(args.out, "summary.json")
    with open(summary_path, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
    log(f"  wrote {summary_path}")
    return 0 if all(r["same_tokens"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
