"""ProfileComparer: baseline vs optimized run of the same workload.

Ops matched across runs (class, name, shape; tolerant to renamed kernels), per-class and per-op
deltas, per-token latency p50/p90/p99, issues resolved / remaining / new, estimated vs measured
gain per applied action, and a Welch t-test on the per-step latencies so that a difference is
only called a change when it exceeds run-to-run noise. Same engine call as `pypto compare`.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional

from ._native import diagnose_options, engine, fspath
from .diagnostics import _as_graph

DEFAULT_SIGNIFICANCE_ALPHA = float(engine.defaults["significance_alpha"])  # compare/compare.h


class ComparisonReport:
    """The comparison (schema pypto.compare/1, docs/json-schema.md)."""

    def __init__(self, comparison: Any):
        self._comparison = comparison   # the engine's Comparison: renders on demand
        self.data = comparison.document()

    @property
    def measured_speedup(self) -> float:
        return float(self.data.get("measured_speedup") or float("nan"))

    @property
    def significant(self) -> bool:
        return bool(self.data.get("step_latency", {}).get("significant"))

    @property
    def step_verdict(self) -> str:
        """The per-step latency test alone: 'faster', 'slower', 'not significant', 'not testable'."""
        return str(self.data.get("step_latency", {}).get("verdict", ""))

    def latency_ms(self, side: str = "candidate") -> Dict[str, Any]:
        return dict(self.data[side]["latency_ms"])

    @property
    def verdict(self) -> str:
        """The one-line answer: 'identical profiles', 'faster x1.21 [1.12, 1.31]', 'no significant change'."""
        return str(self.data.get("verdict", ""))

    @property
    def actions(self) -> List[Dict[str, Any]]:
        return list(self.data.get("actions", []))

    @property
    def issues(self) -> List[Dict[str, Any]]:
        return list(self.data.get("issues", []))

    def to_markdown(self) -> str:
        return self._comparison.to_markdown()

    def to_json(self) -> str:
        return self._comparison.to_json()

    def to_html(self) -> str:
        return self._comparison.to_html()

    def to_text(self) -> str:
        """Aligned plain tables, as `pypto compare` prints them."""
        return self._comparison.to_text()

    def save(self, path: Any, force: bool = False) -> str:
        """Writes HTML, Markdown or JSON by the file's extension (.html, .md, .json)."""
        p = fspath(path)
        text = self.to_html() if p.endswith((".html", ".htm")) else self.to_json() if p.endswith(".json") \
            else self.to_markdown()
        engine.write_text_file(p, text, force)
        return p


class ProfileComparer:
    """ProfileComparer(baseline, optimized).generate_comparison_report().

    baseline / optimized: OperatorCallGraph, ProfileResults or profile paths.
    applied_actions: what was changed, each a dict with id, description, issue_type, target_op,
    target_class, estimated_saved_ns, estimate_steps (e.g. from the advisor's recommendations);
    default: every baseline issue the optimized run no longer shows.
    """

    def __init__(self, baseline: Any, optimized: Any, applied_actions: Optional[Iterable[Dict[str, Any]]] = None,
                 alpha: float = DEFAULT_SIGNIFICANCE_ALPHA, **diagnose: Any):
        self.baseline = _as_graph(baseline)
        self.optimized = _as_graph(optimized)
        self.applied_actions = list(applied_actions) if applied_actions is not None else None
        self.alpha = float(alpha)
        self.options = diagnose_options(**diagnose)

    def generate_comparison_report(self) -> ComparisonReport:
        actions = json.dumps({"actions": self.applied_actions}) if self.applied_actions else ""
        return ComparisonReport(engine.compare(self.baseline._loaded, self.optimized._loaded, actions,
                                               self.alpha, self.options))


def actions_from_recommendations(recommendations: Iterable[Any], applied_ids: Optional[Iterable[str]] = None
                                 ) -> List[Dict[str, Any]]:
    """Applied-action records for ProfileComparer from advisor recommendations (all, or by rule_id)."""
    wanted = set(applied_ids) if applied_ids is not None else None
    out = []
    for rec in recommendations:
        raw = rec.raw if hasattr(rec, "raw") else rec
        if wanted is not None and raw.get("rule_id") not in wanted and raw.get("hotspot_type") not in wanted:
            continue
        evidence = raw.get("evidence") or [{}]
        out.append({
            "id": raw.get("rule_id", ""),
            "description": raw.get("description", ""),
            "issue_type": raw.get("hotspot_type", ""),
            "target_op": evidence[0].get("op_name", "") if len(evidence) == 1 else "",
            "target_class": "",
            "estimated_saved_ns": int(round(float(raw.get("estimated_saved_us", 0.0)) * 1000)),
        })
    return out


__all__ = ["ProfileComparer", "ComparisonReport", "actions_from_recommendations"]
