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


# ---------------------------------------------------------------- apply_all_optimizations

class AppliedOptimization:
    """One action applied to a model, with the advisor's estimate (for ProfileComparer)."""

    def __init__(self, action_id: str, hotspot_type: str, description: str, detail: Any,
                 estimated_saved_us: float, target_class: str = "", target_op: str = ""):
        self.action_id = action_id
        self.hotspot_type = hotspot_type
        self.description = description
        self.detail = detail
        self.estimated_saved_us = float(estimated_saved_us)
        self.target_class = target_class
        self.target_op = target_op

    def as_compare_action(self) -> Dict[str, Any]:
        return {"id": self.action_id, "description": self.description, "issue_type": self.hotspot_type,
                "target_op": self.target_op, "target_class": self.target_class,
                "estimated_saved_ns": int(round(self.estimated_saved_us * 1000))}

    def __repr__(self) -> str:
        return f"AppliedOptimization({self.action_id}, {self.hotspot_type}, est. {self.estimated_saved_us:.1f} us)"


class OptimizationReport:
    """What apply_all_optimizations did: `applied` and `skipped` (action, reason)."""

    def __init__(self):
        self.applied: List[AppliedOptimization] = []
        self.skipped: List[Dict[str, str]] = []

    def compare_actions(self) -> List[Dict[str, Any]]:
        """The applied actions in the form ProfileComparer(applied_actions=...) takes."""
        return [a.as_compare_action() for a in self.applied]

    def __str__(self) -> str:
        lines = [f"applied {len(self.applied)} optimization(s):"]
        lines += [f"  + {a.action_id:<22} {a.hotspot_type:<24} est. {a.estimated_saved_us:9.1f} us  {a.description}"
                  for a in self.applied]
        if self.skipped:
            lines.append(f"not applied ({len(self.skipped)}):")
            lines += [f"  - {s['action']:<22} {s['hotspot_type']:<24} {s['reason']}" for s in self.skipped]
        return "\n".join(lines)


def _recommendation_actions(rec: Any) -> List[str]:
    raw = rec.raw if hasattr(rec, "raw") else rec
    return [a.get("id", "") for a in raw.get("actions", [])]


def _op_types(rec: Any) -> List[str]:
    raw = rec.raw if hasattr(rec, "raw") else rec
    return [str(e.get("op_type", "")) for e in raw.get("evidence", [])]


def _saved_us(rec: Any) -> float:
    raw = rec.raw if hasattr(rec, "raw") else rec
    return float(raw.get("estimated_saved_us") or 0.0)


def _is_transformers_model(model: Any) -> bool:
    return hasattr(model, "generation_config") and hasattr(model, "config") and hasattr(model, "generate")


def _use_sdpa(model: Any) -> Optional[str]:
    """Switches a transformers model to PyTorch SDPA attention; None when the model has no switch."""
    if not _is_transformers_model(model):
        return None
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation("sdpa")
    else:
        model.config._attn_implementation = "sdpa"
    return "attention implementation: sdpa (torch.nn.functional.scaled_dot_product_attention)"


# Action ids of the rule library (data/advisor/rules/*.json) that pypto can apply to a
# torch.nn model by itself, per kind of change.
_NORM_FUSION_ACTIONS = {"pypto_fused_norm_cpu", "npu_rms_norm", "npu_add_rms_norm", "torch_compile_cpu"}
_KV_ACTIONS = {"apply_kv_cache_patch", "static_cache_config"}
_SDPA_ACTIONS = {"sdpa", "sdpa_cpu"}
_NORM_OP_TYPES = ("rms_norm", "layer_norm", "add_rms_norm", "add_layer_norm", "norm")


def apply_all_optimizations(model: Any, recommendations: Any, *, accept: Optional[Any] = None,
                            model_config: Any = None) -> OptimizationReport:
    """Applies the accepted recommendations pypto can apply to a torch.nn model by itself.

    recommendations: TuningAdvisor(...).generate_recommendations() (or an AdviceReport).
    accept: hotspot types / rule ids to apply (default: all that are applicable).
    Applied: norm fusion (register_layernorm_fusion), the KV-cache layout patch (static cache
    for transformers models, preallocated in-place cache for hand-written ones), SDPA attention
    (transformers models). Everything else is listed in `skipped` with the reason (e.g. AOE
    tuning needs an Ascend machine; torch.compile is left to the user because its compile time
    is paid per process).
    """
    recs = list(getattr(recommendations, "recommendations", recommendations))
    wanted = set(accept) if accept is not None else None
    report = OptimizationReport()
    done = set()
    for rec in recs:
        raw = rec.raw if hasattr(rec, "raw") else rec
        hotspot, rule = raw.get("hotspot_type", ""), raw.get("rule_id", "")
        if wanted is not None and hotspot not in wanted and rule not in wanted:
            continue
        actions = set(_recommendation_actions(rec))
        op_types = _op_types(rec)
        norm_chain = hotspot == "norm_launch_overhead" or (
            hotspot == "fusible_sequence" and any(t in _NORM_OP_TYPES for t in op_types))
        if norm_chain and (actions & _NORM_FUSION_ACTIONS or hotspot == "fusible_sequence"):
            if "norm_fusion" in done:
                continue
            from .fusion import register_layernorm_fusion
            fusion = register_layernorm_fusion(model)
            done.add("norm_fusion")
            report.applied.append(AppliedOptimization("norm_fusion", hotspot, "fused RMSNorm/LayerNorm kernels",
                                                      fusion, _saved_us(rec), target_class="norm"))
        elif hotspot == "kv_cache_layout" and actions & _KV_ACTIONS:
            if "kv_cache" in done:
                continue
            config = model_config if model_config is not None else getattr(model, "config", None)
            info = KVCacheLayoutOptimizer(config).generate_layout_transform_patch().apply(model)
            done.add("kv_cache")
            if info.get("mode"):
                report.applied.append(AppliedOptimization("kv_cache_layout", hotspot, f"KV cache: {info['mode']}",
                                                          info, _saved_us(rec), target_class="copy"))
            else:
                report.skipped.append({"action": "kv_cache_layout", "hotspot_type": hotspot,
                                       "reason": "no KV cache attribute found in the model"})
        elif (hotspot == "attention_memory_bound" or hotspot == "fusible_sequence") and actions & _SDPA_ACTIONS:
            if "sdpa" in done:
                continue
            detail = _use_sdpa(model)
            done.add("sdpa")
            if detail:
                report.applied.append(AppliedOptimization("sdpa_attention", hotspot, detail, detail, _saved_us(rec),
                                                          target_class="attention"))
            else:
                report.skipped.append({"action": "sdpa_attention", "hotspot_type": hotspot,
                                       "reason": "the model has no attention implementation switch; "
                                                 "call torch.nn.functional.scaled_dot_product_attention in it"})
        else:
            report.skipped.append({"action": rule or hotspot, "hotspot_type": hotspot,
                                   "reason": "not applied automatically: " + (raw.get("action", "") or "no action")
                                   .splitlines()[0][:100]})
    return report


__all__ += ["apply_all_optimizations", "OptimizationReport", "AppliedOptimization"]
