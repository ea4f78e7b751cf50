"""pypto.fusion.register_layernorm_fusion on real torch.nn models.

Fused outputs are compared with the original modules' outputs within the tolerances pypto.fusion
documents (FP32_TOLERANCE / HALF_TOLERANCE: max |fused - original| / max(1, max |original|)).
No timing is asserted here; bench/fusion_bench.py prints the figures."""

import pytest
import torch
from torch import nn

from pypto import fusion
from pypto.fusion import FP32_TOLERANCE, HALF_TOLERANCE, register_layernorm_fusion

transformers = pytest.importorskip("transformers")

HIDDEN = 64
LAYERS = 2


def relative_error(actual, expected):
    expected = expected.double()
    return float((actual.double() - expected).abs().max()) / max(1.0, float(expected.abs().max()))


def small_llama(dtype=torch.float32):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=128, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN,
                                      num_hidden_layers=LAYERS, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=64, attn_implementation="eager")
    model = transformers.LlamaForCausalLM(config).eval().to(dtype)
    # Random (non-unit) norm weights, so a wrong weight would show in the logits.
    with torch.no_grad():
        for module in model.modules():
            if type(module).__name__ == "LlamaRMSNorm":
                module.weight.uniform_(0.5, 1.5)
    return model


# A hand-written RMSNorm under a neutral name, eps kept in an attribute no convention uses.
class Normalizer(nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.tiny = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.tiny) * self.weight


