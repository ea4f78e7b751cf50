"""Multi-rank analysis (pypto.ranks) on rank directories built from the real fixtures at test time.

The HTA NCCL trace is rank 0 of a 2-rank run; copies of it, renumbered through distributedInfo.rank,
make a 4-rank run, one copy with every time stretched by SLOW_FACTOR. Every expected figure is
derived here from the raw trace JSON.
"""

import gzip
import json
import os
import shutil

import pytest

from pypto import ranks

SLOW_FACTOR = 1.2
SLOW_RANK = 2
NCCL_TRACE = os.path.join("kineto", "hta_nccl_2rank_a100_2024", "nccl_data.json.gz")
ASCEND_RANK = os.path.join("ascend", "pta_level1_alexnet_cann8")


def _stretched(trace, factor):
    start = min(e["ts"] for e in trace["traceEvents"] if "ts" in e)
    for event in trace["traceEvents"]:
        if "ts" in event:
            event["ts"] = start + (event["ts"] - start) * factor
        if "dur" in event:
            event["dur"] = event["dur"] * factor
    return trace


@pytest.fixture(scope="module")
def raw_trace(fixtures):
    with gzip.open(os.path.join(fixtures, NCCL_TRACE), "rt") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def four_ranks(tmp_path_factory, raw_trace):
    directory = tmp_path_factory.mktemp("four_ranks")
    text = json.dumps(raw_trace)
    for rank in range(4):
        trace = json.loads(text)
        trace["distributedInfo"]["rank"] = rank
        if rank == SLOW_RANK:
            _stretched(trace, SLOW_FACTOR)
        with gzip.open(directory / f"worker{rank}.pt.trace.json.gz", "wt") as handle:
            json.dump(trace, handle)
    (directory / "notes.txt").write_text("not a profile")
    return directory


