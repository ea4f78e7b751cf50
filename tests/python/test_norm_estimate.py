"""pypto.norm_estimate: the norm fusion's saving on the CPU, timed instead of the rule's idle-gap figure,
and the norm / attention actions of apply_all_optimizations credited with their own findings only.

Expected figures are worked out in each test from the hand-written inputs (trace rows, evidence)."""

import json

import pytest
import torch

from pypto import norm_estimate
from pypto.optimizers import apply_all_optimizations


class SquareMeanNorm(torch.nn.Module):
    """x * rsqrt(mean(x^2) + eps) * weight, op by op: what fusion.register_layernorm_fusion finds."""

    def __init__(self, width):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(width))
        self.variance_epsilon = 1e-6

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon) * self.weight


class Block(torch.nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.norm = SquareMeanNorm(width)
        self.proj = torch.nn.Linear(width, width)

    def forward(self, x):
        return self.proj(self.norm(x))


def _trace(path, gemm_rows=(8, 8, 8, 2)):
    """Two ProfilerSteps holding one aten::mm per entry of gemm_rows, [rows, 32] x [32, 32]."""
    events = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1,
               "ts": i * 1000, "dur": 1000} for i in range(2)]
    for i, rows in enumerate(gemm_rows):
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10 + i * 400,
                       "dur": 30, "args": {"Input Dims": [[rows, 32], [32, 32]]}})
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)


def _norm_rec(chain_us, saved_us, rotary_us=0.0):
    evidence = [{"op_name": "torch.nn.functional.rms_norm", "op_type": "rms_norm", "affected_us": chain_us,
                 "issue_saved_us": saved_us}]
    if rotary_us:
        evidence.append({"op_name": "a fused rotary embedding (torch.compile)", "op_type": "rotary_mul",
                         "affected_us": 3 * rotary_us, "issue_saved_us": rotary_us})
    return {"hotspot_type": "fusible_sequence", "rule_id": "fusible_sequence.gpu.generic", "action": "compile",
            "actions": [{"id": "torch_compile"}], "estimated_saved_us": saved_us + rotary_us, "evidence": evidence}


def test_decode_rows_are_the_m_of_the_most_called_gemm(tmp_path):
    import pypto
    graph = pypto.load_profile(_trace(tmp_path / "t.json"))
    # mm rows 8, 8, 8 and 2: three calls with M = 8 against one with M = 2.
    assert norm_estimate.decode_rows(graph) == 8
    graph = pypto.load_profile(_trace(tmp_path / "u.json", gemm_rows=()))
    assert norm_estimate.decode_rows(graph) == norm_estimate.NORM_BENCH_FALLBACK_ROWS


def test_the_estimate_is_the_chain_time_times_one_minus_the_timed_ratio(tmp_path, monkeypatch):
    import pypto
    from pypto.fusion import register_layernorm_fusion
    graph = pypto.load_profile(_trace(tmp_path / "t.json"))
    model = torch.nn.Sequential(Block(), Block())
    fusion = register_layernorm_fusion(model)
    assert len(fusion.fused) == 2
    seen = []

    def fake_timing(original, fused, x, repeats=norm_estimate.NORM_BENCH_REPEATS):
        seen.append(tuple(x.shape))
        return {"original_us": 40.0, "fused_us": 10.0}

    monkeypatch.setattr(norm_estimate, "module_time_ratio", fake_timing)
    est = norm_estimate.norm_fusion_saving_estimate(fusion, graph, norm_chain_us=1000.0)
    # One class and width: timed once, on [8 decode rows, 1, 32]; both modules take its figures.
    assert seen == [(8, 1, 32)]
    # ratio (10 + 10) / (40 + 40) = 0.25: 1000 us x (1 - 0.25) = 750 us.
    assert est["ratio"] == pytest.approx(0.25) and est["saved_us"] == pytest.approx(750.0)
    assert [m["path"] for m in est["modules"]] == ["0.norm", "1.norm"]
    # A fused module slower than the original gives a negative estimate: 1000 x (1 - 50 / 40) = -250 us.
    monkeypatch.setattr(norm_estimate, "module_time_ratio",
                        lambda o, f, x, repeats=9: {"original_us": 40.0, "fused_us": 50.0})
    assert norm_estimate.norm_fusion_saving_estimate(fusion, graph, 1000.0)["saved_us"] == pytest.approx(-250.0)


def test_module_time_ratio_times_both_modules():
    # A real timing (no figure asserted): both sides ran and the same module is about as fast as itself.
    module = SquareMeanNorm(16)
    timed = norm_estimate.module_time_ratio(module, module, torch.randn(2, 1, 16), repeats=3)
    assert timed["original_us"] > 0 and timed["fused_us"] > 0


def test_the_norm_action_takes_the_norm_findings_only_and_the_measured_estimate(tmp_path, monkeypatch):
    import pypto
    graph = pypto.load_profile(_trace(tmp_path / "t.json"))
    # The recommendation: rms_norm chains (2000 us wall, 600 us idle) and a rotary chain (400 us saving).
    rec = _norm_rec(chain_us=2000.0, saved_us=600.0, rotary_us=400.0)
    model = torch.nn.Sequential(Block(), Block())
    report = apply_all_optimizations(model, [rec], return_report=True)
    (action,) = report.applied
    # Without the profile: the norm finding's 600 us, not the recommendation's 1000 us with the rotary.
    assert action.action_id == "norm_fusion" and action.estimated_saved_us == pytest.approx(600.0)
    monkeypatch.setattr(norm_estimate, "module_time_ratio",
                        lambda o, f, x, repeats=9: {"original_us": 30.0, "fused_us": 20.0})
    model = torch.nn.Sequential(Block(), Block())
    report = apply_all_optimizations(model, [rec], return_report=True, call_graph=graph)
    (action,) = report.applied
    # With it: 2000 us of norm chains x (1 - 20 / 30) = 666.7 us.
    assert action.estimated_saved_us == pytest.approx(2000.0 / 3.0)
    assert action.estimate_basis == norm_estimate.BASIS


def test_one_attention_switch_is_credited_with_every_attention_finding():
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
    config._attn_implementation = "eager"
    model = LlamaForCausalLM(config).eval()
    # Two attention_memory_bound recommendations: the scores softmax (300 us) and the K/V copies made
    # inside the unfused matmuls (700 us). One switch to SDPA takes both away: 1000 us.
    recs = [{"hotspot_type": "attention_memory_bound", "rule_id": "attention_memory_bound.cpu", "action": "sdpa",
             "actions": [{"id": "sdpa_cpu"}], "estimated_saved_us": us, "evidence": []} for us in (300.0, 700.0)]
    report = apply_all_optimizations(model, recs, return_report=True)
    (action,) = report.applied
    assert action.action_id == "sdpa_attention" and action.estimated_saved_us == pytest.approx(1000.0)
    assert model.config._attn_implementation == "sdpa"
