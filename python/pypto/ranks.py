"""Multi-rank analysis: one profile per rank, analysed in parallel, then compared across ranks.

    report = pypto.ranks.analyze_ranks("run_dir/")      # *_ascend_pt dirs or Kineto traces, one per rank
    print(report.to_markdown())                          # also to_json(), to_dict()

Per rank and step: Computing, Communication and Free, the split of msprof-analyze's step_trace_time
(the profiler's own figures when the engine imported them, else computed from the device tasks).
Across ranks: the slow-rank rule (max - min of each part over the mean step time), stragglers
(median + k * MAD of the step latency) and communication per collective type (count, time, bytes and
bandwidth from the NCCL kernel arguments; per transport and per link from Ascend communication.json /
communication_matrix.json), with the rank that waits longest inside each collective type and the
rank that causes the wait (arrives last). Command line: `pypto ranks DIR [--json | --markdown] [--out FILE]`
(default: aligned plain-text tables, `to_text()`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor

from ._native import engine as _engine
from ._progress import Progress
from ._text import (Column, TextTable, format_bytes, format_duration, format_percent, markdown_cell, right,
                    terminal_safe)
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

# -- thresholds (every one named, with the source of its default) -------------------------------

#: Slow rank: (max - min) of Computing, Communication or Free across ranks, as a share of the mean
#: step time, above which a rank is slow. msprof-analyze advisor `cluster/slow_rank_analyzer.py`
#: (docs: "> 5 % max-min spread => slow rank").
SLOW_RANK_SPREAD_THRESHOLD = 0.05

#: Straggler: a rank whose mean step latency is above median + k * MAD (MAD scaled to a standard
#: deviation). k = 3 mirrors the mean - 3 sigma vote of msprof-analyze's `slow_rank` recipe, made
#: robust to the straggler itself by using the median and MAD.
STRAGGLER_MAD_FACTOR = 3.0

#: A straggler is also at least this much slower than the median rank (share of the median), so
#: that ranks within noise are not flagged when the MAD is 0 (identical ranks). Same 5 % as the
#: slow-rank rule.
STRAGGLER_MIN_EXCESS = 0.05

#: Ascend communication.json: the same operation ends on every rank within microseconds of the others
#: (the fixture pta_level2_llm_pp2dp2_ranks1_3: <= 30 us), so when every rank's Start Timestamp(us) +
#: Elapse Time(ms) agree within this many ms the ranks' clocks are comparable and the arrival order
#: (start timestamps) says who waited for whom; otherwise the profiler's per-rank Wait Time(ms) is used.
CLOCK_AGREEMENT_MS = 1.0

#: Bytes per element of the NCCL kernel argument `dtype` (PyTorch's names, as Kineto writes them).
DTYPE_BYTES = {
    "float": 4, "float32": 4, "double": 8, "float64": 8, "half": 2, "float16": 2, "bfloat16": 2,
    "bf16": 2, "int": 4, "int32": 4, "long": 8, "int64": 8, "short": 2, "int16": 2, "char": 1,
    "int8": 1, "byte": 1, "uint8": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
}

#: Core types / task kinds that are communication (engine kinds: Kineto `communication`, Ascend
#: `HCCL` up to CANN 8.0 and `COMMUNICATION` from CANN 8.3.RC1).
COMMUNICATION_CORE_TYPES = frozenset({"communication", "hccl"})

#: Bus-bandwidth factor per collective for n ranks (nccl-tests doc/PERFORMANCE.md):
#: busbw = algbw * factor(n).
BUS_BANDWIDTH_FACTOR = {
    "allreduce": lambda n: 2.0 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "send": lambda n: 1.0,
    "recv": lambda n: 1.0,
}

_COLLECTIVE_NAMES = ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce",
                     "sendrecv", "send", "recv", "barrier", "scatter", "gather")
_RANK_IN_NAME = re.compile(r"rank[_\-.]?(\d+)", re.IGNORECASE)
_PROFILER_INFO = re.compile(r"profiler_info_(\d+)\.json$")
_TRACE_SUFFIXES = (".json", ".json.gz", ".db")
_ASCEND_OUTPUT = "ASCEND_PROFILER_OUTPUT"
_ASCEND_TOTAL_OP = "Total Op Info"      # communication.json: the sum of the step's operations


# -- records ----------------------------------------------------------------------------------

#: StepBreakdown.source values.
SOURCE_STEP_TRACE = "step_trace_time"     # the profiler's breakdown of the step, as the engine imported it
SOURCE_DEVICE_TASKS = "device tasks"      # busy time of the device tasks the engine imported
SOURCE_NONE = "none"                      # neither: computing and communication unknown (shown as "-")


@dataclass
class StepBreakdown:
    """One step of one rank, in ns: msprof-analyze's Computing / Communication / Free split."""
    number: int
    latency_ns: int
    computing_ns: int
    communication_ns: int
    free_ns: int
    source: str = ""                      # SOURCE_STEP_TRACE, SOURCE_DEVICE_TASKS or SOURCE_NONE


@dataclass
class CollectiveOp:
    """One Ascend communication operation of one rank (communication.json / analysis.db CommAnalyzerTime),
    kept to match the same operation across ranks: who waited, who arrived last."""
    step: str
    name: str                             # hccl op name @ group: the same on every rank of the group
    collective: str
    elapse_ms: float
    wait_ms: float
    transit_ms: float
    start_us: Optional[float] = None      # Start Timestamp(us); None when the source has none


@dataclass
class CollectiveStats:
    """Communication of one collective type on one rank."""
    collective: str
    count: int = 0
    time_ns: int = 0
    bytes: Optional[int] = None          # message bytes (NCCL `In msg nelems` x dtype size), None unknown
    group_size: Optional[int] = None
    algorithm_bandwidth_gbps: Optional[float] = None   # bytes / time
    bus_bandwidth_gbps: Optional[float] = None         # algbw x nccl-tests bus factor


