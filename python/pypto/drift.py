"""Drift and regression checks of the latest run against the runs before it (docs/pipeline.md).

Noise model (every constant below is named with its unit and the source of its value):

* Per-token latency (decode step latency). With at least `MIN_RUNS_FOR_MAD` earlier runs, the run
  level p50 is compared with the median of the earlier runs' p50 and a robust spread
  sigma = 1.4826 x MAD (the consistency factor for normal data; Rousseeuw & Croux 1993). A change
  is flagged when |x - median| > `MAD_K` x sigma (k = 3, the "very conservative" cut of Leys et al.
  2013) AND the relative change exceeds `MIN_RELATIVE_CHANGE`. With fewer earlier runs, the
  latest run's decode step latencies are compared with the earlier runs' pooled decode steps by
  Welch's t-test at `WELCH_ALPHA` (the same test `pypto compare` uses), again with the relative floor.
* The relative floor `MIN_RELATIVE_CHANGE` (3 %) keeps identical reruns (MAD = 0) and
  sub-percent clock jitter from being flagged: run-to-run variation of a GPU/NPU decode step on a
  quiet machine is typically 1-2 % (MLPerf Inference requires results within 5 % across runs, so
  3 % sits between the two). It is an engineering default; change it per deployment.
* Per-op time: time per step of each op (device kernels, else host operators) vs the median of the
  earlier runs; flagged when it grew by more than `OP_GROWTH_RATIO` (+25 %) AND by at least
  `OP_MIN_SHARE_OF_STEP` (1 %) of the latest mean step time (small ops jitter by more than 25 %).
* Hotspots: an (issue type, op) pair absent from every earlier run is new; one whose share of step
  time grew by more than `HOTSPOT_SHARE_GROWTH` (5 points, the diagnosis' `high` severity cut) or
  whose severity rose is grown.
* Input lengths: the request lengths of the latest run vs those of the earlier runs, two-sample
  Kolmogorov-Smirnov test at `KS_ALPHA`, flagged only when the median also moved by more than
  `LENGTH_MEDIAN_SHIFT` (10 %), so a large sample does not flag a shift nobody would notice.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._native import engine as _engine

#: Earlier runs needed for the median/MAD model; below it Welch's test on step latencies is used.
#: 3 is the smallest sample whose MAD is not dominated by a single run.
MIN_RUNS_FOR_MAD = 3
#: MAD -> standard deviation for normal data (Rousseeuw & Croux 1993; the engine's constant).
MAD_TO_SIGMA = float(_engine.defaults["mad_to_standard_deviation"])
#: Robust z cut (Leys et al. 2013, "Detecting outliers: do not use standard deviation around the mean").
MAD_K = 3.0
#: Significance of Welch's t-test on step latencies (two-sided); the default of `pypto compare`.
WELCH_ALPHA = 0.01
#: Smallest relative change of per-token latency that is reported (see module docstring).
MIN_RELATIVE_CHANGE = 0.03
#: Per-op growth: relative threshold and the smallest absolute growth, as a share of the step time.
OP_GROWTH_RATIO = 0.25
OP_MIN_SHARE_OF_STEP = 0.01
#: At most this many op growth flags (largest absolute growth first).
MAX_OP_FLAGS = 10
#: Hotspot growth in affected share of step time (0.05 = 5 points; diagnosis `high` severity cut).
HOTSPOT_SHARE_GROWTH = 0.05
#: KS test significance and smallest relative median shift of request lengths.
KS_ALPHA = 0.01
LENGTH_MEDIAN_SHIFT = 0.10
#: Earlier runs compared against (most recent first); older history only feeds the trends.
DEFAULT_BASELINE_RUNS = 20

_SEVERITY_RANK = {"low": 0, "medium": 1, "high": 2}
#: Op names longer than this are shortened in flag messages (the full name stays in `subject`).
MESSAGE_NAME_CHARS = 90


def _short(name: str) -> str:
    return name if len(name) <= MESSAGE_NAME_CHARS else name[:MESSAGE_NAME_CHARS - 3] + "..."


@dataclass
class DriftFlag:
    kind: str            # per_token_latency | op_time | new_hotspot | grown_hotspot | input_length
    subject: str         # what changed (op name, issue type/op, "decode step")
    message: str
    figures: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "message": self.message, "figures": self.figures}


@dataclass
class DriftResult:
    run_id: Optional[int]
    baseline_run_ids: List[int]
    flags: List[DriftFlag]
    notes: List[str]

    def to_dict(self) -> Dict[str, Any]:
        return {"run_id": self.run_id, "baseline_run_ids": self.baseline_run_ids,
                "flags": [f.to_dict() for f in self.flags], "notes": self.notes}


# ------------------------------------------------------------------------- statistics
def student_t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value of Student's t with `df` degrees of freedom (the engine's, Boost.Math)."""
    return _engine.student_t_two_sided_p(float(t), float(df))


