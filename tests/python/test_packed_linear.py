"""pypto.packed_linear: Linear layers on oneDNN-packed weights, and the packed_linear action of
apply_all_optimizations (the matmul_tiling remedy on CPU).

Expected values come from nn.Linear itself (F.linear) on the same tensors; the packed path sums in
another order, so outputs agree within RTOL, not bitwise."""

import copy
import json

import pytest
import torch

from pypto import packed_linear
from pypto.optimizers import apply_all_optimizations

pytestmark = pytest.mark.skipif(not packed_linear.onednn_linear_available(), reason="torch built without oneDNN")

RTOL, ATOL = 1e-5, 1e-5   # float32 sums of 24..40 products of unit-scale values in another order


def linear(in_features=40, out_features=24, bias=True):
    torch.manual_seed(0)
    return torch.nn.Linear(in_features, out_features, bias=bias)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(8, 40), (3, 1, 40), (2, 5, 40), (40,)])
def test_packed_linear_matches_the_linear(bias, shape):
    lin = linear(bias=bias)
    packed = packed_linear.PackedLinear(lin)
    x = torch.randn(*shape)
    with torch.no_grad():
        torch.testing.assert_close(packed(x), lin(x), rtol=RTOL, atol=ATOL)
    assert packed.calls_by_path == {"onednn packed": 1}
    # Still an nn.Linear sharing the Parameters: same state_dict keys, the same tensors.
    assert isinstance(packed, torch.nn.Linear) and packed.weight is lin.weight
    assert list(packed.state_dict()) == list(lin.state_dict())


def test_a_weight_changed_in_place_is_packed_again():
    lin = linear()
    packed = packed_linear.PackedLinear(lin)
    x = torch.randn(4, 40)
    with torch.no_grad():
        packed(x)
        lin.weight.mul_(2.0)                      # what load_state_dict or an optimizer step does
        torch.testing.assert_close(packed(x), lin(x), rtol=RTOL, atol=ATOL)
        packed.load_state_dict({"weight": torch.zeros(24, 40), "bias": torch.ones(24)})
        assert torch.equal(packed(x), torch.ones(4, 24))


def test_recorded_gradients_take_the_plain_linear():
    lin = linear()
    packed = packed_linear.PackedLinear(lin)
    x = torch.randn(4, 40, requires_grad=True)
    packed(x).sum().backward()
    assert packed.calls_by_path == {"F.linear": 1}
    # d(sum(x W^T + b))/dx = the column sums of W, for every row.
    torch.testing.assert_close(x.grad, lin.weight.sum(0).expand(4, 40))


def test_deep_copy_packs_its_own_weight():
    packed = packed_linear.PackedLinear(linear())
    x = torch.randn(4, 40)
    with torch.no_grad():
        before = packed(x)
        clone = copy.deepcopy(packed)
        clone.weight.data.zero_()
        assert torch.equal(packed(x), before)
        assert torch.equal(clone(x), clone.bias.expand(4, 24))


def test_pack_linear_layers_packs_float32_cpu_linears_and_says_why_not_the_others():
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4).double(),
                                torch.nn.Sequential(torch.nn.Linear(8, 8)))
    info = packed_linear.pack_linear_layers(model)
    assert info["packed"] == ["0", "3.0"]
    assert info["skipped"] == {"2": "dtype float64 (packed for float32 only)"}
    assert isinstance(model[0], packed_linear.PackedLinear) and type(model[2]) is torch.nn.Linear
    again = packed_linear.pack_linear_layers(model)          # a PackedLinear is not packed twice
    assert again["packed"] == [] and again["reason"].startswith("no packable nn.Linear")


def test_matmul_tiling_recommendations_apply_one_packed_linear_action_credited_with_their_sum():
    # Two matmul_tiling groups (estimates 300 and 200 us): one action packs every Linear, credited 500 us.
    recs = [{"hotspot_type": "matmul_tiling", "rule_id": "matmul_tiling.cpu.pad", "action": "pack",
             "actions": [{"id": "onednn_packed_linear"}, {"id": "pad_gemm_dims_cpu"}], "estimated_saved_us": us,
             "evidence": []} for us in (300.0, 200.0)]
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 8))
    report = apply_all_optimizations(model, recs, return_report=True)
    (action,) = report.applied
    assert action.action_id == "packed_linear" and action.estimated_saved_us == pytest.approx(500.0)
    assert action.description == "2 Linear layer(s) run on oneDNN-packed weights"
    assert all(isinstance(m, packed_linear.PackedLinear) for m in model)


def test_under_torch_compile_the_packed_op_runs_between_the_compiled_pieces():
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(40, 24), torch.nn.ReLU(), torch.nn.Linear(24, 8))
    reference = copy.deepcopy(model)
    packed_linear.pack_linear_layers(model)
    compiled = torch.compile(model, backend="eager")      # dynamo's tracing without inductor: quick
    x = torch.randn(4, 40)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), reference(x), rtol=RTOL, atol=ATOL)
    assert model[0].calls_by_path == {"onednn packed": 1} and model[2].calls_by_path == {"onednn packed": 1}


