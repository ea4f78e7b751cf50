"""The closed tuning loop (examples/closed_loop.py, `make demo`) in its small configuration:
it runs end to end on both example models, keeps the generated tokens, finds hotspots, and
writes the reports. Speed-ups are measured by the demo itself and recorded in docs, not
asserted here (timings on a shared CI machine are not a test)."""

import io
import json
import os
import sys

import torch

from conftest import REPO
from pypto._progress import Progress
from pypto.optimizers import apply_all_optimizations

sys.path.insert(0, os.path.join(REPO, "examples"))
import closed_loop  # noqa: E402


class RecordingProgress(Progress):
    """The demo's progress helper, drawn into a string instead of the terminal (enabled, so that the
    per-token hook is installed too); every instance is kept."""
    made = []

    def __init__(self, label, total=None, unit="profiles", stream=None, enabled=None):
        super().__init__(label, total=total, unit=unit, stream=io.StringIO(), enabled=True)
        RecordingProgress.made.append(self)


def holm_slower(metrics):
    """The names of `metrics` (summary dicts) that read "slower" with their p Holm-adjusted over all of them:
    the k-th smallest of m p-values times (m - k + 1), kept non-decreasing (worked out here, not by pypto)."""
    judged = sorted(((m["p_value"], name) for name, m in metrics.items() if m["testable"]), key=lambda x: x[0])
    slower, running = set(), 0.0
    for k, (p, name) in enumerate(judged):
        running = max(running, min(1.0, (len(judged) - k) * p))
        if metrics[name]["verdict"] == "slower" and running < metrics[name]["alpha"]:
            slower.add(name)
    return [name for name in metrics if name in slower]    # in the summary's order, as the reason names them


def _recorded(monkeypatch):
    RecordingProgress.made = []
    monkeypatch.setattr(closed_loop, "Progress", RecordingProgress)
    return RecordingProgress.made


def test_closed_loop_small(tmp_path, monkeypatch, capsys):
    # The demo calibrates this CPU once; keep that file out of the user's config.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    made = _recorded(monkeypatch)
    assert closed_loop.main(["--small", "--out", str(tmp_path)]) == 0
    # Progress of every long phase went through pypto._progress, and none of it to stdout.
    drawn = {p.label: p.stream.getvalue() for p in made}
    work = closed_loop.WORKLOADS["small"]
    rounds, tokens = work["ab"]["max_rounds"], work["new_tokens"]
    results = json.load(open(tmp_path / "summary.json"))
    for model, r in zip(("hf", "handwritten"), results):
        # With an action kept: the whole-model A/B and the re-profile; with none, neither (the optimized
        # model is the baseline).
        runs = ("baseline", "optimized") if r["kept"] else ("baseline",)
        if r["kept"]:
            assert f"{rounds}/{rounds} rounds" in drawn[f"pypto demo: {model}, A/B"]
        else:
            assert f"pypto demo: {model}, A/B" not in drawn and f"pypto demo: {model}, optimized profile" not in drawn
        for run in runs:
            assert f"{tokens}/{tokens} token steps" in drawn[f"pypto demo: {model}, {run} profile"]
        apply = next(p for p in made if p.label == f"pypto demo: {model}, apply")
        assert apply.done == apply.total > 0
    out = capsys.readouterr().out
    assert "pypto demo:" not in out and "\r" not in out
    assert [r["model"] for r in results] == ["hf", "handwritten"]
    for r in results:
        assert r["same_tokens"], r["model"]
        assert r["kinds"], f"{r['model']}: no hotspot kind of the brief found"
        for key in ("report", "comparison") if r["kept"] else ("report",):
            html = open(r[key], encoding="utf-8").read()
            assert "<svg" in html and "</html>" in html.lower()
        if not r["kept"]:
            assert r["verdict"] == closed_loop.NOTHING_KEPT and r["ab"] is None and r["comparison"] is None
        else:
            # The interleaved A/B: both sides timed every round, a verdict with its CI.
            decode = r["ab"]["metrics"]["decode"]
            assert len(decode["baseline_ms"]) == len(decode["candidate_ms"]) == r["ab"]["rounds"] == rounds
            assert all(t > 0 for t in decode["baseline_ms"] + decode["candidate_ms"])
            assert r["verdict"] in ("faster", "slower", "no significant change")
            if decode["rounds"] >= 2:
                assert decode["ci_low"] <= r["decode_speedup"] <= decode["ci_high"]
        # Every applied action measured alone: estimate, measurement with CI, kept or reverted with why.
        assert r["actions"], r["model"]
        for action in r["actions"]:
            assert action["kept"] == (action["action"] in r["kept"])
            assert action["description"], action["action"]     # what was done, in words
            assert action["reason"] == "kept" or action["reason"].startswith("reverted: ")
            # Kept only when the primary metric is significantly faster and no gated metric (decode, token
            # step, forward) significantly slower, judged together (Holm), with the outputs unchanged; the
            # reason says which failed.
            metrics = action["ab"]["metrics"]
            primary = action["ab"]["primary"]
            gated_slower = holm_slower({name: m for name, m in metrics.items()
                                        if name in ("decode", "step", "forward")})
            gained = metrics[primary]["verdict"] == "faster"
            assert action["kept"] == (action["tokens_unchanged"] and not gated_slower and gained), action["reason"]
            if not action["kept"] and action["tokens_unchanged"]:
                expected = (f"reverted: significantly slower ({gated_slower[0]}:" if gated_slower
                            else f"reverted: no significant gain ({primary}:")
                assert action["reason"].startswith(expected), action["reason"]
            low, high = action["measured_ci_ms"]
            if action["ab"]["metrics"][action["metric"]]["rounds"] >= 2:
                assert min(low, high) <= action["measured_saved_ms_per_step"] <= max(low, high)
            if action["action"] == "intra_op_threads":     # the rules give no gain for it
                assert action["estimated_saved_ms_per_step"] is None and action["estimate"] == "no estimate"
            elif action["estimate_basis"].startswith("no host_bound finding"):   # compiled without a finding
                assert action["action"] == "torch_compile"
                assert action["estimated_saved_ms_per_step"] is None and action["estimate"] == "no estimate"
            else:
                assert action["estimated_saved_ms_per_step"] >= 0
        overhead = r["collection_overhead"]
        if overhead["ab"]["metrics"]["decode"]["rounds"] >= 2:     # a round whose decode took 0 ms is dropped
            assert overhead["ci_pct"][0] <= overhead["overhead_pct"] <= overhead["ci_pct"][1]
        else:
            assert overhead["verdict"].startswith("not testable")
        assert (tmp_path / r["model"] / "artifacts").is_dir()