def welch_t_test(sample_a: Sequence[float], sample_b: Sequence[float]) -> Optional[Dict[str, float]]:
    """Welch's unequal-variance t-test of b against a (the engine's, as pypto compare runs it); None when a
    sample has fewer than 2 values."""
    result = _engine.welch_test([float(v) for v in sample_a], [float(v) for v in sample_b])
    if not result["testable"]:
        return None
    return {key: result[key] for key in ("t", "df", "p_value", "mean_a", "mean_b", "ci_low", "ci_high")}


def ks_two_sample(sample_a: Sequence[float], sample_b: Sequence[float]) -> Optional[Dict[str, float]]:
    """Two-sample Kolmogorov-Smirnov statistic D and its asymptotic p-value (the engine's, Stephens 1970
    correction); None when a sample is empty."""
    result = _engine.ks_two_sample([float(v) for v in sample_a], [float(v) for v in sample_b])
    if not result["testable"]:
        return None
    return {key: result[key] for key in ("d", "p_value", "n_a", "n_b")}


def median_and_robust_sigma(values: Sequence[float]) -> Tuple[float, float]:
    """The median and 1.4826 x the median absolute deviation (the engine's, as the ranks' and analyze's
    outlier rules compute them)."""
    spread = _engine.robust_spread([float(v) for v in values])
    return spread["median"], spread["sigma"]


# ------------------------------------------------------------------------- checks
def detect_drift(store: Any, run_id: Optional[int] = None, baseline_runs: int = DEFAULT_BASELINE_RUNS) -> DriftResult:
    """Compares run `run_id` (default: the latest) with up to `baseline_runs` runs ingested before it."""
    runs = store.runs()
    if not runs:
        return DriftResult(None, [], [], ["the history holds no run"])
    by_id = {r["id"]: r for r in runs}
    if run_id is None:
        run_id = runs[-1]["id"]
    if run_id not in by_id:
        raise KeyError(f"no run {run_id} in {store.path}")
    latest = by_id[run_id]
    earlier = [r for r in runs if r["id"] < run_id][-baseline_runs:]
    result = DriftResult(run_id, [r["id"] for r in earlier], [], [])
    if not earlier:
        result.notes.append(f"run {run_id} is the first run: nothing to compare with")
        return result
    _check_latency(store, latest, earlier, result)
    _check_ops(store, latest, earlier, result)
    _check_hotspots(store, latest, earlier, result)
    _check_lengths(store, latest, earlier, result)
    return result


