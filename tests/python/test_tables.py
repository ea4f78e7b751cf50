"""The engine's tables as numpy columns (LoadedProfile.host_ops / device_tasks / attributes / strings), checked
against the raw trace rows, and the engine statistics the package calls instead of its own."""
import gzip
import json
import os

import numpy as np
import pytest

from pypto import _engine
from pypto.collection import nearest_rank_percentile
from pypto.drift import student_t_two_sided_p, welch_t_test
from pypto.errors import PyptoError

HTA_SIMPLE_ADD = "kineto/hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz"


@pytest.fixture(scope="module")
def loaded(fixtures):
    return _engine.load_profile(os.path.join(fixtures, HTA_SIMPLE_ADD))


@pytest.fixture(scope="module")
def raw_events(fixtures):
    with gzip.open(os.path.join(fixtures, HTA_SIMPLE_ADD), "rt") as handle:
        return json.load(handle)["traceEvents"]


def test_device_tasks_are_the_raw_kernel_and_memory_rows(loaded, raw_events):
    # Expected: the complete ("X") events of the kernel, gpu_memcpy and gpu_memset categories in the raw file.
    raw = [e for e in raw_events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    tasks = loaded.device_tasks()
    kinds = list(tasks["kind_names"])
    real = np.isin(tasks["kind"], [kinds.index(k) for k in ("kernel", "memcpy", "memset")])
    assert int(real.sum()) == len(raw)
    assert tasks["ts"].dtype == np.int64 and tasks["dur"].dtype == np.int64
    # Durations in ns: the raw µs durations times 1000, as a multiset.
    assert sorted(tasks["dur"][real].tolist()) == sorted(round(e["dur"] * 1000) for e in raw)
    names = set(loaded.strings(sorted(set(tasks["name"][real].tolist()))))
    assert names == {e["name"] for e in raw}
    assert set(tasks["op_class_names"][c] for c in tasks["op_class"].tolist()) <= set(tasks["op_class_names"])


def test_host_ops_count_the_raw_cpu_ops(loaded, raw_events):
    raw_ops = [e for e in raw_events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    host = loaded.host_ops()
    operator = list(host["kind_names"]).index("operator")
    assert int((host["kind"] == operator).sum()) == len(raw_ops)
    assert len(host["ts"]) == len(host["input_dims"]) == len(host["op_class"])


def test_attributes_filter_by_owner_and_prefix_and_bad_arguments_are_named(loaded):
    everything = loaded.attributes()
    tasks_only = loaded.attributes("device_task")
    assert len(tasks_only["owner"]) <= len(everything["owner"])
    keys = loaded.strings(sorted(set(tasks_only["key"].tolist())))
    if keys:
        prefix = keys[0][:3]
        narrowed = loaded.attributes("device_task", prefix)
        assert all(k.startswith(prefix) for k in loaded.strings(narrowed["key"].tolist()))
    with pytest.raises(PyptoError, match="unknown owner kind 'tasks'"):
        loaded.attributes("tasks")
    with pytest.raises(PyptoError, match="string id 4294967295 out of range"):
        loaded.strings([2**32 - 1])


def test_the_graph_exposes_the_same_columns(fixtures):
    from pypto import load_profile
    graph = load_profile(os.path.join(fixtures, HTA_SIMPLE_ADD))
    tasks = graph.device_tasks()
    assert len(tasks["ts"]) == len(graph._loaded.device_tasks()["ts"])
    assert graph.strings(tasks["name"][:1].tolist()) == graph._loaded.strings(tasks["name"][:1].tolist())
    assert set(graph.host_ops()) >= {"ts", "dur", "kind", "name", "input_dims", "op_class"}


def test_statistics_are_the_engines():
    # Nearest rank over 1..10: p50 is the 5th value, p99 the 10th.
    values = [float(v) for v in range(1, 11)]
    assert nearest_rank_percentile(values, 50) == 5.0
    assert nearest_rank_percentile(values, 99) == 10.0
    # Student's t: P(|T| >= 2.228139) with 10 df is 0.05 (two-sided 95 % critical value of t tables).
    assert student_t_two_sided_p(2.228139, 10) == pytest.approx(0.05, abs=1e-6)
    # Welch on [1..5] vs [2, 4, 6, 8, 11]: means 3 and 6.2, variances 2.5 and 12.2, se^2 = 0.5 + 2.44 = 2.94,
    # t = 3.2 / sqrt(2.94) = 1.8663, df = 2.94^2 / (0.5^2/4 + 2.44^2/4) = 8.6436 / 1.5509 = 5.5733.
    w = welch_t_test([1, 2, 3, 4, 5], [2, 4, 6, 8, 11])
    assert w["t"] == pytest.approx(1.8663, abs=1e-4)
    assert w["df"] == pytest.approx(5.5733, abs=1e-4)
    assert w["ci_low"] < 3.2 < w["ci_high"]
    assert welch_t_test([1.0], [2.0, 3.0]) is None


CANN83_KERNEL_DETAILS = "ascend/pta_level2_llm_cann83/ASCEND_PROFILER_OUTPUT/kernel_details.csv"


def _written_text(text_id, number, decimals, strings):
    # How a cell was written, from the attributes' columns: an interned text, or the number in fixed
    # notation with `decimals` digits, or in its shortest form (std::to_chars: integral values without ".0").
    if text_id:
        return strings[text_id]
    if decimals >= 0:
        return f"{number:.{decimals}f}"
    return str(int(number)) if number.is_integer() and abs(number) < 1e16 else repr(number)


def test_pmu_cells_read_back_as_written(fixtures):
    # Expected: for each PMU column of the raw kernel_details.csv, the multiset of its cells; pypto keeps
    # "0.000" and "1.200" as a number with a count of decimals and must give back the same text.
    import csv
    path = os.path.join(fixtures, CANN83_KERNEL_DETAILS)
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    pmu_columns = [c for c, name in enumerate(header) if name.startswith(("aic_", "aiv_", "cube_utilization"))]
    assert len(pmu_columns) >= 20
    loaded = _engine.load_profile(os.path.dirname(os.path.dirname(path)))
    attributes = loaded.attributes("device_task")
    ids = sorted(set(attributes["key"].tolist()) | set(attributes["text"].tolist()))
    strings = dict(zip(ids, loaded.strings(ids)))
    fixed = 0
    for column in pmu_columns:
        name = header[column]
        raw = sorted(row[column] for row in body if column < len(row) and row[column] not in ("", "N/A"))
        picked = [i for i, k in enumerate(attributes["key"].tolist()) if strings[k] == name]
        got = sorted(_written_text(int(attributes["text"][i]), float(attributes["number"][i]),
                                   int(attributes["decimals"][i]), strings) for i in picked)
        assert got == raw, name
        fixed += sum(1 for i in picked if attributes["decimals"][i] >= 0)
    assert fixed > 1000  # "0.000", "0.0" … : the fixed-notation path is the one checked
