"""pypto.collection on CPU with the two example models (random weights, small configs).

Each watched forward is one engine step (ProfilerStep#N) and one token latency; shapes survive both
the Kineto export and the in-memory-events path; results save and load back through the engine;
schedule sampling records only the active forwards; hooks never outlive the profiler; bad results
paths raise typed errors."""

import json
import os
import sqlite3
import subprocess
import sys

import pytest
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for path in (REPO, os.path.join(REPO, "python")):
    if path not in sys.path:
        sys.path.insert(0, path)

from examples.models.handwritten_decoder import build_handwritten_decoder  # noqa: E402
from examples.models.hf_llama import build_hf_llama, make_prompt  # noqa: E402
from pypto.collection import (FORCE_IN_MEMORY_ENV, RESULTS_SIDECAR_NAME, RESULTS_TABLE, SQLITE_MAGIC,  # noqa: E402
                              TOKEN_STEPS_TABLE, ProfileResults, Profiler, TuningSession, latency_summary)
from pypto.errors import InvalidArgumentError, ProfileNotFoundError  # noqa: E402

# Small enough that a profiled 8-token generate takes well under a second on 2 CPU cores.
TINY = dict(num_hidden_layers=2, hidden_size=96, num_attention_heads=3, num_key_value_heads=1,
            intermediate_size=200, vocab_size=301)
PROMPT_LENGTH = 8
NEW_TOKENS = 6


@pytest.fixture(scope="module")
def hf_model():
    pytest.importorskip("transformers")
    return build_hf_llama(**TINY)


@pytest.fixture(scope="module")
def decoder():
    return build_handwritten_decoder(**TINY)


def hf_generate(model, new_tokens=NEW_TOKENS, seed=0):
    with torch.no_grad():
        return model.generate(make_prompt(1, PROMPT_LENGTH, TINY["vocab_size"], seed), max_new_tokens=new_tokens,
                              do_sample=False)


def decoder_generate(model, new_tokens=NEW_TOKENS, seed=0):
    return model.generate(model.make_prompt(1, PROMPT_LENGTH, seed), max_new_tokens=new_tokens)


def engine_input_dims(graph, tmp_path, op_names=("aten::mm", "aten::addmm", "aten::bmm")):
    """Input dims of the named host ops as the engine stored them (through its SQLite export)."""
    db = tmp_path / "engine_view.sqlite"
    graph.export_to_sqlite(db, force=True, findings=False)
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT n.value, d.value FROM host_ops h JOIN strings n ON n.id = h.name_id "
            "LEFT JOIN strings d ON d.id = h.input_dims_id WHERE n.value IN (%s)" % ",".join("?" * len(op_names)),
            op_names).fetchall()
    return rows


def assert_one_step_per_token(results, tokens, first_index=0):
    steps = results.call_graph.steps()
    assert [s["name"] for s in steps] == [f"ProfilerStep#{first_index + i}" for i in range(tokens)]
    assert all(s["latency_ns"] > 0 for s in steps)
    assert len(results.token_latencies_ms) == tokens
    assert results.step_phases == ["prefill"] + ["decode"] * (tokens - 1)


def assert_sane_stats(results, tokens):
    stats = results.get_latency_stats()
    assert stats["count"] == tokens
    assert 0 < stats["min"] <= stats["p50"] <= stats["p90"] <= stats["p99"] <= stats["max"]
    assert stats["prefill"]["count"] == 1 and stats["decode"]["count"] == tokens - 1
    assert stats["decode"]["p50"] <= stats["decode"]["p99"]


def assert_hooks_removed(model):
    assert not model._forward_hooks and not model._forward_pre_hooks
    assert "generate" not in model.__dict__


def test_hf_llama_kineto_steps_latencies_and_shapes(hf_model, tmp_path):
    with Profiler(model=hf_model, output_dir=tmp_path / "trace") as prof:
        hf_generate(hf_model)
    results = prof.get_results()
    assert results.settings["backend"] == "cpu" and results.settings["trace_source"] == "kineto export_chrome_trace"
    assert_one_step_per_token(results, NEW_TOKENS)
    assert_sane_stats(results, NEW_TOKENS)
    assert results.generate_calls and results.generate_calls[0]["forwards"] == NEW_TOKENS
    assert results.model_config["hidden_size"] == TINY["hidden_size"]
    dims = engine_input_dims(results.call_graph, tmp_path)
    assert dims and all(d for _, d in dims)
    # The prefill's projections see the whole prompt, decode steps one token.
    assert any(f"[{PROMPT_LENGTH},{TINY['hidden_size']}]" in d for _, d in dims)
    assert any(f"[1,{TINY['hidden_size']}]" in d for _, d in dims)
    assert_hooks_removed(hf_model)