def _check_latency(store: Any, latest: Dict[str, Any], earlier: List[Dict[str, Any]], out: DriftResult) -> None:
    x = latest["per_token_p50_ms"]
    previous = [r["per_token_p50_ms"] for r in earlier if r["per_token_p50_ms"] is not None]
    if x is None or not previous:
        out.notes.append("per-token latency: no decode steps in the latest run or in the earlier runs")
        return
    if len(previous) >= MIN_RUNS_FOR_MAD:
        med, sigma = median_and_robust_sigma(previous)
        relative = (x - med) / med if med else math.inf
        robust_z = (x - med) / sigma if sigma > 0 else (math.inf if x != med else 0.0)
        if abs(robust_z) > MAD_K and abs(relative) > MIN_RELATIVE_CHANGE:
            direction = "up" if x > med else "down"
            out.flags.append(DriftFlag(
                "per_token_latency", "decode step",
                f"per-token latency p50 {direction} {relative:+.1%}: {x:.3f} ms vs median {med:.3f} ms of "
                f"{len(previous)} earlier runs (robust z {robust_z:+.1f}, limit {MAD_K:g})",
                {"method": "median_mad", "latest_p50_ms": x, "baseline_median_ms": med, "baseline_mad_ms": sigma / MAD_TO_SIGMA, "baseline_sigma_ms": sigma,
                 "robust_z": robust_z, "relative_change": relative, "k": MAD_K,
                 "min_relative_change": MIN_RELATIVE_CHANGE, "baseline_runs": len(previous)}))
        return
    latest_steps = [v / 1e6 for v in store.step_latencies(latest["id"], "decode")]
    pooled = [v / 1e6 for r in earlier for v in store.step_latencies(r["id"], "decode")]
    test = welch_t_test(pooled, latest_steps)
    if test is None:
        out.notes.append("per-token latency: fewer than 2 decode steps on one side; Welch test not possible")
        return
    relative = (test["mean_b"] - test["mean_a"]) / test["mean_a"] if test["mean_a"] else math.inf
    if test["p_value"] < WELCH_ALPHA and abs(relative) > MIN_RELATIVE_CHANGE:
        direction = "up" if relative > 0 else "down"
        out.flags.append(DriftFlag(
            "per_token_latency", "decode step",
            f"per-token latency {direction} {relative:+.1%}: mean {test['mean_b']:.3f} ms vs {test['mean_a']:.3f} ms "
            f"over {len(pooled)} earlier decode steps (Welch t {test['t']:+.1f}, p {test['p_value']:.2g} < "
            f"{WELCH_ALPHA:g})",
            {"method": "welch_t", **test, "relative_change": relative, "alpha": WELCH_ALPHA,
             "min_relative_change": MIN_RELATIVE_CHANGE, "n_latest": len(latest_steps), "n_baseline": len(pooled)}))


def _per_step_op_times(store: Any, run: Dict[str, Any]) -> Dict[str, float]:
    rows = store.op_stats(run["id"])
    source = "device_kernel" if any(r["source"] == "device_kernel" for r in rows) else "host_operator"
    steps = max(run["step_count"], 1)
    return {r["op_name"]: r["total_ns"] / steps for r in rows if r["source"] == source}


def _check_ops(store: Any, latest: Dict[str, Any], earlier: List[Dict[str, Any]], out: DriftResult) -> None:
    now = _per_step_op_times(store, latest)
    history = [_per_step_op_times(store, r) for r in earlier]
    lat = store.step_latencies(latest["id"])
    mean_step_ns = statistics.fmean(lat) if lat else 0.0
    min_growth_ns = OP_MIN_SHARE_OF_STEP * mean_step_ns
    grown = []
    for name, per_step in now.items():
        before = [h.get(name, 0.0) for h in history]
        med = statistics.median(before)
        growth = per_step - med
        if growth >= min_growth_ns and (med == 0 or growth / med > OP_GROWTH_RATIO):
            grown.append((growth, name, per_step, med))
    grown.sort(reverse=True)
    for growth, name, per_step, med in grown[:MAX_OP_FLAGS]:
        relative = growth / med if med else math.inf
        text = "new op" if med == 0 else f"{relative:+.0%}"
        out.flags.append(DriftFlag(
            "op_time", name,
            f"{_short(name)}: {per_step / 1e3:.1f} us per step vs median {med / 1e3:.1f} us before ({text}, "
            f"+{growth / 1e3:.1f} us per step = {growth / mean_step_ns:.1%} of a step)",
            {"latest_ns_per_step": per_step, "baseline_median_ns_per_step": med, "growth_ns_per_step": growth,
             "relative_growth": relative if med else None, "threshold_ratio": OP_GROWTH_RATIO,
             "min_share_of_step": OP_MIN_SHARE_OF_STEP}))
    if len(grown) > MAX_OP_FLAGS:
        out.notes.append(f"{len(grown) - MAX_OP_FLAGS} more ops grew beyond the threshold (largest shown)")


