"""The brief's own code at the brief's sizes (10 runs x 128 new tokens), timed.

    python bench/seed_usage.py [--runs 10] [--new-tokens 128] [--keep DIR]

Runs ../shared/reference/seed_usage_cpu.py (the brief's nine blocks on CPU) once in a fresh folder
and prints its wall time, the baseline latency it printed (ms per token), the steps found in each
saved profile and the size of each file the brief saves. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED_SCRIPT = os.path.join(os.path.dirname(REPO), "shared", "reference", "seed_usage_cpu.py")
SAVED_FILES = ("baseline_profile.bin", "optimized_profile.bin", "profile_trace.json", "tiling_tuning.cfg",
               "kv_cache_patch.py")
# The brief's sizes (seed-usage.md, Block 4): 10 generate calls of 128 new tokens.
BRIEF_RUNS = 10
BRIEF_NEW_TOKENS = 128


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=BRIEF_RUNS)
    parser.add_argument("--new-tokens", type=int, default=BRIEF_NEW_TOKENS)
    parser.add_argument("--keep", help="run in this folder and keep it (default: a temporary folder)")
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="pypto_seed_bench_")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, SEED_RUNS=str(args.runs), SEED_NEW_TOKENS=str(args.new_tokens))
    env["PYTHONPATH"] = os.path.join(REPO, "python") + os.pathsep + env.get("PYTHONPATH", "")
    started = time.perf_counter()
    run = subprocess.run([sys.executable, SEED_SCRIPT, work], capture_output=True, text=True, env=env)
    wall_s = time.perf_counter() - started
    try:
        if run.returncode != 0:
            print(f"seed usage at {args.runs} x {args.new_tokens}: FAILED (exit {run.returncode}) after {wall_s:.1f} s")
            print(run.stderr[-3000:])
            return 1
        p50 = re.search(r"Baseline latency: ([0-9.]+)ms/token", run.stdout)
        print(f"seed usage at the brief's sizes ({args.runs} runs x {args.new_tokens} new tokens): "
              f"{wall_s:.1f} s wall, exit 0; baseline p50 {p50.group(1) if p50 else '?'} ms/token")
        sys.path.insert(0, os.path.join(REPO, "python"))
        from pypto import ProfileResults
        for name in SAVED_FILES:
            path = os.path.join(work, name)
            if not os.path.isfile(path):
                print(f"  {name:<22} missing")
                continue
            size_mb = os.path.getsize(path) / 1e6
            line = f"  {name:<22} {size_mb:9.2f} MB"
            if name.endswith(".bin"):
                results = ProfileResults.load(path)
                stats = results.get_latency_stats()
                line += (f"  {len(results.call_graph.steps())} steps, {stats['count']} tokens "
                         f"(p50 {stats['p50']:.2f} ms/token, decode p50 {stats['decode']['p50']:.2f} ms/token)")
            print(line)
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