@pytest.mark.parametrize("how", ["flag", "env"])
def test_handwritten_decoder_in_memory_events_keep_steps_and_shapes(decoder, tmp_path, monkeypatch, how):
    if how == "env":
        monkeypatch.setenv(FORCE_IN_MEMORY_ENV, "1")
        profiler = Profiler(model=decoder, output_dir=tmp_path / "trace")
    else:
        profiler = Profiler(model=decoder, output_dir=tmp_path / "trace", _force_in_memory=True)
    with profiler as prof:
        decoder_generate(decoder)
    results = prof.get_results()
    assert results.settings["trace_source"] == "in-memory events"
    with open(results.trace_path, encoding="utf-8") as f:
        written = json.load(f)
    assert any(e.get("args", {}).get("Input Dims") for e in written["traceEvents"])
    assert_one_step_per_token(results, NEW_TOKENS)
    assert_sane_stats(results, NEW_TOKENS)
    dims = engine_input_dims(results.call_graph, tmp_path, ("aten::mm", "aten::cat", "aten::matmul"))
    assert dims and all(d for _, d in dims)
    # The cat-grown BSND cache: (batch, seq, kv_heads, head_dim) pieces of the decode steps.
    assert any(name == "aten::cat" and ",1,1,32]" in d for name, d in dims)
    assert results.model_config["model_type"] == "llama"
    assert_hooks_removed(decoder)


def assert_same_results(loaded, results):
    assert loaded.token_latencies_ms == results.token_latencies_ms
    assert loaded.step_phases == results.step_phases
    assert loaded.settings["backend"] == "cpu" and loaded.settings["torch_version"] == torch.__version__
    assert loaded.model_config == results.model_config
    assert loaded.get_latency_stats() == results.get_latency_stats()
    assert [s["name"] for s in loaded.call_graph.steps()] == [s["name"] for s in results.call_graph.steps()]
    assert loaded.call_graph.get_op_count() == results.call_graph.get_op_count()


def test_save_writes_one_file_atomically_and_load_reads_it(decoder, tmp_path, pypto_cli):
    with Profiler(model=decoder, output_dir=tmp_path / "trace") as prof:
        decoder_generate(decoder)
    results = prof.get_results()
    target = tmp_path / "out" / "baseline_profile.bin"
    target.parent.mkdir()
    target.write_bytes(b"an older file at that path")
    assert results.save(target) == str(target)
    # Exactly one file at that path (the old one replaced), no temporary left beside it.
    assert os.listdir(target.parent) == ["baseline_profile.bin"]
    assert target.read_bytes()[:16] == SQLITE_MAGIC
    loaded = ProfileResults.load(target)
    assert_same_results(loaded, results)
    assert loaded.generate_calls == results.generate_calls
    # The results sit in their own tables of the saved profile, readable with plain SQL.
    with sqlite3.connect(target) as connection:
        assert connection.execute(f"SELECT count(*) FROM {TOKEN_STEPS_TABLE}").fetchone()[0] == NEW_TOKENS
        schema = connection.execute(f"SELECT value FROM {RESULTS_TABLE} WHERE key = 'schema'").fetchone()[0]
    assert json.loads(schema) == "pypto.results/1"
    # The same file is a profile for every command: `pypto analyze` finds the token steps in it.
    analyzed = subprocess.run([pypto_cli, "analyze", "--json", str(target)], capture_output=True, text=True)
    assert analyzed.returncode == 0, analyzed.stderr
    assert len(json.loads(analyzed.stdout)["steps"]) == NEW_TOKENS
    # Saving again over it (a second run of the same script) replaces it.
    loaded.save(target)
    assert os.listdir(target.parent) == ["baseline_profile.bin"]
    assert ProfileResults.load(target).token_latencies_ms == results.token_latencies_ms
    with pytest.raises(InvalidArgumentError, match="is a directory"):
        results.save(tmp_path / "out")
    with pytest.raises(ProfileNotFoundError, match="no such directory"):
        results.save(tmp_path / "missing_folder" / "x.bin")


def test_directory_layout_still_saves_and_loads(decoder, tmp_path):
    with Profiler(model=decoder, output_dir=tmp_path / "trace") as prof:
        decoder_generate(decoder)
    results = prof.get_results()
    saved = results.save_directory(tmp_path / "saved", with_sqlite=True)
    assert sorted(os.listdir(saved)) == sorted([RESULTS_SIDECAR_NAME, "trace.json.gz", "profile.sqlite"])
    for source in (saved, os.path.join(saved, RESULTS_SIDECAR_NAME)):
        assert_same_results(ProfileResults.load(source), results)
    with pytest.raises(InvalidArgumentError, match="not empty"):
        results.save_directory(saved)
    results.save_directory(saved, overwrite=True)