# Has a 1-D weight like a norm but only scales: must be left alone.
class Scale(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.eps = 1e-6

    def forward(self, x):
        return x * self.weight


# A hand-written LayerNorm (mean / variance) with eps only findable by probing.
class Centered(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.bias = nn.Parameter(torch.randn(hidden) * 0.1)

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = (x - mean).pow(2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + 1e-8) * self.weight + self.bias


class Block(nn.Module):
    """Pre-norm decoder block: h = x + attn(n1(x)); out = h + mlp(drop(n2(h)))."""

    def __init__(self, hidden):
        super().__init__()
        self.n1 = Normalizer(hidden)
        self.n2 = Normalizer(hidden)
        self.attn = nn.Linear(hidden, hidden)
        self.mlp = nn.Linear(hidden, hidden)
        self.drop = nn.Dropout(0.1)
        self.scale = Scale(hidden)
        self.centered = Centered(hidden)

    def forward(self, x):
        h = x + self.attn(self.n1(x))
        out = h + self.mlp(self.drop(self.n2(h)))
        return self.centered(self.scale(out))


def test_llama_norms_found_replaced_and_logits_unchanged():
    model = small_llama()
    ids = torch.randint(0, 128, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        before = model(ids).logits
    state_before = {k: v.clone() for k, v in model.state_dict().items()}
    weights_before = {n: m.weight for n, m in model.named_modules() if type(m).__name__ == "LlamaRMSNorm"}
    assert len(weights_before) == 2 * LAYERS + 1
    rng_before = torch.random.get_rng_state()

    report = register_layernorm_fusion(model)

    assert torch.equal(rng_before, torch.random.get_rng_state()), "probing must not move the user's RNG"
    assert sorted(e.path for e in report.fused) == sorted(weights_before)
    assert not any(type(m).__name__ == "LlamaRMSNorm" for m in model.modules())
    for path, weight in weights_before.items():
        entry = report.entry(path)
        assert entry.kind == "rms" and entry.eps == pytest.approx(1e-6)
        assert model.get_submodule(path).weight is weight  # the same Parameter object
    state_after = model.state_dict()
    assert list(state_after) == list(state_before)
    assert all(torch.equal(state_before[k], state_after[k]) for k in state_before)

    with torch.no_grad():
        after = model(ids).logits
    assert relative_error(after, before) <= FP32_TOLERANCE
    # CPU float32 under no_grad: pypto's own kernel ran, in every norm.
    for entry in report.fused:
        assert entry.implementation == fusion.IMPL_CPU_KERNEL
        assert entry.calls_by_implementation.get(fusion.IMPL_CPU_KERNEL, 0) >= 1
        # HF decoder layers take optional arguments: no trusted trace, so no residual fusion.
        assert entry.residual_add.startswith("not fused:")
        assert entry.prev_matmul.startswith("not applicable on CPU")
    text = str(report)
    assert "model.layers.0.input_layernorm" in text and "LlamaRMSNorm" in text
    assert report.to_dict()["implementations_used"][fusion.IMPL_CPU_KERNEL] >= 2 * LAYERS + 1

    report.unregister()
    assert sum(type(m).__name__ == "LlamaRMSNorm" for m in model.modules()) == 2 * LAYERS + 1
    with torch.no_grad():
        assert relative_error(model(ids).logits, before) == 0.0


def test_llama_bf16_falls_back_to_torch_and_says_so():
    model = small_llama(torch.bfloat16)
    ids = torch.randint(0, 128, (1, 8), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        before = model(ids).logits
    report = register_layernorm_fusion(model)
    with torch.no_grad():
        after = model(ids).logits
    assert relative_error(after, before) <= HALF_TOLERANCE
    assert len(report.fused) == 2 * LAYERS + 1
    for entry in report.fused:
        assert entry.implementation == fusion.IMPL_TORCH_RMS
        assert "bfloat16" in entry.reason
        assert fusion.IMPL_TORCH_RMS in entry.calls_by_implementation
        assert any("bfloat16" in r for r in entry.fallback_reasons)
        # transformers computes in float32 and casts back: the probe sees it.
        assert entry.module.upcast_fp32


def test_hand_written_block_probed_residual_fused_scale_left_alone():
    torch.manual_seed(3)
    block = Block(96).eval()
    x = torch.randn(2, 5, 96)
    with torch.no_grad():
        before = block(x)
    report = register_layernorm_fusion(block, fuse_residual_add=True)  # the CPU default is off (next test)
    with torch.no_grad():
        after = block(x)
    assert relative_error(after, before) <= FP32_TOLERANCE

    n1, n2, centered = report.entry("n1"), report.entry("n2"), report.entry("centered")
    assert n1.fused and n2.fused and centered.fused
    assert n1.identified_by.startswith("probe") and n1.eps == pytest.approx(1e-5)
    assert centered.kind == "layer" and centered.eps == pytest.approx(1e-8)
    # n2 reads h = x + attn(...), and h is also the block's residual: the add runs inside the kernel.
    assert n2.residual_add.startswith("fused")
    assert n2.calls_by_implementation.get("add+" + fusion.IMPL_CPU_KERNEL) == 1
    assert n1.residual_add == "not fused: its input is not a residual add"
    assert centered.residual_add == "not fused: no fused add + layer_norm op"
    # The dropout after n2 is the norm's only user: folded out of the traced graph in eval.
    assert n2.next_dropout.startswith("folded")

    scale = report.entry("scale")
    assert not scale.fused and "neither RMSNorm nor LayerNorm" in scale.reason
    assert isinstance(block.scale, Scale)
    assert "scale" in str(report) and "why not fused" in str(report)

    # Training mode: the rewritten forward steps aside (original forward, dropout included);
    # autograd records, so the torch op runs and gradients reach the shared weight.
    block.train()
    block(x).sum().backward()
    assert block.n1.weight.grad is not None
    assert any("autograd" in r for r in n1.fallback_reasons)

    report.unregister()
    assert isinstance(block.n1, Normalizer) and "forward" not in block.__dict__


def test_residual_add_left_alone_by_default_on_the_cpu():
    """On the CPU the rewritten forward cost more than the add it saves (measured: module docstring of
    _residual_add_by_default), so by default the add stays the model's; the norm is still fused and
    the dropout still folded, and outputs are unchanged."""
    torch.manual_seed(3)
    block = Block(96).eval()
    x = torch.randn(2, 5, 96)
    with torch.no_grad():
        before = block(x)
    report = register_layernorm_fusion(block)
    with torch.no_grad():
        after = block(x)
    assert relative_error(after, before) <= FP32_TOLERANCE
    n2 = report.entry("n2")
    assert n2.fused
    assert n2.residual_add.startswith("not fused: not requested (fuse_residual_add=False")
    assert "add+" + fusion.IMPL_CPU_KERNEL not in n2.calls_by_implementation
    assert n2.calls_by_implementation.get(fusion.IMPL_CPU_KERNEL) == 1
    assert n2.next_dropout.startswith("folded")
    report.unregister()


def test_layernorm_dropout_in_sequential_folded_in_eval_only():
    torch.manual_seed(4)
    seq = nn.Sequential(nn.Linear(32, 32), nn.LayerNorm(32), nn.Dropout(0.2), nn.Linear(32, 8)).eval()
    x = torch.randn(4, 32)
    with torch.no_grad():
        before = seq(x)
    report = register_layernorm_fusion(seq)
    entry = report.entry("1")
    assert entry.fused and entry.identified_by == "class nn.LayerNorm" and entry.kind == "layer"
    assert entry.next_dropout.startswith("folded") and isinstance(seq[2], nn.Identity)
    assert entry.residual_add.startswith("not applicable")
    with torch.no_grad():
        assert relative_error(seq(x), before) <= FP32_TOLERANCE
    assert entry.calls_by_implementation == {fusion.IMPL_CPU_KERNEL: 1}
    report.unregister()
    assert isinstance(seq[1], nn.LayerNorm) and isinstance(seq[2], nn.Dropout)

    training = nn.Sequential(nn.LayerNorm(32), nn.Dropout(0.2)).train()
    report = register_layernorm_fusion(training, fuse_with_next_dropout=True, fuse_with_prev_matmul=False)
    assert "training mode" in report.entry("0").next_dropout
    assert report.entry("0").prev_matmul == "not requested"
    assert isinstance(training[1], nn.Dropout)


def test_every_candidate_has_a_report_line():
    class Gemma(nn.Module):  # x * (1 + weight): not a plain RMSNorm, not replaced
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.rand(16))
            self.eps = 1e-6

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * (1 + self.weight)

    class Hooked(Normalizer):
        pass

    model = nn.ModuleDict({"gemma": Gemma(), "hooked": Hooked(16), "bn": nn.BatchNorm1d(16), "ok": nn.RMSNorm(16),
                           "plain": nn.LayerNorm(16, elementwise_affine=False)})
    model["hooked"].register_forward_hook(lambda *args: None)
    report = register_layernorm_fusion(model)
    reasons = {e.path: e.reason for e in report.not_fused}
    assert "neither RMSNorm nor LayerNorm" in reasons["gemma"]
    assert "hooks" in reasons["hooked"]
    assert "buffers" in reasons["bn"]
    assert {e.path for e in report.fused} == {"ok", "plain"}
    assert report.entry("ok").eps is None  # nn.RMSNorm(eps=None): the input dtype's eps, as torch does
    x = torch.randn(3, 16)
    with torch.no_grad():
        assert relative_error(model["ok"](x), torch.nn.functional.rms_norm(x, (16,), model["ok"].weight)) \
            <= FP32_TOLERANCE
        assert relative_error(model["plain"](x), torch.nn.functional.layer_norm(x, (16,))) <= FP32_TOLERANCE


@pytest.mark.parametrize("shape", [(1, 1), (1, 4096), (3, 7, 33), (64, 2048)])
def test_function_forms_match_torch(shape):
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(*shape, generator=gen)
    residual = torch.randn(*shape, generator=gen)
    weight = torch.rand(shape[-1], generator=gen) + 0.5
    bias = torch.randn(shape[-1], generator=gen)
    F = torch.nn.functional
    assert relative_error(fusion.rms_norm(x, weight, 1e-6), F.rms_norm(x, (shape[-1],), weight, 1e-6)) \
        <= FP32_TOLERANCE
    normed, summed = fusion.add_rms_norm(x, residual, weight, 1e-6)
    assert torch.equal(summed, x + residual)
    assert relative_error(normed, F.rms_norm(x + residual, (shape[-1],), weight, 1e-6)) <= FP32_TOLERANCE
    assert relative_error(fusion.layer_norm(x, weight, bias, 1e-5),
                          F.layer_norm(x, (shape[-1],), weight, bias, 1e-5)) <= FP32_TOLERANCE
    # Non-contiguous and bf16 inputs take torch's path with the same results.
    xt = torch.randn(*shape[:-1], 2 * shape[-1], generator=gen)[..., ::2]
    assert shape[-1] == 1 or not xt.is_contiguous()
    assert relative_error(fusion.rms_norm(xt, weight, 1e-6), F.rms_norm(xt, (shape[-1],), weight, 1e-6)) \
        <= FP32_TOLERANCE
    xb, wb = x.bfloat16(), weight.bfloat16()
    assert relative_error(fusion.rms_norm(xb, wb, 1e-6), F.rms_norm(xb, (shape[-1],), wb, 1e-6)) <= HALF_TOLERANCE


def test_function_forms_keep_autograd():
    x = torch.randn(4, 32, requires_grad=True)
    weight = torch.rand(32, requires_grad=True)
    fusion.rms_norm(x, weight, 1e-6).square().sum().backward()
    grad_x, grad_w = x.grad.clone(), weight.grad.clone()
    x.grad = weight.grad = None
    torch.nn.functional.rms_norm(x, (32,), weight, 1e-6).square().sum().backward()
    assert torch.allclose(grad_x, x.grad, atol=1e-5) and torch.allclose(grad_w, weight.grad, atol=1e-5)


def test_fused_norms_trace_into_one_torch_compile_graph():
    # pypto's CPU kernel is a pybind function Dynamo cannot trace (a graph break at every norm, seen as
    # "Dynamo does not know how to trace the builtin ... rms_norm" in the demo's --compile run). While
    # torch.compile traces, the fused modules take the torch form instead and keep no per-call counts.
    model = small_llama()
    ids = torch.randint(0, 128, (2, 12), generator=torch.Generator().manual_seed(1))
    report = register_layernorm_fusion(model)
    with torch.no_grad():
        before = model(ids).logits
        counts = {e.path: dict(e.calls_by_implementation) for e in report.fused}
        torch._dynamo.reset()
        explained = torch._dynamo.explain(model.model)(ids)
        torch._dynamo.reset()
    assert explained.graph_break_count == 0, [str(b.reason) for b in explained.break_reasons]
    assert {e.path: dict(e.calls_by_implementation) for e in report.fused} == counts
    with torch.no_grad():
        assert relative_error(model(ids).logits, before) == 0.0
