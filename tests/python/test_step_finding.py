"""Steps found without a model handle: Profiler() / TuningSession.profiling() around any code make each
outermost nn.Module forward one token step (global module hooks), for HF generate, hand-written decode
loops and direct calls, with prefill / decode told apart by the query length."""

import os
import sys

import pytest
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for path in (REPO, os.path.join(REPO, "python")):
    if path not in sys.path:
        sys.path.insert(0, path)

from examples.models.handwritten_decoder import build_handwritten_decoder  # noqa: E402
from examples.models.hf_llama import build_hf_llama, make_prompt  # noqa: E402
from pypto.collection import Profiler, TuningSession  # noqa: E402
from pypto.diagnostics import HotspotDetector  # noqa: E402
from pypto.parser import CANNProfileParser  # noqa: E402

TINY = dict(num_hidden_layers=2, hidden_size=96, num_attention_heads=3, num_key_value_heads=1,
            intermediate_size=200, vocab_size=301)
PROMPT_LENGTH = 8
NEW_TOKENS = 5
GENERATE_CALLS = 2


def global_hooks():
    from torch.nn.modules import module as nn_module
    return (len(nn_module._global_forward_pre_hooks), len(nn_module._global_forward_hooks))


def assert_token_steps(results, calls, tokens):
    steps = results.call_graph.steps()
    assert [s["name"] for s in steps] == [f"ProfilerStep#{i}" for i in range(calls * tokens)]
    assert results.step_phases == (["prefill"] + ["decode"] * (tokens - 1)) * calls
    assert [c["forwards"] for c in results.generate_calls] == [tokens] * calls
    stats = results.get_latency_stats()
    assert stats["count"] == calls * tokens and stats["p50"] > 0
    assert stats["prefill"]["count"] == calls


def test_hf_generate_several_calls_without_a_model_handle():
    pytest.importorskip("transformers")
    model = build_hf_llama(**TINY)
    prompt = make_prompt(1, PROMPT_LENGTH, TINY["vocab_size"], 0)
    before = global_hooks()
    with torch.no_grad(), Profiler(device_id=0, trace_level="operator", capture_memory_access=True,
                                   capture_ai_core_usage=True) as prof:
        for _ in range(GENERATE_CALLS):
            model.generate(prompt, max_new_tokens=NEW_TOKENS, do_sample=False)
    results = prof.get_results()
    assert_token_steps(results, GENERATE_CALLS, NEW_TOKENS)
    assert [f["seq_len"] for f in results.forwards[:2]] == [PROMPT_LENGTH, 1]
    assert results.settings["step_finding"].startswith("global module hooks")
    assert [m["class"] for m in results.settings["stepped_modules"]] == [type(model).__name__]
    assert results.model_config["hidden_size"] == TINY["hidden_size"]
    assert global_hooks() == before      # nothing left behind
    assert not model._forward_hooks and not model._forward_pre_hooks


def test_handwritten_loop_and_direct_calls():
    decoder = build_handwritten_decoder(**TINY)
    prompt = decoder.make_prompt(1, PROMPT_LENGTH, 0)
    with Profiler() as prof:
        decoder.generate(prompt, max_new_tokens=NEW_TOKENS)
    assert_token_steps(prof.get_results(), 1, NEW_TOKENS)

    # Direct calls: each is one step; a call with several positions and no cache is a prefill.
    layer = torch.nn.Linear(8, 8)
    with torch.no_grad(), Profiler() as prof:
        for _ in range(3):
            layer(torch.randn(1, 4, 8))
    results = prof.get_results()
    assert len(results.call_graph.steps()) == 3
    assert results.step_phases == ["prefill"] * 3


def test_a_module_calling_itself_is_one_step():
    class Recursive(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = torch.nn.Linear(4, 4)

        def forward(self, x, depth=2):
            return self.inner(x) if depth == 0 else self(x, depth - 1)

    model = Recursive()
    with torch.no_grad(), Profiler() as prof:
        model(torch.randn(1, 3, 4))
        model(torch.randn(1, 1, 4))
    results = prof.get_results()
    assert len(results.forwards) == 2 and len(results.call_graph.steps()) == 2
    assert results.settings["stepped_modules"][0]["forwards"] == 2


def test_a_forward_that_raises_is_not_a_token():
    class Broken(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("broken on purpose")

    good, broken = torch.nn.Linear(4, 4), Broken()
    with torch.no_grad(), Profiler() as prof:
        good(torch.randn(2, 4))
        with pytest.raises(RuntimeError, match="on purpose"):
            broken(torch.randn(2, 4))
        good(torch.randn(2, 4))
    results = prof.get_results()
    assert len(results.forwards) == 2 and results.settings["failed_forwards"] == 1


def test_tuning_session_without_a_model_gives_results_every_consumer_accepts():
    pytest.importorskip("transformers")
    session = TuningSession(device_id=0, cannon_profiling=True, trace_level="operator", capture_memory=True)
    with session.profiling():
        model = build_hf_llama(**TINY)      # built inside the block, as the brief does
        model.generate(make_prompt(1, PROMPT_LENGTH, TINY["vocab_size"], 1), max_new_tokens=NEW_TOKENS,
                       do_sample=False)
    data = session.get_profile_data()
    assert_token_steps(data, 1, NEW_TOKENS)
    graph = CANNProfileParser(profile_data_path=data, cannon_version="7.0.0", model_arch="llama").parse_to_call_graph()
    assert graph.get_op_count() > 0 and 0 < graph.get_ai_core_utilization() <= 1
    report = HotspotDetector().diagnose(data)
    assert report.data["structure"]["decode_steps"] == NEW_TOKENS - 1


def test_find_steps_off_keeps_the_whole_window():
    layer = torch.nn.Linear(4, 4)
    with torch.no_grad(), Profiler(find_steps=False) as prof:
        layer(torch.randn(2, 4))
        layer(torch.randn(2, 4))
    results = prof.get_results()
    assert results.forwards == [] and results.settings["step_finding"] == "none"
