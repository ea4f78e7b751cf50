"""Interleaved A/B timing of two variants of one workload in one process.

Timing a baseline and then, minutes later, a candidate lets the load of the machine decide the
verdict (a concurrent build can double a decode step). Here the two run alternately on the same
inputs, A B, then B A, round after round, and round i of one side is paired with round i of the
other: the engine's paired test (pypto._engine.paired_ratio_test) takes the speedup as the geometric
mean of the per-round ratios with a Student-t confidence interval on their logs, so load that both
sides of a round share cancels. Rounds go on until that interval is narrow enough or a round or
time limit is reached.

    result = interleaved_ab(lambda: generate_round(base_generate, ids, 16),
                            lambda: generate_round(opt_generate, ids, 16))
    print(result.summary())          # "decode per token: 9.05 -> 6.91 ms, x1.31 (95% CI x1.27-x1.35), faster, ..."
    result.regression(5.0)           # True when significantly slower by more than 5 %

Each side is a callable running one round of the workload and returning its figures in ms, e.g.
{"decode": per-token decode ms, "prefill": ms}; generate_round() is that callable for a
`generate(ids, new_tokens)` function and also reports CPU time (all threads of the process) per
decode token.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Dict, List, Optional

from ._native import engine

# Rounds before the stopping rule is looked at: the t interval of fewer paired rounds is too wide
# to stop on (t 0.975 quantile 2.57 at 5 rounds, 2.26 at 9: barely wider than the normal 1.96).
DEFAULT_MIN_ROUNDS = 6
# Rounds at most; with the time budget below the runner stops at whichever comes first.
DEFAULT_MAX_ROUNDS = 40
# Stop once the confidence interval of the primary metric's speedup is within this fraction of it
# on either side (relative half width, unitless): 3 % tells a 1.1x change from none at 95 %.
DEFAULT_TARGET_HALF_WIDTH = 0.03
# Wall-clock budget of one A/B measurement, seconds (the demo's rounds of a 32-token generate on
# 2 cores take 2-6 s; this leaves room for ~10-30 rounds).
DEFAULT_TIME_BUDGET_S = 120.0
# Two-sided level of the confidence interval (the engine's default for compare, 0.05 = 95 % CI).
DEFAULT_ALPHA = float(engine.defaults["significance_alpha"])


def finite_or_none(value: Any) -> Any:
    """`value` with every NaN or infinity (nested in dicts and lists too) replaced by None, so that it
    dumps as strict JSON (a test that is not testable has NaN bounds)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def _load_average() -> Optional[float]:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):   # not on every platform
        return None


class ABMetric:
    """One metric of an A/B measurement: both sides' per-round values (ms) and the engine's paired test."""

    def __init__(self, name: str, baseline: List[float], candidate: List[float], alpha: float):
        self.name = name
        self.baseline = list(baseline)
        self.candidate = list(candidate)
        self.test: Dict[str, Any] = dict(engine.paired_ratio_test(self.baseline, self.candidate, alpha))

    @staticmethod
    def _median(values: List[float]) -> float:
        return engine.nearest_rank_percentile(sorted(values), 50.0) if values else math.nan

    @property
    def baseline_ms(self) -> float:
        return self._median(self.baseline)

    @property
    def candidate_ms(self) -> float:
        return self._median(self.candidate)

    @property
    def speedup(self) -> float:
        return float(self.test["speedup"])

    @property
    def verdict(self) -> str:
        return str(self.test["verdict"])

    def saved_ms(self) -> Dict[str, float]:
        """What the candidate saves per unit of this metric, ms, with the CI: baseline × (1 - 1/speedup),
        the paired speedup applied to the baseline's median (positive = faster)."""
        base = self.baseline_ms

        def saved(speedup: float) -> float:
            return base * (1.0 - 1.0 / speedup) if speedup and speedup > 0 else math.nan

        return {"saved_ms": saved(self.speedup), "ci_low_ms": saved(float(self.test["ci_low"])),
                "ci_high_ms": saved(float(self.test["ci_high"]))}

    def to_dict(self) -> Dict[str, Any]:
        d = {"metric": self.name, "baseline_median_ms": self.baseline_ms, "candidate_median_ms": self.candidate_ms,
             "baseline_geomean_ms": self.test["baseline_geomean"],
             "candidate_geomean_ms": self.test["candidate_geomean"],
             **{k: self.test[k] for k in ("speedup", "ci_low", "ci_high", "relative_half_width", "p_value",
                                           "alpha", "testable", "rounds", "verdict")},
             **self.saved_ms(), "baseline_ms": self.baseline, "candidate_ms": self.candidate}
        return finite_or_none(d)

    def line(self) -> str:
        """"decode: 8.22 -> 8.03 ms, x1.02 (95% CI ...), verdict": the two figures are each side's geometric
        mean over the paired rounds, whose ratio is the speedup (medians of the sides need not agree with it)."""
        t = self.test
        if not t["testable"]:
            return f"{self.name}: {self.baseline_ms:.2f} -> {self.candidate_ms:.2f} ms (medians), {t['verdict']}"
        level = round((1 - float(t["alpha"])) * 100)
        base, cand = float(t["baseline_geomean"]), float(t["candidate_geomean"])
        return (f"{self.name}: {base:.2f} -> {cand:.2f} ms, x{self.speedup:.2f} "
                f"({level}% CI x{float(t['ci_low']):.2f}-x{float(t['ci_high']):.2f}, p {float(t['p_value']):.2g}), "
                f"{t['verdict']}")


