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
import warnings
from types import ModuleType
from typing import Any, Dict, List, Optional

from ._native import diagnose_options, engine, fspath, model_config_json
from .errors import InvalidArgumentError
from .diagnostics import _as_graph


class TuningConfig:
    """What TilingOptimizer produced: `ops` (the flagged matmuls with shapes and figures)."""

    def __init__(self, graph: Any, options: Dict[str, Any], backend: str, result: Dict[str, Any]):
        self._graph = graph
        self._options = options
        self._backend = backend
        self._detail_text = result["detail_json"]
        self._tune_ops_text = result["tune_ops_json"]
        self.detail = json.loads(result["detail_json"])
        self.tune_ops = json.loads(result["tune_ops_json"])
        self.op_count = int(result["op_count"])

    @property
    def ops(self) -> List[Dict[str, Any]]:
        return list(self.detail.get("ops", []))

    @property
    def is_ascend(self) -> bool:
        return self.detail.get("backend") == "ascend"

    def save(self, path: Any, force: bool = False) -> List[str]:
        """Writes the tuning input; returns the paths written.

        A file path (with an extension, e.g. the brief's "tiling_tuning.cfg"): ONE file, replacing an
        existing regular file. On Ascend profiles it is the operator list CANN's operator tuning reads
        (AOE `--tune_ops_file` JSON, {"tune_ops_name": [kernel names]}: see docs/python-api.md for the
        source and how ACL_OP_TUNER_CONFIG points at it). On other profiles there is nothing for CANN to
        tune: the file gets the padded GEMM shapes (schema pypto.tiling/1) and a UserWarning says so.

        A directory (an existing one, a path ending in "/", or a name without extension): the files of
        `pypto advise` (Ascend: aoe_tune_ops.cfg, aoe_tuning_ops.json, aoe_tune.sh; others:
        padded_gemm_shapes.json), refusing existing files unless `force`.
        """
        p = fspath(path)
        directory = os.path.isdir(p) or p.endswith(("/", os.sep)) or not os.path.splitext(os.path.basename(p))[1]
        if directory:
            result = self._graph._loaded.tiling_config(self._options, self._backend, p, bool(force))
            return list(result["paths"])
        replace = bool(force) or (os.path.isfile(p) and not os.path.islink(p))
        if self.is_ascend:
            engine.write_text_file(p, self._tune_ops_text, replace)
        else:
            engine.write_text_file(p, self._detail_text, replace)
            warnings.warn(f"{p}: not an Ascend profile ({self.detail.get('backend')}), so there is no operator list "
                          f"for CANN's tuning tool: wrote the padded GEMM shapes ({len(self.ops)} op(s), schema "
                          "pypto.tiling/1) instead", UserWarning, stacklevel=2)
        return [p]

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

    def apply(self, model: Any) -> Dict[str, Any]:
        """Runs apply_kv_cache_layout_optimization(model) of the patch; returns the dict saying what it
        patched (mode, capacity, patched_modules, layout). The patch itself returns the model."""
        return self.load().apply_kv_cache_layout_optimization(model, return_info=True)


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
        self.source = ""   # where the recommendations came from

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


# The short run apply_all_optimizations profiles when it has neither recommendations nor a diagnosis
# of the model: a greedy generate of this many new tokens (enough for one prefill and decode steps
# for the structure analysis; a few seconds on CPU for a small model) from this prompt.
SHORT_RUN_NEW_TOKENS = 8
SHORT_RUN_PROMPT = "Hello, how are you today?"


def _looks_like_tokenizer(value: Any) -> bool:
    return (value is not None and not isinstance(value, (list, tuple, dict, str)) and
            not hasattr(value, "recommendations") and callable(getattr(value, "encode", None)))


