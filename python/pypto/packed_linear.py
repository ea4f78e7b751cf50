"""Linear layers with their weights packed once in oneDNN's blocked layout (CPU, float32).

The matmul_tiling finding on CPU says a GEMM runs far below the machine's roofline. For decode the
GEMMs are thin (M = the batch, a few rows) and read the whole weight every token; torch's default
path (`F.linear` -> MKL sgemm) re-lays out the weight panels on every call and reaches a fraction of
the memory bandwidth. oneDNN's inner-product primitive with the weight reordered once into its
blocked layout (`torch.ops.mkldnn._reorder_linear_weight`, run by `_linear_pointwise`: what
torch.compile's weight freezing and IPEX do) reads it as laid out. On the 2-core machine of
docs/advisor.md an [8 x 384] x [384 x 1000] linear went from 185 to 77 us per call (x2.4), a
[2048 x 384] one (prefill) about the same speed.

    from pypto.packed_linear import pack_linear_layers
    info = pack_linear_layers(model)      # {"packed": [...], "skipped": {...}}

Each packed `nn.Linear` becomes a `PackedLinear` that shares the original Parameters (state_dict keys
and values do not change) and holds the packed copy beside them, so the linear weights take twice
their memory. The result is not bitwise the same as `F.linear` (another summation order: about 1e-6
of the output's scale), so the closed loop checks the generated tokens before keeping it. The packed
path runs when no gradient is recorded and the weight is a float32 CPU tensor; otherwise, or when
oneDNN is missing, `F.linear` runs. A weight changed in place (load_state_dict, an optimizer step) is
packed again at the next call. Under torch.compile each PackedLinear is a graph break (the packed op
runs eagerly between the compiled pieces), so `fullgraph=True` refuses a model with them.
"""

from __future__ import annotations

import bisect
import collections
import itertools
import json
import math
import os
import time
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F

from .fusion import _being_compiled

# The M (rows of the input) oneDNN is told to expect when the weight is packed: the decode batch of a
# small serving job. The packed weight takes any M; the hint only picks the blocking, and decode's thin
# GEMMs are what this remedy is for.
PACKING_ROWS_HINT = 8


def onednn_linear_available() -> bool:
    """oneDNN (mkldnn) is built into this torch and its packed linear ops exist."""
    mkldnn = getattr(torch.backends, "mkldnn", None)
    if mkldnn is None or not mkldnn.is_available():
        return False
    ops = getattr(torch.ops, "mkldnn", None)
    return ops is not None and hasattr(ops, "_reorder_linear_weight") and hasattr(ops, "_linear_pointwise")


def _why_not_packable(linear: nn.Linear) -> Optional[str]:
    weight = linear.weight
    if weight.device.type != "cpu":
        return f"on {weight.device.type}, not the CPU"
    if weight.dtype != torch.float32:
        return f"dtype {str(weight.dtype).replace('torch.', '')} (packed for float32 only)"
    if weight.dim() != 2:
        return "weight is not a matrix"
    return None


def _run_eagerly(module: "PackedLinear", x: torch.Tensor) -> torch.Tensor:
    return module._eager_forward(x)


# The packed forward kept out of torch.compile's graph (FakeTensor tracing cannot take oneDNN's opaque
# packed tensor); without a disable switch (torch < 2.1) the graph takes F.linear.
_disable = getattr(getattr(torch, "compiler", None), "disable", None)
_outside_the_graph = _disable(_run_eagerly) if callable(_disable) else (
    lambda module, x: F.linear(x, module.weight, module.bias))


