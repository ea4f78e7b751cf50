"""apply_all_optimizations(verify_inputs=...): each action alone against the unmodified model; an action
that changes the outputs or is significantly slower is taken back, one that helps is kept.

The model is a Linear whose forward sleeps (a hook): the "fusion" here is scripted through the
pypto.fusion entry point so that its effect is known exactly: removing the sleep (faster, kept),
adding a longer one (slower, reverted), or scaling the weight (outputs change, reverted)."""

import time

import pytest
import torch

import pypto.fusion
from pypto.optimizers import apply_all_optimizations

NORM_RECOMMENDATION = [{"hotspot_type": "norm_launch_overhead", "rule_id": "norm_fusion_cpu",
                        "actions": [{"id": "pypto_fused_norm_cpu"}], "estimated_saved_us": 2000.0,
                        "evidence": [{"op_type": "rms_norm"}], "action": "fuse"}]
AB = dict(min_rounds=4, max_rounds=6, time_budget_s=10.0)
SLEEP_S = 0.002


def sleeping(seconds):
    return lambda *_: time.sleep(seconds)


def model_with_sleep():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4))
    model.pypto_sleep = model.register_forward_hook(sleeping(SLEEP_S))
    return model


def scripted_fusion(monkeypatch, effect):
    monkeypatch.setattr(pypto.fusion, "register_layernorm_fusion", lambda model: effect(model) or {"fused": 1})


def reverted_alone(monkeypatch, effect):
    """Runs apply_all_optimizations on a sleeping model with the scripted fusion `effect`; checks that the
    one action was taken back and returns (model, report, the reverted entry)."""
    scripted_fusion(monkeypatch, effect)
    model = model_with_sleep()
    report = apply_all_optimizations(model, NORM_RECOMMENDATION, return_report=True,
                                     verify_inputs=torch.ones(2, 4), ab_settings=AB)
    assert report.applied == []
    (reverted,) = report.reverted
    return model, report, reverted


def test_an_action_that_helps_is_kept_and_applied(monkeypatch):
    scripted_fusion(monkeypatch, lambda m: m.pypto_sleep.remove())   # 2 ms less per forward
    model = model_with_sleep()
    report = apply_all_optimizations(model, NORM_RECOMMENDATION, return_report=True,
                                     verify_inputs=torch.ones(2, 4), ab_settings=AB)
    assert [a.action_id for a in report.applied] == ["norm_fusion"] and report.reverted == []
    m = report.measurements["norm_fusion"]
    assert m.kept and m.outputs_unchanged and m.ab.verdict == "faster" and m.ab.primary == "forward"
    # The kept action touched the model itself: its sleeping hook is gone (checked on the hooks, not
    # by timing a forward, which a loaded machine can slow past the sleep).
    assert not model._forward_hooks
    assert "measured alone: forward:" in str(report)


def test_a_slower_action_is_reverted_and_the_model_left_alone(monkeypatch):
    model, report, reverted = reverted_alone(monkeypatch, lambda m: m.register_forward_hook(sleeping(4 * SLEEP_S)))
    assert reverted["action"] == "norm_fusion"
    assert reverted["reason"].startswith("reverted: significantly slower (forward: ")
    assert len(model._forward_hooks) == 1          # only the model's own sleep: nothing was added
    assert "reverted (1):" in str(report)


def test_an_action_without_a_significant_gain_is_reverted(monkeypatch):
    import pypto.abtest
    real_interleaved_ab = pypto.abtest.interleaved_ab

    def same_on_both_sides(baseline, candidate, **settings):
        # The action changes nothing: both sides' rounds are scripted alike (the runs themselves would
        # leave the verdict to chance), 10 ms per forward with the same +-0.1 ms jitter, paired
        # alternately so that the log ratios average 0: "no significant change", whatever the machine.
        base = iter([10.0, 10.1, 9.9, 10.0, 10.1, 9.9])
        cand = iter([10.1, 10.0, 10.0, 9.9, 10.0, 10.1])
        return real_interleaved_ab(lambda: {"forward": next(base)}, lambda: {"forward": next(cand)},
                                   primary=settings.get("primary", "forward"), min_rounds=6, max_rounds=6)

    monkeypatch.setattr(pypto.abtest, "interleaved_ab", same_on_both_sides)
    _, report, reverted = reverted_alone(monkeypatch, lambda m: None)
    assert reverted["reason"].startswith("reverted: no significant gain (forward: "), reverted["reason"]
    assert report.measurements["norm_fusion"].ab.verdict == "no significant change"


