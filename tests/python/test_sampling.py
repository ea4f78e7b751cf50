"""pypto.SamplingBudget (records spaced by an overhead budget) and Profiler.pause()/resume().

The spacing rule is checked on a simulated run whose costs are set by the test, so the forward
that gets recorded next follows by hand from the rule; the Profiler is then checked on a real
model for what it records, counts and leaves behind."""

import os
import sys

import pytest
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for path in (REPO, os.path.join(REPO, "python")):
    if path not in sys.path:
        sys.path.insert(0, path)

import pypto.sampling as sampling  # noqa: E402
from pypto.collection import STEP_NAME_PREFIX, Profiler  # noqa: E402
from pypto.errors import InvalidArgumentError  # noqa: E402
from pypto.sampling import SamplingBudget  # noqa: E402

MS = 1_000_000  # ns


def simulate(budget, forwards, wall_ms=10.0, recorded_wall_ms=15.0, start_ms=2.0, stop_ms=8.0, export_ms=3.0,
             hooks_us=0.0, phase_of=None, prefill_ms=None):
    """Drives `budget` as the Profiler would: the coming forward's phase told, the schedule asked before each
    forward (for forward 0 when the profiler is made), a start or stop transition costed when the answer
    changes, then the forward's wall time. `phase_of(index)` gives a forward's phase (default: decode); a
    prefill takes `prefill_ms`, 1.5 times that when recorded. Returns the indices of the recorded forwards."""
    recorded = []
    recording = False
    for index in range(forwards):
        phase = phase_of(index) if phase_of else "decode"
        budget._expect(phase)
        wants = str(budget(index)).endswith("RECORD_AND_SAVE")
        if wants != recording:
            budget._advanced(int((start_ms if wants else stop_ms) * MS), recording, wants,
                             0 if wants else int(export_ms * MS))
        elif index:
            budget._advanced(0, recording, recording, 0)
        recording = wants
        if recording:
            recorded.append(index)
        if phase == "prefill":
            wall = prefill_ms * (1.5 if recording else 1.0)
        else:
            wall = recorded_wall_ms if recording else wall_ms
        budget._forward_done(int(wall * MS), phase, recording, int(hooks_us * 1000))
    return recorded


@pytest.fixture
def warm_process(monkeypatch):
    # As if a profiler had already started in this process: the first start is "start", not "startup".
    monkeypatch.setattr(sampling, "_started_in_process", True)


def test_records_first_then_as_the_budget_allows(warm_process):
    budget = SamplingBudget(0.01, first=1)
    recorded = simulate(budget, 700)
    # Forward 1 is recorded (first). Its cycle costs start 2 + stop 8 (export 3 inside it) + the slowdown
    # 15 - 10 = 5 ms: 15 ms. The next record needs 0.01 x work - spent >= 15 ms with spent = 15 ms, so
    # work >= 3000 ms: forwards 0..299 give 300 x 10 ms (the recorded one counted at its 10 ms), so the
    # schedule asked before forward 300 records it. Then spent = 30 ms, the next needs work >= 4500 ms:
    # forward 450 (forwards 0..449 = 4500 ms). Then spent 45 ms, work >= 6000 ms: forward 600.
    assert recorded == [1, 300, 450, 600]
    s = budget.summary()
    assert s["forwards"] == 700 and s["recorded"] == 4
    assert s["work_ms"] == pytest.approx(7000.0)
    assert s["cost_ms"]["start"] == pytest.approx(8.0)
    assert s["cost_ms"]["stop"] == pytest.approx(4 * 5.0)     # 8 ms less the 3 ms export, per record
    assert s["cost_ms"]["export"] == pytest.approx(12.0)
    assert s["cost_ms"]["recorded_forward"] == pytest.approx(20.0)
    assert s["cost_ms"]["startup"] == 0
    assert s["cost_pct"] == pytest.approx(60.0 / 7000.0 * 100.0)
    assert s["cost_per_record_ms"] == pytest.approx(15.0)
    assert s["cost_pct"] <= 1.0


