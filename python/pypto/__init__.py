"""pypto: performance tuning for LLM inference (Ascend NPU first, NVIDIA/AMD GPU, CPU).

collect → parse → model → diagnose → advise / optimize → re-collect → compare.
The engine is C++ (pypto._engine); this package wraps it and owns what only Python can do:
wrapping torch / torch_npu profilers and rewriting torch.nn modules. See docs/python.md.
"""

from __future__ import annotations

from ._native import engine as _engine
from .errors import (CancelledError, InternalError, InvalidArgumentError, LimitExceededError,
                     ProfileFormatError, ProfileNotFoundError, PyptoError, PyptoIOError)
from .graph import OperatorCallGraph, load_profile

__version__ = _engine.__version__

_LAZY = {
    # collection imports torch; loaded on first use so that `import pypto` stays light.
    "Profiler": "collection",
    "TuningSession": "collection",
    "ProfileResults": "collection",
    "SamplingBudget": "sampling",
    "CANNProfileParser": "parser",
    "HotspotDetector": "diagnostics",
    "DiagnosticReport": "diagnostics",
    "TransformerHotspotAnalyzer": "analyzers",
    "TuningAdvisor": "advisor",
    "TilingOptimizer": "optimizers",
    "KVCacheLayoutOptimizer": "optimizers",
    "apply_all_optimizations": "optimizers",
    "register_layernorm_fusion": "fusion",
    "ProfileComparer": "comparison",
    "ServingProfiler": "serving",
    "analyze_fleet": "fleet",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pypto' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = ["OperatorCallGraph", "load_profile", "PyptoError", "ProfileFormatError", "ProfileNotFoundError",
           "InvalidArgumentError", "LimitExceededError", "PyptoIOError", "CancelledError", "InternalError",
           *_LAZY]