class PackedLinear(nn.Linear):
    """nn.Linear whose forward runs oneDNN's inner product on a packed copy of the weight (see the module
    text). Shares `weight` and `bias` with the Linear it replaces; still an nn.Linear for code that checks."""

    def __init__(self, linear: nn.Linear):
        nn.Module.__init__(self)      # not nn.Linear.__init__: it would allocate a weight of its own
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.weight = linear.weight
        self.bias = linear.bias
        self.calls_by_path: collections.Counter = collections.Counter()
        self._packed: Optional[torch.Tensor] = None
        self._packed_from: Optional[tuple] = None

    def _weight_key(self) -> tuple:
        # What the packed copy was made from: a new tensor or an in-place change (_version) repacks.
        return (self.weight.data_ptr(), self.weight._version, tuple(self.weight.shape))

    def _packed_weight(self) -> torch.Tensor:
        key = self._weight_key()
        if self._packed is None or self._packed_from != key:
            with torch.no_grad():
                self._packed = torch.ops.mkldnn._reorder_linear_weight(self.weight.detach(), PACKING_ROWS_HINT)
            self._packed_from = key
        return self._packed

    def _use_packed(self, x: torch.Tensor) -> bool:
        if not isinstance(x, torch.Tensor) or x.device.type != "cpu" or x.dtype != torch.float32:
            return False
        if _why_not_packable(self) is not None:
            return False
        if torch.is_grad_enabled() and (x.requires_grad or self.weight.requires_grad):
            return False      # the packed op keeps no backward for the weight: F.linear does
        return x.dim() >= 1 and x.shape[-1] == self.in_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if _being_compiled():
            # Inside torch.compile the packed op runs between the compiled pieces (a graph break per
            # Linear): inductor's own linear (an MKL call, weights packed only with freezing) gave back
            # the gain. Measured on the demo's transformers Llama with SDPA: decode x1.20 over compiling
            # without the packed weights (10 interleaved rounds, CI x1.17-x1.24).
            return _outside_the_graph(self, x)
        return self._eager_forward(x)

    def _eager_forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._use_packed(x):
            self.calls_by_path["F.linear"] += 1
            return F.linear(x, self.weight, self.bias)
        self.calls_by_path["onednn packed"] += 1
        bias = None if self.bias is None else self.bias.detach()
        return torch.ops.mkldnn._linear_pointwise(x, self._packed_weight(), bias, "none", [], "")

    def __getstate__(self) -> Dict[str, Any]:
        # The packed tensor is opaque (no storage to copy or pickle): a deep copy or an unpickled module
        # packs its own at its first call.
        state = dict(self.__dict__)
        state["_packed"] = None
        state["_packed_from"] = None
        return state

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def pack_linear_layers(model: nn.Module) -> Dict[str, Any]:
    """Replaces every packable nn.Linear of `model` by a PackedLinear (in place). Returns
    {"packed": [module paths], "skipped": {path: why}, "reason": why nothing was packed, or ""}."""
    info: Dict[str, Any] = {"packed": [], "skipped": {}, "reason": ""}
    if not onednn_linear_available():
        info["reason"] = "this torch has no oneDNN (mkldnn) packed linear ops"
        return info
    targets: List[tuple] = []
    for path, module in model.named_modules():
        for name, child in module.named_children():
            if type(child) is nn.Linear:
                full = f"{path}.{name}" if path else name
                why = _why_not_packable(child)
                if why is None:
                    targets.append((module, name, child, full))
                else:
                    info["skipped"][full] = why
    for parent, name, child, full in targets:
        setattr(parent, name, PackedLinear(child))
        info["packed"].append(full)
    if not info["packed"] and not info["reason"]:
        info["reason"] = "no float32 nn.Linear on the CPU" if not info["skipped"] else \
            "no packable nn.Linear: " + "; ".join(sorted(set(info["skipped"].values())))
    return info


# ---------------------------------------------------------------- the estimate, measured
# The roofline estimate of the matmul_tiling finding covers only the GEMM groups below its efficiency
# threshold and assumes they reach 0.6 of the roofline afterwards. Packing changes every float32 Linear,
# flagged or not, by what oneDNN's packed kernel does on that shape on this machine; so the estimate of
# the applied change is the profile's GEMM time per shape times (1 - packed / unpacked time), both timed
# here on random tensors of that shape.

