"""Micro-benchmark of decoder-sized RMSNorm on CPU float32: unfused torch ops
(pow-mean-rsqrt-mul), torch.nn.functional.rms_norm, and pypto's fused kernel
(pypto.fusion.rms_norm / add_rms_norm). Prints microseconds per call; asserts nothing.

    PYTHONPATH=python python bench/fusion_bench.py [--threads N] [--repeats R]
"""

import argparse
import time

import torch

from pypto import fusion

EPS = 1e-6
# Decode (1 token, 64-token batch) and a short prefill, at Llama-7B/1B-like widths.
SHAPES = [(1, 2048), (1, 4096), (64, 2048), (64, 4096), (512, 4096)]


def unfused(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


def time_us(fn, repeats):
    for _ in range(max(10, repeats // 10)):  # warm-up: allocator, caches, first-call dispatch
        fn()
    best = float("inf")
    for _ in range(5):  # best of 5 rounds: the least disturbed by other processes
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        best = min(best, (time.perf_counter() - start) / repeats)
    return best * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    parser.add_argument("--repeats", type=int, default=2000)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} torch threads, float32, eps={EPS}")
    header = f"{'rows x cols':>12} {'unfused':>10} {'F.rms_norm':>11} {'pypto':>9} {'add+norm torch':>15} {'pypto add+norm':>15}"
    print(header)
    print("-" * len(header))
    with torch.no_grad():
        for rows, cols in SHAPES:
            gen = torch.Generator().manual_seed(0)
            x = torch.randn(rows, cols, generator=gen)
            residual = torch.randn(rows, cols, generator=gen)
            weight = torch.rand(cols, generator=gen) + 0.5
            repeats = max(50, args.repeats // max(1, rows // 8))
            t_unfused = time_us(lambda: unfused(x, weight), repeats)
            t_torch = time_us(lambda: torch.nn.functional.rms_norm(x, (cols,), weight, EPS), repeats)
            t_pypto = time_us(lambda: fusion.rms_norm(x, weight, EPS), repeats)
            t_add_torch = time_us(lambda: torch.nn.functional.rms_norm(x + residual, (cols,), weight, EPS), repeats)
            t_add_pypto = time_us(lambda: fusion.add_rms_norm(x, residual, weight, EPS), repeats)
            print(f"{rows:>5} x {cols:<5} {t_unfused:>9.1f}u {t_torch:>10.1f}u {t_pypto:>8.1f}u "
                  f"{t_add_torch:>14.1f}u {t_add_pypto:>14.1f}u")
    print("u = microseconds per call (best of 5 rounds); pypto includes its Python dispatch.")


if __name__ == "__main__":
    main()