def test_each_phase_pays_for_its_own_records(warm_process):
    # Forwards 0, 10, 20, ... are prefills of 1000 ms (1500 ms when recorded), the rest decodes of 10 ms.
    # Decode: forward 1 is recorded (first). No decode ran before it, so its slowdown is unknown (0): it costs
    # start 2 + stop 8 = 10 ms, paid by the decodes alone, and its 15 ms count as work. The next decode
    # record needs 0.01 x decode work - 10 >= 10: 2000 ms = 15 + 10 x (d - 1), d = 200 decodes. Before
    # forward k, k - ceil(k / 10) forwards were decodes: 200 first at k = 223. (Counting the prefills'
    # work too, a decode would have been recorded again by forward 21.)
    # Prefill: no prefill record yet, so the next cost is the last record's scaled by the forward lengths,
    # prefill 1000 ms / decode ~10 ms: ~1000 ms, then (after forward 223's 15 ms record) ~1500 ms. 1 % of
    # the prefill work (1000 ms a prefill) does not reach that in 400 forwards (40 prefills, 400 ms).
    budget = SamplingBudget(0.01, first=1)
    recorded = simulate(budget, 400, phase_of=lambda i: "prefill" if i % 10 == 0 else "decode",
                        prefill_ms=1000.0)
    assert recorded == [1, 223]
    by_phase = budget.summary()["by_phase"]
    assert by_phase["decode"]["recorded"] == 2 and by_phase["prefill"]["recorded"] == 0
    assert by_phase["prefill"]["cost_ms"] == pytest.approx(0.0)
    # Decode cost: 10 + (2 + 8 + 5) = 25 ms. Decode work: 360 decodes, forward 1 at 15 ms, forward 223 at
    # 15 - 5 = 10 ms, the other 358 at 10 ms: 3605 ms.
    assert by_phase["decode"]["cost_ms"] == pytest.approx(25.0)
    assert by_phase["decode"]["work_ms"] == pytest.approx(3605.0)
    assert by_phase["decode"]["cost_pct"] == pytest.approx(25.0 / 3605.0 * 100.0)


def test_a_phase_not_recorded_yet_is_priced_by_its_forward_length(warm_process):
    # As above, 1600 forwards. Every decode record after the first costs 2 + 8 + 5 = 15 ms. The first prefill
    # record is priced at 15 ms x 1000 ms / the decodes' mean forward (10 ms each, +5 ms once for forward 1's
    # unknown slowdown: 10.0037 ms over the 1350 decodes before forward 1500) = 1499.4 ms, so it waits for
    # 0.01 x 1000 ms x k >= 1499.4: k = 150 prefills, the one at forward 1500. It costs 2 + 8 + 500 = 510 ms;
    # the next ones follow as 1 % of the prefill work allows (forwards 1510 and 1530), and each phase ends
    # within the budget. Priced at the last record's cost alone (forward 1's 10 ms), the first prefill was
    # recorded at forward 10, as soon as 1 % of the 1000 ms of prefill before it covered 10 ms, and cost 510 ms.
    budget = SamplingBudget(0.01, first=1)
    recorded = simulate(budget, 1600, phase_of=lambda i: "prefill" if i % 10 == 0 else "decode",
                        prefill_ms=1000.0)
    prefills = [i for i in recorded if i % 10 == 0]
    assert prefills == [1500, 1510, 1530]
    by_phase = budget.summary()["by_phase"]
    assert by_phase["prefill"]["cost_ms"] == pytest.approx(3 * 510.0)
    assert by_phase["prefill"]["cost_pct"] <= 1.0 and by_phase["decode"]["cost_pct"] <= 1.0


def test_hooks_count_against_the_budget(warm_process):
    # 100 us of hooks per 10 ms forward is the whole 1 % budget: after the first record, never again.
    budget = SamplingBudget(0.01, first=1)
    assert simulate(budget, 2000, hooks_us=100.0) == [1]
    # With half of it, records come, later than without hooks: the second needs
    # 0.01 x 10 ms x k - (15 ms + 0.05 ms x k) >= 15 ms, k >= 600.
    budget = SamplingBudget(0.01, first=1)
    assert simulate(budget, 700, hooks_us=50.0)[:2] == [1, 600]


