"""Norm fusion for torch.nn models: find LayerNorm / RMSNorm modules and run them fused.

    from pypto.fusion import register_layernorm_fusion
    report = register_layernorm_fusion(model)   # model is changed in place
    print(report)                               # what was fused, with what, and what was not and why
    report.unregister()                         # put the original modules back

Detection: ``nn.LayerNorm`` / ``nn.RMSNorm`` by class; every other module that owns exactly a 1-D
floating ``weight`` (and optionally a ``bias``) and no child modules is *probed*: it is called on a
random (2, 3, H) input with random parameters (``torch.func.functional_call``, so the user's
parameters and RNG state are untouched) and its output is compared with reference RMSNorm and
LayerNorm outputs. The eps is then found with inputs scaled to the candidate eps, where eps changes
the result by a large factor. So a hand-written ``x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) +
eps) * weight`` is found under any class name, and a module with a weight that computes something
else is left alone (and listed in the report).

Backends, chosen per call from the input tensor:
  * Ascend NPU (``torch_npu`` importable, tensor on ``npu``): ``torch_npu.npu_rms_norm`` /
    ``npu_add_rms_norm``; layer norm: ``torch.nn.functional.layer_norm``.
  * CUDA / other devices: ``torch.nn.functional.rms_norm`` / ``layer_norm`` (torch's fused ops).
  * CPU: pypto's own fused C++ kernel (one accumulate pass + one write pass per row) for float32
    contiguous tensors when autograd does not need to record; otherwise the torch functional op.
    Every fallback is counted per module with its reason (``FusionReport.to_dict()``).

Outputs match the original modules within ``FP32_TOLERANCE`` (float32) or ``HALF_TOLERANCE``
(bfloat16 / float16), measured as max |fused - original| / max(1, max |original|).
"""

from __future__ import annotations

import collections
import inspect
import math
import operator
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from ._native import engine

__all__ = [
    "FP32_TOLERANCE",
    "HALF_TOLERANCE",
    "FusionEntry",
    "FusionReport",
    "FusedRMSNorm",
    "FusedLayerNorm",
    "register_layernorm_fusion",
    "rms_norm",
    "add_rms_norm",
    "layer_norm",
]

# Tolerance of fused vs original outputs: max |fused - original| / max(1, max |original|).
# float32: the kernel accumulates in double and rounds a few times in float (ulp 2^-24 ~ 6e-8);
# torch's reference accumulates in float over H elements (error ~ H * 2^-24 at worst), so 1e-5
# covers H up to ~100K with margin.
FP32_TOLERANCE = 1e-5
# bfloat16 / float16: one rounding of the output differs by up to one bf16 ulp (2^-8 relative
# ~ 3.9e-3); 2e-2 allows a few ulps where fused and unfused round at different steps.
HALF_TOLERANCE = 2e-2

# Probing: a module "computes" RMSNorm / LayerNorm when its output on a random fp32 input
# matches the reference within this relative error. Wider than FP32_TOLERANCE because the
# module may accumulate in float in any order; far below the O(1) gap to any other function.
PROBE_TOLERANCE = 1e-4
# Attribute names under which norm modules keep their eps (torch, transformers, common code).
EPS_ATTRIBUTE_NAMES = ("eps", "variance_epsilon", "epsilon", "variance_eps", "norm_eps", "layer_norm_eps",
                       "rms_norm_eps", "layer_norm_epsilon")
# eps values tried when no attribute gives one: torch's LayerNorm default (1e-5), Llama/T5 (1e-6),
# a few models use 1e-8, BERT 1e-12, and 1e-3 / 1e-4 for low-precision training recipes.
COMMON_EPS_CANDIDATES = (1e-5, 1e-6, 1e-8, 1e-12, 1e-3, 1e-4)
# Shape of the probe input before the hidden size: 2 x 3 rows, as a batch x sequence would be.
PROBE_LEADING_SHAPE = (2, 3)
# Seed of the private generator used for probe inputs (the user's global RNG is never drawn from).
PROBE_SEED = 20240601

IMPL_CPU_KERNEL = "pypto fused C++ kernel"
IMPL_TORCH_RMS = "torch.nn.functional.rms_norm"
IMPL_TORCH_LAYER = "torch.nn.functional.layer_norm"
IMPL_UNFUSED_RMS = "torch ops (pow-mean-rsqrt-mul; this torch has no rms_norm)"
IMPL_NPU_RMS = "torch_npu.npu_rms_norm"
IMPL_NPU_ADD_RMS = "torch_npu.npu_add_rms_norm"

KIND_RMS = "rms"
KIND_LAYER = "layer"

_TORCH_HAS_RMS_NORM = hasattr(F, "rms_norm")
_KERNELS_AVAILABLE = bool(getattr(engine, "has_fused_kernels", False))

try:  # Ascend: present only where torch_npu is installed.
    import torch_npu  # type: ignore  # noqa: F401

    _HAS_TORCH_NPU = True
except Exception:  # pragma: no cover - depends on the machine
    torch_npu = None
    _HAS_TORCH_NPU = False


# --------------------------------------------------------------------------------------------
# Function forms and backend dispatch
# --------------------------------------------------------------------------------------------

def _being_compiled() -> bool:
    compiler = getattr(torch, "compiler", None)
    is_compiling = getattr(compiler, "is_compiling", None)
    return bool(is_compiling()) if callable(is_compiling) else False