@dataclass
class LinkStats:
    """Ascend: one transport (communication.json) or one src-dst link (communication_matrix.json)."""
    link: str                            # transport name (HCCS, RDMA, …) or "src-dst"
    transport: str
    transit_size_mb: float
    transit_time_ms: float
    bandwidth_gbps: float                # transit size / transit time
    operations: int = 0


@dataclass
class RankAnalysis:
    """What one rank's profile says; `error` set (and the rest empty) when it could not be read."""
    rank: Optional[int]
    path: str
    format: str = ""
    rank_source: str = ""
    world_size: Optional[int] = None
    steps: List[StepBreakdown] = field(default_factory=list)
    collectives: List[CollectiveStats] = field(default_factory=list)
    transports: List[LinkStats] = field(default_factory=list)
    links: List[LinkStats] = field(default_factory=list)
    wait_time_ms: Optional[float] = None           # Ascend communication.json, summed over ops
    operations: List[CollectiveOp] = field(default_factory=list)   # Ascend, per communication operation
    error: Optional[str] = None

    @property
    def mean_step_ns(self) -> Optional[float]:
        return statistics.fmean(s.latency_ns for s in self.steps) if self.steps else None

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: Dict[str, Any]) -> "RankAnalysis":
        raw = dict(raw)
        raw["steps"] = [StepBreakdown(**s) for s in raw.get("steps", [])]
        raw["collectives"] = [CollectiveStats(**c) for c in raw.get("collectives", [])]
        raw["transports"] = [LinkStats(**t) for t in raw.get("transports", [])]
        raw["links"] = [LinkStats(**t) for t in raw.get("links", [])]
        raw["operations"] = [CollectiveOp(**o) for o in raw.get("operations", [])]
        return cls(**raw)


@dataclass
class DimensionSpread:
    """Spread of one part of the step (computing / communication / free) across ranks."""
    dimension: str
    min_ns: float
    max_ns: float
    spread_ns: float
    share_of_step: float               # spread / mean step time
    flagged: bool                      # share_of_step > SLOW_RANK_SPREAD_THRESHOLD
    suspect_rank: Optional[int]        # computing, free: the rank with the most; communication: the least
    reason: str = ""


@dataclass
class StepComparison:
    """One aligned step across ranks."""
    step: int                          # step number (or position when ranks number steps differently)
    mean_step_ns: float
    per_rank: Dict[int, StepBreakdown]
    dimensions: List[DimensionSpread]


@dataclass
class RanksReport:
    ranks: List[RankAnalysis]
    overall: List[DimensionSpread]      # over the per-rank means of the aligned steps
    steps: List[StepComparison]
    slow_rank: bool
    slow_ranks: List[int]
    stragglers: List[int]
    straggler_threshold_ns: Optional[float]
    median_step_ns: Optional[float]
    collectives: List[Dict[str, Any]]   # per collective type, per rank and totals
    errors: List[Dict[str, str]]
    thresholds: Dict[str, float] = field(default_factory=lambda: {
        "slow_rank_spread_threshold": SLOW_RANK_SPREAD_THRESHOLD,
        "straggler_mad_factor": STRAGGLER_MAD_FACTOR,
        "straggler_min_excess": STRAGGLER_MIN_EXCESS,
    })

    def to_dict(self) -> Dict[str, Any]:
        doc = dataclasses.asdict(self)
        doc["schema"] = "pypto.ranks/1"
        for step in doc["steps"]:
            step["per_rank"] = {str(k): v for k, v in step["per_rank"].items()}
        return doc

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_markdown(self) -> str:
        return render_markdown(self)

    def to_text(self) -> str:
        """Aligned plain-text tables, what `pypto ranks` prints by default."""
        return render_text(self)


# -- discovery --------------------------------------------------------------------------------

def _is_ascend_rank_dir(path: str) -> bool:
    if path.rstrip(os.sep).endswith("_ascend_pt"):
        return True
    try:
        names = os.listdir(path)
    except OSError:
        return False
    return _ASCEND_OUTPUT in names or any(_PROFILER_INFO.match(n) for n in names)


def discover_ranks(directory: str) -> List[str]:
    """Profiles in `directory`, one per rank: `*_ascend_pt` (or Ascend output) directories,
    Kineto trace files (`*.json`, `*.json.gz`) and pypto saved profiles (`*.db`); sorted by name."""
    if not os.path.isdir(directory):
        from .errors import ProfileNotFoundError
        raise ProfileNotFoundError(f"{directory}: not a directory (expected one profile per rank inside)")
    found = []
    for name in sorted(os.listdir(directory)):
        if name.startswith("."):
            continue
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            if _is_ascend_rank_dir(path) or _RANK_IN_NAME.search(name):
                found.append(path)
        elif name.endswith(_TRACE_SUFFIXES):
            found.append(path)
    if not found:
        from .errors import ProfileNotFoundError
        raise ProfileNotFoundError(f"{directory}: no rank profile found (looked for *_ascend_pt directories, "
                                   "*.json / *.json.gz traces and *.db saved profiles)")
    return found


def _rank_from_path(path: str) -> Tuple[Optional[int], str]:
    if os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            match = _PROFILER_INFO.match(name)
            if match:
                return int(match.group(1)), name
    match = _RANK_IN_NAME.search(os.path.basename(path.rstrip(os.sep)))
    if match:
        return int(match.group(1)), "name"
    return None, ""


# -- one rank ---------------------------------------------------------------------------------

def _collective_type(name: str) -> str:
    lowered = re.sub(r"[^a-z]", "", name.lower())
    for collective in _COLLECTIVE_NAMES:
        if collective in lowered:
            return collective
    return "other"


