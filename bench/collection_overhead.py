"""Overhead of pypto.collection on a generate loop: unprofiled vs sampled vs fully profiled.

    PYTHONPATH=python python bench/collection_overhead.py [--rounds 4] [--generates 2] [--new-tokens 40]

The model is examples/models/hf_llama.py's default (random weights, eager attention, dynamic cache)
or, with --model handwritten, examples/models/handwritten_decoder.py. Each round runs, in turn:
  unprofiled  `--generates` generate calls with no profiler;
  sampled     one Profiler(model=..., schedule=1 forward in SAMPLE_EVERY_FORWARDS) open around
              `--generates` generate calls (the continuous-use setting: the profiler stays open,
              every token is timed, one forward in N is traced and exported when its cycle ends);
  full        one Profiler(model=...) per generate call, its start, stop and trace export included.
Each generate call is timed on its own; the modes alternate round by round so that drift in machine
load hits all of them alike. Prints the median tokens/s of each mode and its overhead against the
unprofiled median. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (REPO, os.path.join(REPO, "python")):
    if path not in sys.path:
        sys.path.insert(0, path)

import torch  # noqa: E402

from pypto.collection import Profiler  # noqa: E402

SAMPLE_EVERY_FORWARDS = 20      # the brief's sampling rate: profile 1 forward in 20
SAMPLED_OVERHEAD_TARGET_PCT = 3.0
PROMPT_LENGTH = 32


def build(model_name: str):
    if model_name == "hf":
        from examples.models.hf_llama import build_hf_llama, make_prompt
        model = build_hf_llama()
        prompt = make_prompt(1, PROMPT_LENGTH, model.config.vocab_size, seed=0)

        def generate(new_tokens: int):
            with torch.no_grad():
                return model.generate(prompt, max_new_tokens=new_tokens, do_sample=False)
    else:
        from examples.models.handwritten_decoder import build_handwritten_decoder
        model = build_handwritten_decoder()
        prompt = model.make_prompt(1, PROMPT_LENGTH)

        def generate(new_tokens: int):
            return model.generate(prompt, max_new_tokens=new_tokens)
    return model, generate


def timed(generate, new_tokens: int) -> float:
    started = time.perf_counter()
    generate(new_tokens)
    return new_tokens / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("hf", "handwritten"), default="hf")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--generates", type=int, default=2, help="generate calls per mode per round")
    parser.add_argument("--new-tokens", type=int, default=40)
    args = parser.parse_args()

    model, generate = build(args.model)
    generate(4)  # warm-up: first-call allocations and lazy initialisation
    schedule = dict(wait=SAMPLE_EVERY_FORWARDS - 2, warmup=1, active=1, repeat=0)
    rates = {"unprofiled": [], "sampled": [], "full": []}
    with tempfile.TemporaryDirectory(prefix="pypto_overhead_") as scratch:
        for round_index in range(args.rounds):
            for _ in range(args.generates):
                rates["unprofiled"].append(timed(generate, args.new_tokens))
            with Profiler(model=model, schedule=schedule,
                          output_dir=os.path.join(scratch, f"sampled{round_index}")) as prof:
                for _ in range(args.generates):
                    rates["sampled"].append(timed(generate, args.new_tokens))
            sampled_traced = prof.get_results().get_latency_stats()["profiled_tokens"]
            for repeat in range(args.generates):
                started = time.perf_counter()
                with Profiler(model=model, output_dir=os.path.join(scratch, f"full{round_index}_{repeat}")):
                    generate(args.new_tokens)
                rates["full"].append(args.new_tokens / (time.perf_counter() - started))

    baseline = statistics.median(rates["unprofiled"])
    print(f"model={args.model} torch={torch.__version__} threads={torch.get_num_threads()} "
          f"prompt={PROMPT_LENGTH} new_tokens={args.new_tokens} rounds={args.rounds} "
          f"generates/mode/round={args.generates}")
    print(f"sampled: 1 forward in {SAMPLE_EVERY_FORWARDS} traced ({sampled_traced} traced in the last round's "
          f"{args.generates * args.new_tokens} forwards); every token timed")
    print(f"{'mode':<11} {'median tok/s':>13} {'min':>8} {'max':>8} {'overhead':>9}")
    for mode, values in rates.items():
        median = statistics.median(values)
        overhead = (baseline / median - 1.0) * 100.0
        print(f"{mode:<11} {median:13.2f} {min(values):8.2f} {max(values):8.2f} {overhead:8.1f}%")
    sampled_overhead = (baseline / statistics.median(rates["sampled"]) - 1.0) * 100.0
    verdict = "within" if sampled_overhead <= SAMPLED_OVERHEAD_TARGET_PCT else "above"
    print(f"sampled overhead {sampled_overhead:.1f}% is {verdict} the {SAMPLED_OVERHEAD_TARGET_PCT:.0f}% target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
