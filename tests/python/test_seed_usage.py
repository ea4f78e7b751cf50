"""The brief's own code (../shared/reference/seed_usage_cpu.py) runs as written, on CPU.

`make test-seed` runs the script once (SEED_RUNS=2, SEED_NEW_TOKENS=16) into a folder and points
SEED_USAGE_WORK at it; these tests then check that run (its output and the files it saved). Run
alone, the first test runs the script itself into a temporary folder.

Checked: exit 0 and the last line; p50 > 0 ms/token; every ratio the script prints, and every
issue's ai_core_time_ratio / hbm_access_time_ratio, in [0, 1]; at least one issue; and, with the
same API under greedy decoding, the tokens of the optimized model equal the baseline's.
"""

import ast
import os
import re
import subprocess
import sys

import pytest
import torch

from conftest import FIXTURES, REPO

if REPO not in sys.path:
    sys.path.insert(0, REPO)   # examples.models

SEED_SCRIPT = os.path.join(os.path.dirname(FIXTURES), "reference", "seed_usage_cpu.py")
# Small sizes for the test suite (the brief's 10 x 128 run in `make bench`).
SEED_RUNS = 2
SEED_NEW_TOKENS = 16
WORK_ENV = "SEED_USAGE_WORK"          # set by `make test-seed`: the folder of a run already made
OUTPUT_NAME = "seed_output.txt"       # the script's stdout in that folder
# Wall-clock limit of one run of the script at the sizes above, in seconds. Measured: about 25 s on
# 2 shared cores; the limit leaves room for a loaded machine.
SEED_TIMEOUT_S = 600
PERCENT = r"(-?[0-9.]+|nan|inf)%"


def seed_env():
    env = dict(os.environ, SEED_RUNS=str(SEED_RUNS), SEED_NEW_TOKENS=str(SEED_NEW_TOKENS))
    env["PYTHONPATH"] = os.path.join(REPO, "python") + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture(scope="module")
def seed_run(tmp_path_factory):
    """(work folder, stdout) of one run of the brief's script."""
    if not os.path.isfile(SEED_SCRIPT):
        pytest.fail(f"{SEED_SCRIPT} is missing (the shared reference folder sits beside the checkout)")
    given = os.environ.get(WORK_ENV)
    if given:
        with open(os.path.join(given, OUTPUT_NAME), encoding="utf-8") as f:
            return given, f.read()
    work = str(tmp_path_factory.mktemp("seed_usage"))
    run = subprocess.run([sys.executable, SEED_SCRIPT, work], capture_output=True, text=True, env=seed_env(),
                         timeout=SEED_TIMEOUT_S)
    assert run.returncode == 0, f"the brief's script failed (exit {run.returncode}):\n{run.stderr[-4000:]}"
    return work, run.stdout


def test_the_brief_runs_as_written(seed_run):
    work, out = seed_run
    assert out.rstrip().endswith("seed usage: every block ran")
    latency = float(re.search(r"Baseline latency: ([0-9.]+)ms/token", out).group(1))
    assert latency > 0
    utilization = float(re.search(r"AI Core utilization: " + PERCENT, out).group(1))
    assert 0 <= utilization <= 100
    shares = [float(v) for v in re.findall(r"(?:AI Core|HBM access) time share: " + PERCENT, out)]
    issues = int(re.search(r"Summary: (\d+) performance issues found", out).group(1))
    assert issues >= 1 and len(shares) == 2 * issues
    assert all(0 <= v <= 100 for v in shares)
    assert float(re.search(r"Expected combined speedup: ([0-9.]+)x", out).group(1)) >= 1
    # Every file the brief saves is there, each a single file at the path it named.
    for name in ("baseline_profile.bin", "optimized_profile.bin", "tiling_tuning.cfg", "kv_cache_patch.py",
                 "profile_trace.json"):
        assert os.path.isfile(os.path.join(work, name)), name


