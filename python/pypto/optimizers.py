"""Optimizers that write working artifacts, and apply_all_optimizations.

TilingOptimizer: the AOE operator-tuning input for the flagged MatMuls on Ascend (op types,
shapes, dtypes, formats, plus the command/env to run it); padded shapes that restore alignment
with the predicted gain on CUDA/ROCm/CPU.
KVCacheLayoutOptimizer: a Python module with apply_kv_cache_layout_optimization(model)
(preallocated cache in the layout the attention kernel reads, in-place writes instead of cat).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from types import ModuleType
from typing import Any, Dict, List, Optional

from ._native import diagnose_options, engine, fspath, model_config_json
from .diagnostics import _as_graph


class TuningConfig:
    """What TilingOptimizer produced: `ops` (the flagged matmuls with shapes and figures)."""

    def __init__(self, graph: Any, options: Dict[str, Any], backend: str, result: Dict[str, Any]):
        self._graph = graph
        self._options = options
        self._backend = backend
        self.detail = json.loads(result["detail_json"])
        self.tune_ops = json.loads(result["tune_ops_json"])
        self.op_count = int(result["op_count"])

    @property
    def ops(self) -> List[Dict[str, Any]]:
        return list(self.detail.get("ops", []))

    def save(self, path: Any, force: bool = False) -> List[str]:
        """Writes the config files into directory `path` (created if missing); returns their paths.

        Ascend: tune_ops file for AOE, the detail JSON and a shell script with the exact
        aoe command and environment; other backends: the padded-shape JSON.
        """
        result = self._graph._loaded.tiling_config(self._options, self._backend, fspath(path), bool(force))
        return list(result["paths"])

    def to_json(self) -> str:
        return json.dumps(self.detail, indent=2)


class TilingOptimizer:
    def __init__(self, call_graph: Any, *, backend: Optional[str] = None, **diagnose: Any):
        self.call_graph = _as_graph(call_graph)
        self.backend = backend or ""
        self.options = diagnose_options(**diagnose)

    def generate_tuning_config(self) -> TuningConfig:
        result = self.call_graph._loaded.tiling_config(self.options, self.backend, "", False)
        return TuningConfig(self.call_graph, self.options, self.backend, result)


class LayoutPatch:
    """The generated KV-cache layout module: `.text`, `.save(path)`, `.load()` → module, `.apply(model)`."""

    def __init__(self, text: str):
        self.text = text

    def save(self, path: Any, force: bool = False) -> str:
        p = fspath(path)
        engine.write_text_file(p, self.text, bool(force))
        return p

    def load(self) -> ModuleType:
        """Imports the patch as a module (from a private temporary file)."""
        with tempfile.TemporaryDirectory(prefix="pypto-kvpatch-") as tmp:
            path = os.path.join(tmp, "pypto_kv_cache_layout_patch.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(self.text)
            spec = importlib.util.spec_from_file_location("pypto_kv_cache_layout_patch", path)
            module = importlib.util.module_from_spec(spec)
            assert spec.loader is not None
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        return module

    def apply(self, model: Any) -> Any:
        """Runs apply_kv_cache_layout_optimization(model) of the patch; returns what it returns."""
        return self.load().apply_kv_cache_layout_optimization(model)


class KVCacheLayoutOptimizer:
    """KVCacheLayoutOptimizer(model_config).generate_layout_transform_patch().save(path).

    model_config: a transformers config (or model), a dict, a path to config.json, or None.
    """

    def __init__(self, model_config: Any = None):
        self.model_config = model_config

    def generate_layout_transform_patch(self) -> LayoutPatch:
        return LayoutPatch(engine.kv_cache_patch(model_config_json(self.model_config)))


__all__ = ["TilingOptimizer", "TuningConfig", "KVCacheLayoutOptimizer", "LayoutPatch"]