def test_estimate_is_right_inside_the_ci_or_within_a_quarter():
    # Within 25 % of the measured 2.0 ms: |2.4 - 2.0| = 0.4 <= 0.5.
    narrow = {"saved_ms": 2.0, "ci_low_ms": 1.9, "ci_high_ms": 2.1}
    assert closed_loop.estimate_verdict(2.4, narrow) == "right (within 25 %)"
    # Outside both the band and the CI.
    assert closed_loop.estimate_verdict(2.6, narrow) == "over-estimated"
    assert closed_loop.estimate_verdict(1.4, narrow) == "under-estimated"
    # Inside a CI narrow enough to tell: measured 10 ms, CI 7.0 .. 13.2 (half-width 3.1 <= 0.25 x 13 =
    # 3.25); the estimate 13 is 3 ms off, outside the band (2.5 ms), but inside the CI.
    asymmetric = {"saved_ms": 10.0, "ci_low_ms": 7.0, "ci_high_ms": 13.2}
    assert closed_loop.estimate_verdict(13.0, asymmetric) == "right (inside the CI)"
    # Inside a CI too wide to tell (the hand-written decoder's norm fusion, quiet): estimate 0.52,
    # measured -0.20, CI -1.26 .. 0.81, half-width 1.035 > 0.25 x 0.52 = 0.13.
    wide = {"saved_ms": -0.20, "ci_low_ms": -1.26, "ci_high_ms": 0.81}
    assert closed_loop.estimate_verdict(0.52, wide).startswith("inconclusive (inside a CI of +-1.04 ms")


def test_timing_rounds_advance_the_progress_line():
    calls = []
    progress = Progress("pypto demo: t", total=3, unit="rounds", stream=io.StringIO(), enabled=True)
    times = closed_loop.time_generate(lambda ids, n: calls.append(n), torch.zeros(1, 2), 4, 3, progress)
    assert len(times["decode"]) == 3 and calls == [1, 4] * 3
    assert progress.done == 3 and "pypto demo: t: 3/3 rounds" in progress.stream.getvalue()


def test_each_recommendation_applied_advances_the_progress_line():
    recommendations = [{"hotspot_type": "matmul_tiling", "rule_id": "aoe_tune", "actions": [], "action": "tune"},
                       {"hotspot_type": "host_bound", "rule_id": "cuda_graphs", "actions": [], "action": "graphs"}]
    progress = Progress("pypto demo: apply", unit="recommendations", stream=io.StringIO(), enabled=True)
    report = apply_all_optimizations(torch.nn.Linear(2, 2), recommendations, return_report=True, progress=progress)
    assert len(report.skipped) == 2 and progress.done == progress.total == 2
    assert "pypto demo: apply: 2/2 recommendations, host_bound" in progress.stream.getvalue()


def test_phase_progress_is_wiped_before_a_log_line_and_silent_off_a_terminal(monkeypatch, capsys):
    made = _recorded(monkeypatch)
    with closed_loop.phase("hf, baseline timing", total=2) as progress:
        progress.advance()
        closed_loop.log("      a log line")
    (recorded,) = made
    assert recorded.stream.getvalue() == "\rpypto demo: hf, baseline timing: 1/2 rounds" + "\r" + " " * 43 + "\r"
    assert capsys.readouterr().out == "      a log line\n"
    assert closed_loop._active_progress == []
    monkeypatch.undo()        # the real helper: stderr is not a terminal under pytest, nothing is drawn
    with closed_loop.phase("hf, apply") as progress:
        assert not progress.enabled