# ---------------------------------------------------------------- the estimate, measured

def _trace_with_gemms(path):
    """A Kineto trace of two ProfilerSteps (0-1000 and 1000-2000 us) holding: mm [8,16]x[16,4] three times
    (40, 50, 60 us), addmm with a bias [4] on [8,16]x[16,4] once (30 us), mm [2,4]x[4,16] once (20 us),
    a bmm (not a Linear's GEMM, 500 us) and, outside both steps, an mm of 999 us."""
    def op(name, ts, dur, dims):
        return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
                "args": {"Input Dims": dims}}
    events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
              {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1000,
               "dur": 1000},
              op("aten::mm", 10, 40, [[8, 16], [16, 4]]),
              op("aten::mm", 100, 50, [[8, 16], [16, 4]]),
              op("aten::mm", 1100, 60, [[8, 16], [16, 4]]),
              op("aten::addmm", 1200, 30, [[4], [8, 16], [16, 4]]),
              op("aten::mm", 1300, 20, [[2, 4], [4, 16]]),
              op("aten::bmm", 1400, 500, [[2, 8, 16], [2, 16, 4]]),
              op("aten::mm", 5000, 999, [[8, 16], [16, 4]])]
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)


def test_gemm_time_by_shape_sums_the_profiled_mm_and_addmm_of_the_steps(tmp_path):
    import pypto
    graph = pypto.load_profile(_trace_with_gemms(tmp_path / "trace.json"))
    by_shape = packed_linear.gemm_time_by_shape(graph)
    # (8, 16, 4): 40 + 50 + 60 (mm) + 30 (addmm, bias dims first) = 180 us in 4 calls; (2, 4, 16): 20 us.
    # The bmm is no Linear's GEMM and the 999 us mm lies outside both steps.
    assert by_shape == {(8, 16, 4): {"us": pytest.approx(180.0), "calls": 4},
                        (2, 4, 16): {"us": pytest.approx(20.0), "calls": 1}}
    assert packed_linear._gemm_shape("aten::mm", "[[8, 16], [15, 4]]") is None   # inner dims disagree
    assert packed_linear._gemm_shape("aten::mm", "not json") is None


def test_packed_saving_estimate_is_the_profiled_time_times_the_timed_saving(tmp_path, monkeypatch):
    import pypto
    graph = pypto.load_profile(_trace_with_gemms(tmp_path / "trace.json"))
    ratios = {(8, 16, 4): 0.5, (2, 4, 16): 0.75}
    timed = []
    monkeypatch.setattr(packed_linear, "packing_ratio", lambda m, k, n: timed.append((m, k, n)) or ratios[(m, k, n)])
    est = packed_linear.packed_saving_estimate(graph)
    # 180 x (1 - 0.5) + 20 x (1 - 0.75) = 90 + 5 = 95 us of 200 us of GEMM.
    assert est["saved_us"] == pytest.approx(95.0) and est["gemm_us"] == pytest.approx(200.0)
    assert [s["saved_us"] for s in est["shapes"]] == [pytest.approx(90.0), pytest.approx(5.0)]
    # Only the largest shape timed: the other takes its ratio, 0.5 -> 180 x 0.5 + 20 x 0.5 = 100 us.
    timed.clear()
    est = packed_linear.packed_saving_estimate(graph, max_shapes=1)
    assert timed == [(8, 16, 4)] and est["saved_us"] == pytest.approx(100.0)


def test_packing_ratio_times_both_kernels_on_the_shape():
    # A real timing (no figure asserted, only that both ran and gave a positive ratio).
    ratio = packed_linear.packing_ratio(4, 32, 16, repeats=3)
    assert ratio > 0 and ratio == ratio


def test_with_the_profile_the_packed_action_takes_the_measured_estimate(tmp_path, monkeypatch):
    import pypto
    graph = pypto.load_profile(_trace_with_gemms(tmp_path / "trace.json"))
    monkeypatch.setattr(packed_linear, "packing_ratio", lambda m, k, n: 0.5)
    recs = [{"hotspot_type": "matmul_tiling", "rule_id": "matmul_tiling.cpu.pad", "action": "pack",
             "actions": [{"id": "onednn_packed_linear"}], "estimated_saved_us": us, "evidence": []}
            for us in (300.0, 200.0)]
    model = torch.nn.Sequential(torch.nn.Linear(16, 4))
    report = apply_all_optimizations(model, recs, return_report=True, call_graph=graph)
    (action,) = report.applied
    # 200 us of GEMM x (1 - 0.5), not the recommendations' 300 + 200.
    assert action.estimated_saved_us == pytest.approx(100.0)
    assert action.estimate_basis.startswith("profiled GEMM time x (1 - packed / unpacked")
    assert action.detail["estimate"]["gemm_us"] == pytest.approx(200.0)
    # Not accepted: nothing timed, nothing applied.
    model = torch.nn.Sequential(torch.nn.Linear(16, 4))
    report = apply_all_optimizations(model, recs, return_report=True, call_graph=graph, accept=["norm_fusion"])
    assert report.applied == []
