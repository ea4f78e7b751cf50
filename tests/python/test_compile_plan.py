"""The host-bound remedy (allow_compile) per model and device: torch.compile(model.forward, dynamic=True),
or, for a transformers model on CUDA, a static KV cache with generate's own CUDA-graph compile of the decode
step; and the KV-cache action's static cache on CUDA without a compile nobody allowed.

No GPU here: the CUDA plan is taken by making pypto read the device as "cuda" (its _device_type), on a model
that stays on the CPU, where transformers' generate compiles nothing (it compiles on CUDA only). What is
checked is what pypto sets, and that generate still gives the eager model's tokens with it."""

import pytest
import torch

import pypto.optimizers as optimizers
from pypto.optimizers import apply_all_optimizations

HOST_BOUND = {"hotspot_type": "host_bound", "rule_id": "host_bound.cpu", "actions": [], "action": "compile",
              "estimated_saved_us": 500.0}
KV_CACHE = {"hotspot_type": "kv_cache_layout", "rule_id": "kv_cache_layout.hf_static_cache",
            "actions": [{"id": "static_cache_config"}], "estimated_saved_us": 100.0, "action": "static cache",
            "evidence": [{"op_name": "aten::cat", "issue_saved_us": 100.0}]}


def make_llama():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    cfg._attn_implementation = "eager"
    model = transformers.LlamaForCausalLM(cfg).eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    return model


def greedy(model, ids):
    with torch.no_grad():
        return model.generate(ids, max_new_tokens=10, min_new_tokens=10, do_sample=False)


def read_device_as_cuda(monkeypatch):
    monkeypatch.setattr(optimizers, "_device_type", lambda model: "cuda")


def test_plan_by_model_and_device():
    llama = make_llama()
    assert optimizers._compile_plan(llama, "cuda") == "generate_cuda_graphs"
    assert optimizers._compile_plan(llama, "cpu") == "forward_dynamic"
    assert optimizers._compile_plan(llama) == "forward_dynamic"          # its parameters are on the CPU
    assert optimizers._compile_plan(llama, "npu") == "forward_dynamic"   # generate compiles nothing there
    # Not a transformers model: the forward is compiled, whatever the device.
    assert optimizers._compile_plan(torch.nn.Linear(2, 2), "cuda") == "forward_dynamic"


def test_on_cuda_a_transformers_model_gets_a_static_cache_and_generate_compiles_it(monkeypatch):
    ids = torch.randint(3, 128, (1, 7), generator=torch.Generator().manual_seed(1))
    reference = greedy(make_llama(), ids)
    model = make_llama()
    read_device_as_cuda(monkeypatch)
    report = apply_all_optimizations(model, [HOST_BOUND], return_report=True, allow_compile=True)
    (action,) = report.applied
    assert action.action_id == "torch_compile" and action.detail["plan"] == "generate_cuda_graphs"
    assert "reduce-overhead" in action.description and action.estimated_saved_us == pytest.approx(500.0)
    config = model.generation_config
    assert config.cache_implementation == "static" and config.compile_config.mode == "reduce-overhead"
    assert not config.disable_compile
    # generate compiles the step itself: the forward is the model's own, not a torch.compile wrapper.
    assert model.forward.__func__ is type(model).forward
    # On the CPU generate compiles nothing; with the static cache it gives the eager model's tokens.
    assert torch.equal(greedy(model, ids), reference)


def test_on_cpu_the_forward_is_compiled_as_before():
    model = make_llama()
    report = apply_all_optimizations(model, [HOST_BOUND], return_report=True, allow_compile=True)
    (action,) = report.applied
    assert action.detail["plan"] == "forward_dynamic" and "dynamic=True" in action.description
    assert getattr(model.forward, "__func__", None) is not type(model).forward   # a torch.compile wrapper
    assert model.generation_config.compile_config is None


def test_the_kv_cache_action_on_cuda_compiles_nothing_unless_compiling_is_allowed(monkeypatch):
    read_device_as_cuda(monkeypatch)
    model = make_llama()
    report = apply_all_optimizations(model, [KV_CACHE], return_report=True)
    (action,) = report.applied
    assert action.action_id == "kv_cache_layout" and action.detail["mode"] == "transformers_static_cache"
    assert "disabled" in action.detail["generate_compile"]
    assert model.generation_config.cache_implementation == "static"
    assert model.generation_config.disable_compile       # the cache change only
    # Both applied, compiling allowed: the compile (applied last) switches generate's compile back on.
    model = make_llama()
    report = apply_all_optimizations(model, [KV_CACHE, HOST_BOUND], return_report=True, allow_compile=True)
    assert [a.action_id for a in report.applied] == ["kv_cache_layout", "torch_compile"]
    assert not model.generation_config.disable_compile
    assert model.generation_config.compile_config.mode == "reduce-overhead"
