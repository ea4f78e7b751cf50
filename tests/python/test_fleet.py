"""pypto.fleet on a Dask LocalCluster (2 worker processes): several real fixtures, a 3-rank run built
from the HTA NCCL trace (one rank stretched), and one garbage file. The cluster result must equal a
serial run of the same per-profile function."""

import gzip
import json
import os

import pytest

pytest.importorskip("distributed")

from pypto import fleet  # noqa: E402

NCCL_TRACE = os.path.join("kineto", "hta_nccl_2rank_a100_2024", "nccl_data.json.gz")
FIXTURE_PROFILES = [
    os.path.join("kineto", "hta_cpu_only_gloo_2024", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"),
    os.path.join("kineto", "tracelens_mi300x_sglang_qwen3_8b_decode", "sglang_Qwen3-8B_decode.json.gz"),
    os.path.join("ascend", "pta_level1_alexnet_cann8"),
]
SLOW_FACTOR = 1.3


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, fixtures):
    base = tmp_path_factory.mktemp("fleet")
    run = base / "run"
    run.mkdir()
    with gzip.open(os.path.join(fixtures, NCCL_TRACE), "rt") as handle:
        text = handle.read()
    for rank in range(3):
        trace = json.loads(text)
        trace["distributedInfo"].update(rank=rank, world_size=3)
        if rank == 1:
            start = min(e["ts"] for e in trace["traceEvents"] if "ts" in e)
            for event in trace["traceEvents"]:
                if "ts" in event:
                    event["ts"] = start + (event["ts"] - start) * SLOW_FACTOR
                if "dur" in event:
                    event["dur"] *= SLOW_FACTOR
        with gzip.open(run / f"rank{rank}.json.gz", "wt") as handle:
            json.dump(trace, handle)
    garbage = base / "garbage.json"
    garbage.write_text("this is not a profile\n")
    return [os.path.join(fixtures, p) for p in FIXTURE_PROFILES] + [str(run), str(garbage)]


@pytest.fixture(scope="module")
def cluster_report(inputs):
    return fleet.analyze_fleet(inputs, n_workers=2)


def test_cluster_equals_serial(inputs, cluster_report):
    serial = fleet.reduce_fleet([fleet.profile_summary(p) for p in fleet.expand_paths(inputs)])
    assert cluster_report.to_dict() == serial.to_dict()


def test_profiles_and_error_record(cluster_report, fixtures):
    profiles = cluster_report.profiles
    assert len(profiles) == len(FIXTURE_PROFILES) + 3 + 1
    assert [p["ok"] for p in profiles].count(False) == 1
    (error,) = cluster_report.errors
    assert error["path"].endswith("garbage.json") and error["error"].startswith("ProfileFormatError:")
    gloo = profiles[0]
    assert gloo["format"] == "kineto" and gloo["rank"] == 34 and gloo["world_size"] == 300
    ascend = profiles[2]
    assert ascend["format"] == "ascend-pt" and ascend["step_count"] == 1
    json.dumps(cluster_report.to_dict())      # everything shipped back is plain data


def test_latency_distribution_pools_every_step(cluster_report):
    steps = sorted(v for p in cluster_report.profiles if p["ok"] for v in p["step_latencies_ms"])
    assert cluster_report.latency["count"] == len(steps) == 1 + 1 + 1 + 3 * 3
    assert cluster_report.latency["max_ms"] == steps[-1]
    assert cluster_report.latency["p50_ms"] == steps[(len(steps) + 1) // 2 - 1]   # nearest rank


def test_issue_types_ranked_by_total_saving(cluster_report):
    totals = {}
    for p in cluster_report.profiles:
        for issue in p.get("issues", []):
            totals[issue["issue_type"]] = totals.get(issue["issue_type"], 0.0) + issue["estimated_saved_us"]
    ranked = [i["issue_type"] for i in cluster_report.top_issues]
    assert ranked == sorted(totals, key=lambda t: (-totals[t], t))
    assert cluster_report.top_issues[0]["estimated_saved_us"] == pytest.approx(max(totals.values()))


def test_rank_view_flags_the_stretched_rank(cluster_report):
    (group,) = [g for g in cluster_report.rank_groups if g["directory"].endswith("run")]
    assert group["world_size"] == 3
    assert group["report"]["stragglers"] == [1]
    assert group["report"]["slow_ranks"] == [1]


def test_command_line_local_cluster(inputs, tmp_path):
    out = tmp_path / "fleet.json"
    assert fleet.main(["fleet", "analyze", inputs[0], inputs[-1], "--workers", "1", "--json", "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["schema"] == "pypto.fleet/1" and len(document["errors"]) == 1
