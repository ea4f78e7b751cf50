"""HotspotDetector and DiagnosticReport: the anti-pattern library against the hardware's peaks.

Detectors (docs/architecture.md, docs/cost-model.md): matmul_tiling, attention_memory_bound,
kv_cache_layout, norm_launch_overhead, host_bound, aicpu_fallback, dynamic_shape_compile,
stream_sync, no_pipe_bound, fusible_sequence, communication, input_stall. Every issue carries its evidence and an estimated
saving with the method used (roofline, measured gap, Amdahl).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

from ._native import diagnose_options, engine, fspath
from ._records import Record
from .graph import OperatorCallGraph

# Defaults of the brief, read from the engine (analysis/detector.h holds them with their sources).
DEFAULT_TILING_UTILIZATION_THRESHOLD = float(engine.defaults["tiling_utilization_threshold"])
DEFAULT_MEM_BOTTLENECK_RATIO_THRESHOLD = float(engine.defaults["mem_bottleneck_ratio_threshold"])


class Issue(Record):
    """One finding: issue_type, severity, op_name, phase, detail, affected_us, estimated_saved_us,
    saving_method, saving_formula, evidence (count, shapes, metrics, row ids), and the brief's
    ai_core_time_ratio / hbm_access_time_ratio (floats in [0, 1], see docs/python-api.md).

    `op_name` names what the profile ran (JSON `profile_op_name`: the op or kernel, the op sequence
    of a fusible sequence, the analysed steps of a step-wide issue); `target_name` is the engine's
    JSON `op_name`, which for a fusible sequence names the fused API to use instead.
    """

    @property
    def hotspot_type(self) -> str:
        return self.raw["issue_type"]

    @property
    def op_name(self) -> str:
        return self.raw.get("profile_op_name") or self.raw.get("op_name", "")

    @property
    def target_name(self) -> str:
        return self.raw.get("op_name", "")

    @property
    def ai_core_time_ratio(self) -> float:
        """Share of the issue's device time in compute-unit work, in [0, 1] (source: time_ratio_source)."""
        return float(self.raw.get("ai_core_time_ratio") or 0.0)

    @property
    def hbm_access_time_ratio(self) -> float:
        """Share of the issue's device time in HBM (memory) transfers, in [0, 1] (source: time_ratio_source)."""
        return float(self.raw.get("hbm_access_time_ratio") or 0.0)


class DiagnosticReport:
    """The diagnosis of one profile (schema pypto.diagnose/1, docs/json-schema.md).

    `data` is the document as dicts and lists; text, Markdown and JSON are rendered by the engine
    on demand (the same text as `pypto diagnose`).
    """

    def __init__(self, document: Dict[str, Any], text: Optional[str] = None, markdown: Optional[str] = None,
                 *, engine_report: Any = None):
        self.data = document
        self.issues: List[Issue] = [Issue(i) for i in document.get("issues", [])]
        self._text = text
        self._markdown = markdown
        self._engine_report = engine_report

    @classmethod
    def _from_engine(cls, bound: Any) -> "DiagnosticReport":
        return cls(bound.document(), engine_report=bound)

    @property
    def estimated_speedup(self) -> float:
        """T / (T - saved) over the analysed steps, the issues' savings combined without double counting."""
        return float(self.data.get("summary", {}).get("estimated_combined_speedup") or 1.0)

    # The brief's name.
    estimated_combined_speedup = estimated_speedup

    @property
    def hardware(self) -> Dict[str, Any]:
        return dict(self.data.get("hardware", {}))

    @property
    def structure(self) -> Dict[str, Any]:
        return dict(self.data.get("structure", {}))

    @property
    def workload(self) -> str:
        """'training', 'inference' or 'unknown', from the ops the profile holds."""
        return str(self.data.get("workload", {}).get("kind", "unknown"))

    @property
    def workload_reason(self) -> str:
        """The rows that decided the workload (backward-pass or optimizer ops, or none)."""
        return str(self.data.get("workload", {}).get("reason", ""))

    @property
    def notes(self) -> List[str]:
        return list(self.data.get("notes", []))

    def issue_types(self) -> List[str]:
        return sorted({i.issue_type for i in self.issues})

    def by_type(self, issue_type: str) -> List[Issue]:
        return [i for i in self.issues if i.issue_type == issue_type]

    def to_json(self) -> str:
        if self._engine_report is not None:
            return self._engine_report.to_json()
        return json.dumps(self.data, indent=2)

    def to_markdown(self) -> str:
        if self._markdown is None and self._engine_report is not None:
            self._markdown = self._engine_report.to_markdown()
        return self._markdown if self._markdown is not None else _render_fallback(self.data)

    def to_text(self) -> str:
        if self._text is None and self._engine_report is not None:
            self._text = self._engine_report.to_text()
        return self._text if self._text is not None else _render_fallback(self.data)

    def __len__(self) -> int:
        return len(self.issues)

    def __iter__(self):
        return iter(self.issues)

    def __repr__(self) -> str:
        return f"DiagnosticReport({len(self.issues)} issues, estimated speedup {self.estimated_speedup:.2f}x)"