def _cpu_kernel_blocker(tensors: Tuple[Optional[torch.Tensor], ...]) -> Optional[str]:
    """Why pypto's CPU kernel cannot take these tensors (None: it can)."""
    if not _KERNELS_AVAILABLE:
        return "pypto was built without its fused kernels"
    if _being_compiled():
        # The engine's kernel is a pybind function Dynamo cannot trace: a graph break per norm. The torch
        # form compiles into the graph, where inductor fuses it.
        return "traced by torch.compile (the compiled graph fuses the torch form)"
    needs_autograd = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)
    if needs_autograd:
        return "autograd is recording (a tensor requires grad): torch op keeps the backward"
    for t in tensors:
        if t is None:
            continue
        if t.dtype != torch.float32:
            return f"dtype {str(t.dtype).replace('torch.', '')} (the kernel takes float32 only)"
        if not t.is_contiguous():
            return "non-contiguous tensor (the kernel takes C-contiguous rows)"
    return None


def _is_npu(x: torch.Tensor) -> bool:
    return _HAS_TORCH_NPU and x.device.type == "npu"


def _resolved_eps(eps: Optional[float], x: torch.Tensor) -> float:
    # nn.RMSNorm(eps=None) means torch.finfo(input dtype).eps.
    return float(torch.finfo(x.dtype).eps) if eps is None else float(eps)


def _torch_rms_norm(x: torch.Tensor, weight: Optional[torch.Tensor], eps: float) -> Tuple[torch.Tensor, str]:
    if _TORCH_HAS_RMS_NORM:
        return F.rms_norm(x, (x.shape[-1],), weight, eps), IMPL_TORCH_RMS
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return (out * weight if weight is not None else out), IMPL_UNFUSED_RMS


def _rms_norm_impl(x: torch.Tensor, weight: Optional[torch.Tensor], eps: Optional[float],
                   upcast_fp32: bool = False) -> Tuple[torch.Tensor, str, Optional[str]]:
    """(output, implementation, fallback reason or None).

    upcast_fp32 reproduces the transformers pattern ``weight * rms_norm(x.float()).to(x.dtype)``
    (output dtype promoted with the weight's); for float32 tensors both forms are the same."""
    eps_value = _resolved_eps(eps, x)
    if _is_npu(x):
        gamma = weight if weight is not None else torch.ones(x.shape[-1], dtype=x.dtype, device=x.device)
        return torch_npu.npu_rms_norm(x, gamma, epsilon=eps_value)[0], IMPL_NPU_RMS, None
    fallback = None
    if x.device.type == "cpu":
        fallback = _cpu_kernel_blocker((x, weight))
        if fallback is None:
            out = torch.empty_like(x)
            engine.rms_norm(x.detach().numpy(), None if weight is None else weight.detach().numpy(), eps_value,
                            out.numpy())
            return out, IMPL_CPU_KERNEL, None
    out, impl = _torch_rms_norm_styled(x, weight, eps_value, upcast_fp32)
    return out, impl, fallback


def _torch_rms_norm_styled(x: torch.Tensor, weight: Optional[torch.Tensor], eps_value: float,
                           upcast_fp32: bool) -> Tuple[torch.Tensor, str]:
    if upcast_fp32 and x.dtype != torch.float32:
        normed, impl = _torch_rms_norm(x.float(), None, eps_value)
        normed = normed.to(x.dtype)
        return (weight * normed if weight is not None else normed), impl
    return _torch_rms_norm(x, weight, eps_value)


def _add_rms_norm_impl(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor],
                       eps: Optional[float], upcast_fp32: bool = False
                       ) -> Tuple[torch.Tensor, torch.Tensor, str, Optional[str]]:
    """(normed, x + residual, implementation, fallback reason or None)."""
    eps_value = _resolved_eps(eps, x)
    if x.shape != residual.shape or x.dtype != residual.dtype or x.device != residual.device:
        summed = x + residual  # broadcasting or mixed dtypes: keep torch's semantics exactly
        normed, impl, fallback = _rms_norm_impl(summed, weight, eps, upcast_fp32)
        return normed, summed, impl, fallback or "inputs differ in shape/dtype: add done separately"
    if _is_npu(x):
        gamma = weight if weight is not None else torch.ones(x.shape[-1], dtype=x.dtype, device=x.device)
        normed, _, summed = torch_npu.npu_add_rms_norm(x, residual, gamma, epsilon=eps_value)
        return normed, summed, IMPL_NPU_ADD_RMS, None
    fallback = None
    if x.device.type == "cpu":
        fallback = _cpu_kernel_blocker((x, residual, weight))
        if fallback is None:
            out = torch.empty_like(x)
            summed = torch.empty_like(x)
            engine.add_rms_norm(x.detach().numpy(), residual.detach().numpy(),
                                None if weight is None else weight.detach().numpy(), eps_value, out.numpy(),
                                summed.numpy())
            return out, summed, IMPL_CPU_KERNEL, None
    summed = x + residual
    normed, impl = _torch_rms_norm_styled(summed, weight, eps_value, upcast_fp32)
    return normed, summed, impl, fallback


def _layer_norm_impl(x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
                     eps: float) -> Tuple[torch.Tensor, str, Optional[str]]:
    fallback = None
    if x.device.type == "cpu":
        fallback = _cpu_kernel_blocker((x, weight, bias))
        if fallback is None:
            out = torch.empty_like(x)
            engine.layer_norm(x.detach().numpy(), None if weight is None else weight.detach().numpy(),
                              None if bias is None else bias.detach().numpy(), float(eps), out.numpy())
            return out, IMPL_CPU_KERNEL, None
    return F.layer_norm(x, (x.shape[-1],), weight, bias, float(eps)), IMPL_TORCH_LAYER, fallback