def _check_hotspots(store: Any, latest: Dict[str, Any], earlier: List[Dict[str, Any]], out: DriftResult) -> None:
    best_before: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for r in earlier:
        for i in store.issues(r["id"]):
            key = (i["issue_type"], i["op_name"])
            prev = best_before.get(key)
            if prev is None or (i["affected_share"] or 0) > (prev["affected_share"] or 0):
                best_before[key] = i
    for i in store.issues(latest["id"]):
        key = (i["issue_type"], i["op_name"])
        subject = i["issue_type"] + (f" on {i['op_name']}" if i["op_name"] else "")
        share = i["affected_share"] or 0.0
        prev = best_before.get(key)
        if prev is None:
            out.flags.append(DriftFlag(
                "new_hotspot", subject,
                f"new {i['severity']} hotspot {subject}: {share:.1%} of step time, absent from {len(earlier)} "
                f"earlier runs", {"issue_type": i["issue_type"], "op_name": i["op_name"], "severity": i["severity"],
                                   "affected_share": share, "estimated_saved_us": i["estimated_saved_us"]}))
            continue
        before = prev["affected_share"] or 0.0
        severity_rose = _SEVERITY_RANK.get(i["severity"], 0) > _SEVERITY_RANK.get(prev["severity"], 0)
        if share - before > HOTSPOT_SHARE_GROWTH or severity_rose:
            out.flags.append(DriftFlag(
                "grown_hotspot", subject,
                f"hotspot {subject} grew: {share:.1%} of step time ({i['severity']}) vs at most {before:.1%} "
                f"({prev['severity']}) before", {"issue_type": i["issue_type"], "op_name": i["op_name"],
                                                  "affected_share": share, "baseline_max_share": before,
                                                  "severity": i["severity"], "baseline_severity": prev["severity"],
                                                  "share_growth_threshold": HOTSPOT_SHARE_GROWTH}))


def request_lengths(shapes: Sequence[Dict[str, Any]], per_request: bool = True) -> List[int]:
    """Request lengths of one run: the tokens in context per request at each step (the prompt length
    at prefill, the KV length at decode), counted once per request in the batch (`per_request`)
    or once per step (the sample of the KS test: requests of one batch are not independent)."""
    out: List[int] = []
    for s in shapes:
        length = s["kv_len"]
        if length is None and s["phase"] == "prefill":
            length = s["query_len"]
        if length is None:
            continue
        out.extend([int(length)] * (max(int(s["batch"] or 1), 1) if per_request else 1))
    return out


def _check_lengths(store: Any, latest: Dict[str, Any], earlier: List[Dict[str, Any]], out: DriftResult) -> None:
    now = request_lengths(store.request_shapes(latest["id"]), per_request=False)
    before = [v for r in earlier for v in request_lengths(store.request_shapes(r["id"]), per_request=False)]
    if not now or not before:
        out.notes.append("input lengths: no request shapes recorded on one side (profile without input shapes)")
        return
    test = ks_two_sample(before, now)
    med_now, med_before = statistics.median(now), statistics.median(before)
    shift = (med_now - med_before) / med_before if med_before else math.inf
    if test and test["p_value"] < KS_ALPHA and abs(shift) > LENGTH_MEDIAN_SHIFT:
        out.flags.append(DriftFlag(
            "input_length", "request length",
            f"input-length distribution changed: median {med_now:g} vs {med_before:g} tokens ({shift:+.0%}), "
            f"KS D {test['d']:.2f}, p {test['p_value']:.2g} < {KS_ALPHA:g}",
            {"method": "ks_two_sample", **test, "median_latest": med_now, "median_baseline": med_before,
             "median_shift": shift, "alpha": KS_ALPHA, "median_shift_bound": LENGTH_MEDIAN_SHIFT}))


__all__ = ["detect_drift", "DriftFlag", "DriftResult", "welch_t_test", "student_t_two_sided_p", "ks_two_sample", "median_and_robust_sigma",
           "request_lengths"]