def _profiler_breakdown(summary: Dict[str, Any], number: Optional[int]) -> Optional[Dict[str, int]]:
    """The profiler's Computing / Communication / Free of step `number` (the engine's step `breakdown`,
    Ascend step_trace_time.csv or analysis.db StepTraceTime, docs/json-schema.md), None when it has none.
    Several rows (one per device): the one with the most computing."""
    rows = [s.get("breakdown") for s in summary.get("steps", []) if s.get("number") == number]
    rows = [b for b in rows if b and "computing" in b and "free" in b
            and ("communication" in b or "communication_not_overlapped" in b)]
    return max(rows, key=lambda b: b["computing"]) if rows else None


def _step_breakdowns(graph: Any) -> List[StepBreakdown]:
    steps = graph.steps()
    selections: List[Tuple[Optional[int], int]] = [(s["number"], s["latency_ns"]) for s in steps]
    if not selections:
        selections = [(None, 0)]
    result = []
    for number, latency_ns in selections:
        summary = graph.summary(step=number)
        if number is None:
            latency_ns = summary["analysis_window"]["duration_ns"]
        step_number = number if number is not None else -1
        breakdown = _profiler_breakdown(summary, number) if number is not None else None
        if breakdown is not None:
            # The profiler's own split (msprof-analyze's Computing, Communication, Free): the reference the
            # device-task figures below reproduce; the only figures when the profile has no task table
            # (step_trace_time.csv + communication.json without kernel_details.csv).
            communication_ns = breakdown.get("communication")
            if communication_ns is None:
                communication_ns = breakdown["communication_not_overlapped"] + breakdown.get("overlapped", 0)
            result.append(StepBreakdown(step_number, latency_ns, int(breakdown["computing"]), int(communication_ns),
                                        int(breakdown["free"]), SOURCE_STEP_TRACE))
            continue
        devices = summary["utilization"]["devices"]
        if not devices:
            result.append(StepBreakdown(step_number, latency_ns, 0, 0, latency_ns, SOURCE_NONE))
            continue
        device = max(devices, key=lambda d: d["busy_ns"])
        busy_ns = device["busy_ns"]
        communication_ns = computing_ns = 0
        for core in summary["utilization"]["core_types"]:
            if core["device"] != device["device"]:
                continue
            if core["core_type"].lower() in COMMUNICATION_CORE_TYPES:
                communication_ns += core["busy_ns"]
            else:
                computing_ns += core["busy_ns"]
        result.append(StepBreakdown(number=step_number, latency_ns=latency_ns,
                                    computing_ns=min(computing_ns, busy_ns), communication_ns=communication_ns,
                                    free_ns=max(0, latency_ns - busy_ns), source=SOURCE_DEVICE_TASKS))
    return result


def _bandwidth(stats: CollectiveStats) -> None:
    if stats.bytes and stats.time_ns > 0:
        stats.algorithm_bandwidth_gbps = stats.bytes / stats.time_ns   # bytes/ns = GB/s
        factor = BUS_BANDWIDTH_FACTOR.get(stats.collective)
        if factor and stats.group_size and stats.group_size > 0:
            stats.bus_bandwidth_gbps = stats.algorithm_bandwidth_gbps * factor(stats.group_size)


def _kineto_collectives(graph: Any) -> List[CollectiveStats]:
    """Communication tasks with their NCCL arguments, from the engine's device-task and attribute columns."""
    import numpy as np
    loaded = graph._loaded
    tasks = loaded.device_tasks()
    communication = list(tasks["kind_names"]).index("communication")
    rows = np.nonzero(tasks["kind"] == communication)[0].tolist()
    if not rows:
        return []
    name_ids = sorted({int(tasks["name"][r]) for r in rows})
    names = dict(zip(name_ids, loaded.strings(name_ids)))
    attributes = loaded.attributes("device_task")
    picked = np.nonzero(np.isin(attributes["owner"], rows))[0].tolist()
    ids = sorted({int(attributes["key"][i]) for i in picked} | {int(attributes["text"][i]) for i in picked})
    text = dict(zip(ids, loaded.strings(ids)))
    args: Dict[int, Dict[str, Any]] = {}
    for i in picked:
        number = float(attributes["number"][i])
        value: Any = text[int(attributes["text"][i])] if number != number else number  # NaN: not numeric
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        args.setdefault(int(attributes["owner"][i]), {})[text[int(attributes["key"][i])]] = value
    by_type: Dict[str, CollectiveStats] = {}
    for row in rows:
        task_args = args.get(row, {})
        collective = _collective_type(str(task_args.get("Collective name") or names[int(tasks["name"][row])]))
        stats = by_type.setdefault(collective, CollectiveStats(collective))
        stats.count += 1
        stats.time_ns += int(tasks["dur"][row])
        elements = task_args.get("In msg nelems")
        dtype = str(task_args.get("dtype", "")).lower()
        if isinstance(elements, (int, float)) and dtype in DTYPE_BYTES:
            stats.bytes = (stats.bytes or 0) + int(elements) * DTYPE_BYTES[dtype]
        group_size = task_args.get("Group size")
        if isinstance(group_size, (int, float)):
            stats.group_size = int(group_size)
    for stats in by_type.values():
        _bandwidth(stats)
    return sorted(by_type.values(), key=lambda s: -s.time_ns)


def _device_attributes(graph: Any, prefix: str) -> List[Tuple[str, str, float]]:
    """(key, text, number) of the device attributes whose key starts with `prefix` (the engine keeps Ascend
    communication.json / communication_matrix.json fields so: docs/formats/ascend.md)."""
    loaded = graph._loaded
    table = loaded.attributes("device", prefix)
    ids = sorted({int(i) for i in table["key"]} | {int(i) for i in table["text"]})
    text = dict(zip(ids, loaded.strings(ids)))
    return [(text[int(k)], text[int(t)], float(n)) for k, t, n in zip(table["key"], table["text"], table["number"])]