def test_schedule_records_only_active_forwards(hf_model, tmp_path):
    # Cycle of 4 forwards: wait 2, warmup 1, active 1 -> forwards 3, 7, 11 are recorded.
    schedule = dict(wait=2, warmup=1, active=1, repeat=0)
    forwards = 12
    with Profiler(model=hf_model, schedule=schedule, output_dir=tmp_path / "trace") as prof:
        hf_generate(hf_model, new_tokens=forwards)
    results = prof.get_results()
    recorded = [f["index"] for f in results.forwards if f["recorded"]]
    assert recorded == [3, 7, 11]
    assert [s["name"] for s in results.call_graph.steps()] == [f"ProfilerStep#{i}" for i in recorded]
    assert len(results.token_latencies_ms) == forwards   # every token is still timed
    assert results.settings["schedule"] == dict(schedule, skip_first=0)
    assert results.get_latency_stats()["profiled_tokens"] == 3
    assert_hooks_removed(hf_model)


def test_schedule_object_and_in_memory_cycles_merge(decoder, tmp_path):
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    with Profiler(model=decoder, schedule=schedule, output_dir=tmp_path / "trace", _force_in_memory=True) as prof:
        decoder_generate(decoder, new_tokens=8)
    results = prof.get_results()
    names = [s["name"] for s in results.call_graph.steps()]
    assert names == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#6", "ProfilerStep#7"]
    starts = [s["cpu_start_ns"] for s in results.call_graph.steps()]
    assert starts == sorted(starts)   # cycles placed on one clock


def test_hooks_removed_after_exception(decoder, hf_model):
    with pytest.raises(RuntimeError, match="boom"):
        with Profiler(model=decoder):
            decoder_generate(decoder, new_tokens=2)
            raise RuntimeError("boom")
    assert_hooks_removed(decoder)
    # An exception inside a forward closes its step too (a token id past the vocabulary).
    bad = torch.full((1, 3), TINY["vocab_size"] + 5)
    with pytest.raises(IndexError):
        with Profiler(model=hf_model) as prof:
            with torch.no_grad():
                hf_model.generate(bad, max_new_tokens=2, do_sample=False)
    assert_hooks_removed(hf_model)
    assert prof.get_results().token_latencies_ms == []
    assert prof.get_results().settings["failed_forwards"] == 1
    # The model still works unprofiled afterwards.
    assert decoder_generate(decoder, new_tokens=2).shape == (1, PROMPT_LENGTH + 2)


def test_watch_inside_block_and_tuning_session(decoder, tmp_path):
    session = TuningSession(device_id=0, cannon_profiling=True, trace_level="operator", capture_memory=False,
                            output_dir=tmp_path / "runs")
    with session.profiling(model=decoder):
        decoder_generate(decoder, new_tokens=3)
    with session.profiling() as prof:
        prof.watch(decoder)
        decoder_generate(decoder, new_tokens=4)
    assert len(session.runs) == 2
    assert len(session.get_profile_data(0).token_latencies_ms) == 3
    assert_one_step_per_token(session.get_profile_data(), 4)
    assert session.get_profile_data().settings["capture_memory_access"] is False
    assert_hooks_removed(decoder)
    with pytest.raises(InvalidArgumentError):
        TuningSession(cannon_profiling=True, cann_profiling=False)
    with pytest.raises(InvalidArgumentError):
        TuningSession().get_profile_data()


def test_argument_errors():
    with pytest.raises(InvalidArgumentError, match="trace_level"):
        Profiler(trace_level="everything")
    with pytest.raises(InvalidArgumentError, match="unknown keys"):
        Profiler(schedule=dict(wait=1, every=3))
    with pytest.raises(InvalidArgumentError, match="active"):
        Profiler(schedule=dict(active=0))
    with pytest.raises(InvalidArgumentError, match="after the block|not run"):
        Profiler().get_results()


def test_load_errors_name_path_and_reason(tmp_path):
    missing = tmp_path / "nothing_here"
    with pytest.raises(ProfileNotFoundError, match="nothing_here"):
        ProfileResults.load(missing)
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(ProfileNotFoundError, match=RESULTS_SIDECAR_NAME):
        ProfileResults.load(empty_dir)
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x00\xffnot json at all")
    with pytest.raises(InvalidArgumentError, match="garbage.json"):
        ProfileResults.load(garbage)
    truncated = tmp_path / "truncated"
    truncated.mkdir()
    (truncated / RESULTS_SIDECAR_NAME).write_text('{"schema": "pypto.results/1", "forwards": [')
    with pytest.raises(InvalidArgumentError, match="malformed JSON at line 1"):
        ProfileResults.load(truncated)
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / RESULTS_SIDECAR_NAME).write_text('{"schema": "something/else"}')
    with pytest.raises(InvalidArgumentError, match="schema"):
        ProfileResults.load(wrong)
    lost_trace = tmp_path / "lost"
    lost_trace.mkdir()
    (lost_trace / RESULTS_SIDECAR_NAME).write_text(json.dumps(
        {"schema": "pypto.results/1", "trace": "trace.json.gz", "forwards": []}))
    with pytest.raises(ProfileNotFoundError, match="trace.json.gz"):
        ProfileResults.load(lost_trace)
    escaping = tmp_path / "escaping"
    escaping.mkdir()
    (escaping / RESULTS_SIDECAR_NAME).write_text(json.dumps(
        {"schema": "pypto.results/1", "trace": "../lost/x.json", "forwards": []}))
    with pytest.raises(InvalidArgumentError, match="inside the results directory"):
        ProfileResults.load(escaping)


