"""TuningAdvisor: diagnosis + model config + backend → recommendations ranked by expected gain.

The rules are data (data/advisor/rules/*.json in the source tree, embedded in the engine);
`pypto advise PATH` prints the same recommendations (both call the engine's AdviseProfile).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ._native import diagnose_options, fspath, model_config_json
from ._records import Record
from .diagnostics import DiagnosticReport, _as_graph


class Recommendation(Record):
    """One ranked recommendation.

    hotspot_type, description, action (the preferred action: code, env var, config or command),
    estimated_speedup (T / (T - saved)), estimated_saved_us, speedup_formula, prerequisite,
    actions (preferred first, then alternatives), evidence (the issues it fixes), artifacts.
    """

    @property
    def artifacts(self) -> List[str]:
        return list(self.raw.get("artifacts", []))


class AdviceReport:
    """All recommendations of one profile (schema pypto.advise/1, docs/json-schema.md)."""

    def __init__(self, advice: Any):
        self._advice = advice   # the engine's Advice: renders text, Markdown and JSON on demand
        self.data = advice.document()
        self.diagnosis = DiagnosticReport._from_engine(advice.diagnosis)
        self.recommendations = [Recommendation(r) for r in self.data.get("recommendations", [])]
        self.artifacts: List[str] = list(advice.artifacts)

    @property
    def combined_speedup(self) -> float:
        return float(self.data.get("combined_speedup") or 1.0)

    def to_json(self) -> str:
        return self._advice.to_json()

    def to_markdown(self) -> str:
        return self._advice.to_markdown()

    def to_text(self) -> str:
        return self._advice.to_text()


class TuningAdvisor:
    """TuningAdvisor(call_graph, model_config=None).generate_recommendations().

    call_graph: an OperatorCallGraph, a ProfileResults or a profile path.
    model_config: a transformers config (or model), a dict, a path to config.json, or None; what it
    leaves unknown is inferred from the profile (attention shapes, layer structure).
    backend: "ascend", "cuda", "rocm" or "cpu" (default: from the detected hardware).
    Diagnosis options (hardware=, ai_core_theoretical_peak=, hbm_bandwidth=, step=, …) are passed on.
    """

    def __init__(self, call_graph: Any, model_config: Any = None, *, backend: Optional[str] = None,
                 **diagnose: Any):
        self.call_graph = _as_graph(call_graph)
        self.model_config = model_config
        self.backend = backend or ""
        self.options = diagnose_options(**diagnose)
        self._report: Optional[AdviceReport] = None

    def advise(self, output_dir: Any = None, force: bool = False) -> AdviceReport:
        """Runs the advisor; with `output_dir`, also writes the artifacts (tuning configs, patches, plans)."""
        result = self.call_graph._loaded.advise(self.options, model_config_json(self.model_config), self.backend,
                                                "" if output_dir is None else fspath(output_dir), bool(force))
        self._report = AdviceReport(result)
        return self._report

    def generate_recommendations(self) -> List[Recommendation]:
        """Recommendations ranked by expected gain (largest first)."""
        return list((self._report or self.advise()).recommendations)

    def write_artifacts(self, output_dir: Any, force: bool = False) -> List[str]:
        """Writes every artifact the recommendations ask for into `output_dir`; returns the paths."""
        return list(self.advise(output_dir, force).artifacts)

    @property
    def report(self) -> AdviceReport:
        return self._report or self.advise()


__all__ = ["TuningAdvisor", "Recommendation", "AdviceReport"]