def _number(value: float) -> float:
    return 0.0 if value != value else value  # NaN (not numeric) counts as 0, as a missing field


_TRANSPORT_FIELDS = (" Transit Size(MB)", " Transit Time(ms)")


def _ascend_communication(graph: Any, analysis: RankAnalysis) -> None:
    """Per collective, per transport and per link, from the communication.json and communication_matrix.json
    fields the engine read with the profile: "communication/<step>/<op>/<field>" and
    "communication_matrix/<step>/<op>/<src-dst>/<field>"."""
    ops: Dict[Tuple[str, str], Dict[str, float]] = {}
    for key, _, number in _device_attributes(graph, "communication/"):
        parts = key.split("/", 3)   # a field may hold a slash ("Bandwidth(GB/s)"), step and op names do not
        if len(parts) == 4 and parts[2] != _ASCEND_TOTAL_OP:
            ops.setdefault((parts[1], parts[2]), {})[parts[3]] = _number(number)
    if ops:
        by_type: Dict[str, CollectiveStats] = {}
        transports: Dict[str, LinkStats] = {}
        wait_ms = 0.0
        operations = []
        for (step_name, op_name), fields in ops.items():
            collective = _collective_type(op_name.split("@")[0])
            start_us = fields.get("Start Timestamp(us)")
            operations.append(CollectiveOp(step_name, op_name, collective, fields.get("Elapse Time(ms)", 0.0),
                                           fields.get("Wait Time(ms)", 0.0), fields.get("Transit Time(ms)", 0.0),
                                           start_us if start_us else None))
            stats = by_type.setdefault(collective, CollectiveStats(collective))
            stats.count += 1
            stats.time_ns += int(round(fields.get("Elapse Time(ms)", 0.0) * 1e6))
            wait_ms += fields.get("Wait Time(ms)", 0.0)
            size_by_transport: Dict[str, float] = {}
            for field, value in fields.items():
                if not field.endswith(_TRANSPORT_FIELDS[0]):
                    continue
                transport = field[:-len(_TRANSPORT_FIELDS[0])]
                time_ms = fields.get(transport + _TRANSPORT_FIELDS[1], 0.0)
                if value <= 0 and time_ms <= 0:
                    continue
                size_by_transport[transport] = value
                link = transports.setdefault(transport, LinkStats(transport, transport, 0.0, 0.0, 0.0))
                link.transit_size_mb += value
                link.transit_time_ms += time_ms
                link.operations += 1
            if size_by_transport:
                # SDMA is the on-chip copy engine carrying the HCCS / PCIE / SIO traffic: count it once.
                on_node = max(size_by_transport.get("SDMA", 0.0),
                              sum(size_by_transport.get(t, 0.0) for t in ("HCCS", "PCIE", "SIO")))
                stats.bytes = (stats.bytes or 0) + int(round((on_node + size_by_transport.get("RDMA", 0.0)) * 1e6))
        for stats in by_type.values():
            _bandwidth(stats)
        for link in transports.values():
            link.bandwidth_gbps = link.transit_size_mb / 1e3 / (link.transit_time_ms / 1e3) if link.transit_time_ms else 0.0
        analysis.collectives = sorted(by_type.values(), key=lambda s: -s.time_ns)
        analysis.transports = sorted(transports.values(), key=lambda t: t.link)
        analysis.wait_time_ms = wait_ms
        analysis.operations = sorted(operations, key=lambda o: (o.start_us is None, o.start_us or 0.0, o.step, o.name))
    entries: Dict[Tuple[str, str, str], Dict[str, Tuple[str, float]]] = {}
    for key, text, number in _device_attributes(graph, "communication_matrix/"):
        parts = key.split("/", 4)
        if len(parts) == 5:
            entries.setdefault((parts[1], parts[2], parts[3]), {})[parts[4]] = (text, _number(number))
    if entries:
        links: Dict[str, LinkStats] = {}
        for (_, _, link_name), fields in entries.items():
            link = links.setdefault(link_name, LinkStats(link_name, fields.get("Transport Type", ("", 0.0))[0],
                                                         0.0, 0.0, 0.0))
            link.transit_size_mb += fields.get("Transit Size(MB)", ("", 0.0))[1]
            link.transit_time_ms += fields.get("Transit Time(ms)", ("", 0.0))[1]
            link.operations += 1
        for link in links.values():
            link.bandwidth_gbps = link.transit_size_mb / 1e3 / (link.transit_time_ms / 1e3) if link.transit_time_ms else 0.0
        analysis.links = sorted(links.values(), key=lambda l: l.link)


def analyze_rank(path: str, graph: Any = None) -> RankAnalysis:
    """Analyse one rank's profile (loads it with the engine unless `graph` is given).
    Errors are returned in `.error` (the exception type and message), not raised."""
    from .errors import PyptoError
    from .graph import load_profile
    rank, rank_source = _rank_from_path(path)
    analysis = RankAnalysis(rank=rank, path=str(path), rank_source=rank_source)
    try:
        graph = graph if graph is not None else load_profile(path)
        metadata = graph.metadata
        analysis.format = graph.format
        if metadata.get("rank", "").lstrip("-").isdigit():
            analysis.rank, analysis.rank_source = int(metadata["rank"]), "distributedInfo.rank"
        if metadata.get("world_size", "").isdigit():
            analysis.world_size = int(metadata["world_size"])
        analysis.steps = _step_breakdowns(graph)
        _ascend_communication(graph, analysis)
        if not analysis.collectives:
            analysis.collectives = _kineto_collectives(graph)
    except (PyptoError, OSError, ValueError) as error:
        analysis.error = f"{type(error).__name__}: {error}"
    return analysis


# -- across ranks -----------------------------------------------------------------------------

_DIMENSIONS = ("computing", "communication", "free")


