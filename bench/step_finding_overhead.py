"""Cost of finding token steps without a model handle, apart from tracing.

    PYTHONPATH=python python bench/step_finding_overhead.py [--rounds 6] [--new-tokens 64]

A Profiler() without `model=` finds steps with two global module hooks that run on every nn.Module
call in the window (each outermost forward is one step). This measures what those hooks cost on a
greedy generate of a transformers Llama with random weights (examples/models/hf_llama.py): by default
the small one the brief's CPU script uses (../shared/reference/seed_usage_cpu.py: 4 layers, hidden 256),
where a token is short and the hooks weigh most; `--model default` takes hf_llama's larger default.
The torch profiler is idle, so that only step finding is timed:
  none     no hooks;
  model    Profiler(model=...)'s per-model hooks (one pre/post hook pair on the model, generate wrapped);
  global   the global module hooks (the no-model-handle path).
Each generate is timed on its own (this process's CPU time and wall time); the order of the modes
rotates round by round. Prints the median CPU and wall ms per token of each mode, the extra µs per token
against `none`, and that extra as a share of the token time. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (REPO, os.path.join(REPO, "python")):
    if path not in sys.path:
        sys.path.insert(0, path)

import torch  # noqa: E402

from pypto.collection import Profiler  # noqa: E402

PROMPT_LENGTH = 16
# The brief's bound on collection overhead (seed-usage.md, "What the brief's text adds"): 3 % of latency.
OVERHEAD_BUDGET_PCT = 3.0
# The Llama of the brief's CPU script (seed_usage_cpu.py, load_7b_model).
BRIEF_CPU_LLAMA = dict(vocab_size=512, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                       num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=1024)


class IdleTorchProfiler:
    """Stands in for torch.profiler outside its active window: nothing is recorded."""
    current_action = "ProfilerAction.NONE"

    def step(self):
        pass


def hooked(mode: str, model):
    profiler = Profiler(backend="cpu")
    profiler.backend = "cpu"
    profiler._torch_profiler = IdleTorchProfiler()
    profiler._active = True
    if mode == "model":
        profiler.watch(model)
    elif mode == "global":
        profiler._install_global_hooks()
    return profiler


def unhook(profiler) -> int:
    profiler._remove_hooks()
    profiler._remove_global_hooks()
    profiler._active = False
    return len(profiler._forwards)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--model", choices=("brief", "default"), default="brief")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (1: steadier on a shared machine; the hooks run on one thread anyway)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from examples.models.hf_llama import build_hf_llama, make_prompt
    model = build_hf_llama(**(BRIEF_CPU_LLAMA if args.model == "brief" else {}))
    prompt = make_prompt(1, PROMPT_LENGTH, model.config.vocab_size, seed=0)

    def generate():
        with torch.no_grad():
            model.generate(prompt, max_new_tokens=args.new_tokens, do_sample=False)

    generate()  # warm-up
    calls_per_token = {}
    counter = [0]

    def count(module, args_):
        counter[0] += 1
    handle = torch.nn.modules.module.register_module_forward_pre_hook(count)
    generate()
    handle.remove()
    modules_per_token = counter[0] / args.new_tokens

    cpu = {m: [] for m in ("none", "model", "global")}
    wall = {m: [] for m in cpu}
    modes = list(cpu)
    for round_index in range(args.rounds):
        # Rotate the order each round so that drift (machine load, allocator state) hits every mode alike.
        for mode in modes[round_index % 3:] + modes[:round_index % 3]:
            profiler = hooked(mode, model) if mode != "none" else None
            c0, w0 = time.process_time(), time.perf_counter()
            generate()
            c1, w1 = time.process_time(), time.perf_counter()
            if profiler is not None:
                calls_per_token[mode] = unhook(profiler)
            cpu[mode].append((c1 - c0) * 1e3 / args.new_tokens)
            wall[mode].append((w1 - w0) * 1e3 / args.new_tokens)
    for mode, found in calls_per_token.items():
        if found != args.new_tokens:
            print(f"{mode}: found {found} steps, expected {args.new_tokens}")
            return 1
    print(f"model=hf_llama {args.model}, torch={torch.__version__}, threads={torch.get_num_threads()}, "
          f"prompt={PROMPT_LENGTH}, new_tokens={args.new_tokens}, rounds={args.rounds}, "
          f"nn.Module calls per token {modules_per_token:.0f}, load average (1 min) {os.getloadavg()[0]:.2f}")
    # Median: the typical run; min: the least disturbed run (on a shared machine the steadier figure).
    print(f"{'mode':<7} {'cpu ms/tok':>10} {'extra us':>9} {'share':>7} | {'min cpu ms':>10} {'extra us':>9} "
          f"{'share':>7} | {'wall ms/tok':>11} {'share':>7}")
    shares = {}
    for mode in cpu:
        c, w, lo = statistics.median(cpu[mode]), statistics.median(wall[mode]), min(cpu[mode])
        base_c, base_w, base_lo = statistics.median(cpu["none"]), statistics.median(wall["none"]), min(cpu["none"])
        shares[mode] = ((c / base_c - 1) * 100, (lo / base_lo - 1) * 100)
        print(f"{mode:<7} {c:10.3f} {(c - base_c) * 1e3:9.1f} {shares[mode][0]:6.2f}% | {lo:10.3f} "
              f"{(lo - base_lo) * 1e3:9.1f} {shares[mode][1]:6.2f}% | {w:11.3f} {(w / base_w - 1) * 100:6.2f}%")
    print(f"step finding without a model handle: {shares['global'][0]:.2f}% (median) / {shares['global'][1]:.2f}% "
          f"(min) of CPU time per token, per-model hooks {shares['model'][0]:.2f}% / {shares['model'][1]:.2f}% "
          f"(budget {OVERHEAD_BUDGET_PCT:.0f}% for all of collection)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
