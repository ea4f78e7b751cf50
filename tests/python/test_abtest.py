"""pypto.abtest: interleaved A/B rounds, the engine's paired test, the stopping rule and the gate.

The rounds here are scripted (no timing), so every figure is worked out by hand in the comments."""

import math

import pytest

from pypto import _engine
from pypto.abtest import generate_round, interleaved_ab


def scripted(values, calls, side):
    """A side of the A/B: each call returns the next of `values` as {"decode": v, "prefill": 2 v}."""
    it = iter(values)

    def run():
        calls.append(side)
        v = next(it)
        return {"decode": v, "prefill": 2 * v}
    return run


def test_load_shared_by_both_sides_of_a_round_cancels():
    # The machine's load multiplies both sides of a round alike (x1, x3, x1.5, x10, ...): the candidate
    # is 0.8 of the baseline every round, so the paired speedup is exactly 1.25 with a zero-width CI and
    # the runner stops at min_rounds. Welch on the same numbers sees only noise.
    load = [1, 3, 1.5, 10, 2, 1]
    base = [10 * x for x in load]
    cand = [8 * x for x in load]
    calls = []
    r = interleaved_ab(scripted(base, calls, "A"), scripted(cand, calls, "B"), min_rounds=6, max_rounds=20)
    assert r.rounds == 6 and r.stop_reason == "CI within ±3 %"
    assert r.verdict == "faster"
    assert r.speedup == pytest.approx(1.25, rel=1e-12)
    assert r.main.test["ci_low"] == pytest.approx(1.25) and r.main.test["ci_high"] == pytest.approx(1.25)
    assert r.metrics["prefill"].speedup == pytest.approx(1.25)
    # The order flips every round: A B, B A, A B, ...
    assert calls == ["A", "B", "B", "A"] * 3
    # baseline median (nearest rank of 10, 15, 20, 30, 10, 100 -> 15 ... sorted 10,10,15,20,30,100: 3rd = 15)
    assert r.main.baseline_ms == 15 and r.main.candidate_ms == 12
    # saved per round: 15 x (1 - 1/1.25) = 3 ms
    assert r.main.saved_ms()["saved_ms"] == pytest.approx(3.0)
    welch = _engine.welch_test(base, cand)
    assert welch["verdict"] == "not significant"


def test_noise_runs_to_the_round_limit_and_says_no_change():
    # Ratios alternate 1.1 and 1/1.1: mean log ratio 0 (speedup exactly 1 at an even count), never
    # narrower than ±3 %, so all 8 rounds run.
    base = [11, 10] * 4
    cand = [10, 11] * 4
    r = interleaved_ab(scripted(base, [], "A"), scripted(cand, [], "B"), min_rounds=4, max_rounds=8)
    assert r.rounds == 8 and r.stop_reason == "round limit 8"
    assert r.verdict == "no significant change"
    assert r.speedup == pytest.approx(1.0)
    assert not r.regression(0.0)


def test_regression_gate_reads_the_slowdown_against_the_allowed_percent():
    # Candidate 1.2x the baseline's time every round (+/- a little): 20 % slower, significant.
    base = [10.0, 10.0, 10.0, 10.0]
    cand = [12.0, 12.1, 11.9, 12.0]
    r = interleaved_ab(scripted(base, [], "A"), scripted(cand, [], "B"), min_rounds=4, max_rounds=4)
    assert r.verdict == "slower"
    slowdown = 1 / r.speedup - 1
    assert slowdown == pytest.approx(0.2, abs=0.005)
    assert r.regression(0.0) and r.regression(15.0)
    assert not r.regression(25.0)
    d = r.to_dict()
    assert d["verdict"] == "slower" and d["rounds"] == 4 and d["metrics"]["decode"]["baseline_ms"] == base


def test_bad_round_settings_and_a_missing_primary_metric_are_refused():
    with pytest.raises(ValueError, match="min_rounds"):
        interleaved_ab(lambda: {"decode": 1}, lambda: {"decode": 1}, min_rounds=1)
    with pytest.raises(ValueError, match="not the primary metric 'decode'"):
        interleaved_ab(lambda: {"x": 1}, lambda: {"x": 1}, min_rounds=2, max_rounds=2)


def test_generate_round_splits_prefill_from_decode():
    calls = []
    r = generate_round(lambda ids, n: calls.append(n), None, 5)
    assert calls == [1, 5]
    assert set(r) == {"decode", "prefill", "step", "decode_cpu"}
    assert all(v >= 0 and math.isfinite(v) for v in r.values())