def _spreads(per_rank: Dict[int, Dict[str, float]], mean_step_ns: float) -> List[DimensionSpread]:
    result = []
    for dimension in _DIMENSIONS:
        values = {rank: parts[dimension] for rank, parts in per_rank.items()}
        low, high = min(values.values()), max(values.values())
        spread = high - low
        share = spread / mean_step_ns if mean_step_ns > 0 else 0.0
        flagged = share > SLOW_RANK_SPREAD_THRESHOLD
        if dimension == "communication":
            suspect = min(values, key=lambda r: (values[r], r))
            reason = "least communication: the other ranks wait for it inside the collectives"
        else:
            suspect = max(values, key=lambda r: (values[r], -r))
            reason = f"most {dimension} time"
        result.append(DimensionSpread(dimension, low, high, spread, share, flagged,
                                      suspect if flagged else None, reason if flagged else ""))
    return result


def _align_steps(ranks: Sequence[RankAnalysis]) -> List[Tuple[int, Dict[int, StepBreakdown]]]:
    common = set.intersection(*(set(s.number for s in r.steps) for r in ranks)) if ranks else set()
    if common:
        return [(number, {r.rank: next(s for s in r.steps if s.number == number) for r in ranks})
                for number in sorted(common)]
    count = min(len(r.steps) for r in ranks) if ranks else 0
    return [(index, {r.rank: r.steps[index] for r in ranks}) for index in range(count)]


def robust_upper_limit(values: Iterable[float], sigmas: float, min_excess: float) -> Tuple[float, float]:
    """(median, limit): limit = median + `sigmas` robust sigmas (the engine's MedianAndRobustSigma: 1.4826 x
    the median absolute deviation, as analyze's outlier steps), and at least median x (1 + `min_excess`)
    so that values within noise are not flagged when the deviation is 0."""
    spread = _engine.robust_spread([float(v) for v in values])
    median = spread["median"]
    return median, max(median + sigmas * spread["sigma"], median * (1.0 + min_excess))


def _stragglers(mean_steps: Dict[int, float]) -> Tuple[List[int], Optional[float], Optional[float]]:
    if len(mean_steps) < 2:
        return [], None, None
    median, threshold = robust_upper_limit(mean_steps.values(), STRAGGLER_MAD_FACTOR, STRAGGLER_MIN_EXCESS)
    return sorted(r for r, v in mean_steps.items() if v > threshold), median, threshold


def _operation_waits(ranks: Sequence[RankAnalysis]) -> Dict[str, Dict[str, Any]]:
    """Per collective type, from the Ascend operations found on two or more ranks (same step and
    `op@group` name): how long each rank waited inside them and how much waiting each rank caused.

    The rank that arrives last at an operation is the cause: the others entered earlier and wait for it,
    so the rank with the longest time inside a collective is the one WAITING, not the slow one. Arrival:
    Start Timestamp(us) when the ranks' clocks agree (the operation ends at the same time on every rank,
    within CLOCK_AGREEMENT_MS); a rank's wait is then min(its elapse, last arrival - its arrival).
    Otherwise the profiler's Wait Time(ms) per rank, the cause being the rank that waited least."""
    by_operation: Dict[Tuple[str, str], Dict[int, CollectiveOp]] = {}
    for rank in ranks:
        for op in rank.operations:
            by_operation.setdefault((op.step, op.name), {})[rank.rank] = op
    result: Dict[str, Dict[str, Any]] = {}
    for members in by_operation.values():
        if len(members) < 2:
            continue
        collective = next(iter(members.values())).collective
        entry = result.setdefault(collective, {"operations": 0, "wait_ms": {}, "caused_ms": {}, "bases": set()})
        entry["operations"] += 1
        waits: Dict[int, float] = {}
        cause: Optional[int] = None
        ends = [op.start_us + op.elapse_ms * 1e3 for op in members.values() if op.start_us is not None]
        if len(ends) == len(members) and (max(ends) - min(ends)) / 1e3 <= CLOCK_AGREEMENT_MS:
            entry["bases"].add("arrival")
            cause = max(members, key=lambda r: (members[r].start_us, -r))
            last_us = members[cause].start_us
            for rank, op in members.items():
                waits[rank] = 0.0 if rank == cause else max(0.0, min(op.elapse_ms, (last_us - op.start_us) / 1e3))
        else:
            entry["bases"].add("wait time")
            waits = {rank: op.wait_ms for rank, op in members.items()}
            least = min(waits.values())
            if list(waits.values()).count(least) == 1:   # a tie for the least wait names no cause
                cause = min(waits, key=waits.get)
        for rank, wait in waits.items():
            entry["wait_ms"][rank] = entry["wait_ms"].get(rank, 0.0) + wait
        if cause is not None:
            caused = sum(w for r, w in waits.items() if r != cause)
            entry["caused_ms"][cause] = entry["caused_ms"].get(cause, 0.0) + caused
    return result