class ABResult:
    """An interleaved A/B measurement: per metric the paired test (`metrics`), the primary metric's
    verdict, the rounds run, why they stopped, and the load average around them."""

    def __init__(self, metrics: Dict[str, ABMetric], primary: str, rounds: int, stop_reason: str,
                 wall_s: float, load_before: Optional[float], load_after: Optional[float]):
        self.metrics = metrics
        self.primary = primary
        self.rounds = rounds
        self.stop_reason = stop_reason
        self.wall_s = wall_s
        self.load_before = load_before
        self.load_after = load_after

    @property
    def main(self) -> ABMetric:
        return self.metrics[self.primary]

    @property
    def verdict(self) -> str:
        return self.main.verdict

    @property
    def speedup(self) -> float:
        return self.main.speedup

    def slower_together(self, names: Any) -> List[ABMetric]:
        """The metrics among `names` that are significantly slower when they are judged together: each
        metric's p adjusted by Holm's method over all of them (engine.holm_adjust), so that gating k metrics
        at alpha keeps the chance of any false "slower" at alpha, not up to k x alpha. (Two metrics at
        p 0.04 each read "slower" alone; together each is 0.08.)"""
        judged = [m for name, m in self.metrics.items() if name in names and m.test["testable"]]
        adjusted = engine.holm_adjust([float(m.test["p_value"]) for m in judged])
        return [m for m, p in zip(judged, adjusted)
                if m.verdict == "slower" and p < float(m.test["alpha"])]

    def regression(self, allowed_pct: float = 0.0) -> bool:
        """True when the primary metric is significantly slower by more than `allowed_pct` % (the
        --fail-on-regression gate): the candidate takes 1/speedup of the baseline's time."""
        return self.verdict == "slower" and (1.0 / self.speedup - 1.0) * 100.0 > allowed_pct

    def summary(self) -> str:
        load = ""
        if self.load_before is not None and self.load_after is not None:
            load = f", load average {self.load_before:.2f} -> {self.load_after:.2f}"
        lines = [self.main.line()]
        lines += [m.line() for name, m in self.metrics.items() if name != self.primary]
        lines.append(f"{self.rounds} interleaved rounds in {self.wall_s:.1f} s ({self.stop_reason}){load}")
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        return {"primary": self.primary, "verdict": self.verdict, "rounds": self.rounds,
                "stop_reason": self.stop_reason, "wall_s": self.wall_s, "load_average_before": self.load_before,
                "load_average_after": self.load_after,
                "metrics": {name: m.to_dict() for name, m in self.metrics.items()}}


def interleaved_ab(baseline: Callable[[], Dict[str, float]], candidate: Callable[[], Dict[str, float]], *,
                   primary: str = "decode", min_rounds: int = DEFAULT_MIN_ROUNDS,
                   max_rounds: int = DEFAULT_MAX_ROUNDS, target_half_width: float = DEFAULT_TARGET_HALF_WIDTH,
                   time_budget_s: float = DEFAULT_TIME_BUDGET_S, alpha: float = DEFAULT_ALPHA,
                   progress: Any = None) -> ABResult:
    """Runs `baseline` and `candidate` alternately (A B, B A, A B, …: the order flips every round so that
    neither side always runs first) until the primary metric's CI is within `target_half_width` of its
    speedup (after `min_rounds`), `max_rounds` rounds, or `time_budget_s` seconds (after `min_rounds`).
    Each callable runs one round and returns {metric: ms}; the metrics of the first round are the ones
    tested. `progress` (a pypto._progress.Progress) advances once per round."""
    if min_rounds < 2 or max_rounds < min_rounds:
        raise ValueError(f"interleaved_ab: need 2 <= min_rounds <= max_rounds (got {min_rounds}, {max_rounds})")
    values: Dict[str, List[List[float]]] = {}
    load_before = _load_average()
    start = time.perf_counter()
    stop_reason = f"round limit {max_rounds}"
    rounds = 0
    while rounds < max_rounds:
        order = ((0, baseline), (1, candidate)) if rounds % 2 == 0 else ((1, candidate), (0, baseline))
        got: Dict[int, Dict[str, float]] = {}
        for side, run in order:
            got[side] = run()
        if not values:
            if primary not in got[0]:
                raise ValueError(f"interleaved_ab: the rounds give {sorted(got[0])}, not the primary metric {primary!r}")
            values = {name: [[], []] for name in got[0] if name in got[1]}
        for name, sides in values.items():
            sides[0].append(float(got[0][name]))
            sides[1].append(float(got[1][name]))
        rounds += 1
        if progress is not None:
            progress.advance()
        if rounds < min_rounds:
            continue
        test = engine.paired_ratio_test(values[primary][0], values[primary][1], alpha)
        width = test["relative_half_width"]
        if test["testable"] and width == width and width <= target_half_width:
            stop_reason = f"CI within ±{target_half_width * 100:.0f} %"
            break
        if time.perf_counter() - start >= time_budget_s:
            stop_reason = f"time budget {time_budget_s:.0f} s"
            break
    wall = time.perf_counter() - start
    metrics = {name: ABMetric(name, sides[0], sides[1], alpha) for name, sides in values.items()}
    return ABResult(metrics, primary, rounds, stop_reason, wall, load_before, _load_average())