def _render_fallback(doc: Dict[str, Any]) -> str:
    return "\n".join(f"- [{i['severity']}] {i['issue_type']} {i.get('op_name', '')}: {i.get('detail', '')}"
                     for i in doc.get("issues", []))


class HotspotDetector:
    """Runs the detectors on a call graph.

    ai_core_theoretical_peak (FLOP/s) and hbm_bandwidth (B/s) replace the detected hardware's
    figures; hardware names a table entry ("910B3", "H100", "cpu-generic", …) instead of detecting;
    tiling_utilization_threshold (0.6) and mem_bottleneck_ratio_threshold (0.7) are the brief's
    defaults. `params` sets any other detector threshold by "<issue_type>.<name>".
    """

    def __init__(self, ai_core_theoretical_peak: Optional[float] = None, hbm_bandwidth: Optional[float] = None,
                 tiling_utilization_threshold: float = DEFAULT_TILING_UTILIZATION_THRESHOLD,
                 mem_bottleneck_ratio_threshold: float = DEFAULT_MEM_BOTTLENECK_RATIO_THRESHOLD,
                 *, hardware: Optional[str] = None, model_arch: Optional[str] = None,
                 only: Optional[Sequence[str]] = None, params: Optional[Dict[str, float]] = None):
        self.options = diagnose_options(
            ai_core_theoretical_peak=ai_core_theoretical_peak, hbm_bandwidth=hbm_bandwidth,
            tiling_utilization_threshold=tiling_utilization_threshold,
            mem_bottleneck_ratio_threshold=mem_bottleneck_ratio_threshold, hardware=hardware,
            model_arch=model_arch, only=list(only) if only else None, params=params)

    def detect(self, call_graph: Any, step: Optional[int] = None) -> DiagnosticReport:
        """Diagnoses `call_graph` (an OperatorCallGraph or a path); `step` = step number N only."""
        graph = _as_graph(call_graph)
        options = dict(self.options)
        if step is not None:
            options["step"] = int(step)
        if "model_arch" not in options and getattr(graph, "model_arch", None):
            options["model_arch"] = graph.model_arch
        # One diagnosis in the engine (cached per profile and options); text and Markdown on demand.
        report = DiagnosticReport._from_engine(graph._loaded.diagnose(options))
        _remember_diagnosis(call_graph, graph, self.options, report)
        return report

    analyze = detect
    diagnose = detect


# The latest diagnosis of each model seen in this process, by model fingerprint (ProfileResults
# settings["stepped_modules"]): what apply_all_optimizations(model, tokenizer) advises from when it is
# given no recommendations.
_LATEST_DIAGNOSIS: Dict[str, Dict[str, Any]] = {}


def _remember_diagnosis(source: Any, graph: OperatorCallGraph, options: Dict[str, Any],
                        report: DiagnosticReport) -> None:
    settings = getattr(source, "settings", None)
    if not isinstance(settings, dict):
        return
    for module in settings.get("stepped_modules") or []:
        fingerprint = module.get("fingerprint") if isinstance(module, dict) else None
        if fingerprint:
            _LATEST_DIAGNOSIS[fingerprint] = {"graph": graph, "options": dict(options), "report": report,
                                              "model_config": getattr(source, "model_config", None)}


def latest_diagnosis(fingerprint: str) -> Optional[Dict[str, Any]]:
    """graph, options, report and model_config of the latest diagnosis of the model with this fingerprint."""
    return _LATEST_DIAGNOSIS.get(fingerprint)


def _as_graph(value: Any) -> OperatorCallGraph:
    if isinstance(value, OperatorCallGraph):
        return value
    graph = getattr(value, "call_graph", None)
    if isinstance(graph, OperatorCallGraph):
        return graph
    from .graph import load_profile
    return load_profile(fspath(value))


__all__ = ["HotspotDetector", "DiagnosticReport", "Issue"]
