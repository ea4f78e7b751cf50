"""What fusing the RMSNorm/LayerNorm chains saves on the CPU, timed here instead of assumed.

The norm findings credit a fused norm with the profiled idle time between the chain's kernels (GPU and
NPU: the launches a fused kernel does not make). On the CPU that "idle" time is eager dispatch, and the
fused replacement pypto installs (fusion.register_layernorm_fusion) has its own call overhead: in the
closed loop of docs/advisor.md the fused norm measured x0.95-x1.00 alone while the rule credited it
with 0.3-0.7 ms a step. So on the CPU the change is credited with the profiled wall time of the norm
chains x (1 - fused / original time), both modules timed here on an input of the profile's decode
shape; a fused module slower than the original gives a negative estimate (no gain expected).

    from pypto.norm_estimate import norm_fusion_saving_estimate
    estimate = norm_fusion_saving_estimate(fusion_report, call_graph, norm_chain_us)
"""

from __future__ import annotations

import collections
import time
from typing import Any, Dict, List

import torch

from .packed_linear import gemm_time_by_shape

# Timed rounds per side, interleaved (original, fused, ...), the fastest of each kept: other load only
# ever adds time (the same reasoning as packed_linear.PACKING_BENCH_REPEATS).
NORM_BENCH_REPEATS = 9
# Calls per timed round: a decode-sized norm takes 10-100 us on a 2-core CPU, so a round lasts a few
# milliseconds, long against the timer's resolution and short enough for 9 rounds per module.
NORM_BENCH_CALLS_PER_ROUND = 50
# Rows of the timed input when the profile has no GEMM to read the decode rows from (one sequence, one
# token: the smallest decode step).
NORM_BENCH_FALLBACK_ROWS = 1

BASIS = "profiled norm-chain time x (1 - fused / original module time, timed here)"


def decode_rows(call_graph: Any) -> int:
    """Rows of a decode step's activations: the M of the profile's most called GEMM shape (each Linear of a
    decode step multiplies batch x new-token rows), NORM_BENCH_FALLBACK_ROWS without GEMMs."""
    calls = collections.Counter()
    for (m, _k, _n), v in gemm_time_by_shape(call_graph).items():
        calls[m] += v["calls"]
    return calls.most_common(1)[0][0] if calls else NORM_BENCH_FALLBACK_ROWS


def _width(module: Any) -> int:
    weight = getattr(module, "weight", None)
    if isinstance(weight, torch.Tensor) and weight.dim() >= 1:
        return int(weight.shape[-1])
    shape = getattr(module, "normalized_shape", None)
    return int(shape[-1]) if shape else 0


def module_time_ratio(original: Any, fused: Any, x: torch.Tensor, repeats: int = NORM_BENCH_REPEATS) -> Dict[str, float]:
    """{"original_us", "fused_us"} per call: the fastest of `repeats` interleaved rounds of each module on
    x, after one untimed round each."""
    sides = (original, fused)
    best = [float("inf"), float("inf")]
    with torch.no_grad():
        for module in sides:
            for _ in range(NORM_BENCH_CALLS_PER_ROUND):
                module(x)
        for r in range(repeats):
            for side in ((0, 1) if r % 2 == 0 else (1, 0)):
                start = time.perf_counter()
                for _ in range(NORM_BENCH_CALLS_PER_ROUND):
                    sides[side](x)
                best[side] = min(best[side], (time.perf_counter() - start) / NORM_BENCH_CALLS_PER_ROUND)
    return {"original_us": best[0] * 1e6, "fused_us": best[1] * 1e6}


def norm_fusion_saving_estimate(fusion_report: Any, call_graph: Any, norm_chain_us: float) -> Dict[str, Any]:
    """The saving of the fused norms of `fusion_report` (fusion.register_layernorm_fusion) on the profile of
    `call_graph`: norm_chain_us (the profiled wall time of the norm chains the findings name) x (1 - the
    sum over the fused modules of their fused time / the sum of their original time), timed on a float
    input of [decode rows, 1, width] of each module's dtype. {"saved_us", "ratio", "rows", "modules":
    [{path, width, original_us, fused_us}], "basis"}; ratio 1 (nothing saved) when nothing was fused."""
    rows = decode_rows(call_graph)
    modules: List[Dict[str, Any]] = []
    original_total = fused_total = 0.0
    timed_by_key: Dict[Any, Dict[str, float]] = {}
    for entry in getattr(fusion_report, "entries", []):
        if not entry.fused or entry.module is None or entry.original is None:
            continue
        width = _width(entry.original)
        if width <= 0:
            continue
        weight = getattr(entry.original, "weight", None)
        dtype = weight.dtype if isinstance(weight, torch.Tensor) else torch.float32
        device = weight.device if isinstance(weight, torch.Tensor) else torch.device("cpu")
        # Modules of one class and width cost the same: time one of them.
        key = (type(entry.original), width, dtype)
        if key not in timed_by_key:
            x = torch.randn(rows, 1, width, generator=torch.Generator().manual_seed(0)).to(device=device, dtype=dtype)
            timed_by_key[key] = module_time_ratio(entry.original, entry.module, x)
        timed = timed_by_key[key]
        original_total += timed["original_us"]
        fused_total += timed["fused_us"]
        modules.append({"path": entry.path, "width": width, **timed})
    ratio = fused_total / original_total if original_total > 0 else 1.0
    return {"saved_us": norm_chain_us * (1.0 - ratio), "ratio": ratio, "rows": rows, "modules": modules,
            "norm_chain_us": norm_chain_us, "basis": BASIS}


__all__ = ["norm_fusion_saving_estimate", "module_time_ratio", "decode_rows", "NORM_BENCH_REPEATS",
           "NORM_BENCH_CALLS_PER_ROUND", "NORM_BENCH_FALLBACK_ROWS"]