def device_synchronizer(model: Any) -> Optional[Callable[[], None]]:
    """What waits for a model's device to finish (torch.cuda / torch.npu synchronize) before a clock is read,
    so that queued kernels are timed; None on CPU."""
    try:
        device = next(iter(model.parameters())).device
    except (AttributeError, StopIteration, TypeError):
        return None
    import torch
    if device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    if device.type == "npu" and hasattr(torch, "npu"):
        return lambda: torch.npu.synchronize(device)
    return None


def generate_round(generate: Callable[[Any, int], Any], ids: Any, new_tokens: int,
                   synchronize: Optional[Callable[[], None]] = None, model: Any = None) -> Dict[str, float]:
    """One round of a `generate(ids, n)` workload, in ms: "prefill", "decode" per decode token, "step" = whole
    / new_tokens (every token step, the unit of the advisor's per-step estimates) and "decode_cpu" = CPU time
    of the process (all threads) per decode token. `synchronize` (e.g. device_synchronizer(model)) runs
    before each clock reading on an accelerator.

    With `model` (the torch.nn.Module whose forwards generate calls, one per token), one generate of
    `new_tokens` is timed and split where the second forward starts: prefill = up to there, decode =
    the rest over new_tokens - 1 (a forward pre-hook reads the clock; it is removed after the round).
    Without it, or when fewer than two forwards ran, the prefill is a generate of one token timed
    apart and decode = (whole - prefill) / (new_tokens - 1): two runs, so load that hits one of them
    alone moves the difference (it is clamped at 0)."""
    sync = synchronize or (lambda: None)
    marks: List[tuple] = []
    handle = None
    if model is not None and new_tokens > 1 and callable(getattr(model, "register_forward_pre_hook", None)):
        def mark_second_forward(_module: Any, _args: Any) -> None:
            if len(marks) < 2:
                if marks:
                    sync()                 # the prefill's device work belongs to the prefill
                marks.append((time.perf_counter(), time.process_time()))
        handle = model.register_forward_pre_hook(mark_second_forward)
    try:
        if handle is not None:
            sync()
            wall0, cpu0 = time.perf_counter(), time.process_time()
            generate(ids, new_tokens)
            sync()
            wall2, cpu2 = time.perf_counter(), time.process_time()
            if len(marks) == 2:
                wall1, cpu1 = marks[1]
                decode_tokens = new_tokens - 1
                return {"decode": (wall2 - wall1) * 1e3 / decode_tokens, "prefill": (wall1 - wall0) * 1e3,
                        "step": (wall2 - wall0) * 1e3 / new_tokens,
                        "decode_cpu": (cpu2 - cpu1) * 1e3 / decode_tokens}
    finally:
        if handle is not None:
            handle.remove()
    sync()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    generate(ids, 1)
    sync()
    wall1, cpu1 = time.perf_counter(), time.process_time()
    generate(ids, new_tokens)
    sync()
    wall2, cpu2 = time.perf_counter(), time.process_time()
    prefill, whole = (wall1 - wall0) * 1e3, (wall2 - wall1) * 1e3
    decode_tokens = max(new_tokens - 1, 1)
    return {"decode": max(whole - prefill, 0.0) / decode_tokens, "prefill": prefill,
            "step": whole / max(new_tokens, 1),
            "decode_cpu": max((cpu2 - cpu1) - (cpu1 - cpu0), 0.0) * 1e3 / decode_tokens}


__all__ = ["interleaved_ab", "generate_round", "device_synchronizer", "finite_or_none", "ABResult", "ABMetric", "DEFAULT_MIN_ROUNDS", "DEFAULT_MAX_ROUNDS",
           "DEFAULT_TARGET_HALF_WIDTH", "DEFAULT_TIME_BUDGET_S"]
