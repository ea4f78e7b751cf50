"""The public Python API of DESIGN.md on real fixtures: parse, graph queries, diagnosis,
advice, optimizers, comparison, reports; typed exceptions; CLI and Python agree."""

import json
import os
import subprocess

import pytest

import pypto
from pypto import ProfileFormatError, ProfileNotFoundError
from pypto.advisor import TuningAdvisor
from pypto.analyzers import TransformerHotspotAnalyzer
from pypto.comparison import ProfileComparer
from pypto.diagnostics import DiagnosticReport, HotspotDetector
from pypto.graph import OperatorCallGraph
from pypto.optimizers import KVCacheLayoutOptimizer, TilingOptimizer
from pypto.parser import CANNProfileParser

H100 = "kineto/tracelens_h100_qwen1.5_0.5b_hf_inference"
ASCEND_LLM = "ascend/pta_level2_llm_cann83"
ASCEND_MATMUL = "ascend/pta_advisor_ut_llm_matmul_fa"


def parse(fixtures, rel, **kw):
    return CANNProfileParser(os.path.join(fixtures, rel), **kw).parse()


def cli_json(cli, *args):
    out = subprocess.run([cli, *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_parse_and_graph_queries_match_the_cli(fixtures, pypto_cli):
    graph = parse(fixtures, H100)
    assert isinstance(graph, OperatorCallGraph)
    summary = cli_json(pypto_cli, "analyze", "--json", os.path.join(fixtures, H100))
    assert graph.summary() == summary
    assert graph.format == "kineto"
    assert graph.get_op_count() == summary["graph"]["operators"] if "graph" in summary else graph.get_op_count() > 0
    util = graph.get_ai_core_utilization_details()
    assert util and all(0 < u["utilization"] <= 1 for u in util)
    # The brief's one figure: busy compute units over the window; no device is busier than the union
    # of its tasks, so it cannot exceed the busiest device's figure.
    overall = graph.get_ai_core_utilization()
    assert isinstance(overall, float) and 0 < overall <= max(u["utilization"] for u in graph.get_device_busy_times())
    assert graph.get_critical_path_latency() > 0
    assert len(graph.steps()) >= 1


def test_cann_version_spellings(fixtures):
    a = parse(fixtures, ASCEND_LLM, cannon_version="8.3.RC1")
    b = parse(fixtures, ASCEND_LLM, cann_version="8.3.RC1")
    assert a.get_op_count() == b.get_op_count()
    with pytest.raises(ValueError, match="same argument"):
        CANNProfileParser("x", cannon_version="8.0", cann_version="8.3")


@pytest.mark.parametrize("rel", [H100, ASCEND_LLM, ASCEND_MATMUL])
def test_diagnosis_matches_the_cli(fixtures, pypto_cli, rel):
    report = HotspotDetector().detect(parse(fixtures, rel))
    assert isinstance(report, DiagnosticReport)
    assert report.data == cli_json(pypto_cli, "diagnose", "--json", os.path.join(fixtures, rel))
    assert report.to_markdown().startswith("#")
    assert all(i.issue_type == i.hotspot_type for i in report.issues)


def test_detector_thresholds_change_the_result(fixtures):
    graph = parse(fixtures, ASCEND_MATMUL)
    default = HotspotDetector().detect(graph)
    strict = HotspotDetector(tiling_utilization_threshold=0.999, hbm_bandwidth=1e15).detect(graph)
    assert default.hardware["memory_bandwidth_bytes_per_s"] != strict.hardware["memory_bandwidth_bytes_per_s"]
    with pytest.raises(pypto.InvalidArgumentError, match="tiling_utilization_threshold"):
        HotspotDetector(tiling_utilization_threshold=1.5).detect(graph)
    with pytest.raises(pypto.InvalidArgumentError, match="no_such_option"):
        graph._loaded.diagnose({"no_such_option": 1})


def test_advisor_matches_the_cli_and_writes_artifacts(fixtures, pypto_cli, tmp_path):
    graph = parse(fixtures, ASCEND_LLM)
    advisor = TuningAdvisor(graph)
    recs = advisor.generate_recommendations()
    assert recs, "the Ascend LLM fixture has known issues"
    for r in recs:
        assert r.hotspot_type and r.description and r.action and r.estimated_speedup >= 1.0
    assert [r.estimated_speedup for r in recs] == sorted((r.estimated_speedup for r in recs), reverse=True)
    assert advisor.report.data == cli_json(pypto_cli, "advise", "--json", os.path.join(fixtures, ASCEND_LLM))
    paths = advisor.write_artifacts(tmp_path / "artifacts")
    assert paths and all(os.path.isfile(p) for p in paths)


def test_model_config_from_transformers(fixtures):
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(hidden_size=256, num_attention_heads=8, num_key_value_heads=2,
                                      num_hidden_layers=3, intermediate_size=688)
    report = TuningAdvisor(parse(fixtures, ASCEND_LLM), config).report
    model = report.data["model"]
    assert (model["num_heads"], model["num_kv_heads"], model["num_layers"]) == (8, 2, 3)


def test_tiling_config_is_parsed_back(fixtures, tmp_path):
    config = TilingOptimizer(parse(fixtures, ASCEND_LLM)).generate_tuning_config()
    assert config.op_count > 0
    paths = config.save(tmp_path / "aoe")
    by_name = {os.path.basename(p): p for p in paths}
    detail = json.load(open(next(p for p in paths if p.endswith(".json") and "tuning" in p)))
    assert detail == config.detail
    assert any(op.get("op_type") for op in detail["ops"])
    script = next(p for p in paths if p.endswith(".sh"))
    assert "aoe" in open(script).read()
    with pytest.raises(pypto.InvalidArgumentError, match="exists"):
        config.save(tmp_path / "aoe")
    assert config.save(tmp_path / "aoe", force=True) and by_name


def test_tiling_config_saves_one_file_at_the_brief_path(fixtures, tmp_path):
    ascend = TilingOptimizer(parse(fixtures, ASCEND_LLM)).generate_tuning_config()
    target = tmp_path / "tiling_tuning.cfg"
    assert ascend.save(target) == [str(target)]
    written = json.load(open(target))
    # AOE's --tune_ops_file form: the kernel names of the flagged ops.
    assert written == ascend.tune_ops and written["tune_ops_name"]
    assert ascend.save(target) == [str(target)]   # a second run replaces the file
    assert os.listdir(tmp_path) == ["tiling_tuning.cfg"]
    gpu = TilingOptimizer(parse(fixtures, H100)).generate_tuning_config()
    other = tmp_path / "gpu_tiling.cfg"
    with pytest.warns(UserWarning, match="not an Ascend profile .*padded GEMM shapes"):
        gpu.save(other)
    assert json.load(open(other)) == gpu.detail and gpu.detail["schema"] == "pypto.tiling/1"


def test_every_issue_has_time_shares_and_names_what_ran(fixtures):
    ascend = parse(fixtures, ASCEND_LLM)
    report = HotspotDetector().diagnose(ascend)
    step_names = {s["name"] for s in ascend.steps()}
    sources = set()
    for issue in report.issues:
        for share in (issue.ai_core_time_ratio, issue.hbm_access_time_ratio):
            assert isinstance(share, float) and 0.0 <= share <= 1.0
        sources.update(issue.raw["time_ratio_source"].split("/"))
        assert issue.op_name
        if issue.issue_type == "host_bound":   # step-wide: the steps are what ran
            assert issue.target_name == "" and issue.op_name in step_names
    assert {"detector", "pipe_ratios"} <= sources
    assert report.estimated_combined_speedup == report.estimated_speedup >= 1.0
    # The CANN 8.3 job trains (RmsNormGrad, ApplyAdamWV2 rows); the H100 trace is HF inference.
    assert report.workload == "training" and "RmsNormGrad" in report.workload_reason
    gpu = HotspotDetector().diagnose(parse(fixtures, H100))
    assert gpu.workload == "inference"
    fusible = gpu.by_type("fusible_sequence")
    assert fusible and all(i.raw["time_ratio_source"] == "roofline" for i in fusible)
    # op_name: the sequence the profile ran; target_name: the fused API to use instead.
    rms = next(i for i in fusible if i.target_name == "torch.nn.functional.rms_norm")
    assert rms.op_name == "pow-mean-add-rsqrt-mul"


def test_kv_patch_from_a_config():
    patch = KVCacheLayoutOptimizer({"model_type": "llama", "num_attention_heads": 4, "num_key_value_heads": 2,
                                    "hidden_size": 64, "num_hidden_layers": 2}).generate_layout_transform_patch()
    module = patch.load()
    assert callable(module.apply_kv_cache_layout_optimization)


def test_self_comparison_reports_no_change(fixtures):
    graph = parse(fixtures, ASCEND_LLM)
    report = ProfileComparer(graph, graph).generate_comparison_report()
    assert report.measured_speedup == pytest.approx(1.0)
    assert not report.significant
    assert all(i["change"] == "remaining" for i in report.issues)
    assert report.verdict.startswith("identical profiles")
    assert "<html" in report.to_html().lower() and report.to_markdown()


def test_comparison_matches_the_cli(fixtures, pypto_cli):
    a = os.path.join(fixtures, H100)
    b = os.path.join(fixtures, ASCEND_LLM)
    py = ProfileComparer(a, b).generate_comparison_report().data
    assert py == cli_json(pypto_cli, "compare", "--json", a, b)


def test_analyzer_and_report(fixtures, tmp_path):
    analyzer = TransformerHotspotAnalyzer(parse(fixtures, H100))
    result = analyzer.analyze()
    assert result["time_by_op_class"] and "layers" in result["structure"]
    out = tmp_path / "report.html"
    html = parse(fixtures, H100).report(out)
    assert out.read_text() == html and "<svg" in html


def test_chrome_trace_export(fixtures, tmp_path):
    out = tmp_path / "trace.json"
    parse(fixtures, H100).export_to_chrome_trace(out)
    doc = json.loads(out.read_text())
    assert any(e.get("args", {}).get("critical_path") for e in doc["traceEvents"])
    with pytest.raises(pypto.InvalidArgumentError):
        parse(fixtures, H100).export_to_chrome_trace(out)


def test_typed_errors_carry_the_engine_message(tmp_path):
    with pytest.raises(ProfileNotFoundError, match="no such file"):
        pypto.load_profile(tmp_path / "missing.json")
    with pytest.raises(FileNotFoundError):
        pypto.load_profile(tmp_path / "missing.json")
    cut = tmp_path / "cut.json"
    cut.write_text('{"traceEvents": [{"name": "aten::mm", "ph": "X", "ts": 1')
    loss = pypto.load_profile(cut).data_loss  # truncation is counted data loss, not an error
    assert any("truncated" in reason and loc[1] == "cut.json: byte 56" for reason, loc in loss.items()), loss
    bad = tmp_path / "not_a_trace.json"
    bad.write_text('{"traceEvents": 5}')
    with pytest.raises(ProfileFormatError) as err:
        pypto.load_profile(bad)
    assert "not_a_trace.json" in str(err.value) and "traceEvents" in str(err.value)
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ProfileFormatError, match="unsupported"):
        pypto.load_profile(garbage)
    big = tmp_path / "big.json"
    big.write_text('{"traceEvents": []}' + " " * 4096)
    with pytest.raises(pypto.LimitExceededError):
        pypto.load_profile(big, max_input_bytes=1024)