def _collective_table(ranks: Sequence[RankAnalysis]) -> List[Dict[str, Any]]:
    table: Dict[str, Dict[str, Any]] = {}
    for rank in ranks:
        for stats in rank.collectives:
            entry = table.setdefault(stats.collective, {"collective": stats.collective, "count": 0, "time_ns": 0,
                                                        "bytes": None, "per_rank": {}})
            entry["count"] += stats.count
            entry["time_ns"] += stats.time_ns
            if stats.bytes is not None:
                entry["bytes"] = (entry["bytes"] or 0) + stats.bytes
            entry["per_rank"][str(rank.rank)] = dataclasses.asdict(stats)
    operation_waits = _operation_waits(ranks)
    with_operations = {op.collective for rank in ranks for op in rank.operations}
    for collective, entry in table.items():
        bandwidths = [r["algorithm_bandwidth_gbps"] for r in entry["per_rank"].values()
                      if r["algorithm_bandwidth_gbps"] is not None]
        entry["min_algorithm_bandwidth_gbps"] = min(bandwidths) if bandwidths else None
        entry["max_algorithm_bandwidth_gbps"] = max(bandwidths) if bandwidths else None
        times = {r: v["time_ns"] for r, v in entry["per_rank"].items()}
        # The rank with the most time inside the collective: the one that waits (kept for compatibility;
        # not the slow rank).
        entry["max_time_rank"] = max(times, key=times.get) if times else None
        waits = operation_waits.get(collective)
        if waits and waits["wait_ms"]:
            wait_ns = {str(r): int(round(w * 1e6)) for r, w in sorted(waits["wait_ms"].items())}
            caused_ns = {str(r): int(round(w * 1e6)) for r, w in sorted(waits["caused_ms"].items())}
            basis = " + ".join(sorted(waits["bases"]))
            matched = waits["operations"]
        elif len(times) >= 2 and collective not in with_operations:
            # Kineto (no per-operation record across ranks): the excess of each rank's collective time
            # over the rank with the least is taken as its wait, and the rank with the least time as the
            # one the others wait for, when it is the only one with that least time.
            least = min(times.values())
            wait_ns = {r: t - least for r, t in sorted(times.items())}
            caused_ns = {}
            if list(times.values()).count(least) == 1 and max(times.values()) > least:
                caused_ns = {min(times, key=times.get): sum(wait_ns.values())}
            basis = "least time"
            matched = 0
        else:
            # Ascend operations of this type, none on two ranks (each rank's in another group, e.g. the
            # data-parallel reduce-scatter of different pipeline stages): nothing to compare.
            wait_ns, caused_ns, basis, matched = {}, {}, None, 0
        waited = {r: w for r, w in wait_ns.items() if w > 0}
        entry["wait_ns_by_rank"] = wait_ns
        entry["waits_longest_rank"] = max(waited, key=waited.get) if waited else None
        entry["caused_wait_ns_by_rank"] = caused_ns
        entry["cause_rank"] = max(caused_ns, key=caused_ns.get) if caused_ns and max(caused_ns.values()) > 0 else None
        entry["cause_basis"] = basis
        entry["matched_operations"] = matched
    return sorted(table.values(), key=lambda e: -e["time_ns"])


def compare_ranks(ranks: Iterable[RankAnalysis]) -> RanksReport:
    """Cross-rank views over already analysed ranks (from analyze_rank or RankAnalysis.from_dict)."""
    ranks = list(ranks)
    errors = [{"path": r.path, "error": r.error} for r in ranks if r.error]
    usable = [r for r in ranks if not r.error and r.steps]
    for index, rank in enumerate(sorted(usable, key=lambda r: r.path)):
        if rank.rank is None:
            rank.rank, rank.rank_source = index, "position (no rank id in the profile or its name)"
    seen: Dict[int, str] = {}
    for rank in usable:
        if rank.rank in seen:
            from .errors import InvalidArgumentError
            raise InvalidArgumentError(f"rank {rank.rank} appears twice: {seen[rank.rank]} and {rank.path} "
                                       "(one profile per rank expected)")
        seen[rank.rank] = rank.path
    usable.sort(key=lambda r: r.rank)

    steps = []
    sums: Dict[int, Dict[str, float]] = {r.rank: {d: 0.0 for d in _DIMENSIONS + ("latency",)} for r in usable}
    aligned = _align_steps(usable)
    for number, per_rank in aligned:
        mean_step = statistics.fmean(s.latency_ns for s in per_rank.values())
        parts = {rank: {"computing": s.computing_ns, "communication": s.communication_ns, "free": s.free_ns}
                 for rank, s in per_rank.items()}
        steps.append(StepComparison(number, mean_step, per_rank, _spreads(parts, mean_step)))
        for rank, step in per_rank.items():
            for dimension in _DIMENSIONS:
                sums[rank][dimension] += parts[rank][dimension]
            sums[rank]["latency"] += step.latency_ns
    overall: List[DimensionSpread] = []
    stragglers: List[int] = []
    median = threshold = None
    if aligned and len(usable) >= 2:
        means = {rank: {k: v / len(aligned) for k, v in values.items()} for rank, values in sums.items()}
        mean_step = statistics.fmean(m["latency"] for m in means.values())
        overall = _spreads(means, mean_step)
        stragglers, median, threshold = _stragglers({rank: m["latency"] for rank, m in means.items()})
    slow_ranks = sorted({d.suspect_rank for d in overall if d.flagged and d.suspect_rank is not None})
    return RanksReport(ranks=ranks, overall=overall, steps=steps, slow_rank=bool(slow_ranks),
                       slow_ranks=slow_ranks, stragglers=stragglers, straggler_threshold_ns=threshold,
                       median_step_ns=median, collectives=_collective_table(usable), errors=errors)


def analyze_ranks(directory_or_paths: Any, max_workers: Optional[int] = None) -> RanksReport:
    """Discover the ranks (a directory) or take the given paths, analyse each in parallel (the engine
    releases the GIL, so threads run the C++ work concurrently) and compare them."""
    if isinstance(directory_or_paths, (str, os.PathLike)):
        paths = discover_ranks(os.fspath(directory_or_paths))
    else:
        paths = [os.fspath(p) for p in directory_or_paths]
    workers = max_workers or min(len(paths), os.cpu_count() or 1) or 1
    with Progress("pypto ranks", total=len(paths), unit="ranks") as progress:
        def analyze_one(path: str) -> RankAnalysis:
            result = analyze_rank(path)
            progress.advance(path)
            return result
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pypto-rank") as pool:
            analyses = list(pool.map(analyze_one, paths))
    return compare_ranks(analyses)


# -- rendering --------------------------------------------------------------------------------

def _ms(ns: Optional[float]) -> str:
    return "-" if ns is None else f"{ns / 1e6:.3f}"


def _profile_name(rank: RankAnalysis) -> str:
    return os.path.basename(rank.path.rstrip(os.sep))