def apply_all_optimizations(model: Any, recommendations: Any = None, *, tokenizer: Any = None,
                            accept: Optional[Any] = None, model_config: Any = None,
                            return_report: bool = False, progress: Any = None) -> Any:
    """Applies the accepted recommendations pypto can apply to a torch.nn model by itself; returns
    the model (the brief: `model_optimized = apply_all_optimizations(model, tokenizer)`), with what
    was done in `model.pypto_optimization_report` (an OptimizationReport). `return_report=True`
    returns the OptimizationReport instead (the form of earlier pypto releases).

    recommendations: TuningAdvisor(...).generate_recommendations() (or an AdviceReport), or a
    tokenizer (the brief's second argument). Without recommendations pypto advises itself: from the
    latest diagnosis of this model in this process (HotspotDetector.diagnose of a profile whose steps
    ran this model, matched by class, config and parameter count), else from a short greedy run
    (SHORT_RUN_NEW_TOKENS tokens of SHORT_RUN_PROMPT) it profiles with the tokenizer.
    accept: hotspot types / rule ids to apply (default: all that are applicable).
    Applied: norm fusion (register_layernorm_fusion), the KV-cache layout patch (static cache
    for transformers models, preallocated in-place cache for hand-written ones), SDPA attention
    (transformers models). Everything else is listed in `skipped` with the reason (e.g. AOE
    tuning needs an Ascend machine; torch.compile is left to the user because its compile time
    is paid per process).
    progress: a pypto._progress.Progress (or anything with advance(item)), advanced once per
    recommendation considered, named by its hotspot type (the demo's progress line); None: silent.
    """
    if _looks_like_tokenizer(recommendations):
        if tokenizer is not None and tokenizer is not recommendations:
            raise InvalidArgumentError("apply_all_optimizations: a tokenizer given twice (positional and tokenizer=)")
        tokenizer, recommendations = recommendations, None
    source = "recommendations given"
    if recommendations is None:
        recommendations, source = _advise_for(model, tokenizer, model_config)
    report = _apply_recommendations(model, recommendations, accept, model_config, progress)
    report.source = source
    if return_report:
        return report
    try:
        model.pypto_optimization_report = report
    except (AttributeError, TypeError):
        pass
    return model


def _advise_for(model: Any, tokenizer: Any, model_config: Any):
    """Recommendations for `model` without any given: the latest diagnosis in this process, else a short run."""
    from .advisor import TuningAdvisor
    from .collection import model_fingerprint
    from .diagnostics import HotspotDetector, latest_diagnosis
    config = model_config if model_config is not None else getattr(model, "config", None)
    latest = latest_diagnosis(model_fingerprint(model))
    if latest is not None:
        options = {k: v for k, v in latest["options"].items() if k != "only"}
        advisor = TuningAdvisor(latest["graph"], config if config is not None else latest["model_config"], **options)
        return advisor.generate_recommendations(), "the latest diagnosis of this model in this process"
    if tokenizer is None:
        raise InvalidArgumentError("apply_all_optimizations: no recommendations, no diagnosis of this model in this "
                                   "process, and no tokenizer to profile a short run with; pass recommendations "
                                   "(TuningAdvisor(...).generate_recommendations()) or the tokenizer")
    import torch

    from .collection import Profiler
    encoded = tokenizer(SHORT_RUN_PROMPT, return_tensors="pt")
    input_ids = encoded["input_ids"] if isinstance(encoded, dict) or hasattr(encoded, "keys") else encoded.input_ids
    parameter = next(iter(model.parameters()), None)
    if parameter is not None:
        input_ids = input_ids.to(parameter.device)
    with torch.no_grad(), Profiler(model=model) as profiler:
        if callable(getattr(model, "generate", None)):
            pad = getattr(tokenizer, "pad_token_id", None)
            kwargs = {"pad_token_id": pad} if pad is not None and _is_transformers_model(model) else {}
            model.generate(input_ids, max_new_tokens=SHORT_RUN_NEW_TOKENS, do_sample=False, **kwargs)
        else:
            model(input_ids)
    results = profiler.get_results()
    HotspotDetector().diagnose(results)
    advisor = TuningAdvisor(results.call_graph, config)
    return advisor.generate_recommendations(), f"a short profiled run ({SHORT_RUN_NEW_TOKENS} new tokens)"


def _advancing(recs: List[Any], progress: Any):
    """The recommendations one by one; `progress` advances once each is handled (also when the loop
    body moves on with `continue`), named by its hotspot type."""
    if progress is not None and getattr(progress, "total", 0) is None:
        progress.total = len(recs)
    for rec in recs:
        yield rec
        if progress is not None:
            raw = rec.raw if hasattr(rec, "raw") else rec
            progress.advance(str(raw.get("hotspot_type", "") or raw.get("rule_id", "")))


def _apply_recommendations(model: Any, recommendations: Any, accept: Optional[Any],
                           model_config: Any, progress: Any = None) -> "OptimizationReport":
    recs = list(getattr(recommendations, "recommendations", recommendations))
    wanted = set(accept) if accept is not None else None
    report = OptimizationReport()
    done = set()
    for rec in _advancing(recs, progress):
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
            info = info if isinstance(info, dict) else {}
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


__all__ += ["apply_all_optimizations", "OptimizationReport", "AppliedOptimization", "SHORT_RUN_NEW_TOKENS"]
