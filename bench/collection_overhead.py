"""Overhead of pypto.collection on a generate loop: unprofiled vs sampled vs fully profiled.

    PYTHONPATH=python python bench/collection_overhead.py [--rounds 4] [--generates 2] [--new-tokens 40] [--sample-every 20]

The model is examples/models/hf_llama.py's default (random weights, eager attention, dynamic cache)
or, with --model handwritten, examples/models/handwritten_decoder.py. Each round runs, in turn:
  unprofiled  `--generates` generate calls with no profiler;
  sampled     one Profiler(model=..., schedule=1 forward in SAMPLE_EVERY_FORWARDS) open around
              `--generates` generate calls (the continuous-use setting: the profiler stays open,
              every token is timed, one forward in N is traced and exported when its cycle ends);
  nomodel     as sampled, but Profiler(schedule=...) without a model handle (the brief's form): the
              steps are found by global module hooks on every nn.Module call (each outermost
              forward = one step); against `sampled` it is the cost of finding the steps that way;
  full        one Profiler(model=...) per generate call, its start, stop and trace export included.
Each generate call is timed on its own (wall time and this process's CPU time); the modes alternate
round by round so that drift in machine load hits all of them alike. Prints the median tokens/s and
CPU ms per token of each mode and their overhead against the unprofiled medians; on a shared machine
the CPU-time figure is the steadier one. Figures are printed, never asserted.
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


class Clock:
    """Wall time and this process's CPU time (all threads) of a block, in seconds."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def timed(generate, new_tokens: int):
    with Clock() as clock:
        generate(new_tokens)
    return clock


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("hf", "handwritten"), default="hf")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--generates", type=int, default=2, help="generate calls per mode per round")
    parser.add_argument("--new-tokens", type=int, default=40)
    parser.add_argument("--sample-every", type=int, default=SAMPLE_EVERY_FORWARDS,
                        help="sampled mode traces one forward in this many (at least 3)")
    args = parser.parse_args()

    model, generate = build(args.model)
    generate(4)  # warm-up: first-call allocations and lazy initialisation
    if args.sample_every < 3:
        parser.error("--sample-every must be at least 3 (wait, warm up, record)")
    schedule = dict(wait=args.sample_every - 2, warmup=1, active=1, repeat=0)
    clocks = {"unprofiled": [], "sampled": [], "nomodel": [], "full": []}
    with tempfile.TemporaryDirectory(prefix="pypto_overhead_") as scratch:
        for round_index in range(args.rounds):
            for _ in range(args.generates):
                clocks["unprofiled"].append(timed(generate, args.new_tokens))
            with Profiler(model=model, schedule=schedule,
                          output_dir=os.path.join(scratch, f"sampled{round_index}")) as prof:
                for _ in range(args.generates):
                    clocks["sampled"].append(timed(generate, args.new_tokens))
            sampled_traced = prof.get_results().get_latency_stats()["profiled_tokens"]
            with Profiler(schedule=schedule, output_dir=os.path.join(scratch, f"nomodel{round_index}")) as prof:
                for _ in range(args.generates):
                    clocks["nomodel"].append(timed(generate, args.new_tokens))
            found = len(prof.get_results().forwards)
            if found != args.generates * args.new_tokens:
                print(f"step finding without a model handle found {found} steps, expected "
                      f"{args.generates * args.new_tokens}")
                return 1
            for repeat in range(args.generates):
                with Clock() as clock:
                    with Profiler(model=model, output_dir=os.path.join(scratch, f"full{round_index}_{repeat}")):
                        generate(args.new_tokens)
                clocks["full"].append(clock)

    print(f"model={args.model} torch={torch.__version__} threads={torch.get_num_threads()} "
          f"prompt={PROMPT_LENGTH} new_tokens={args.new_tokens} rounds={args.rounds} "
          f"generates/mode/round={args.generates} load average (1 min) {os.getloadavg()[0]:.2f}")
    print(f"sampled: 1 forward in {args.sample_every} traced ({sampled_traced} traced in the last round's "
          f"{args.generates * args.new_tokens} forwards); every token timed")
    print("wall: median tokens/s (min..max); cpu: median CPU ms per token of this process (less sensitive to "
          "other load on the machine); overhead against the unprofiled median")
    print(f"{'mode':<11} {'wall tok/s':>10} {'min..max':>15} {'overhead':>9} {'cpu ms/tok':>11} {'overhead':>9}")
    wall_rate = {m: [args.new_tokens / c.wall for c in v] for m, v in clocks.items()}
    cpu_per_token = {m: [c.cpu * 1e3 / args.new_tokens for c in v] for m, v in clocks.items()}
    base_rate = statistics.median(wall_rate["unprofiled"])
    base_cpu = statistics.median(cpu_per_token["unprofiled"])
    overheads = {}
    for mode in clocks:
        rate, cpu = statistics.median(wall_rate[mode]), statistics.median(cpu_per_token[mode])
        wall_overhead = (base_rate / rate - 1.0) * 100.0
        cpu_overhead = (cpu / base_cpu - 1.0) * 100.0
        overheads[mode] = (wall_overhead, cpu_overhead)
        spread = f"{min(wall_rate[mode]):.1f}..{max(wall_rate[mode]):.1f}"
        print(f"{mode:<11} {rate:10.2f} {spread:>15} {wall_overhead:8.1f}% {cpu:11.2f} {cpu_overhead:8.1f}%")
    wall_overhead, cpu_overhead = overheads["sampled"]
    print(f"sampled overhead: wall {wall_overhead:.1f}%, cpu {cpu_overhead:.1f}% "
          f"(target {SAMPLED_OVERHEAD_TARGET_PCT:.0f}%)")
    wall_overhead, cpu_overhead = overheads["nomodel"]
    print(f"sampled overhead without a model handle (global step finding): wall {wall_overhead:.1f}%, "
          f"cpu {cpu_overhead:.1f}% (target {SAMPLED_OVERHEAD_TARGET_PCT:.0f}%); step finding itself "
          f"(nomodel - sampled): wall {wall_overhead - overheads['sampled'][0]:.1f} points, "
          f"cpu {cpu_overhead - overheads['sampled'][1]:.1f} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
