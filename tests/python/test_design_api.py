"""Every public name and keyword argument of DESIGN.md's API, used as written there, on a
small random-weight decoder (CPU); plus the README's Python snippet."""

import os
import sys

import torch

from conftest import REPO

sys.path.insert(0, REPO)


def small_decoder():
    from examples.models.handwritten_decoder import build_handwritten_decoder
    model = build_handwritten_decoder(num_hidden_layers=2)
    return model, model.make_prompt(1, 16, seed=3)


def test_design_api_as_written(tmp_path):
    from pypto import Profiler, ProfileResults, TuningSession
    from pypto.advisor import TuningAdvisor
    from pypto.analyzers import TransformerHotspotAnalyzer
    from pypto.comparison import ProfileComparer
    from pypto.diagnostics import DiagnosticReport, HotspotDetector
    from pypto.fusion import register_layernorm_fusion
    from pypto.graph import OperatorCallGraph
    from pypto.optimizers import KVCacheLayoutOptimizer, TilingOptimizer, apply_all_optimizations
    from pypto.parser import CANNProfileParser

    model, ids = small_decoder()
    session = TuningSession(device_id=0, cannon_profiling=True, trace_level="operator", capture_memory=True)
    with torch.no_grad(), session.profiling(model=model):
        model.generate(ids, max_new_tokens=6)
    data = session.get_profile_data()
    assert isinstance(data, ProfileResults)
    assert {"p50", "p90", "p99"} <= set(data.get_latency_stats())
    data.save(tmp_path / "run.bin")
    restored = ProfileResults.load(tmp_path / "run.bin")

    with torch.no_grad(), Profiler(device_id=0, trace_level="operator", capture_memory_access=True,
                                   capture_ai_core_usage=True, model=model) as prof:
        model.generate(ids, max_new_tokens=6)
    baseline = prof.get_results()

    graph = CANNProfileParser(profile_data_path=baseline.trace_path, cannon_version=None, model_arch="llama").parse()
    assert isinstance(graph, OperatorCallGraph)
    assert graph.get_op_count() > 0 and graph.get_critical_path_latency() > 0
    assert 0 < graph.get_ai_core_utilization() <= 1
    graph.export_to_chrome_trace(tmp_path / "trace.json")
    TransformerHotspotAnalyzer(graph).analyze()
    report = HotspotDetector(ai_core_theoretical_peak=1e11, hbm_bandwidth=2e10, tiling_utilization_threshold=0.6,
                             mem_bottleneck_ratio_threshold=0.7).detect(graph)
    assert isinstance(report, DiagnosticReport)
    recs = TuningAdvisor(graph, model.config).generate_recommendations()
    for rec in recs:
        rec.hotspot_type, rec.description, rec.action, rec.estimated_speedup  # noqa: B018 (the brief's fields)
    TilingOptimizer(graph).generate_tuning_config().save(tmp_path / "tiling")
    KVCacheLayoutOptimizer(model.config).generate_layout_transform_patch().save(tmp_path / "kv_patch.py")

    fused = register_layernorm_fusion(model, fuse_with_prev_matmul=True, fuse_with_next_dropout=True)
    assert fused is not None
    assert apply_all_optimizations(model, recs) is model
    applied = model.pypto_optimization_report
    with torch.no_grad(), Profiler(model=model) as prof:
        model.generate(ids, max_new_tokens=6)
    comparison = ProfileComparer(restored, prof.get_results(), applied.compare_actions() or None)
    assert comparison.generate_comparison_report().to_markdown()


def test_readme_snippet_runs():
    readme = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    start = readme.index("```python\nimport torch\nfrom pypto import Profiler")
    code = readme[start + len("```python\n"):readme.index("```", start + 10)]
    model, input_ids = small_decoder()
    exec(compile(code.replace("max_new_tokens=32", "max_new_tokens=4"), "README.md", "exec"),
         {"model": model, "input_ids": input_ids})