class _FakeClock:
    """perf_counter / process_time that move only when the fake workload says so (seconds)."""

    def __init__(self):
        self.wall = 100.0
        self.cpu = 7.0

    def perf_counter(self):
        return self.wall

    def process_time(self):
        return self.cpu

    def spend(self, wall_s, cpu_s):
        self.wall += wall_s
        self.cpu += cpu_s


def test_generate_round_with_the_model_splits_one_generate_at_its_second_forward(monkeypatch):
    import pypto.abtest as abtest
    torch = pytest.importorskip("torch")
    clock = _FakeClock()
    monkeypatch.setattr(abtest, "time", clock)
    model = torch.nn.Identity()
    calls = []

    def generate(ids, n):
        calls.append(n)
        clock.spend(0.030, 0.050)          # set-up and the prefill forward: 30 ms wall, 50 ms CPU
        model(ids)
        for _ in range(n - 1):
            clock.spend(0.008, 0.012)      # the sampling before a decode forward
            model(ids)
            clock.spend(0.002, 0.004)      # the rest of that forward's token
        clock.spend(0.001, 0.001)          # generate's tail

    r = generate_round(generate, torch.zeros(1), 5, model=model)
    assert calls == [5]                    # one generate, not a prefill run and a whole run
    # The second forward starts at 30 + 8 = 38 ms. Decode: the 4 decode tokens (8 + 2 ms each) less the
    # first 8 ms already before the mark, plus the 1 ms tail: (40 - 8 + 1) / 4 = 8.25 ms a token.
    assert r["prefill"] == pytest.approx(38.0)
    assert r["decode"] == pytest.approx(8.25)
    assert r["step"] == pytest.approx(71.0 / 5)
    assert r["decode_cpu"] == pytest.approx((4 * 16 - 12 + 1) / 4)
    assert not model._forward_pre_hooks    # the clock hook is gone after the round


def test_generate_round_falls_back_to_two_runs_when_the_model_runs_once(monkeypatch):
    torch = pytest.importorskip("torch")
    model = torch.nn.Identity()
    calls = []
    r = generate_round(lambda ids, n: calls.append(n), None, 5, model=model)   # never calls the model
    assert calls == [5, 1, 5]              # the one-run try, then the prefill and whole runs
    assert all(v >= 0 and math.isfinite(v) for v in r.values())


def test_the_line_shows_each_sides_geometric_mean_whose_ratio_is_the_speedup():
    from pypto.abtest import ABMetric
    # Rounds (10, 8), (20, 16), (40, 30): medians 20 and 16 (ratio 1.25) but the paired speedup is the
    # geometric mean of the ratios, 1.2772 = 20 / 3840^(1/3) = 20 / 15.6595: the line prints those.
    m = ABMetric("decode", [10.0, 20.0, 40.0], [8.0, 16.0, 30.0], 0.05)
    assert m.line().startswith("decode: 20.00 -> 15.66 ms, x1.28 (95% CI x1.16-x1.40")
    d = m.to_dict()
    assert d["baseline_median_ms"] == 20.0 and d["candidate_median_ms"] == 16.0
    assert d["baseline_geomean_ms"] / d["candidate_geomean_ms"] == pytest.approx(d["speedup"])


def test_gated_metrics_are_judged_together_by_holm():
    # Two gated metrics with the same rounds: log ratios ln(base/cand) = -0.1, -0.1, -0.1, -0.02 (the
    # candidate 10 e^0.1 = 11.05 ms three times, 10 e^0.02 = 10.20 ms once, against 10 ms). Mean -0.08,
    # sample sd sqrt((3 x 0.02^2 + 0.06^2) / 3) = 0.04, se 0.02, t = -4 with 3 df: two-sided p = 0.0281.
    # Alone each reads "slower" (p < 0.05); judged together Holm doubles the smaller p: 0.0562, not slower.
    base = [10.0] * 4
    cand = [10 * math.exp(0.1)] * 3 + [10 * math.exp(0.02)]
    rounds = iter(range(8))

    def side(values):
        it = iter(values)

        def run():
            next(rounds)
            v = next(it)
            return {"decode": v, "step": v}
        return run

    r = interleaved_ab(side(base), side(cand), min_rounds=4, max_rounds=4)
    decode = r.metrics["decode"]
    assert decode.verdict == "slower" and r.metrics["step"].verdict == "slower"
    assert float(decode.test["p_value"]) == pytest.approx(0.0281, abs=5e-4)
    assert r.slower_together(("decode",)) == [decode]
    assert r.slower_together(("decode", "step")) == []
    assert _engine.holm_adjust([0.0281, 0.0281]) == pytest.approx([0.0562, 0.0562])