def rms_norm(x: torch.Tensor, weight: Optional[torch.Tensor] = None, eps: Optional[float] = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension: ``x / sqrt(mean(x^2) + eps) * weight``.

    On CPU, float32 contiguous tensors run pypto's fused C++ kernel. When autograd is recording
    (``torch.is_grad_enabled()`` and a tensor requires grad) the torch op runs instead, so
    gradients still flow; wrap inference in ``torch.no_grad()`` / ``torch.inference_mode()`` to
    get the kernel. Other dtypes and layouts use ``torch.nn.functional.rms_norm``; NPU tensors use
    ``torch_npu.npu_rms_norm``."""
    return _rms_norm_impl(x, weight, eps)[0]


def add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor] = None,
                 eps: Optional[float] = 1e-6) -> Tuple[torch.Tensor, torch.Tensor]:
    """Residual add + RMSNorm in one pass: returns ``(rms_norm(x + residual), x + residual)``.

    The sum is computed in the input dtype exactly as ``x + residual`` would be. Same backend and
    autograd rules as :func:`rms_norm` (NPU: ``torch_npu.npu_add_rms_norm``)."""
    normed, summed, _, _ = _add_rms_norm_impl(x, residual, weight, eps)
    return normed, summed


def layer_norm(x: torch.Tensor, weight: Optional[torch.Tensor] = None, bias: Optional[torch.Tensor] = None,
               eps: float = 1e-5) -> torch.Tensor:
    """LayerNorm over the last dimension (biased variance, as ``nn.LayerNorm``).

    Same backend and autograd rules as :func:`rms_norm`; non-CPU devices use
    ``torch.nn.functional.layer_norm``."""
    return _layer_norm_impl(x, weight, bias, eps)[0]


# --------------------------------------------------------------------------------------------
# Fused modules
# --------------------------------------------------------------------------------------------

class _FusedNormBase(nn.Module):
    """Shared bookkeeping: which implementation ran how often, and why fallbacks happened."""

    def __init__(self) -> None:
        super().__init__()
        # A following nn.Dropout folded into this module: identity in eval, applied in training.
        self.dropout_p = 0.0
        self.calls_by_implementation: collections.Counter = collections.Counter()
        self.fallback_reasons: collections.Counter = collections.Counter()

    def _record(self, implementation: str, fallback: Optional[str]) -> None:
        if _being_compiled():
            return     # traced once for the whole compiled graph, not run per call: no count to keep
        self.calls_by_implementation[implementation] += 1
        if fallback:
            self.fallback_reasons[fallback] += 1

    def _dropout(self, out: torch.Tensor) -> torch.Tensor:
        if self.dropout_p > 0.0 and self.training:
            return F.dropout(out, self.dropout_p, training=True)
        return out


class FusedRMSNorm(_FusedNormBase):
    """RMSNorm run by the fastest fused op for the input's device (see the module docstring).

    Shares the original module's ``weight`` Parameter, so state_dict keys and values do not change."""

    def __init__(self, weight: Optional[nn.Parameter], eps: Optional[float], upcast_fp32: bool = False) -> None:
        super().__init__()
        self.weight = weight
        self.eps = eps
        self.variance_epsilon = eps  # the transformers attribute name, for code that reads it
        self.upcast_fp32 = upcast_fp32

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, implementation, fallback = _rms_norm_impl(x, self.weight, self.eps, self.upcast_fp32)
        self._record(implementation, fallback)
        return self._dropout(out)

    def forward_with_residual(self, x: torch.Tensor, residual: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """(norm(x + residual), x + residual) through the fused add + norm op."""
        normed, summed, implementation, fallback = _add_rms_norm_impl(x, residual, self.weight, self.eps,
                                                                      self.upcast_fp32)
        self._record("add+" + implementation, fallback)
        return self._dropout(normed), summed

    def extra_repr(self) -> str:
        shape = None if self.weight is None else tuple(self.weight.shape)
        return f"{shape}, eps={self.eps}, upcast_fp32={self.upcast_fp32}, dropout_p={self.dropout_p}"


class FusedLayerNorm(_FusedNormBase):
    """LayerNorm over the last dimension run by the fastest fused op for the input's device.

    Shares the original ``weight`` / ``bias`` Parameters (either may be None)."""

    def __init__(self, weight: Optional[nn.Parameter], bias: Optional[nn.Parameter], eps: float) -> None:
        super().__init__()
        self.weight = weight
        self.bias = bias
        self.eps = eps
        if weight is not None:
            self.normalized_shape = tuple(weight.shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, implementation, fallback = _layer_norm_impl(x, self.weight, self.bias, self.eps)
        self._record(implementation, fallback)
        return self._dropout(out)

    def extra_repr(self) -> str:
        shape = None if self.weight is None else tuple(self.weight.shape)
        return f"{shape}, eps={self.eps}, bias={self.bias is not None}, dropout_p={self.dropout_p}"


def _fused_add_norm_call(norm: nn.Module, x: torch.Tensor, residual: torch.Tensor):
    """Graph target for a traced ``norm(x + residual)``: (normed, x + residual)."""
    if isinstance(norm, FusedRMSNorm) and isinstance(x, torch.Tensor) and isinstance(residual, torch.Tensor):
        return norm.forward_with_residual(x, residual)
    summed = x + residual
    return norm(summed), summed


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

@dataclass
class FusionEntry:
    """One candidate module: fused (with what) or not (and why)."""

    path: str
    original_class: str
    fused: bool
    kind: Optional[str] = None            # "rms" | "layer"
    eps: Optional[float] = None
    identified_by: str = ""               # "class nn.LayerNorm", "probe (eps from attribute eps)", ...
    implementation: str = ""              # planned for the module's current device and dtype
    reason: str = ""                      # why not fused, or a note on fallbacks
    residual_add: str = ""                # add + norm fusion outcome
    next_dropout: str = ""                # dropout folding outcome
    prev_matmul: str = ""                 # matmul + norm fusion outcome
    module: Optional[nn.Module] = field(default=None, repr=False, compare=False)
    original: Optional[nn.Module] = field(default=None, repr=False, compare=False)

    @property
    def calls_by_implementation(self) -> Dict[str, int]:
        """How often each implementation ran since registration (counted at run time)."""
        return dict(getattr(self.module, "calls_by_implementation", {}) or {})

    @property
    def fallback_reasons(self) -> Dict[str, int]:
        return dict(getattr(self.module, "fallback_reasons", {}) or {})

    def to_dict(self) -> Dict[str, Any]:
        return {
            "path": self.path, "original_class": self.original_class, "fused": self.fused, "kind": self.kind,
            "eps": self.eps, "identified_by": self.identified_by, "implementation": self.implementation,
            "reason": self.reason, "residual_add": self.residual_add, "next_dropout": self.next_dropout,
            "prev_matmul": self.prev_matmul, "calls_by_implementation": self.calls_by_implementation,
            "fallback_reasons": self.fallback_reasons,
        }


class FusionReport:
    """What register_layernorm_fusion did. ``str(report)`` is a table; ``to_dict()`` the data;
    ``unregister()`` restores the original modules."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.entries: List[FusionEntry] = []
        self._undo: List[Callable[[], None]] = []
        self.registered = True

    @property
    def fused(self) -> List[FusionEntry]:
        return [e for e in self.entries if e.fused]

    @property
    def not_fused(self) -> List[FusionEntry]:
        return [e for e in self.entries if not e.fused]

    def entry(self, path: str) -> FusionEntry:
        for e in self.entries:
            if e.path == path:
                return e
        raise KeyError(path)

    def implementations_used(self) -> Dict[str, int]:
        """Calls per implementation over all fused modules since registration."""
        total: collections.Counter = collections.Counter()
        for e in self.fused:
            total.update(e.calls_by_implementation)
        return dict(total)

    def to_dict(self) -> Dict[str, Any]:
        return {"backend": self.backend, "registered": self.registered,
                "fused": [e.to_dict() for e in self.fused], "not_fused": [e.to_dict() for e in self.not_fused],
                "implementations_used": self.implementations_used()}

    def unregister(self) -> None:
        """Put the original modules (and forwards, dropouts) back, newest change first."""
        while self._undo:
            self._undo.pop()()
        self.registered = False

    undo = unregister

    def __str__(self) -> str:
        lines = [f"pypto norm fusion ({self.backend}): {len(self.fused)} fused, {len(self.not_fused)} not fused"]
        if self.fused:
            rows = [("module", "class", "kind", "eps", "implementation", "calls so far")]
            for e in self.fused:
                rows.append((e.path, e.original_class, e.kind or "", _format_eps(e.eps), e.implementation,
                             _format_counts(e.calls_by_implementation) or "-"))
            lines.append("")
            lines.extend(_table(rows))
            rows = [("module", "residual add", "next dropout", "prev matmul")]
            rows.extend((e.path, e.residual_add, e.next_dropout, e.prev_matmul) for e in self.fused)
            lines.append("")
            lines.extend(_table(rows))
            notes = [f"  {e.path}: {e.reason}" for e in self.fused if e.reason]
            notes += [f"  {e.path}: fallbacks: {_format_counts(e.fallback_reasons)}" for e in self.fused
                      if e.fallback_reasons]
            if notes:
                lines.append("")
                lines.append("notes:")
                lines.extend(notes)
        if self.not_fused:
            rows = [("module", "class", "why not fused")]
            rows.extend((e.path, e.original_class, e.reason) for e in self.not_fused)
            lines.append("")
            lines.extend(_table(rows))
        return "\n".join(lines)

    __repr__ = __str__


def _format_eps(eps: Optional[float]) -> str:
    return "dtype eps" if eps is None else f"{eps:g}"


def _format_counts(counts: Dict[str, int]) -> str:
    return ", ".join(f"{k} x{v}" for k, v in counts.items())


def _table(rows: List[Tuple[str, ...]]) -> List[str]:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, row in enumerate(rows):
        out.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


# --------------------------------------------------------------------------------------------
# Detection
# --------------------------------------------------------------------------------------------

@dataclass
class _NormSpec:
    kind: str
    eps: Optional[float]
    has_bias: bool
    upcast_fp32: bool
    identified_by: str


def _reference(kind: str, x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
               eps: float) -> torch.Tensor:
    """Float64 reference norm over the last dimension."""
    x64 = x.double()
    if kind == KIND_RMS:
        out = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps) * weight.double()
    else:
        mean = x64.mean(-1, keepdim=True)
        var = (x64 - mean).pow(2).mean(-1, keepdim=True)
        out = (x64 - mean) * torch.rsqrt(var + eps) * weight.double()
        if bias is not None:
            out = out + bias.double()
    return out


def _relative_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    expected = expected.to(torch.float64)
    scale = max(1.0, float(expected.abs().max()))
    return float((actual.to(torch.float64) - expected).abs().max()) / scale


def _eps_attribute(module: nn.Module) -> Tuple[Optional[str], Optional[float]]:
    for name in EPS_ATTRIBUTE_NAMES:
        value = getattr(module, name, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < float(value) < 1:
            return name, float(value)
    return None, None


def _candidate_blocker(module: nn.Module) -> Optional[str]:
    """Why a module with a 1-D weight cannot be replaced safely (None: it can)."""
    if module._forward_hooks or module._forward_pre_hooks:
        return "has forward hooks (a replacement would drop them)"
    if any(True for _ in module.buffers(recurse=False)):
        return "has buffers (a replacement would change its state_dict)"
    weight = _weight_of(module)
    if weight is not None and weight.device.type == "meta":
        return "parameters on the meta device (cannot be probed)"
    return None


_TORCH_NORM_CLASSES = tuple(c for c in (nn.LayerNorm, getattr(nn, "RMSNorm", None)) if c is not None)


def _weight_of(module: nn.Module) -> Optional[torch.Tensor]:
    return getattr(module, "weight", None)


def _is_candidate(module: nn.Module) -> bool:
    """A module that could be a norm: exactly weight (+ bias), 1-D floating, same size, no children."""
    if isinstance(module, (FusedRMSNorm, FusedLayerNorm)) or any(True for _ in module.children()):
        return False
    if isinstance(module, _TORCH_NORM_CLASSES):
        return True
    params = dict(module.named_parameters(recurse=False))
    weight = params.get("weight")
    if weight is None or set(params) - {"weight", "bias"}:
        return False
    if weight.dim() != 1 or not weight.is_floating_point() or weight.numel() == 0:
        return False
    bias = params.get("bias")
    return bias is None or (bias.dim() == 1 and bias.shape == weight.shape)


def _identify_by_class(module: nn.Module) -> Optional[Tuple[Optional[_NormSpec], str]]:
    """nn.LayerNorm / nn.RMSNorm whose forward is torch's own: no probing needed."""
    if isinstance(module, nn.LayerNorm) and type(module).forward is nn.LayerNorm.forward:
        if len(module.normalized_shape) != 1:
            return None, f"normalizes over {len(module.normalized_shape)} trailing dims (fused ops take 1)"
        return _NormSpec(KIND_LAYER, float(module.eps), module.bias is not None, False, "class nn.LayerNorm"), ""
    rms_class = getattr(nn, "RMSNorm", None)
    if rms_class is not None and isinstance(module, rms_class) and type(module).forward is rms_class.forward:
        if len(module.normalized_shape) != 1:
            return None, f"normalizes over {len(module.normalized_shape)} trailing dims (fused ops take 1)"
        return _NormSpec(KIND_RMS, module.eps, False, False, "class nn.RMSNorm"), ""
    return None


def _probe(module: nn.Module) -> Tuple[Optional[_NormSpec], str]:
    """Identify a norm by what it computes. Returns (spec, "") or (None, reason)."""
    weight = module.weight
    has_bias = getattr(module, "bias", None) is not None
    hidden = weight.numel()
    device = weight.device
    generator = torch.Generator(device="cpu").manual_seed(PROBE_SEED)

    def random_params(dtype: torch.dtype) -> Dict[str, torch.Tensor]:
        params = {"weight": (torch.rand(hidden, generator=generator) + 0.5).to(device=device, dtype=dtype)}
        if has_bias:
            params["bias"] = (torch.randn(hidden, generator=generator) * 0.1).to(device=device, dtype=dtype)
        return params

    def call(params: Dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        out = torch.func.functional_call(module, params, (x,))
        if not isinstance(out, torch.Tensor) or out.shape != x.shape:
            raise ValueError("output is not a tensor of the input's shape")
        return out

    def unit_input(dtype: torch.dtype) -> torch.Tensor:
        return torch.randn(*PROBE_LEADING_SHAPE, hidden, generator=generator).to(device=device, dtype=dtype)

    was_training = module.training
    module.eval()  # no dropout / running-stat updates while probing
    try:
        # fork_rng: whatever the module draws from the global RNG is rolled back afterwards.
        with torch.no_grad(), torch.random.fork_rng(devices=[]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            params = random_params(torch.float32)
            x = unit_input(torch.float32)
            try:
                y = call(params, x)
            except Exception as exc:  # any failure means "not a norm we can replace"
                return None, f"probe call failed ({type(exc).__name__}: {str(exc)[:80]})"
            # At unit scale eps (<< 1) hardly matters: this decides the kind.
            errors = {kind: _relative_error(y, _reference(kind, x, params["weight"], params.get("bias"), 1e-6))
                      for kind in (KIND_RMS, KIND_LAYER)}
            kind = min(errors, key=errors.get)
            if errors[kind] > PROBE_TOLERANCE:
                return None, (f"computes neither RMSNorm nor LayerNorm (probe error {errors[KIND_RMS]:.2g} vs "
                              f"rms_norm, {errors[KIND_LAYER]:.2g} vs layer_norm)")
            if kind == KIND_RMS and has_bias:
                return None, "RMSNorm with a bias (no fused op takes one)"
            # Inputs scaled so their mean square is eps: a wrong eps changes the output by >= 1.3x.
            attr_name, attr_eps = _eps_attribute(module)
            candidates = ([attr_eps] if attr_eps else []) + [e for e in COMMON_EPS_CANDIDATES if e != attr_eps]
            eps = None
            base = unit_input(torch.float32)
            for candidate in candidates:
                x_small = base * math.sqrt(candidate)
                try:
                    y_small = call(params, x_small)
                except Exception:
                    continue
                expected = _reference(kind, x_small, params["weight"], params.get("bias"), candidate)
                if _relative_error(y_small, expected) <= PROBE_TOLERANCE:
                    eps = candidate
                    break
            if eps is None:
                return None, f"computes {kind} norm but its eps is none of {candidates}"
            source = f"attribute {attr_name}" if attr_eps == eps else "probe"
            upcast = kind == KIND_RMS and _prefers_fp32_upcast(call, random_params, unit_input, eps)
            return _NormSpec(kind, eps, has_bias, upcast, f"probe ({kind} norm, eps from {source})"), ""
    finally:
        module.train(was_training)


def _prefers_fp32_upcast(call, random_params, unit_input, eps: float) -> bool:
    """Whether the module computes bfloat16 inputs as transformers does (normalize in float32,
    cast back, then multiply by the weight) rather than as one rms_norm in the input dtype."""
    try:
        params = random_params(torch.bfloat16)
        x = unit_input(torch.bfloat16)
        y = call(params, x)
    except Exception:
        return False
    weight = params["weight"]
    upcast = weight * _reference(KIND_RMS, x, torch.ones_like(weight), None, eps).float().to(x.dtype)
    native = _reference(KIND_RMS, x, weight, None, eps).to(x.dtype)
    return _relative_error(y, upcast) <= _relative_error(y, native)


# --------------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------------

def _backend_of(device: torch.device) -> str:
    if device.type == "npu":
        return "Ascend NPU"
    if device.type == "cuda":
        return "ROCm GPU" if getattr(torch.version, "hip", None) else "CUDA GPU"
    return device.type.upper()


def _planned_implementation(spec: _NormSpec, weight: Optional[torch.Tensor]) -> Tuple[str, str]:
    """(implementation, note) for the module's current device and dtype."""
    if weight is None:  # no parameters: the input decides, per call
        weight = torch.empty(0)
    if weight.device.type == "npu" and _HAS_TORCH_NPU:
        return (IMPL_NPU_RMS if spec.kind == KIND_RMS else IMPL_TORCH_LAYER), ""
    torch_impl = (IMPL_TORCH_RMS if _TORCH_HAS_RMS_NORM else IMPL_UNFUSED_RMS) if spec.kind == KIND_RMS \
        else IMPL_TORCH_LAYER
    if weight.device.type != "cpu":
        return torch_impl, ""
    if not _KERNELS_AVAILABLE:
        return torch_impl, "fallback: pypto was built without its fused kernels"
    if weight.dtype != torch.float32:
        return torch_impl, (f"fallback: dtype {str(weight.dtype).replace('torch.', '')} "
                            "(the pypto kernel takes float32 only)")
    return IMPL_CPU_KERNEL, (f"{torch_impl} runs instead while autograd records or for non-float32 / "
                             "non-contiguous inputs (counted per call)")


def _make_fused(module: nn.Module, spec: _NormSpec) -> nn.Module:
    if spec.kind == KIND_RMS:
        return FusedRMSNorm(_weight_of(module), spec.eps, spec.upcast_fp32)
    return FusedLayerNorm(getattr(module, "weight", None), getattr(module, "bias", None), spec.eps)


def _module_paths(model: nn.Module) -> Dict[int, List[str]]:
    paths: Dict[int, List[str]] = collections.defaultdict(list)
    for name, module in model.named_modules(remove_duplicate=False):
        paths[id(module)].append(name)
    return paths


def _split_path(path: str) -> Tuple[str, str]:
    parent, _, child = path.rpartition(".")
    return parent, child


# Whether the residual add joins the norm when register_layernorm_fusion is not told: on every
# backend but the CPU. There the add saves one elementwise op of a few microseconds, while the
# traced parent forward that carries the fused add costs more per call (GraphModule call, the
# argument checks). Measured on the demo's hand-written decoder (4 layers, decode batch 8; four
# checks of 30-40 interleaved rounds of 24 tokens, paired with the unfused model): with the
# residual rewrite -0.11 to -0.26 ms per token, slower in 4 of 4 checks; without it -0.15 to
# +0.01 ms, slower in 1 of 4. The rest of the fused model's loss is not explained. On an NPU
# npu_add_rms_norm is one kernel launch instead of two.
def _residual_add_by_default(first_param: Optional[torch.Tensor]) -> bool:
    return first_param is not None and first_param.device.type != "cpu"


def register_layernorm_fusion(model: nn.Module, fuse_with_prev_matmul: bool = True,
                              fuse_with_next_dropout: bool = True,
                              fuse_residual_add: Optional[bool] = None) -> FusionReport:
    """Replace every LayerNorm / RMSNorm in ``model`` (in place) with a fused module.

    Returns a :class:`FusionReport` listing each candidate module: what was fused and with which
    implementation, and for the rest why not. Parameters are shared with the originals, so
    ``state_dict()`` keys and values do not change. ``report.unregister()`` restores the model.

    fuse_with_prev_matmul: torch has no matmul + norm fused op on any backend pypto drives, so
        each fused norm reports it as not applicable.
    fuse_with_next_dropout: an ``nn.Dropout`` directly after a norm (next in an ``nn.Sequential``,
        or the norm's only user in a torch.fx-traceable parent) is folded into the fused norm
        module in eval mode; the fused module still applies it if the model is put back into
        training. In training mode nothing is folded (reported).
    fuse_residual_add: where a parent's forward traces with torch.fx and shows ``norm(a + b)``, the
        add and the RMSNorm run as one fused op; untraceable parents are reported and left unfused.
        None (default): on accelerators, not on the CPU, where the rewritten forward costs more per
        call than the add it saves (measured; see _residual_add_by_default)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, not {type(model).__name__}")
    first_param = next(model.parameters(), None)
    report = FusionReport(_backend_of(first_param.device if first_param is not None else torch.device("cpu")))
    paths = _module_paths(model)
    fused_by_parent: Dict[str, List[Tuple[str, FusionEntry]]] = collections.defaultdict(list)

    if fuse_residual_add is None:
        fuse_residual_add = _residual_add_by_default(first_param)
    seen = set()
    for path, module in list(model.named_modules()):
        if id(module) in seen or not _is_candidate(module):
            continue
        seen.add(id(module))
        all_paths = paths[id(module)]
        entry = FusionEntry(path=path, original_class=type(module).__name__, fused=False, original=module)
        report.entries.append(entry)
        blocker = _candidate_blocker(module)
        if blocker:
            entry.reason = blocker
            continue
        if not path:
            entry.reason = "the model itself is the norm (nothing to replace it in); call the function forms"
            continue
        by_class = _identify_by_class(module)
        spec, reason = by_class if by_class is not None else _probe(module)
        if spec is None:
            entry.reason = reason
            continue
        fused = _make_fused(module, spec)
        fused.train(module.training)
        for p in all_paths:
            parent_path, child = _split_path(p)
            parent = model.get_submodule(parent_path)
            setattr(parent, child, fused)
            report._undo.append(_restore_child(parent, child, module))
        entry.fused, entry.kind, entry.eps, entry.module = True, spec.kind, spec.eps, fused
        entry.identified_by = spec.identified_by
        weight = _weight_of(module)
        entry.implementation, entry.reason = _planned_implementation(spec, weight)
        device = weight.device if weight is not None else torch.device("cpu")
        entry.prev_matmul = (f"not applicable on {_backend_of(device)}: torch has no fused "
                             "matmul+norm op" if fuse_with_prev_matmul else "not requested")
        entry.residual_add = "not fused: no parent forward seen yet"
        entry.next_dropout = "not requested" if not fuse_with_next_dropout else "no Dropout follows"
        if len(all_paths) > 1:
            entry.residual_add = "not fused: module is shared by several parents"
            if fuse_with_next_dropout:
                entry.next_dropout = "not folded: module is shared by several parents"
            continue
        fused_by_parent[_split_path(path)[0]].append((_split_path(path)[1], entry))

    for parent_path, children in fused_by_parent.items():
        parent = model.get_submodule(parent_path)
        if isinstance(parent, nn.Sequential):
            for child, entry in children:
                entry.residual_add = "not applicable: parent nn.Sequential passes one tensor"
            if fuse_with_next_dropout:
                _fold_sequential_dropouts(parent, children, report)
            continue
        _fuse_in_traced_parent(parent, parent_path, children, fuse_with_next_dropout, fuse_residual_add, report)
    return report


def _restore_child(parent: nn.Module, child: str, original: nn.Module) -> Callable[[], None]:
    return lambda: setattr(parent, child, original)


def _fold_sequential_dropouts(parent: nn.Sequential, children, report: FusionReport) -> None:
    names = list(parent._modules.keys())
    for child, entry in children:
        position = names.index(child)
        following = parent._modules[names[position + 1]] if position + 1 < len(names) else None
        if not isinstance(following, nn.Dropout):
            continue
        if following.training:
            entry.next_dropout = "not folded: Dropout is in training mode (not an identity)"
            continue
        _fold_dropout(entry, following, report, applied_in_training=True)
        next_name = names[position + 1]
        parent._modules[next_name] = nn.Identity()
        report._undo.append(_restore_child(parent, next_name, following))


def _fold_dropout(entry: FusionEntry, dropout: nn.Dropout, report: FusionReport, applied_in_training: bool) -> None:
    """applied_in_training: the Dropout left the model (nn.Sequential slot), so the fused module
    applies it when training; otherwise the original forward (which still calls it) runs then."""
    fused = entry.module
    if applied_in_training:
        fused.dropout_p = float(dropout.p)
    entry.next_dropout = f"folded (eval: identity; p={dropout.p:g} still applied in training)"

    def undo() -> None:
        fused.dropout_p = 0.0
    report._undo.append(undo)


class _LeafTracer(torch.fx.Tracer):
    """Traces only the parent's own forward: every child module is one call node."""

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        return True


_ADD_TARGETS = (operator.add, torch.add)


def _fuse_in_traced_parent(parent: nn.Module, parent_path: str, children, fuse_with_next_dropout: bool,
                           fuse_residual_add: bool, report: FusionReport) -> None:
    """Residual add + norm and norm -> dropout through a torch.fx trace of the parent's forward."""
    label = parent_path or "<model>"
    signature_problem = _untraceable_signature(parent)
    if signature_problem:
        why = f"not fused: {type(parent).__name__}.forward {signature_problem}"
        for _, entry in children:
            entry.residual_add = why
            if fuse_with_next_dropout and entry.next_dropout == "no Dropout follows":
                entry.next_dropout = "not folded: " + why[len("not fused: "):]
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = _LeafTracer().trace(parent)
    except Exception as exc:
        why = (f"not fused: torch.fx cannot trace {type(parent).__name__} ({label}): "
               f"{type(exc).__name__}: {str(exc).splitlines()[0][:100] if str(exc) else ''}")
        for _, entry in children:
            entry.residual_add = why
            if fuse_with_next_dropout:
                entry.next_dropout = "not folded: " + why[len("not fused: "):]
        return
    by_child = {child: entry for child, entry in children}
    norm_nodes: Dict[str, List[torch.fx.Node]] = collections.defaultdict(list)
    for node in graph.nodes:
        if node.op == "call_module" and node.target in by_child:
            norm_nodes[node.target].append(node)
    changed = False
    for child, entry in by_child.items():
        nodes = norm_nodes.get(child, [])
        if not nodes:
            entry.residual_add = f"not fused: {type(parent).__name__}.forward does not call it"
            continue
        if not fuse_residual_add:
            results = ["not requested (fuse_residual_add=False; the default on the CPU, where the "
                       "rewritten forward costs more than the add)"]
        else:
            results = [_fuse_add_into(graph, node, entry) for node in nodes]
        changed |= any(r == "fused" for r in results)
        fused_count = results.count("fused")
        if fused_count:
            entry.residual_add = (f"fused ({fused_count} of {len(nodes)} calls)" if len(nodes) > 1 else "fused") \
                + f" in {type(parent).__name__}.forward"
        else:
            entry.residual_add = "not fused: " + results[0]
        if fuse_with_next_dropout and len(nodes) == 1 and "fused" not in results:
            changed |= _fold_traced_dropout(parent, graph, nodes[0], entry, report)
        elif fuse_with_next_dropout and len(nodes) == 1:
            # The norm node was replaced by the fused add+norm; its output is the getitem 0.
            normed = [n for n in graph.nodes if n.meta.get("pypto_normed_of") == child]
            if normed:
                changed |= _fold_traced_dropout(parent, graph, normed[0], entry, report)
        elif fuse_with_next_dropout and len(nodes) > 1:
            entry.next_dropout = "not folded: norm is called several times in the parent"
    if not changed:
        return
    graph.lint()
    traced = torch.fx.GraphModule(parent, graph, class_name=type(parent).__name__ + "PyptoFused")
    traced_training = parent.training
    original_forward_fn = type(parent).forward

    def forward(*args, **kwargs):
        # The trace fixed Python-level branches on self.training and on `x is None` tests: use it
        # only in the mode it was traced in and when every argument is a tensor.
        if parent.training != traced_training or not all(
                isinstance(a, torch.Tensor) for a in (*args, *kwargs.values())):
            return original_forward_fn(parent, *args, **kwargs)
        return traced(*args, **kwargs)

    had_instance_forward = "forward" in parent.__dict__
    previous_forward = parent.__dict__.get("forward")
    parent.__dict__["forward"] = forward

    def undo() -> None:
        if had_instance_forward:
            parent.__dict__["forward"] = previous_forward
        else:
            parent.__dict__.pop("forward", None)
    report._undo.append(undo)


def _untraceable_signature(parent: nn.Module) -> Optional[str]:
    """Why a trace of parent.forward could not be trusted (None: it can). A trace fixes Python
    branches on arguments (``if mask is not None``), so only forwards whose parameters are all
    required (tensors at run time) are rewritten."""
    try:
        parameters = list(inspect.signature(type(parent).forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return "has no inspectable signature"
    for p in parameters:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return f"takes *{p.name} / **{p.name} (a trace would fix which are passed)"
        if p.default is not p.empty:
            return f"has optional parameter {p.name!r} (a trace would fix its branches)"
    return None


def _fuse_add_into(graph: torch.fx.Graph, norm_node: torch.fx.Node, entry: FusionEntry) -> str:
    """Rewrite ``norm(a + b)`` into the fused add+norm; returns "fused" or why not."""
    if entry.kind != KIND_RMS:
        return "no fused add + layer_norm op"
    if len(norm_node.args) != 1 or norm_node.kwargs:
        return "norm is called with more than one argument"
    add = norm_node.args[0]
    if not isinstance(add, torch.fx.Node) or add.op != "call_function" or add.target not in _ADD_TARGETS:
        return "its input is not a residual add"
    if len(add.args) != 2 or add.kwargs or not all(isinstance(a, torch.fx.Node) for a in add.args):
        return "the add before it is not a plain tensor + tensor"
    # Every other user of the add result reads x + residual: the fused op returns that same sum,
    # so they are rewired to it and the graph stays equivalent.
    with graph.inserting_after(add):
        norm_ref = graph.get_attr(norm_node.target)
    with graph.inserting_after(norm_ref):
        fused_call = graph.call_function(_fused_add_norm_call, (norm_ref, add.args[0], add.args[1]))
    with graph.inserting_after(fused_call):
        normed = graph.call_function(operator.getitem, (fused_call, 0))
    with graph.inserting_after(normed):
        summed = graph.call_function(operator.getitem, (fused_call, 1))
    normed.meta["pypto_normed_of"] = norm_node.target
    norm_node.replace_all_uses_with(normed)
    graph.erase_node(norm_node)
    add.replace_all_uses_with(summed)
    graph.erase_node(add)
    return "fused"


def _fold_traced_dropout(parent: nn.Module, graph: torch.fx.Graph, norm_out: torch.fx.Node,
                         entry: FusionEntry, report: FusionReport) -> bool:
    users = list(norm_out.users)
    if len(users) != 1 or users[0].op != "call_module":
        return False
    dropout = parent.get_submodule(users[0].target)
    if not isinstance(dropout, nn.Dropout):
        return False
    if dropout.training:
        entry.next_dropout = "not folded: Dropout is in training mode (not an identity)"
        return False
    users[0].replace_all_uses_with(norm_out)
    graph.erase_node(users[0])
    _fold_dropout(entry, dropout, report, applied_in_training=False)
    return True