def _mean_parts(rank: RankAnalysis) -> Tuple[Optional[float], Optional[float], float]:
    """Mean computing, communication (None when unknown: no device task, no breakdown) and free per step."""
    n = len(rank.steps) or 1
    known = rank.steps and all(s.source != SOURCE_NONE for s in rank.steps)
    computing = sum(s.computing_ns for s in rank.steps) / n if known else None
    communication = sum(s.communication_ns for s in rank.steps) / n if known else None
    return computing, communication, sum(s.free_ns for s in rank.steps) / n


_BASIS_NOTE = ("arrival: Start Timestamp of the same operation on every rank; wait time: the profiler's "
               "Wait Time per rank; least time: the rank with the least time in the collective")


def render_text(report: RanksReport) -> str:
    """The report as aligned plain-text tables (no Markdown), the verdict first; durations with their
    unit, long names cut with "…" (to_json keeps everything whole)."""
    usable = [r for r in report.ranks if not r.error]
    lines = [f"pypto ranks: {len(usable)} rank(s) analysed" +
             (f", {len(report.errors)} failed" if report.errors else "")]
    if report.overall:
        lines.append("Slow rank(s): " + (", ".join(map(str, report.slow_ranks)) if report.slow_rank else "none") +
                     "; stragglers: " + (", ".join(map(str, report.stragglers)) or "none"))
    table = TextTable([right("RANK"), Column("PROFILE", keep_end=True), Column("FORMAT"), right("STEPS"),
                       right("MEAN STEP"), right("COMPUTING"), right("COMMUNICATION"), right("FREE")])
    for rank in sorted(usable, key=lambda r: (r.rank is None, r.rank)):
        computing, communication, free = _mean_parts(rank)
        table.add_row([rank.rank, _profile_name(rank), rank.format, len(rank.steps), format_duration(rank.mean_step_ns),
                       format_duration(computing), format_duration(communication), format_duration(free)])
    lines += ["", "Ranks (means per step)"] + (table.render() if table else ["  no rank analysed"])
    lines += ["", f"Slow rank (spread > {SLOW_RANK_SPREAD_THRESHOLD:.0%} of the mean step)"]
    if report.overall:
        table = TextTable([Column("PART"), right("MIN"), right("MAX"), right("SPREAD"), right("OF STEP"),
                           Column("SLOW"), right("SUSPECT RANK")])
        for d in report.overall:
            table.add_row([d.dimension, format_duration(d.min_ns), format_duration(d.max_ns),
                           format_duration(d.spread_ns), format_percent(d.share_of_step), "yes" if d.flagged else "no",
                           "-" if d.suspect_rank is None else d.suspect_rank])
        lines += table.render()
    else:
        lines.append("  needs at least two ranks with steps")
    lines += ["", "Stragglers"]
    if report.straggler_threshold_ns is not None:
        lines.append(f"  median step {format_duration(report.median_step_ns)}, threshold "
                     f"{format_duration(report.straggler_threshold_ns)} (median + {STRAGGLER_MAD_FACTOR:g} x MAD, at "
                     f"least +{STRAGGLER_MIN_EXCESS:.0%}); stragglers: " +
                     (", ".join(map(str, report.stragglers)) or "none"))
    else:
        lines.append("  needs at least two ranks with steps")
    if report.collectives:
        table = TextTable([Column("COLLECTIVE"), right("COUNT"), right("TIME"), right("BYTES"), right("ALGBW MIN-MAX"),
                           Column("WAITS LONGEST (WAIT)"), Column("CAUSE (ARRIVES LAST)")])
        bases = set()
        for entry in report.collectives:
            low, high = entry["min_algorithm_bandwidth_gbps"], entry["max_algorithm_bandwidth_gbps"]
            waiter, cause = entry.get("waits_longest_rank"), entry.get("cause_rank")
            if entry.get("cause_basis"):
                bases.add(entry["cause_basis"])
            waits = "-" if waiter is None else f"rank {waiter} ({format_duration(entry['wait_ns_by_rank'][waiter])})"
            table.add_row([entry["collective"], entry["count"], format_duration(entry["time_ns"]),
                           format_bytes(entry["bytes"]), "-" if low is None else f"{low:.2f}-{high:.2f} GB/s",
                           waits, "-" if cause is None else f"rank {cause}"])
        lines += ["", "Communication per collective"] + table.render()
        lines += ["  The rank with the longest time inside a collective is the one waiting; the cause is the rank the",
                  "  others wait for (it arrives last). Basis: " + (", ".join(sorted(bases)) or "-") + "."]
    links = [(r.rank, link) for r in usable for link in r.transports + r.links]
    if links:
        table = TextTable([right("RANK"), Column("LINK"), Column("TRANSPORT"), right("SIZE"), right("TIME"),
                           right("BANDWIDTH")])
        for rank, link in links:
            table.add_row([rank, link.link, link.transport, format_bytes(link.transit_size_mb * 1e6),
                           format_duration(link.transit_time_ms * 1e6), f"{link.bandwidth_gbps:.2f} GB/s"])
        lines += ["", "Links (Ascend communication.json / communication_matrix.json)"] + table.render()
    if report.errors:
        lines += ["", "Errors"] + [f"  - {terminal_safe(e['path'])}: {terminal_safe(e['error'])}"
                                   for e in report.errors]
    return "\n".join(lines) + "\n"