def _raw_steps(trace):
    """Per ProfilerStep: latency, communication (NCCL kernels inside), computing (union of other GPU work), in ns."""
    steps = sorted((e for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    gpu = [e for e in trace["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e.get("ph") == "X"]
    result = []
    for step in steps:
        begin, end = step["ts"], step["ts"] + step["dur"]
        inside = [e for e in gpu if e["ts"] >= begin and e["ts"] + e["dur"] <= end]
        communication = sum(e["dur"] for e in inside if "Collective name" in e.get("args", {}))
        intervals = sorted((e["ts"], e["ts"] + e["dur"]) for e in inside if "Collective name" not in e.get("args", {}))
        union, current = 0.0, None
        for lo, hi in intervals:
            if current is None or lo > current[1]:
                if current:
                    union += current[1] - current[0]
                current = [lo, hi]
            else:
                current[1] = max(current[1], hi)
        if current:
            union += current[1] - current[0]
        result.append({"latency": step["dur"] * 1e3, "communication": communication * 1e3, "computing": union * 1e3})
    return result


def test_discovery_takes_traces_and_skips_other_files(four_ranks):
    found = ranks.discover_ranks(str(four_ranks))
    assert [os.path.basename(p) for p in found] == [f"worker{r}.pt.trace.json.gz" for r in range(4)]


def test_rank_ids_come_from_distributed_info(four_ranks):
    report = ranks.analyze_ranks(str(four_ranks))
    assert sorted(r.rank for r in report.ranks) == [0, 1, 2, 3]
    assert {r.rank_source for r in report.ranks} == {"distributedInfo.rank"}
    assert {r.world_size for r in report.ranks} == {2}
    assert report.errors == []


def test_step_breakdown_matches_the_raw_trace(four_ranks, raw_trace):
    report = ranks.analyze_ranks(str(four_ranks))
    expected = _raw_steps(raw_trace)
    rank0 = next(r for r in report.ranks if r.rank == 0)
    assert len(rank0.steps) == len(expected) == 3
    for step, want in zip(rank0.steps, expected):
        assert step.latency_ns == pytest.approx(want["latency"], abs=2)
        assert step.communication_ns == pytest.approx(want["communication"], rel=1e-6, abs=len(expected) * 2)
        assert step.computing_ns == pytest.approx(want["computing"], rel=1e-4)
        assert step.free_ns <= step.latency_ns - max(step.computing_ns, step.communication_ns)


def test_slow_rank_and_straggler_flag_the_stretched_rank(four_ranks, raw_trace):
    report = ranks.analyze_ranks(str(four_ranks))
    expected = _raw_steps(raw_trace)
    n = len(expected)
    mean = {k: sum(s[k] for s in expected) / n for k in ("latency", "computing", "communication")}
    # three ranks at 1x, one at SLOW_FACTOR: mean step over ranks and spread of each part
    mean_step = mean["latency"] * (3 + SLOW_FACTOR) / 4
    by_dimension = {d.dimension: d for d in report.overall}
    for dimension in ("computing", "communication"):
        spread = mean[dimension] * (SLOW_FACTOR - 1)
        assert by_dimension[dimension].spread_ns == pytest.approx(spread, rel=1e-3)
        assert by_dimension[dimension].share_of_step == pytest.approx(spread / mean_step, rel=1e-3)
    free = by_dimension["free"]
    assert free.share_of_step > ranks.SLOW_RANK_SPREAD_THRESHOLD and free.flagged
    assert free.suspect_rank == SLOW_RANK
    assert report.slow_rank and SLOW_RANK in report.slow_ranks
    assert report.stragglers == [SLOW_RANK]
    assert report.median_step_ns == pytest.approx(mean["latency"], rel=1e-6)


def test_identical_ranks_are_not_slow(tmp_path, fixtures, raw_trace):
    for rank in range(2):
        trace = json.loads(json.dumps(raw_trace))
        trace["distributedInfo"]["rank"] = rank
        with gzip.open(tmp_path / f"r{rank}.json.gz", "wt") as handle:
            json.dump(trace, handle)
    report = ranks.analyze_ranks(str(tmp_path))
    assert not report.slow_rank and report.stragglers == []
    assert all(d.spread_ns == 0 for d in report.overall)


def test_collectives_match_the_nccl_kernel_arguments(four_ranks, raw_trace):
    report = ranks.analyze_ranks(str(four_ranks))
    nccl = [e for e in raw_trace["traceEvents"] if e.get("cat") == "kernel" and "Collective name" in e.get("args", {})]
    for collective in ("allreduce", "broadcast"):
        kernels = [e for e in nccl if e["args"]["Collective name"] == collective]
        time_ns = sum(e["dur"] for e in kernels) * 1e3
        size = sum(e["args"]["In msg nelems"] * ranks.DTYPE_BYTES[e["args"]["dtype"].lower()] for e in kernels)
        entry = next(c for c in report.collectives if c["collective"] == collective)
        assert entry["count"] == 4 * len(kernels)
        assert entry["bytes"] == 4 * size
        rank0 = entry["per_rank"]["0"]
        assert rank0["count"] == len(kernels)
        assert rank0["time_ns"] == pytest.approx(time_ns, abs=len(kernels))
        assert rank0["algorithm_bandwidth_gbps"] == pytest.approx(size / time_ns, rel=1e-6)
        if collective == "allreduce":   # nccl-tests bus bandwidth: 2 (n - 1) / n with n = Group size = 2
            assert rank0["bus_bandwidth_gbps"] == pytest.approx(size / time_ns * 2 * (2 - 1) / 2, rel=1e-6)
        slow = entry["per_rank"][str(SLOW_RANK)]
        assert slow["algorithm_bandwidth_gbps"] == pytest.approx(size / time_ns / SLOW_FACTOR, rel=1e-3)
        assert entry["max_time_rank"] == str(SLOW_RANK)
        # Kineto has no per-operation record across ranks: the stretched rank has the most time (named as the
        # one that waits longest, by its excess over the least), and the three identical ranks tie for the
        # least time, so no cause is named.
        assert entry["waits_longest_rank"] == str(SLOW_RANK) and entry["cause_basis"] == "least time"
        assert entry["cause_rank"] is None


def test_ascend_ranks_read_step_split_and_communication_json(tmp_path, fixtures):
    source = os.path.join(fixtures, ASCEND_RANK)
    for rank in range(2):
        shutil.copytree(source, tmp_path / f"node_rank{rank}_ascend_pt")
    with open(os.path.join(source, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")) as handle:
        header, row = [line.strip().split(",") for line in handle.readlines()[:2]]
    step_trace = dict(zip(header, map(float, row)))
    with open(os.path.join(source, "ASCEND_PROFILER_OUTPUT", "communication.json")) as handle:
        communication = json.load(handle)
    ops = {k: v for k, v in communication["step50"]["collective"].items() if k != "Total Op Info"}

    report = ranks.analyze_ranks(str(tmp_path))
    assert sorted(r.rank for r in report.ranks) == [0, 1]
    assert {r.rank_source for r in report.ranks} == {"name"}
    step = report.ranks[0].steps[0]
    # msprof's own split (µs) and the engine's agree within rounding
    assert step.computing_ns == pytest.approx(step_trace["Computing"] * 1e3, abs=100)
    assert step.communication_ns == pytest.approx(step_trace["Communication"] * 1e3, abs=100)
    assert step.free_ns == pytest.approx(step_trace["Free"] * 1e3, abs=100)
    allreduce = report.ranks[0].collectives[0]
    assert (allreduce.collective, allreduce.count) == ("allreduce", len(ops))
    assert allreduce.time_ns == pytest.approx(sum(o["Communication Time Info"]["Elapse Time(ms)"] for o in ops.values()) * 1e6, abs=10)
    hccs = next(t for t in report.ranks[0].transports if t.transport == "HCCS")
    size = sum(o["Communication Bandwidth Info"]["HCCS"]["Transit Size(MB)"] for o in ops.values())
    time_ms = sum(o["Communication Bandwidth Info"]["HCCS"]["Transit Time(ms)"] for o in ops.values())
    assert hccs.transit_size_mb == pytest.approx(size)
    assert hccs.bandwidth_gbps == pytest.approx(size / time_ms)   # MB/ms = GB/s
    assert report.ranks[0].wait_time_ms == pytest.approx(sum(o["Communication Time Info"]["Wait Time(ms)"] for o in ops.values()))
    assert not report.slow_rank


def test_communication_matrix_links(tmp_path, fixtures):
    rank_dir = tmp_path / "rank0_ascend_pt"
    shutil.copytree(os.path.join(fixtures, ASCEND_RANK), rank_dir)
    matrix = {"step50": {"p2p": {}, "collective": {
        "allreduce-top1@1": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 30.0, "Transit Time(ms)": 2.0,
                                     "Bandwidth(GB/s)": 15.0, "Op Name": "hcom_allReduce_1"},
                             "0-0": {"Transport Type": "LOCAL", "Transit Size(MB)": 10.0, "Transit Time(ms)": 0.5,
                                     "Bandwidth(GB/s)": 20.0, "Op Name": "hcom_allReduce_1"}},
        "allreduce-top2@1": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 10.0, "Transit Time(ms)": 2.0,
                                     "Bandwidth(GB/s)": 5.0, "Op Name": "hcom_allReduce_2"}}}}}
    (rank_dir / "ASCEND_PROFILER_OUTPUT" / "communication_matrix.json").write_text(json.dumps(matrix))
    analysis = ranks.analyze_rank(str(rank_dir))
    links = {link.link: link for link in analysis.links}
    assert links["0-1"].transport == "HCCS" and links["0-1"].operations == 2
    assert links["0-1"].transit_size_mb == 40.0 and links["0-1"].bandwidth_gbps == pytest.approx(10.0)
    assert links["0-0"].bandwidth_gbps == pytest.approx(20.0)


def test_bad_rank_is_an_error_record_and_duplicates_are_refused(tmp_path, fixtures):
    shutil.copy(os.path.join(fixtures, NCCL_TRACE), tmp_path / "a.json.gz")
    (tmp_path / "b.json").write_text("{not json")
    report = ranks.analyze_ranks(str(tmp_path))
    assert len(report.errors) == 1 and report.errors[0]["path"].endswith("b.json")
    assert "Error" in report.errors[0]["error"]
    shutil.copy(os.path.join(fixtures, NCCL_TRACE), tmp_path / "c.json.gz")
    import pypto
    with pytest.raises(pypto.InvalidArgumentError, match="rank 0 appears twice"):
        ranks.analyze_ranks(str(tmp_path))


def test_round_trip_and_rendering(four_ranks):
    report = ranks.analyze_ranks(str(four_ranks))
    again = ranks.compare_ranks(ranks.RankAnalysis.from_dict(r.to_dict()) for r in report.ranks)
    assert again.to_dict() == report.to_dict()
    document = json.loads(report.to_json())
    assert document["schema"] == "pypto.ranks/1" and document["stragglers"] == [SLOW_RANK]
    markdown = report.to_markdown()
    assert "Slow rank(s): 2." in markdown and "| allreduce |" in markdown


def test_command_line(four_ranks, tmp_path, capsys):
    out = tmp_path / "ranks.json"
    assert ranks.main(["ranks", str(four_ranks), "--json", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["slow_ranks"] == [SLOW_RANK]
    assert ranks.main([str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err


PP2DP2 = os.path.join("ascend", "pta_level2_llm_pp2dp2_ranks1_3")


def _pp2dp2_raw(fixtures):
    """Per rank: the step_trace_time.csv row and the communication.json operations (Total Op Info left out)."""
    import csv
    raw = {}
    for rank in (1, 3):
        output = os.path.join(fixtures, PP2DP2, f"rank_{rank}_ascend_pt", "ASCEND_PROFILER_OUTPUT")
        with open(os.path.join(output, "step_trace_time.csv"), newline="") as handle:
            (row,) = list(csv.DictReader(handle))
        with open(os.path.join(output, "communication.json")) as handle:
            communication = json.load(handle)
        ops = {(step, name): op["Communication Time Info"] for step, kinds in communication.items()
               for kind in kinds.values() for name, op in kind.items() if name != "Total Op Info"}
        raw[rank] = ({k: float(v) for k, v in row.items()}, ops)
    return raw


def test_pp2dp2_step_split_comes_from_step_trace_time(fixtures):
    # step_trace_time.csv, one row per rank (µs; the profile has no kernel_details.csv, so these are the only
    # figures the engine has: its step `breakdown`):
    #   rank 1 (Device_id 1), Step 13: Computing 230903.72, Communication(Not Overlapped) 441708.38,
    #          Overlapped 0, Communication 441708.38, Free 136819.56  -> step 809431.66 (= the three summed)
    #   rank 3 (Device_id 5), Step 13: Computing 401131.70, Communication 261498.44, Free 147520.20 -> 810150.34
    # Cross-check with communication.json: the "Total Op Info" Elapse Time(ms) of p2p + collective is
    # 322.981 + 118.728 = 441.709 ms (rank 1) and 74.987 + 186.512 = 261.499 ms (rank 3).
    # Before the fix the report read device tasks only and printed 0.000 ms for both parts on both ranks.
    raw = _pp2dp2_raw(fixtures)
    report = ranks.analyze_ranks(os.path.join(fixtures, PP2DP2))
    assert report.errors == [] and sorted(r.rank for r in report.ranks) == [1, 3]
    for analysis in report.ranks:
        row = raw[analysis.rank][0]
        (step,) = analysis.steps
        assert step.source == ranks.SOURCE_STEP_TRACE and step.number == int(row["Step"]) == 13
        assert step.computing_ns == pytest.approx(row["Computing"] * 1e3, abs=1) and step.computing_ns > 0
        assert step.communication_ns == pytest.approx(row["Communication"] * 1e3, abs=1)
        assert step.free_ns == pytest.approx(row["Free"] * 1e3, abs=1)
    assert report.ranks[0].steps[0].computing_ns == pytest.approx(230_903_720, abs=1)
    assert report.ranks[1].steps[0].computing_ns == pytest.approx(401_131_700, abs=1)
    # Computing spread 401.132 - 230.904 = 170.228 ms over the mean step (809.432 + 810.150) / 2 = 809.791 ms:
    # 21 % > 5 %, the rank with the most computing is rank 3.
    computing = next(d for d in report.overall if d.dimension == "computing")
    assert computing.flagged and computing.suspect_rank == 3
    assert computing.share_of_step == pytest.approx(170.228 / 809.791, rel=1e-4)
    markdown = report.to_markdown()
    assert "| 1 | rank_1_ascend_pt | ascend-pt | 1 | 809.432 | 230.904 | 441.708 | 136.820 |" in markdown
    assert "| 3 | rank_3_ascend_pt | ascend-pt | 1 | 810.150 | 401.132 | 261.498 | 147.520 |" in markdown


def test_pp2dp2_sendrecv_names_the_late_rank_as_cause_not_the_waiting_one(fixtures):
    # communication.json, p2p, step13, the three hcom_batchSendRecv__764_N_1@3985310499963036764 found on both
    # ranks (Start Timestamp(us) mod 1e9, Elapse Time(ms), Wait Time(ms)):
    #   _3_1: rank 1 start 877150725.0, 0.435, wait 0.403 | rank 3 start 877077439.0, 73.751, wait 0
    #   _4_1: rank 1 start 877227008.8, 164.097, wait 163.648 | rank 3 start 877390277.8, 0.802, wait 0.405
    #   _5_1: rank 1 start 877471435.5, 158.449, wait 0 | rank 3 start 877629424.2, 0.434, wait 0.403
    # Each operation ends on both ranks within 30 µs (e.g. _4_1: 877391105.8 vs 877391079.6), so the clocks
    # agree and the arrival order holds: rank 3 arrives last at _4_1 (rank 1 waits 877390277.8 - 877227008.8
    # = 163.269 ms) and _5_1 (rank 1 waits 157.989 ms); rank 1 arrives last at _3_1 (rank 3 waits 73.286 ms).
    # Rank 1 waits 321.258 ms in all, caused by rank 3 (the last pipeline stage, Computing 401.1 ms against
    # 230.9 ms); rank 3 waits 73.286 ms. Rank 1 has the most sendrecv time (322.981 ms against 74.987 ms):
    # it is the one waiting, not the slow one. (The profiler's Wait Time alone would miss _5_1, where rank 1's
    # 158 ms wait is booked as Idle Time, and the _3_1 wait of rank 3, booked as Idle too.)
    raw = _pp2dp2_raw(fixtures)
    shared = [key for key in raw[1][1] if key in raw[3][1] and "batchSendRecv" in key[1]]
    assert len(shared) == 3
    waits = {1: 0.0, 3: 0.0}
    for key in shared:
        ops = {rank: raw[rank][1][key] for rank in (1, 3)}
        ends = [op["Start Timestamp(us)"] + op["Elapse Time(ms)"] * 1e3 for op in ops.values()]
        assert abs(ends[0] - ends[1]) < 30
        late = max(ops, key=lambda r: ops[r]["Start Timestamp(us)"])
        early = 4 - late   # the other of 1 and 3
        waits[early] += (ops[late]["Start Timestamp(us)"] - ops[early]["Start Timestamp(us)"]) / 1e3
    assert waits[1] == pytest.approx(321.258, abs=1e-3) and waits[3] == pytest.approx(73.286, abs=1e-3)

    report = ranks.analyze_ranks(os.path.join(fixtures, PP2DP2))
    sendrecv = next(c for c in report.collectives if c["collective"] == "sendrecv")
    assert sendrecv["matched_operations"] == 3 and sendrecv["cause_basis"] == "arrival"
    assert sendrecv["cause_rank"] == "3"
    assert sendrecv["waits_longest_rank"] == "1"
    assert sendrecv["wait_ns_by_rank"]["1"] == pytest.approx(waits[1] * 1e6, abs=1)
    assert sendrecv["wait_ns_by_rank"]["3"] == pytest.approx(waits[3] * 1e6, abs=1)
    assert sendrecv["caused_wait_ns_by_rank"]["3"] == pytest.approx(waits[1] * 1e6, abs=1)
    assert sendrecv["max_time_rank"] == "1"   # kept for compatibility: the most time = the waiting rank
    markdown = report.to_markdown()
    assert "slowest" not in markdown.lower()
    assert "| waits longest (wait ms) | cause (arrives last) |" in markdown
    sendrecv_row = next(line for line in markdown.splitlines() if line.startswith("| sendrecv |"))
    assert sendrecv_row.endswith("| 1 (321.258) | 3 |")
    # The data-parallel reduce-scatter runs in different groups on the two ranks (ranks 0-1 and 2-3): no
    # operation in common, so no waiting rank and no cause is claimed.
    reducescatter = next(c for c in report.collectives if c["collective"] == "reducescatter")
    assert reducescatter["cause_rank"] is None and reducescatter["waits_longest_rank"] is None