def test_first_start_in_the_process_is_startup_and_not_spaced_on(monkeypatch):
    monkeypatch.setattr(sampling, "_started_in_process", False)
    budget = SamplingBudget(0.01, first=2)
    recorded = simulate(budget, 400, start_ms=1000.0)
    # The 1000 ms start is the one-time start-up: out of the share and the spacing. The cycle then costs
    # stop 8 + slowdown 5 = 13 ms; the next record needs 0.01 x work >= 13 + 13, work >= 2600 ms: forward 260.
    assert recorded[:2] == [2, 260]
    s = budget.summary()
    assert s["cost_ms"]["startup"] == pytest.approx(1000.0)
    assert s["cost_ms"]["start"] == pytest.approx(1000.0 * (len(recorded) - 1))  # the later starts


def test_budget_and_first_are_checked():
    for bad in (0, -0.5, 1.5, "1%", True, None):
        with pytest.raises(InvalidArgumentError, match="budget must be a fraction in \\(0, 1\\]"):
            SamplingBudget(bad)
    with pytest.raises(InvalidArgumentError, match="first must be a non-negative int"):
        SamplingBudget(0.01, first=-1)
    assert repr(SamplingBudget(0.02, first=3)) == "SamplingBudget(budget=0.02, first=3)"


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 16)
        self.b = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def test_profiler_with_a_budget_records_forward_first_and_times_every_forward(tmp_path):
    model = Tiny().eval()
    x = torch.randn(2, 16)
    budget = SamplingBudget(0.01, first=2)
    with torch.no_grad(), Profiler(model=model, output_dir=str(tmp_path), schedule=budget) as prof:
        for _ in range(30):
            model(x)
    results = prof.get_results()
    assert len(results.forwards) == 30
    recorded = [f["index"] for f in results.forwards if f["recorded"]]
    # Forward 2 is recorded; the next would need 100 x its cost in work, far more than 30 tiny forwards.
    assert recorded == [2]
    steps = [s["name"] for s in results.call_graph.steps()]
    assert steps == [f"{STEP_NAME_PREFIX}2"]
    account = results.settings["sampling"]
    assert account["forwards"] == 30 and account["recorded"] == 1 and account["budget"] == 0.01
    assert account["cost_ms"]["stop"] > 0 and account["cost_ms"]["export"] > 0
    assert results.settings["schedule"] == "SamplingBudget(budget=0.01, first=2)"


def test_pause_takes_the_hooks_off_and_resume_puts_them_back(tmp_path):
    model = Tiny().eval()
    x = torch.randn(2, 16)
    budget = SamplingBudget(0.01, first=1)
    with torch.no_grad(), Profiler(model=model, output_dir=str(tmp_path), schedule=budget) as prof:
        model(x)
        model(x)                      # forward 1: recorded, its stop still to come
        with prof.paused():           # finishes the record, then nothing is watched
            assert not model._forward_hooks and not model._forward_pre_hooks
            for _ in range(5):
                model(x)
        assert model._forward_hooks and model._forward_pre_hooks
        model(x)
    results = prof.get_results()
    assert [f["index"] for f in results.forwards] == [0, 1, 2]
    assert [f["index"] for f in results.forwards if f["recorded"]] == [1]
    assert results.settings["sampling"]["recorded"] == 1
    assert not model._forward_hooks and not model._forward_pre_hooks


def test_pause_errors_name_the_reason(tmp_path):
    model = Tiny().eval()
    x = torch.randn(2, 16)
    with torch.no_grad(), Profiler(model=model, output_dir=str(tmp_path)) as prof:
        model(x)
        with pytest.raises(InvalidArgumentError, match="needs a schedule"):
            prof.pause()
    with pytest.raises(InvalidArgumentError, match="outside the profiler's `with` block"):
        prof.pause()
    with torch.no_grad(), Profiler(model=model, output_dir=str(tmp_path / "b"),
                                   schedule=dict(wait=0, warmup=0, active=5, repeat=1)) as prof:
        model(x)
        with pytest.raises(InvalidArgumentError, match="while the schedule records"):
            prof.pause()