def test_load_errors_of_the_one_file_form(tmp_path):
    plain = tmp_path / "plain.db"
    with sqlite3.connect(plain) as connection:
        connection.execute("CREATE TABLE t (x)")
    with pytest.raises(InvalidArgumentError, match=f"plain.db: not saved pypto results .*{RESULTS_TABLE}"):
        ProfileResults.load(plain)
    bad_phase = tmp_path / "bad_phase.bin"
    with sqlite3.connect(bad_phase) as connection:
        connection.execute(f"CREATE TABLE {RESULTS_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        connection.execute(f"INSERT INTO {RESULTS_TABLE} VALUES ('schema', '\"pypto.results/1\"')")
        connection.execute(f"CREATE TABLE {TOKEN_STEPS_TABLE} (idx, phase, latency_ms, recorded, generate_call, "
                           "batch, seq_len)")
        connection.execute(f"INSERT INTO {TOKEN_STEPS_TABLE} VALUES (0, 'sideways', 1.0, 1, 0, 1, 5)")
    with pytest.raises(InvalidArgumentError, match=f"{TOKEN_STEPS_TABLE}, row 1: phase must be prefill or decode"):
        ProfileResults.load(bad_phase)


def test_nearest_rank_percentiles():
    stats = latency_summary(list(range(1, 101)))
    assert (stats["p50"], stats["p90"], stats["p99"], stats["min"], stats["max"]) == (50, 90, 99, 1, 100)
    assert latency_summary([7.0])["p99"] == 7.0
    assert latency_summary([])["count"] == 0


def test_npu_backend_wiring_with_a_stub_torch_npu(decoder, tmp_path, monkeypatch):
    """The torch_npu path cannot run here; a stub module checks what the profiler is built with."""
    import types

    created = {}

    class StubNpuProfile:
        def __init__(self, **kwargs):
            created.update(kwargs)
            self.current_action = "ProfilerAction.RECORD"
            self.steps = 0

        def start(self):
            pass

        def step(self):
            self.steps += 1

        def stop(self):
            os.makedirs(os.path.join(created["on_trace_ready"], "host_1_ascend_pt"))

    class ExperimentalConfig:
        def __init__(self, profiler_level=None, aic_metrics=None, l2_cache=False, data_simplification=True):
            self.profiler_level, self.aic_metrics = profiler_level, aic_metrics

    profiler_module = types.SimpleNamespace(
        profile=StubNpuProfile, _ExperimentalConfig=ExperimentalConfig,
        ProfilerLevel=types.SimpleNamespace(Level0="L0", Level1="L1", Level2="L2"),
        AiCMetrics=types.SimpleNamespace(PipeUtilization="PipeUtilization"),
        ProfilerActivity=types.SimpleNamespace(CPU="CPU", NPU="NPU"),
        schedule=lambda **fields: ("npu schedule", fields),
        tensorboard_trace_handler=lambda directory: directory)
    monkeypatch.setitem(sys.modules, "torch_npu", types.SimpleNamespace(profiler=profiler_module))
    monkeypatch.setattr(torch, "npu", types.SimpleNamespace(
        is_available=lambda: True, synchronize=lambda device=None: None,
        get_device_name=lambda device=None: "Ascend stub"), raising=False)
    with Profiler(model=decoder, output_dir=tmp_path / "npu", schedule=dict(wait=1, active=1)) as prof:
        decoder_generate(decoder, new_tokens=3)
    results = prof.get_results()
    assert results.settings["backend"] == "npu" and results.settings["device"] == "Ascend stub"
    assert created["activities"] == ["CPU", "NPU"] and created["record_shapes"] and created["profile_memory"]
    assert created["experimental_config"].profiler_level == "L1"
    assert created["experimental_config"].aic_metrics == "PipeUtilization"
    assert created["schedule"] == ("npu schedule", dict(wait=1, warmup=0, active=1, repeat=0, skip_first=0))
    assert results.trace_path.endswith("host_1_ascend_pt")
    assert len(results.token_latencies_ms) == 3
    assert_hooks_removed(decoder)