def test_saved_profiles_load_with_their_steps_and_ratios(seed_run):
    from pypto import ProfileResults
    from pypto.diagnostics import HotspotDetector
    work, _ = seed_run
    for name in ("baseline_profile.bin", "optimized_profile.bin"):
        results = ProfileResults.load(os.path.join(work, name))
        stats = results.get_latency_stats()
        assert stats["count"] == SEED_RUNS * SEED_NEW_TOKENS and stats["p50"] > 0
        assert stats["prefill"]["count"] == SEED_RUNS
        assert len(results.call_graph.steps()) == SEED_RUNS * SEED_NEW_TOKENS
    report = HotspotDetector(ai_core_theoretical_peak=256e12, hbm_bandwidth=1.9e12, tiling_utilization_threshold=0.6,
                             mem_bottleneck_ratio_threshold=0.7).diagnose(
        ProfileResults.load(os.path.join(work, "baseline_profile.bin")))
    assert report.issues
    for issue in report.issues:
        assert isinstance(issue.ai_core_time_ratio, float) and 0 <= issue.ai_core_time_ratio <= 1
        assert isinstance(issue.hbm_access_time_ratio, float) and 0 <= issue.hbm_access_time_ratio <= 1
        assert issue.op_name, issue.raw
    assert report.estimated_combined_speedup >= 1


def brief_loaders():
    """load_7b_model and load_tokenizer exactly as the brief's script defines them."""
    tree = ast.parse(open(SEED_SCRIPT, encoding="utf-8").read())
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)
                 and n.name in ("load_7b_model", "load_tokenizer")]
    namespace = {"torch": torch}
    exec(compile(ast.Module(body=functions, type_ignores=[]), SEED_SCRIPT, "exec"), namespace)
    return namespace["load_7b_model"], namespace["load_tokenizer"]


def test_optimized_model_generates_the_baseline_tokens_greedily(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    from pypto import Profiler
    from pypto.diagnostics import HotspotDetector
    from pypto.fusion import register_layernorm_fusion
    from pypto.optimizers import KVCacheLayoutOptimizer, apply_all_optimizations

    load_model, load_tokenizer = brief_loaders()
    model, tokenizer = load_model(), load_tokenizer()
    inputs = tokenizer("请详细介绍一下人工智能的发展历史", return_tensors="pt").input_ids

    def greedy(m):
        with torch.no_grad():
            return m.generate(inputs, max_new_tokens=SEED_NEW_TOKENS, do_sample=False)

    baseline = greedy(model)
    with Profiler(device_id=0, trace_level="operator") as profiler:
        greedy(model)
    HotspotDetector(ai_core_theoretical_peak=256e12, hbm_bandwidth=1.9e12).diagnose(profiler.get_results())

    KVCacheLayoutOptimizer(model.config).generate_layout_transform_patch().save(tmp_path / "kv_cache_patch.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("kv_cache_patch", None)
    from kv_cache_patch import apply_kv_cache_layout_optimization
    model = apply_kv_cache_layout_optimization(model)
    register_layernorm_fusion(model, fuse_with_prev_matmul=True, fuse_with_next_dropout=True)
    model_optimized = apply_all_optimizations(model, tokenizer)
    assert model_optimized is model
    assert model_optimized.pypto_optimization_report.source.startswith("the latest diagnosis")
    assert torch.equal(greedy(model_optimized), baseline)


def test_apply_all_optimizations_profiles_a_short_run_when_it_knows_nothing():
    pytest.importorskip("transformers")
    from examples.models.hf_llama import build_hf_llama
    from pypto.errors import InvalidArgumentError
    from pypto.optimizers import SHORT_RUN_NEW_TOKENS, apply_all_optimizations

    _, load_tokenizer = brief_loaders()
    # A config no other test diagnoses in this process: nothing to advise from but a run of its own.
    model = build_hf_llama(num_hidden_layers=1, hidden_size=64, num_attention_heads=2, num_key_value_heads=1,
                           intermediate_size=128, vocab_size=97)
    with pytest.raises(InvalidArgumentError, match="no recommendations, no diagnosis of this model in this process, "
                                                   "and no tokenizer"):
        apply_all_optimizations(model)
    assert apply_all_optimizations(model, load_tokenizer()) is model
    report = model.pypto_optimization_report
    assert report.source == f"a short profiled run ({SHORT_RUN_NEW_TOKENS} new tokens)"
    # The short run was profiled and diagnosed: it is now this model's latest diagnosis.
    from pypto.collection import model_fingerprint
    from pypto.diagnostics import latest_diagnosis
    latest = latest_diagnosis(model_fingerprint(model))
    assert latest is not None and len(latest["graph"].steps()) == SHORT_RUN_NEW_TOKENS
