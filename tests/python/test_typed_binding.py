"""The binding's result classes: every document the package reads as dicts and lists is the one the
engine writes as JSON (the same renderer code, written through a Python-object sink instead of text),
so `document()` must equal `json.loads(to_json())` value for value on real profiles, and the text the
package returns must be the engine's own."""
import json
import math
import os
import subprocess

import pytest

import pypto
from pypto import _engine

# Fixtures with different content: a GPU trace with kernels (Kineto), an Ascend LLM job (CSV + trace_view)
# and a CPU-only trace (host operators only).
FIXTURES = [
    "kineto/tracelens_h100_qwen1.5_0.5b_hf_inference",
    "ascend/pta_level2_llm_cann83",
    "kineto/kineto_cpu_only_sparse_moe_2024",
]


def same(a, b, where="$"):
    """Deep equality where NaN/None agree (JSON writes a non-finite double as null) and floats are
    compared exactly: the sink must produce the double json.loads reads from the engine's digits."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, int) and not isinstance(b, bool):
        assert a == b, f"{where}: {a!r} != {b!r}"
    else:
        assert type(a) is type(b) and a == b, f"{where}: {a!r} ({type(a).__name__}) != {b!r} ({type(b).__name__})"


@pytest.fixture(scope="module", params=FIXTURES)
def loaded(request, fixtures):
    return _engine.load_profile(os.path.join(fixtures, request.param))


def test_diagnosis_document_is_the_json(loaded):
    diagnosis = loaded.diagnose({})
    document = diagnosis.document()
    same(document, json.loads(diagnosis.to_json()))
    assert document["schema"] == "pypto.diagnose/1"
    assert diagnosis.issue_count == len(document["issues"])
    assert math.isclose(diagnosis.estimated_combined_speedup, document["summary"]["estimated_combined_speedup"])
    # The session computes one diagnosis per options: a second call returns the same report.
    assert loaded.diagnose({}).to_json() == diagnosis.to_json()


def test_advice_comparison_analysis_report_and_tuning_documents_are_the_json(loaded):
    advice = loaded.advise({})
    same(advice.document(), json.loads(advice.to_json()))
    same(advice.diagnosis.document(), json.loads(advice.diagnosis.to_json()))
    assert advice.recommendation_count == len(advice.document()["recommendations"])
    comparison = _engine.compare(loaded, loaded)
    same(comparison.document(), json.loads(comparison.to_json()))
    assert comparison.verdict == comparison.document()["verdict"]
    assert comparison.verdict.startswith("identical profiles") and comparison.identical
    same(loaded.analysis(None, 0), json.loads(loaded.report({}, "json"))["analysis"])
    same(loaded.report_document({}), json.loads(loaded.report({}, "json")))
    tuning = loaded.tiling_config({})
    same(tuning.detail(), json.loads(tuning.detail_json()))
    same(tuning.tune_ops(), json.loads(tuning.tune_ops_json()))
    assert tuning.op_count == len(tuning.detail()["ops"])


def test_package_text_is_the_command_line_text(fixtures, tmp_path):
    # `pypto diagnose` and HotspotDetector render the same diagnosis with the same renderer.
    path = os.path.join(fixtures, FIXTURES[0])
    report = pypto.HotspotDetector().detect(pypto.load_profile(path))
    cli = os.environ.get("PYPTO") or "build/release/pypto"
    if not os.path.exists(cli):
        pytest.skip(f"{cli} is not built")
    printed = subprocess.run([cli, "diagnose", "--json", path], check=True, capture_output=True, text=True).stdout
    assert json.loads(printed) == json.loads(report.to_json())
    assert report.data == json.loads(report.to_json())
    assert report.to_text().strip() and report.to_markdown().strip()


def test_epoch_nanoseconds_stay_exact_integers(fixtures):
    # The HTA trace's timestamps are epoch µs (1694039959…): in ns they are beyond 2^53, where a
    # double would lose the last digits. Expected: the analysis document carries them as Python ints
    # equal to the JSON text's digits (same() compares exactly), and such a value is present.
    loaded = _engine.load_profile(os.path.join(fixtures, "kineto/hta_critical_path_simple_add_a100"))
    document = loaded.analysis(None, 0)
    same(document, json.loads(loaded.report({}, "json"))["analysis"])

    def ints(value):
        if isinstance(value, dict):
            for v in value.values():
                yield from ints(v)
        elif isinstance(value, list):
            for v in value:
                yield from ints(v)
        elif isinstance(value, int) and not isinstance(value, bool):
            yield value
    assert any(v > 2 ** 53 for v in ints(document))


def test_engine_defaults_are_the_brief_defaults():
    # The brief: HotspotDetector(tiling_utilization_threshold=0.6, mem_bottleneck_ratio_threshold=0.7).
    assert _engine.defaults["tiling_utilization_threshold"] == 0.6
    assert _engine.defaults["mem_bottleneck_ratio_threshold"] == 0.7
    assert pypto.diagnostics.DEFAULT_TILING_UTILIZATION_THRESHOLD == 0.6
    assert _engine.defaults["significance_alpha"] == 0.05


def test_data_loss_carries_kind_and_severity(tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_text('{"traceEvents": [{"name": "aten::mm", "ph": "X", "ts": 1')
    loss = pypto.load_profile(cut).data_loss
    truncated = [entry for reason, entry in loss.items() if "truncated" in reason]
    assert truncated, loss
    count, location, kind, severity = truncated[0]
    assert count == 1 and location == "cut.json: byte 56"
    # The loss kinds' table (model/profile.cc): an input that ends early is "truncated", severity high.
    assert (kind, severity) == ("truncated", "high")