# Timed sweeps per side and shape, interleaved (unpacked, packed, ...); the fastest of each side, since
# other load only ever adds time (with the median, a parallel build turned one shape's ratio from 0.6
# into 1.9). 9 sweeps of at most ~20 ms a side: under 0.5 s a shape.
PACKING_BENCH_REPEATS = 9
# A sweep's weights exceed the last-level cache twice (the OS's size, else 64 MiB = twice this machine's
# 32 MiB L3), in at most 64 copies, and a sweep takes about 20 ms at most: a long (prefill) call is
# compute-bound, where a warm weight changes little.
PACKING_BENCH_FALLBACK_SWEEP_BYTES = 64 << 20
PACKING_BENCH_MAX_COPIES = 64
PACKING_BENCH_SWEEP_S = 0.02
# Shapes timed, the largest by profiled time first; the others take the time-weighted mean ratio of
# those timed (each shape costs a few hundred ms at most).
PACKING_BENCH_MAX_SHAPES = 12
# The host operators that are a Linear's GEMM (F.linear without bias -> mm, with bias -> addmm).
_GEMM_OPS = ("aten::mm", "aten::addmm")


def _gemm_shape(op: str, dims_text: str) -> Optional[Tuple[int, int, int]]:
    """(m, k, n) of an aten::mm [[m,k],[k,n]] or aten::addmm [bias, [m,k], [k,n]] from its input dims."""
    try:
        dims = json.loads(dims_text)
    except ValueError:
        return None
    operands = dims[-2:] if op == "aten::addmm" else dims[:2]
    if len(operands) != 2 or any(not isinstance(d, list) or len(d) != 2 for d in operands):
        return None
    (m, k), (k2, n) = operands
    if k != k2 or min(m, k, n) <= 0:
        return None
    return int(m), int(k), int(n)


def gemm_time_by_shape(call_graph: Any) -> Dict[Tuple[int, int, int], Dict[str, float]]:
    """The profile's GEMM host operators (aten::mm, aten::addmm) inside its steps, by (m, k, n):
    {"us": total duration, "calls": count}. `call_graph`: a pypto OperatorCallGraph."""
    ops = call_graph.host_ops()
    name_ids = sorted({int(i) for i in set(ops["name"].tolist())})
    names = dict(zip(name_ids, call_graph.strings(name_ids)))
    rows = [i for i, name in enumerate(ops["name"].tolist()) if names[name] in _GEMM_OPS]
    dims_ids = sorted({int(ops["input_dims"][i]) for i in rows})
    dims_text = dict(zip(dims_ids, call_graph.strings(dims_ids)))
    # The step windows, sorted by start, for a binary search per operator.
    windows = sorted((s["cpu_start_ns"], s["cpu_end_ns"]) for s in call_graph.steps()
                     if s.get("cpu_start_ns") is not None and s.get("cpu_end_ns") is not None)
    starts = [start for start, _ in windows]
    ends_so_far = list(itertools.accumulate((end for _, end in windows), max))
    out: Dict[Tuple[int, int, int], Dict[str, float]] = {}
    for i in rows:
        ts = int(ops["ts"][i])
        if windows:
            last = bisect.bisect_right(starts, ts) - 1   # the last window starting at or before ts
            if last < 0 or ts >= ends_so_far[last]:
                continue
        shape = _gemm_shape(names[int(ops["name"][i])], dims_text[int(ops["input_dims"][i])])
        if shape is None:
            continue
        entry = out.setdefault(shape, {"us": 0.0, "calls": 0})
        entry["us"] += int(ops["dur"][i]) / 1000.0
        entry["calls"] += 1
    return out


def _cold_sweep_bytes() -> int:
    """Bytes of weights one timed sweep reads: twice the last-level cache (from the OS), else 64 MiB."""
    try:
        last_level = int(os.sysconf("SC_LEVEL3_CACHE_SIZE"))
    except (AttributeError, ValueError, OSError):
        last_level = 0
    return 2 * last_level if last_level > 0 else PACKING_BENCH_FALLBACK_SWEEP_BYTES


