"""TransformerHotspotAnalyzer: the LLM view of a profile.

Transformer structure without hints (repeated layers, attention / FFN blocks, norms, RoPE,
KV-cache updates), prefill vs decode phases, per-token latency, time by op class and the
hotspots the detectors find. `model_arch` may refine, never is required.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .diagnostics import DiagnosticReport, HotspotDetector, _as_graph


class TransformerHotspotAnalyzer:
    def __init__(self, call_graph: Any, model_arch: Optional[str] = None, **diagnose: Any):
        self.call_graph = _as_graph(call_graph)
        self.model_arch = model_arch or getattr(self.call_graph, "model_arch", None)
        self._detector = HotspotDetector(model_arch=self.model_arch, **diagnose)
        self._diagnosis: Optional[DiagnosticReport] = None

    @property
    def diagnosis(self) -> DiagnosticReport:
        if self._diagnosis is None:
            self._diagnosis = self._detector.detect(self.call_graph)
        return self._diagnosis

    def get_structure(self) -> Dict[str, Any]:
        """layers, layer_period_ops, prefill/decode step counts, step_phases, per-token latency."""
        return self.diagnosis.structure

    def get_per_token_latency(self) -> Dict[str, Any]:
        """Decode step latency (= per generated token): count, mean/p50/p90/p99/min/max in ms."""
        return dict(self.diagnosis.structure.get("per_token_latency") or {})

    def get_time_by_op_class(self) -> List[Dict[str, Any]]:
        """[{op_class, count, time_ns}] by time (device task time, or host self time on CPU)."""
        return list(self.call_graph._loaded.report_document({}).get("classes", []))

    def find_hotspots(self, top: int = 10) -> List[Any]:
        """The diagnosis' issues, most severe and largest saving first."""
        return list(self.diagnosis.issues[:top])

    def analyze(self) -> Dict[str, Any]:
        return {
            "structure": self.get_structure(),
            "per_token_latency": self.get_per_token_latency(),
            "time_by_op_class": self.get_time_by_op_class(),
            "hotspots": [i.to_dict() for i in self.find_hotspots()],
        }


__all__ = ["TransformerHotspotAnalyzer"]