def test_an_action_whose_first_run_fails_is_reverted_with_the_error(monkeypatch):
    # As torch.compile does without a C++ compiler for inductor: the changed model raises when it runs.
    def broken(m):
        def fail(*_):
            raise RuntimeError("InductorError: no C++ compiler found\nsecond line")
        m.register_forward_pre_hook(fail)
    model, report, reverted = reverted_alone(monkeypatch, broken)
    assert reverted["reason"] == "reverted: its first run failed (RuntimeError: InductorError: no C++ compiler found)"
    m = report.measurements["norm_fusion"]
    assert m.ab is None and not m.kept and m.to_dict()["ab"] is None
    assert "first run failed after" in str(report)
    assert len(model._forward_hooks) == 1 and not model._forward_pre_hooks   # the model left alone


def test_an_action_that_changes_the_outputs_is_reverted(monkeypatch):
    def double_the_weight(m):
        with torch.no_grad():
            m[0].weight.mul_(2)
    scripted_fusion(monkeypatch, double_the_weight)
    model = model_with_sleep()
    weight = model[0].weight.detach().clone()
    report = apply_all_optimizations(model, NORM_RECOMMENDATION, return_report=True,
                                     verify_inputs=torch.ones(2, 4), ab_settings=AB)
    assert report.applied == [] and report.reverted[0]["reason"] == "reverted: the outputs changed"
    assert not report.measurements["norm_fusion"].outputs_unchanged
    assert torch.equal(model[0].weight, weight)


def test_compile_is_an_action_only_when_allowed():
    recs = [{"hotspot_type": "host_bound", "rule_id": "host_bound.cpu", "actions": [], "action": "compile",
             "estimated_saved_us": 500.0}]
    report = apply_all_optimizations(torch.nn.Linear(2, 2), recs, return_report=True)
    assert report.applied == [] and report.skipped[0]["hotspot_type"] == "host_bound"
    model = torch.nn.Linear(2, 2)
    report = apply_all_optimizations(model, recs, return_report=True, allow_compile=True)
    (action,) = report.applied
    assert action.action_id == "torch_compile" and action.estimated_saved_us == pytest.approx(500.0)
    assert action.estimated and action.estimate_basis == "the host_bound finding's estimate"
    assert model.forward is not torch.nn.Linear.forward.__get__(model)
    # Compiling allowed but no host_bound finding: applied all the same, with no estimate (not one of 0).
    report = apply_all_optimizations(torch.nn.Linear(2, 2), [], return_report=True, allow_compile=True)
    (action,) = report.applied
    assert action.action_id == "torch_compile" and not action.estimated
    assert action.estimate_basis == "no host_bound finding in the profile: no estimate"


class ThreadsSeen(torch.nn.Module):
    """Records torch.get_num_threads() inside each forward."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.seen = []

    def forward(self, x):
        self.seen.append(torch.get_num_threads())
        return self.linear(x)


THREADS_RECOMMENDATION = [{"hotspot_type": "host_bound", "rule_id": "host_bound.cpu", "action": "compile",
                           "actions": [{"id": "compile_cpu"}, {"id": "threads"}], "estimated_saved_us": 500.0}]


def test_thread_count_is_applied_only_measured(monkeypatch):
    from pypto import optimizers
    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        # Unmeasured: listed as skipped with the reason, the model untouched.
        model = ThreadsSeen()
        report = apply_all_optimizations(model, THREADS_RECOMMENDATION, return_report=True)
        assert report.applied == []
        assert {"action": "intra_op_threads", "hotspot_type": "host_bound",
                "reason": "the thread count is only applied measured: pass verify_inputs"} in report.skipped
        # Measured: the candidate runs its forward with one thread, the process keeps its two after; kept or
        # reverted by the A/B like any action (a thread count has no estimate).
        report = apply_all_optimizations(model, THREADS_RECOMMENDATION, return_report=True,
                                         verify_inputs=torch.ones(2, 4), ab_settings=AB)
        m = report.measurements["intra_op_threads"]
        assert m.outputs_unchanged and m.action.estimated is False and m.action.detail == {"threads": 1,
                                                                                              "previous": 2}
        assert torch.get_num_threads() == 2
        assert m.kept == (m.ab.main.verdict == "faster" and not m.slower_metrics())
        model.seen.clear()
        model(torch.ones(2, 4))
        assert model.seen == ([1] if m.kept else [2])
        # Applied directly (the wrapper itself): one thread inside, the caller's count restored after.
        wrapped = ThreadsSeen()
        wrapped.forward = optimizers.ThreadsForward(wrapped.forward, 1)
        wrapped(torch.ones(2, 4))
        assert wrapped.seen == [1] and torch.get_num_threads() == 2
        # A deep copy runs its own forward, not the original's.
        import copy
        clone = copy.deepcopy(wrapped)
        clone(torch.ones(2, 4))
        assert clone.seen == [1, 1] and wrapped.seen == [1]
    finally:
        torch.set_num_threads(previous)