def packing_ratio(m: int, k: int, n: int, repeats: int = PACKING_BENCH_REPEATS) -> float:
    """Time of oneDNN's packed inner product over F.linear's for x [m, k] and a weight [n, k] (float32,
    random), each call on a weight not in the caches, as in a decode step, where every layer's weights
    stream through once per token: a sweep runs over copies of the weight that together exceed the
    last-level cache twice (fewer when one call is long: PACKING_BENCH_SWEEP_S). The ratio of the fastest
    of `repeats` interleaved sweeps of each side, after one warm-up sweep."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(m, k, generator=generator)
    with torch.no_grad():
        first = torch.randn(n, k, generator=generator)
        F.linear(x, first)        # the first call of a shape also sets up the BLAS path
        start = time.perf_counter()
        F.linear(x, first)
        one_call_s = max(time.perf_counter() - start, 1e-7)
        copies = math.ceil(_cold_sweep_bytes() / (4 * n * k))
        copies = max(1, min(copies, PACKING_BENCH_MAX_COPIES, int(PACKING_BENCH_SWEEP_S / one_call_s)))
        weights = [first] + [torch.randn(n, k, generator=generator) for _ in range(copies - 1)]
        packed = [torch.ops.mkldnn._reorder_linear_weight(w, PACKING_ROWS_HINT) for w in weights]

        def unpacked_sweep() -> None:
            for w in weights:
                F.linear(x, w)

        def packed_sweep() -> None:
            for p in packed:
                torch.ops.mkldnn._linear_pointwise(x, p, None, "none", [], "")

        sides = (unpacked_sweep, packed_sweep)
        times: List[List[float]] = [[], []]
        for run in sides:
            run()
        for r in range(repeats):
            for side in ((0, 1) if r % 2 == 0 else (1, 0)):
                start = time.perf_counter()
                sides[side]()
                times[side].append(time.perf_counter() - start)
    reference, candidate = min(times[0]), min(times[1])
    return candidate / reference if reference > 0 else 1.0


def packed_saving_estimate(call_graph: Any, max_shapes: int = PACKING_BENCH_MAX_SHAPES) -> Dict[str, Any]:
    """What packing every float32 Linear saves on the profile of `call_graph`: the sum over its GEMM shapes
    of the profiled time x (1 - packing_ratio of the shape). {"saved_us", "gemm_us", "shapes": [{m, k, n,
    calls, us, ratio, saved_us}], "basis"}; saved_us 0 when the profile has no GEMM or this torch no oneDNN."""
    by_shape = gemm_time_by_shape(call_graph)
    gemm_us = sum(v["us"] for v in by_shape.values())
    result: Dict[str, Any] = {"saved_us": 0.0, "gemm_us": gemm_us, "shapes": [],
                              "basis": "profiled GEMM time x (1 - packed / unpacked time per shape, timed here)"}
    if not by_shape or not onednn_linear_available():
        return result
    ranked = sorted(by_shape.items(), key=lambda item: -item[1]["us"])
    timed_us = timed_saved = 0.0
    for index, ((m, k, n), v) in enumerate(ranked):
        if index < max_shapes:
            ratio = packing_ratio(m, k, n)
            timed_us += v["us"]
            timed_saved += v["us"] * (1.0 - ratio)
        else:   # the small rest: the time-weighted mean ratio of the shapes timed
            ratio = 1.0 - timed_saved / timed_us if timed_us > 0 else 1.0
        saved = v["us"] * (1.0 - ratio)
        result["shapes"].append({"m": m, "k": k, "n": n, "calls": v["calls"], "us": v["us"], "ratio": ratio,
                                 "saved_us": saved})
        result["saved_us"] += saved
    return result


__all__ = ["PackedLinear", "pack_linear_layers", "onednn_linear_available", "PACKING_ROWS_HINT",
           "packed_saving_estimate", "gemm_time_by_shape", "packing_ratio"]
