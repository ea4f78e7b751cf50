"""Optimizers that write working artifacts, and apply_all_optimizations.

TilingOptimizer: the AOE operator-tuning input for the flagged MatMuls on Ascend (op types,
shapes, dtypes, formats, plus the command/env to run it); padded shapes that restore alignment
with the predicted gain on CUDA/ROCm/CPU.
KVCacheLayoutOptimizer: a Python module with apply_kv_cache_layout_optimization(model)
(preallocated cache in the layout the attention kernel reads, in-place writes instead of cat).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import warnings
from types import ModuleType
from typing import Any, Dict, List, Optional, Tuple

from ._native import diagnose_options, engine, fspath, model_config_json
from .errors import InvalidArgumentError
from .diagnostics import _as_graph


class TuningConfig:
    """What TilingOptimizer produced: `ops` (the flagged matmuls with shapes and figures)."""

    def __init__(self, config: Any):
        self._config = config   # the engine's TuningConfig
        self.detail = config.detail()
        self.tune_ops = config.tune_ops()
        self.op_count = int(config.op_count)

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
            return list(self._config.save(p, bool(force)))
        replace = bool(force) or (os.path.isfile(p) and not os.path.islink(p))
        if self.is_ascend:
            engine.write_text_file(p, self._config.tune_ops_json(), replace)
        else:
            engine.write_text_file(p, self._config.detail_json(), replace)
            warnings.warn(f"{p}: not an Ascend profile ({self.detail.get('backend')}), so there is no operator list "
                          f"for CANN's tuning tool: wrote the padded GEMM shapes ({len(self.ops)} op(s), schema "
                          "pypto.tiling/1) instead", UserWarning, stacklevel=2)
        return [p]

    def to_json(self) -> str:
        return self._config.detail_json()


class TilingOptimizer:
    def __init__(self, call_graph: Any, *, backend: Optional[str] = None, **diagnose: Any):
        self.call_graph = _as_graph(call_graph)
        self.backend = backend or ""
        self.options = diagnose_options(**diagnose)

    def generate_tuning_config(self) -> TuningConfig:
        return TuningConfig(self.call_graph._loaded.tiling_config(self.options, self.backend))


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
                 estimated_saved_us: float, target_class: str = "", target_op: str = "", estimated: bool = True,
                 estimate_basis: str = "the advisor's estimate"):
        self.action_id = action_id
        self.estimate_basis = estimate_basis   # where estimated_saved_us comes from
        self.estimated = estimated      # False: the rule gives no gain for it (estimated_saved_us is 0)
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
        # With verification (apply_all_optimizations(verify_inputs=...)): the actions taken back, each
        # {"action", "hotspot_type", "reason"}, and per measured action its ActionMeasurement.
        self.reverted: List[Dict[str, str]] = []
        self.measurements: Dict[str, "ActionMeasurement"] = {}
        self.source = ""   # where the recommendations came from

    def compare_actions(self) -> List[Dict[str, Any]]:
        """The applied actions in the form ProfileComparer(applied_actions=...) takes."""
        return [a.as_compare_action() for a in self.applied]

    def __str__(self) -> str:
        lines = [f"applied {len(self.applied)} optimization(s):"]
        lines += [f"  + {a.action_id:<22} {a.hotspot_type:<24} est. {a.estimated_saved_us:9.1f} us  {a.description}"
                  for a in self.applied]
        lines += [f"    measured alone: {self.measurements[a.action_id].line()}"
                  for a in self.applied if a.action_id in self.measurements]
        if self.reverted:
            lines.append(f"reverted ({len(self.reverted)}):")
            for r in self.reverted:
                lines.append(f"  x {r['action']:<22} {r['hotspot_type']:<24} {r['reason']}")
                if r["action"] in self.measurements:
                    lines.append(f"    measured alone: {self.measurements[r['action']].line()}")
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


def _saved_us_on(rec: Any, removed_ops: Optional[List[str]]) -> float:
    """The part of a recommendation's estimate a change that takes away only the findings on
    `removed_ops` (operator names, as the evidence names them) can deliver: the sum of those findings'
    own savings. The whole estimate when the change does not say what it removes (None)."""
    if removed_ops is None:
        return _saved_us(rec)
    raw = rec.raw if hasattr(rec, "raw") else rec
    wanted = set(removed_ops)
    return sum(float(e.get("issue_saved_us") or 0.0) for e in raw.get("evidence", [])
               if e.get("op_name", "") in wanted)


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
_PACKED_LINEAR_ACTIONS = {"onednn_packed_linear"}
_NORM_OP_TYPES = ("rms_norm", "layer_norm", "add_rms_norm", "add_layer_norm", "norm")


# The short run apply_all_optimizations profiles when it has neither recommendations nor a diagnosis
# of the model: a greedy generate of this many new tokens (enough for one prefill and decode steps
# for the structure analysis; a few seconds on CPU for a small model) from this prompt.
SHORT_RUN_NEW_TOKENS = 8
SHORT_RUN_PROMPT = "Hello, how are you today?"


# The intra-op thread count the host_bound rule's "threads" action tries against the process's count on
# CPU, when verification measures it (verify_inputs): one thread. Eager decode runs hundreds of small
# ops per token; every op torch splits across threads pays the OpenMP team's fork and join, and on a
# loaded machine waits for a descheduled team thread, where one thread pays neither. Whether that wins
# depends on the model and the machine, so it is only ever applied measured: kept when the interleaved
# A/B finds it significantly faster.
INTRA_OP_THREADS_CANDIDATE = 1


class ThreadsForward:
    """model.forward run with `threads` intra-op threads (torch.set_num_threads), the caller's count put
    back after each call. An object, not a closure, so that copy.deepcopy of the model rebinds it to the
    copy; `__wrapped__` lets inspect.signature (transformers' generate reads it) see the forward's own."""

    def __init__(self, forward: Any, threads: int):
        self.__wrapped__ = forward
        self.threads = int(threads)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        torch = _torch()
        previous = torch.get_num_threads()
        if previous == self.threads:
            return self.__wrapped__(*args, **kwargs)
        torch.set_num_threads(self.threads)
        try:
            return self.__wrapped__(*args, **kwargs)
        finally:
            torch.set_num_threads(previous)


def _device_type(model: Any) -> str:
    """The device type of the model's first parameter ("cpu" when it has none)."""
    parameter = next(iter(model.parameters()), None) if callable(getattr(model, "parameters", None)) else None
    return "cpu" if parameter is None else parameter.device.type


def _on_cpu(model: Any) -> bool:
    return _device_type(model) == "cpu"


# Devices on which transformers' generate compiles the decode step by itself once the KV cache is static
# (GenerationMixin._valid_auto_compile_criteria, transformers >= 4.4x: torch.compile with CompileConfig,
# whose default mode "reduce-overhead" replays the step as a CUDA graph). pypto uses that route for the
# host-bound remedy of a transformers model on CUDA: the library's own recipe (static cache + CUDA
# graphs), with the cache's fixed shapes that CUDA graphs need; a graph per decode length would be
# recorded for a cache grown token by token.
_GENERATE_COMPILES_ON = ("cuda",)


def _compile_plan(model: Any, device_type: Optional[str] = None) -> str:
    """How the torch_compile action compiles `model`: "generate_cuda_graphs" (a transformers model on CUDA
    whose generation config takes a compile config: a static KV cache, and generate compiles its decode step
    with CUDA graphs) or "forward_dynamic" (torch.compile(model.forward, dynamic=True): every other model and
    device; a hand-written cache grown by torch.cat changes shape every token, which CUDA graphs would record
    once per length)."""
    device_type = device_type or _device_type(model)
    if (device_type in _GENERATE_COMPILES_ON and _is_transformers_model(model)
            and hasattr(model.generation_config, "compile_config")):
        return "generate_cuda_graphs"
    return "forward_dynamic"


def _compile_for_generate(model: Any) -> Dict[str, Any]:
    """The host-bound remedy of a transformers model on CUDA: a static KV cache, and generate's own compile
    of the decode step (torch.compile mode "reduce-overhead": CUDA graphs) switched on."""
    from transformers import CompileConfig
    config = model.generation_config
    config.cache_implementation = "static"
    config.compile_config = CompileConfig(mode="reduce-overhead")
    config.disable_compile = False
    return {"plan": "generate_cuda_graphs", "cache_implementation": "static", "mode": "reduce-overhead"}


def _keep_generate_uncompiled(model: Any) -> bool:
    """After the KV-cache action gave a transformers model a static cache: on a device where generate then
    compiles the decode step by itself, switch that off (generation_config.disable_compile), so the action is
    the cache change it says it is (the torch_compile action, applied last, switches it back on when compiling
    is allowed). True when it was switched off."""
    if _compile_plan(model) != "generate_cuda_graphs":
        return False
    model.generation_config.disable_compile = True
    return True


def _looks_like_tokenizer(value: Any) -> bool:
    return (value is not None and not isinstance(value, (list, tuple, dict, str)) and
            not hasattr(value, "recommendations") and callable(getattr(value, "encode", None)))


def apply_all_optimizations(model: Any, recommendations: Any = None, *, tokenizer: Any = None,
                            accept: Optional[Any] = None, model_config: Any = None,
                            return_report: bool = False, progress: Any = None,
                            verify_inputs: Any = None, verify_new_tokens: int = 16,
                            allow_compile: bool = False, ab_settings: Optional[Dict[str, Any]] = None,
                            call_graph: Any = None) -> Any:
    """Applies the accepted recommendations pypto can apply to a torch.nn model by itself; returns
    the model (the brief: `model_optimized = apply_all_optimizations(model, tokenizer)`), with what
    was done in `model.pypto_optimization_report` (an OptimizationReport). `return_report=True`
    returns the OptimizationReport instead (the form of earlier pypto releases).

    recommendations: TuningAdvisor(...).generate_recommendations() (or an AdviceReport), or a
    tokenizer (the brief's second argument). Without recommendations pypto advises itself: from the
    latest diagnosis of this model in this process (HotspotDetector.diagnose of a profile whose steps
    ran this model, matched by class, config and parameter count), else from a short greedy run
    (SHORT_RUN_NEW_TOKENS tokens of SHORT_RUN_PROMPT) it profiles with the tokenizer.
    accept: hotspot types, rule ids or applied action ids ("norm_fusion", "kv_cache_layout",
    "sdpa_attention") to apply (default: all that are applicable); the closed loop applies one action
    alone with accept=["norm_fusion"] to measure it.
    Applied: norm fusion (register_layernorm_fusion), the KV-cache layout patch (static cache
    for transformers models, preallocated in-place cache for hand-written ones), SDPA attention
    (transformers models), oneDNN-packed Linear weights for matmul_tiling on CPU
    (pypto.packed_linear), and, only with verify_inputs, the intra-op thread count of a host_bound
    recommendation (INTRA_OP_THREADS_CANDIDATE threads during the forward, on CPU). Everything else is
    listed in `skipped` with the reason (e.g. AOE tuning needs an Ascend machine; torch.compile only
    with allow_compile, because its compile time is paid per process).
    progress: a pypto._progress.Progress (or anything with advance(item)), advanced once per
    recommendation considered, named by its hotspot type (the demo's progress line); None: silent.

    Keep only what helps: with verify_inputs (input ids), every action is first applied alone to a
    copy of the model and checked against the unmodified model on those inputs: the generated tokens
    (`generate(verify_inputs, verify_new_tokens)` greedy, or the forward's output without generate)
    must be unchanged, and interleaved A/B rounds (pypto.abtest, ab_settings for interleaved_ab) must
    find it significantly faster per decode token (or per forward) and not significantly slower per
    decode token or per token step (prefill included). The others are taken back (`report.reverted`,
    with the reason);
    `report.measurements` holds each action's ActionMeasurement. Only the kept actions touch `model`.
    allow_compile: also apply the host-bound remedy, last (with the host_bound recommendation's estimate when
    there is one; its compile time is measured apart, at the first run, and verification takes it back when it
    does not help): torch.compile(model.forward, dynamic=True), or, for a transformers model on CUDA, a static
    KV cache with generate's own compiled decode step (mode "reduce-overhead": CUDA graphs; _compile_plan).
    Without it, the KV-cache action's static cache on CUDA comes with generate's compile switched off, so
    nothing is compiled that the caller did not allow.
    call_graph: the profile (OperatorCallGraph) the recommendations come from (taken by itself when pypto
    advises). With it, the packed-Linear change is estimated from the profile's GEMM time per shape and
    the packed / unpacked kernel times of each shape, timed on this machine
    (pypto.packed_linear.packed_saving_estimate); without it, from the matmul_tiling roofline estimates.
    """
    if _looks_like_tokenizer(recommendations):
        if tokenizer is not None and tokenizer is not recommendations:
            raise InvalidArgumentError("apply_all_optimizations: a tokenizer given twice (positional and tokenizer=)")
        tokenizer, recommendations = recommendations, None
    source = "recommendations given"
    if recommendations is None:
        recommendations, source, call_graph = _advise_for(model, tokenizer, model_config)
    estimates: Dict[str, Any] = {"call_graph": call_graph}   # measured estimates, timed when first needed
    if verify_inputs is not None:
        report = _apply_verified(model, recommendations, accept, model_config, progress, verify_inputs,
                                 verify_new_tokens, allow_compile, ab_settings or {}, estimates)
    else:
        report = _apply_recommendations(model, recommendations, accept, model_config, progress, allow_compile,
                                        estimates=estimates)
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
        return (advisor.generate_recommendations(), "the latest diagnosis of this model in this process",
                advisor.call_graph)
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
    return (advisor.generate_recommendations(), f"a short profiled run ({SHORT_RUN_NEW_TOKENS} new tokens)",
            advisor.call_graph)


def _measured_packed_estimate(estimates: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """packed_saving_estimate of the profile in `estimates` ("call_graph"; None without one), timed at its
    first use and kept in `estimates` for the later passes of the same apply_all_optimizations."""
    if estimates.get("call_graph") is None:
        return None
    if "packed_linear" not in estimates:
        from .packed_linear import packed_saving_estimate
        estimates["packed_linear"] = packed_saving_estimate(estimates["call_graph"])
    return estimates["packed_linear"]


def _norm_findings_us(rec: Any) -> Tuple[float, float]:
    """(profiled wall time, estimated saving) in us of the norm findings of a recommendation: its evidence
    whose op_type is a norm; the whole recommendation when its evidence names no norm (a
    norm_launch_overhead recommendation without op types)."""
    raw = rec.raw if hasattr(rec, "raw") else rec
    norm = [e for e in raw.get("evidence", []) if str(e.get("op_type", "")) in _NORM_OP_TYPES]
    if not norm:
        return (sum(float(e.get("affected_us") or 0.0) for e in raw.get("evidence", [])), _saved_us(rec))
    return (sum(float(e.get("affected_us") or 0.0) for e in norm),
            sum(float(e.get("issue_saved_us") or 0.0) for e in norm))


def _measured_norm_estimate(estimates: Dict[str, Any], model: Any, fusion: Any,
                            norm_chain_us: float) -> Optional[Dict[str, Any]]:
    """norm_fusion_saving_estimate on the profile in `estimates` for a model on the CPU (None without a
    profile, off the CPU, or without profiled norm time), timed once and kept in `estimates`."""
    if estimates.get("call_graph") is None or not _on_cpu(model) or norm_chain_us <= 0:
        return None
    if "norm_fusion" not in estimates:
        from .norm_estimate import norm_fusion_saving_estimate
        estimates["norm_fusion"] = norm_fusion_saving_estimate(fusion, estimates["call_graph"], norm_chain_us)
    return estimates["norm_fusion"]


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


def _applied_action_id(hotspot: str, actions: set, norm_chain: bool, allow_compile: bool = False) -> str:
    """The change pypto applies for a recommendation: "norm_fusion", "kv_cache_layout", "sdpa_attention",
    "packed_linear", "torch_compile" (host_bound, only when compiling is allowed), or "" when it applies none (the ids
    AppliedOptimization.action_id and `accept` use)."""
    if hotspot == "host_bound" and allow_compile:
        return "torch_compile"
    if norm_chain and (actions & _NORM_FUSION_ACTIONS or hotspot == "fusible_sequence"):
        return "norm_fusion"
    if hotspot == "kv_cache_layout" and actions & _KV_ACTIONS:
        return "kv_cache_layout"
    if hotspot in ("attention_memory_bound", "fusible_sequence") and actions & _SDPA_ACTIONS:
        return "sdpa_attention"
    if hotspot == "matmul_tiling" and actions & _PACKED_LINEAR_ACTIONS:
        return "packed_linear"
    return ""


def _apply_recommendations(model: Any, recommendations: Any, accept: Optional[Any],
                           model_config: Any, progress: Any = None,
                           allow_compile: bool = False, measured: bool = False,
                           estimates: Optional[Dict[str, Any]] = None) -> "OptimizationReport":
    """Applies the accepted recommendations to `model`. measured: verification will measure each action
    (actions only worth applying measured, the thread count, are applied only then). estimates: the profile
    ("call_graph") and the estimates measured on it (_measured_packed_estimate), which replace the rules'
    for their actions; shared by the passes of one apply_all_optimizations so each is timed once."""
    estimates = estimates or {}
    recs = list(getattr(recommendations, "recommendations", recommendations))
    wanted = set(accept) if accept is not None else None
    report = OptimizationReport()
    done = set()
    compile_saved_us = 0.0      # the host_bound recommendation's estimate, when there is one
    compile_finding = False     # a host_bound recommendation was seen (else compiling has no estimate)
    threads_wanted = False      # a host_bound recommendation proposes the intra-op thread count
    packed_action: Optional[AppliedOptimization] = None   # the one packed_linear change, once applied
    sdpa_action: Optional[AppliedOptimization] = None     # the one attention switch, once applied
    norm_action: Optional[AppliedOptimization] = None     # the one norm fusion, once applied
    norm_chain_us = 0.0         # profiled wall time of the norm chains the findings name
    for rec in _advancing(recs, progress):
        raw = rec.raw if hasattr(rec, "raw") else rec
        hotspot, rule = raw.get("hotspot_type", ""), raw.get("rule_id", "")
        actions = set(_recommendation_actions(rec))
        threads_wanted = threads_wanted or (hotspot == "host_bound" and "threads" in actions)
        op_types = _op_types(rec)
        norm_chain = hotspot == "norm_launch_overhead" or (
            hotspot == "fusible_sequence" and any(t in _NORM_OP_TYPES for t in op_types))
        kind = _applied_action_id(hotspot, actions, norm_chain, allow_compile)
        if wanted is not None and hotspot not in wanted and rule not in wanted and kind not in wanted:
            continue
        if kind == "norm_fusion":
            # One change for every norm finding: credited with their norm parts only (a fusible_sequence
            # recommendation also lists the rotary chains, which the fused norm does not touch).
            chain_us, saved_us = _norm_findings_us(rec)
            norm_chain_us += chain_us
            if norm_action is not None:
                norm_action.estimated_saved_us += saved_us
                continue
            from .fusion import register_layernorm_fusion
            fusion = register_layernorm_fusion(model)
            norm_action = AppliedOptimization("norm_fusion", hotspot, "fused RMSNorm/LayerNorm kernels",
                                              fusion, saved_us, target_class="norm")
            report.applied.append(norm_action)
        elif kind == "kv_cache_layout":
            if "kv_cache" in done:
                continue
            config = model_config if model_config is not None else getattr(model, "config", None)
            info = KVCacheLayoutOptimizer(config).generate_layout_transform_patch().apply(model)
            info = info if isinstance(info, dict) else {}
            if info.get("mode") == "transformers_static_cache" and _keep_generate_uncompiled(model):
                info["generate_compile"] = "disabled (generation_config.disable_compile): a cache change only"
            done.add("kv_cache")
            if info.get("mode"):
                # Credited with the findings the patch takes away (the cat growth), not the model's own
                # transpose + contiguous reads of the cache that the same recommendation lists.
                removes = info.get("removes")
                kept_findings = [e.get("op_name", "") for e in raw.get("evidence", [])
                                 if removes is not None and e.get("op_name", "") not in removes]
                description = f"KV cache: {info['mode']}"
                if kept_findings:
                    description += f" (not removed: {', '.join(sorted(set(kept_findings)))})"
                report.applied.append(AppliedOptimization("kv_cache_layout", hotspot, description,
                                                          info, _saved_us_on(rec, removes), target_class="copy"))
            else:
                report.skipped.append({"action": "kv_cache_layout", "hotspot_type": hotspot,
                                       "reason": "no KV cache attribute found in the model"})
        elif kind == "packed_linear":
            # One change for every matmul_tiling group: it packs all the Linear layers, so it is credited
            # with the sum of the groups' estimates, or with the estimate measured over every GEMM of the
            # profile (the groups cover only the GEMMs below the roofline threshold).
            measured_estimate = _measured_packed_estimate(estimates)
            if "packed_linear" in done:
                if packed_action is not None and measured_estimate is None:
                    packed_action.estimated_saved_us += _saved_us(rec)
                continue
            from .packed_linear import pack_linear_layers
            info = pack_linear_layers(model)
            done.add("packed_linear")
            if info["packed"]:
                if measured_estimate is not None:
                    info["estimate"] = measured_estimate
                packed_action = AppliedOptimization(
                    "packed_linear", hotspot, f"{len(info['packed'])} Linear layer(s) run on oneDNN-packed weights",
                    info, measured_estimate["saved_us"] if measured_estimate is not None else _saved_us(rec),
                    target_class="matmul",
                    estimate_basis=measured_estimate["basis"] if measured_estimate is not None else
                    "the matmul_tiling roofline estimates (GEMMs below the threshold only)")
                report.applied.append(packed_action)
            else:
                report.skipped.append({"action": "packed_linear", "hotspot_type": hotspot, "reason": info["reason"]})
        elif kind == "torch_compile":
            compile_saved_us = max(compile_saved_us, _saved_us(rec))   # applied after the loop, once
            compile_finding = True
        elif kind == "sdpa_attention":
            # One switch for every attention finding (the softmax and the K/V copies of the unfused attention
            # are separate findings): credited with the sum of their estimates.
            if "sdpa" in done:
                if sdpa_action is not None:
                    sdpa_action.estimated_saved_us += _saved_us(rec)
                continue
            detail = _use_sdpa(model)
            done.add("sdpa")
            if detail:
                sdpa_action = AppliedOptimization("sdpa_attention", hotspot, detail, detail, _saved_us(rec),
                                                  target_class="attention",
                                                  estimate_basis="the attention findings' estimates, summed")
                report.applied.append(sdpa_action)
            else:
                report.skipped.append({"action": "sdpa_attention", "hotspot_type": hotspot,
                                       "reason": "the model has no attention implementation switch; "
                                                 "call torch.nn.functional.scaled_dot_product_attention in it"})
        else:
            report.skipped.append({"action": rule or hotspot, "hotspot_type": hotspot,
                                   "reason": "not applied automatically: " + (raw.get("action", "") or "no action")
                                   .splitlines()[0][:100]})
    if norm_action is not None:
        measured_norm = _measured_norm_estimate(estimates, model, norm_action.detail, norm_chain_us)
        if measured_norm is not None:
            norm_action.estimated_saved_us = measured_norm["saved_us"]
            norm_action.estimate_basis = measured_norm["basis"]
    if allow_compile and (wanted is None or "torch_compile" in wanted):
        # Last, so that the compiled forward traces the modules the other actions put in place (at its first
        # call). Applied when compiling is allowed even without a host_bound finding: the eager per-op
        # dispatch it removes is also what the norm and elementwise fusions address, and verification
        # (verify_inputs) takes it back when it does not help.
        if _compile_plan(model) == "generate_cuda_graphs":
            compile_detail = _compile_for_generate(model)
            compile_description = ("static KV cache + generate's compiled decode step (transformers "
                                   "CompileConfig, torch.compile mode='reduce-overhead': CUDA graphs): Python, "
                                   "per-op dispatch and kernel launches taken out of each step (compiled and "
                                   "recorded at the first generate)")
        else:
            model.forward = _torch().compile(model.forward, dynamic=True)
            compile_detail = {"plan": "forward_dynamic"}
            compile_description = ("torch.compile(model.forward, dynamic=True): Python and per-op dispatch taken "
                                   "out of each step (compiled at the first call)")
        report.applied.append(AppliedOptimization(
            "torch_compile", "host_bound", compile_description, compile_detail, compile_saved_us,
            # Without a host_bound finding nothing estimates it: "no estimate", not an estimate of 0.
            estimated=compile_finding,
            estimate_basis="the host_bound finding's estimate" if compile_finding else
            "no host_bound finding in the profile: no estimate"))
    if threads_wanted and (wanted is None or "intra_op_threads" in wanted):
        torch = _torch()
        current = torch.get_num_threads()
        if not measured:
            report.skipped.append({"action": "intra_op_threads", "hotspot_type": "host_bound",
                                   "reason": "the thread count is only applied measured: pass verify_inputs"})
        elif not _on_cpu(model):
            report.skipped.append({"action": "intra_op_threads", "hotspot_type": "host_bound",
                                   "reason": "the model is not on the CPU"})
        elif current > INTRA_OP_THREADS_CANDIDATE:
            # Outermost (after torch.compile), so the compiled graph never sees the thread switch.
            model.forward = ThreadsForward(model.forward, INTRA_OP_THREADS_CANDIDATE)
            report.applied.append(AppliedOptimization(
                "intra_op_threads", "host_bound", f"intra-op threads {current} -> {INTRA_OP_THREADS_CANDIDATE} "
                "during the forward (torch.set_num_threads): no thread team forked and joined per op",
                {"threads": INTRA_OP_THREADS_CANDIDATE, "previous": current}, 0.0, estimated=False,
                estimate_basis="the rule gives no gain for the thread count"))
    return report


def _torch():
    import torch
    return torch


class ActionMeasurement:
    """One action applied alone, against the unmodified model: outputs unchanged?, the interleaved A/B
    result (pypto.abtest.ABResult), the first run's wall seconds (compile time for torch.compile), and
    whether it is kept: outputs unchanged, the primary metric (decode per token, or the forward)
    significantly faster, and no GATED_METRICS significantly slower (judged together, Holm-adjusted). An
    action without a measurable gain is taken back too: actions that each change nothing measurable can add
    up to a slower model (the demo's hand-written decoder: two such actions together were x0.95)."""

    def __init__(self, action_id: str, outputs_unchanged: bool, ab: Any, first_run_s: float,
                 action: Optional[AppliedOptimization] = None, error: Optional[str] = None):
        self.action_id = action_id
        self.action = action            # what was applied, with the advisor's estimate
        self.outputs_unchanged = outputs_unchanged
        self.ab = ab                    # None when the candidate's first run failed (`error`)
        self.first_run_s = first_run_s
        self.error = error

    # The metrics an action must not make significantly slower to be kept: the decode time per token, the
    # time per token step over the whole generate (prefill included), or the forward of a model without
    # generate (pypto.abtest.generate_round's names).
    GATED_METRICS = ("decode", "step", "forward")

    def slower_metrics(self) -> List[Any]:
        if self.ab is None:
            return []
        return self.ab.slower_together(self.GATED_METRICS)

    def gained(self) -> bool:
        """The primary metric is significantly faster."""
        return self.ab is not None and self.ab.main.verdict == "faster"

    @property
    def kept(self) -> bool:
        return self.outputs_unchanged and not self.slower_metrics() and self.gained()

    @property
    def reason(self) -> str:
        if self.error is not None:
            return f"reverted: its first run failed ({self.error})"
        if not self.outputs_unchanged:
            return "reverted: the outputs changed"
        slower = self.slower_metrics()
        if slower:
            return f"reverted: significantly slower ({slower[0].line()})"
        if not self.gained():
            return f"reverted: no significant gain ({self.ab.main.line()})"
        return "kept"

    def line(self) -> str:
        if self.ab is None:
            return f"first run failed after {self.first_run_s:.1f} s: {self.error}"
        shown = [m.line() for name, m in self.ab.metrics.items() if name in self.GATED_METRICS]
        return f"{'; '.join(shown)}; first run {self.first_run_s:.1f} s"

    def to_dict(self) -> Dict[str, Any]:
        return {"action": self.action_id, "outputs_unchanged": self.outputs_unchanged, "kept": self.kept,
                "reason": self.reason, "first_run_s": self.first_run_s,
                "ab": self.ab.to_dict() if self.ab is not None else None, "error": self.error}


def workload_runner(model: Any) -> Any:
    """`run(inputs, n)` for a model: greedy generate of n new tokens (transformers: min_new_tokens = n, so
    the number of steps is fixed), or the forward alone (n ignored) for a model without generate."""
    if _is_transformers_model(model):
        return lambda ids, n: model.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False)
    if callable(getattr(model, "generate", None)):
        return lambda ids, n: model.generate(ids, max_new_tokens=n)
    return lambda ids, n: model(ids)


def _same_outputs(a: Any, b: Any) -> bool:
    torch = _torch()
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and (
            torch.equal(a, b) if not a.is_floating_point() else torch.allclose(a, b, rtol=1e-4, atol=1e-5))
    logits_a, logits_b = getattr(a, "logits", None), getattr(b, "logits", None)
    if logits_a is not None and logits_b is not None:
        return _same_outputs(logits_a, logits_b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b):
        return all(_same_outputs(x, y) for x, y in zip(a, b))
    return False


def measure_alone(baseline_model: Any, candidate_model: Any, action_id: str, inputs: Any, new_tokens: int,
                  reference: Any = None, ab_settings: Optional[Dict[str, Any]] = None,
                  progress: Any = None) -> ActionMeasurement:
    """Checks a candidate (the baseline with one action, or several, applied) against the baseline:
    outputs on `inputs` unchanged, then interleaved A/B rounds of the workload (generate: primary metric
    the decode time per token; a model without generate: the forward)."""
    from .abtest import device_synchronizer, generate_round, interleaved_ab
    import time
    base_run, cand_run = workload_runner(baseline_model), workload_runner(candidate_model)
    sync = device_synchronizer(baseline_model) or (lambda: None)
    torch = _torch()
    with torch.no_grad():
        if reference is None:
            reference = base_run(inputs, new_tokens)
        start = time.perf_counter()
        try:
            outputs = cand_run(inputs, new_tokens)     # the first run: compiles a torch.compile'd model
            cand_run(inputs, 1)
        except Exception as error:  # noqa: BLE001 - any failure of the changed model takes the action back
            # e.g. torch.compile without a C++ compiler for inductor, or an op the change cannot run.
            first_line = (str(error).strip().splitlines() or [""])[0][:300]
            return ActionMeasurement(action_id, False, None, time.perf_counter() - start,
                                     error=f"{type(error).__name__}: {first_line}")
        first_run_s = time.perf_counter() - start
        same = _same_outputs(outputs, reference)
        generates = callable(getattr(baseline_model, "generate", None))

        def round_of(run, model):
            if generates:
                return lambda: generate_round(run, inputs, new_tokens, sync, model=model)

            def forward():
                sync()
                t0 = time.perf_counter()
                run(inputs, 1)
                sync()
                return {"forward": (time.perf_counter() - t0) * 1e3}
            return forward

        result = interleaved_ab(round_of(base_run, baseline_model), round_of(cand_run, candidate_model), primary="decode" if generates else "forward",
                                progress=progress, **(ab_settings or {}))
    return ActionMeasurement(action_id, same, result, first_run_s)


def _apply_verified(model: Any, recommendations: Any, accept: Optional[Any], model_config: Any, progress: Any,
                    inputs: Any, new_tokens: int, allow_compile: bool,
                    ab_settings: Dict[str, Any], estimates: Dict[str, Any]) -> "OptimizationReport":
    """apply_all_optimizations with verification: each applicable action alone on a copy, measured against
    the unmodified model; the kept ones applied to `model`."""
    import copy
    baseline = copy.deepcopy(model)
    plan = _apply_recommendations(copy.deepcopy(model), recommendations, accept, model_config, progress, allow_compile,
                                  measured=True, estimates=estimates)
    torch = _torch()
    with torch.no_grad():
        reference = workload_runner(baseline)(inputs, new_tokens)
    measurements: Dict[str, ActionMeasurement] = {}
    from ._progress import Progress
    for action in plan.applied:
        alone = copy.deepcopy(baseline)
        _apply_recommendations(alone, recommendations, [action.action_id], model_config, None, allow_compile,
                               measured=True, estimates=estimates)
        rounds = int(ab_settings.get("max_rounds", 0)) or None
        with Progress(f"pypto: {action.action_id} alone vs the unmodified model", total=rounds,
                      unit="A/B rounds") as line:
            m = measure_alone(baseline, alone, action.action_id, inputs, new_tokens, reference, ab_settings, line)
        m.action = action
        measurements[action.action_id] = m
        del alone
    kept = [a.action_id for a in plan.applied if measurements[a.action_id].kept]
    report = _apply_recommendations(model, recommendations, kept or ["none"], model_config, None, allow_compile,
                                    measured=True, estimates=estimates)
    report.skipped = plan.skipped
    report.measurements = measurements
    report.reverted = [{"action": a.action_id, "hotspot_type": a.hotspot_type,
                        "reason": measurements[a.action_id].reason}
                       for a in plan.applied if not measurements[a.action_id].kept]
    return report


__all__ += ["apply_all_optimizations", "OptimizationReport", "AppliedOptimization", "ActionMeasurement", "ThreadsForward",
            "measure_alone", "workload_runner", "SHORT_RUN_NEW_TOKENS"]