def render_markdown(report: RanksReport) -> str:
    lines = ["# Multi-rank analysis", ""]
    usable = [r for r in report.ranks if not r.error]
    lines.append(f"{len(usable)} rank(s) analysed" + (f", {len(report.errors)} failed" if report.errors else "") + ".")
    lines.append("")
    lines += ["| rank | profile | format | steps | mean step (ms) | computing (ms) | communication (ms) | free (ms) |",
              "|---|---|---|---|---|---|---|---|"]
    for rank in sorted(usable, key=lambda r: (r.rank is None, r.rank)):
        n = len(rank.steps) or 1
        known = rank.steps and all(s.source != SOURCE_NONE for s in rank.steps)   # no device task, no breakdown: "-"
        computing = _ms(sum(s.computing_ns for s in rank.steps) / n) if known else "-"
        communication = _ms(sum(s.communication_ns for s in rank.steps) / n) if known else "-"
        lines.append(f"| {rank.rank} | {markdown_cell(_profile_name(rank))} | {rank.format} | {len(rank.steps)} | "
                     f"{_ms(rank.mean_step_ns)} | {computing} | {communication} | "
                     f"{_ms(sum(s.free_ns for s in rank.steps) / n)} |")
    lines += ["", f"## Slow rank (spread > {SLOW_RANK_SPREAD_THRESHOLD:.0%} of the mean step)", ""]
    if report.overall:
        lines += ["| part | min (ms) | max (ms) | spread (ms) | share of step | slow | suspect rank |",
                  "|---|---|---|---|---|---|---|"]
        for d in report.overall:
            lines.append(f"| {d.dimension} | {_ms(d.min_ns)} | {_ms(d.max_ns)} | {_ms(d.spread_ns)} | "
                         f"{d.share_of_step:.1%} | {'yes' if d.flagged else 'no'} | "
                         f"{'' if d.suspect_rank is None else d.suspect_rank} |")
        lines.append("")
        lines.append("Slow rank(s): " + (", ".join(map(str, report.slow_ranks)) if report.slow_rank else "none") + ".")
    else:
        lines.append("Needs at least two ranks with steps.")
    lines += ["", "## Stragglers", ""]
    if report.straggler_threshold_ns is not None:
        lines.append(f"Median step {_ms(report.median_step_ns)} ms; threshold {_ms(report.straggler_threshold_ns)} ms "
                     f"(median + {STRAGGLER_MAD_FACTOR:g} x MAD, at least +{STRAGGLER_MIN_EXCESS:.0%}). "
                     "Stragglers: " + (", ".join(map(str, report.stragglers)) or "none") + ".")
    else:
        lines.append("Needs at least two ranks with steps.")
    if report.collectives:
        lines += ["", "## Communication per collective", "",
                  "| collective | count | time (ms) | bytes | algbw min-max (GB/s) | waits longest (wait ms) | "
                  "cause (arrives last) |", "|---|---|---|---|---|---|---|"]
        bases = set()
        for entry in report.collectives:
            low, high = entry["min_algorithm_bandwidth_gbps"], entry["max_algorithm_bandwidth_gbps"]
            bandwidth = "-" if low is None else f"{low:.2f}-{high:.2f}"
            waiter, cause = entry.get("waits_longest_rank"), entry.get("cause_rank")
            waits = "-" if waiter is None else f"{waiter} ({_ms(entry['wait_ns_by_rank'][waiter])})"
            if entry.get("cause_basis"):
                bases.add(entry["cause_basis"])
            lines.append(f"| {markdown_cell(entry['collective'])} | {entry['count']} | {_ms(entry['time_ns'])} | "
                         f"{'-' if entry['bytes'] is None else entry['bytes']} | {bandwidth} | {waits} | "
                         f"{'-' if cause is None else cause} |")
        lines += ["", "The rank with the longest time inside a collective is the one waiting; the cause is the rank "
                  "the others wait for (it arrives last). Basis: " + (", ".join(sorted(bases)) or "-") +
                  " (arrival: Start Timestamp of the same operation on every rank; wait time: the profiler's "
                  "Wait Time per rank; least time: the rank with the least time in the collective)."]
    links = [(r.rank, link) for r in usable for link in r.transports + r.links]
    if links:
        lines += ["", "## Links (Ascend communication.json / communication_matrix.json)", "",
                  "| rank | link | transport | size (MB) | time (ms) | bandwidth (GB/s) |", "|---|---|---|---|---|---|"]
        for rank, link in links:
            lines.append(f"| {rank} | {markdown_cell(link.link)} | {markdown_cell(link.transport)} | "
                         f"{link.transit_size_mb:.3f} | "
                         f"{link.transit_time_ms:.3f} | {link.bandwidth_gbps:.2f} |")
    if report.errors:
        lines += ["", "## Errors", ""] + [f"- {e['path']}: {e['error']}" for e in report.errors]
    return "\n".join(lines) + "\n"


# -- command line -----------------------------------------------------------------------------

def main(argv: Optional[Sequence[str]] = None) -> int:
    """`pypto ranks DIR [--json | --markdown] [--out FILE] [--workers N]` (argv may start with "ranks")."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "ranks":
        argv = argv[1:]
    parser = argparse.ArgumentParser(prog="pypto ranks", description="Multi-rank analysis: slow rank, stragglers, "
                                     "communication per collective and link, over a directory with one profile per rank.")
    parser.add_argument("directory", help="directory holding one profile per rank (*_ascend_pt dirs or Kineto traces)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the JSON document (schema pypto.ranks/1)")
    output.add_argument("--markdown", action="store_true",
                        help="print Markdown (default: aligned plain tables, the verdict first)")
    parser.add_argument("--out", help="write the report to this file instead of stdout")
    parser.add_argument("--workers", type=int, default=None, help="ranks analysed at once (default: CPU count)")
    options = parser.parse_args(argv)
    from .errors import PyptoError
    try:
        report = analyze_ranks(options.directory, max_workers=options.workers)
    except PyptoError as error:
        print(f"pypto ranks: {error}", file=sys.stderr)
        return 2
    text = report.to_json() + "\n" if options.json else report.to_markdown() if options.markdown else report.to_text()
    if options.out:
        with open(options.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return 1 if report.errors and not [r for r in report.ranks if not r.error] else 0


if __name__ == "__main__":
    sys.exit(main())
