"""pypto.packed_linear: Linear layers on oneDNN-packed weights, and the packed_linear action of
apply_all_optimizations (the matmul_tiling remedy on CPU).

Expected values come from nn.Linear itself (F.linear) on the same tensors; the packed path sums in
another order, so outputs agree within RTOL, not bitwise."""

import copy

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
