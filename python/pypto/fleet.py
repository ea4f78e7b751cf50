"""Fleet scale: analyse many profiles on a Dask cluster, then reduce the cross-profile views.

    report = pypto.fleet.analyze_fleet(["run1/", "run2/trace.json.gz"], scheduler="tcp://host:8786")
    print(report.to_markdown())

Each profile is loaded by the C++ engine inside a Dask worker (`profile_summary`), which sends back a
small dict (never the graph): format, step latency statistics, time per op class, issues, and the
rank analysis when the profile is one rank of a distributed run. A profile that cannot be read comes
back as an error record. The reduction (`reduce_fleet`) runs on the client: fleet-wide per-token
(per-step) latency distribution, issue types ranked by total estimated saving, the multi-rank view of
pypto.ranks over the rank profiles, and outlier profiles. Without `scheduler` a local cluster is
started (processes, one thread each) and shut down at the end. Paths must be readable by the
workers under the same names.

Command line: `pypto fleet analyze PATHS... [--scheduler ADDRESS] [--workers N] [--json | --markdown]
[--out FILE]` (default: aligned plain-text tables, `FleetReport.to_text()`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from . import ranks as ranks_module
from ._progress import Progress
from ._text import Column, TextTable, format_duration, markdown_cell, right, terminal_safe
from .collection import nearest_rank_percentile

#: Workers of the local cluster started when no scheduler address is given (one engine each).
DEFAULT_LOCAL_WORKERS = 2

#: Outlier profile: mean step latency above median + k * MAD (MAD scaled to a standard deviation)
#: of the profiles' mean step latencies, and at least this much above the median. Same rule and
#: sources as the straggler rule of pypto.ranks.
OUTLIER_MAD_FACTOR = ranks_module.STRAGGLER_MAD_FACTOR
OUTLIER_MIN_EXCESS = ranks_module.STRAGGLER_MIN_EXCESS

#: Percentiles of the latency distribution (nearest-rank), as in ProfileResults.get_latency_stats.
LATENCY_PERCENTILES = (50, 90, 99)


def latency_stats_ms(values_ms: Sequence[float]) -> Dict[str, Any]:
    """count, mean, min, max and nearest-rank percentiles, in ms (None when empty)."""
    ordered = sorted(values_ms)
    stats: Dict[str, Any] = {"count": len(ordered)}
    if not ordered:
        stats.update({"mean_ms": None, "min_ms": None, "max_ms": None,
                      **{f"p{p}_ms": None for p in LATENCY_PERCENTILES}})
        return stats
    stats.update({"mean_ms": statistics.fmean(ordered), "min_ms": ordered[0], "max_ms": ordered[-1],
                  **{f"p{p}_ms": nearest_rank_percentile(ordered, p) for p in LATENCY_PERCENTILES}})
    return stats


# -- the per-profile work (runs on a worker) ----------------------------------------------------

def profile_summary(path: str) -> Dict[str, Any]:
    """Load one profile with the engine and return a small, picklable summary; errors become a record
    {"path", "ok": False, "error": "<ExceptionType>: <engine message>"}."""
    from .errors import PyptoError
    from .graph import load_profile
    record: Dict[str, Any] = {"path": str(path), "ok": False, "error": None}
    try:
        graph = load_profile(path)
        from .analyzers import TransformerHotspotAnalyzer
        from .diagnostics import HotspotDetector
        steps = graph.steps()
        latencies_ms = [s["latency_ns"] / 1e6 for s in steps]
        analysis = TransformerHotspotAnalyzer(graph).analyze()
        diagnosis = HotspotDetector().detect(graph)
        rank_analysis = ranks_module.analyze_rank(path, graph=graph)
        record.update({
            "ok": True,
            "format": graph.format,
            "rank": rank_analysis.rank if rank_analysis.rank_source else None,
            "world_size": rank_analysis.world_size,
            "step_count": len(steps),
            "step_latencies_ms": latencies_ms,
            "latency": latency_stats_ms(latencies_ms),
            "op_class_time_ns": {row["op_class"]: row["time_ns"] for row in analysis.get("time_by_op_class", [])},
            "issues": [{"issue_type": i.issue_type, "severity": i.severity, "op_name": i.op_name,
                        "estimated_saved_us": i.estimated_saved_us} for i in diagnosis.issues],
            "estimated_speedup": diagnosis.estimated_speedup,
            "rank_analysis": rank_analysis.to_dict(),
        })
    except (PyptoError, OSError, ValueError) as error:
        record["error"] = f"{type(error).__name__}: {error}"
    return record


# -- the reduction (runs on the client) ----------------------------------------------------------

@dataclass
class FleetReport:
    profiles: List[Dict[str, Any]]
    latency: Dict[str, Any]                      # fleet-wide, over every step of every profile (ms)
    op_class_time_ns: Dict[str, int]
    top_issues: List[Dict[str, Any]]             # per issue type: count, profiles, total saving
    outliers: List[Dict[str, Any]]
    rank_groups: List[Dict[str, Any]]            # pypto.ranks reports, one per run (directory, world size)
    errors: List[Dict[str, str]]
    thresholds: Dict[str, float] = field(default_factory=lambda: {
        "outlier_mad_factor": OUTLIER_MAD_FACTOR, "outlier_min_excess": OUTLIER_MIN_EXCESS,
        "slow_rank_spread_threshold": ranks_module.SLOW_RANK_SPREAD_THRESHOLD})

    def to_dict(self) -> Dict[str, Any]:
        return {"schema": "pypto.fleet/1", **asdict(self)}

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_markdown(self) -> str:
        lines = ["# Fleet analysis", "",
                 f"{len(self.profiles) - len(self.errors)} profile(s) analysed, {len(self.errors)} failed.", ""]
        lat = self.latency
        if lat["count"]:
            lines.append(f"Per-token (per-step) latency over {lat['count']} steps: mean {lat['mean_ms']:.3f} ms, "
                         f"p50 {lat['p50_ms']:.3f}, p90 {lat['p90_ms']:.3f}, p99 {lat['p99_ms']:.3f}, "
                         f"max {lat['max_ms']:.3f} ms.")
        lines += ["", "| profile | format | rank | steps | p50 (ms) | p99 (ms) | issues |", "|---|---|---|---|---|---|---|"]
        for p in self.profiles:
            if p["ok"]:
                l = p["latency"]
                fmt = lambda v: "-" if v is None else f"{v:.3f}"
                lines.append(f"| {markdown_cell(p['path'])} | {p['format']} | "
                             f"{'' if p['rank'] is None else p['rank']} | "
                             f"{p['step_count']} | {fmt(l['p50_ms'])} | {fmt(l['p99_ms'])} | {len(p['issues'])} |")
        if self.top_issues:
            lines += ["", "## Issue types by total estimated saving", "",
                      "| issue type | count | profiles | total saving (ms) |", "|---|---|---|---|"]
            for issue in self.top_issues:
                lines.append(f"| {markdown_cell(issue['issue_type'])} | {issue['count']} | {issue['profiles']} | "
                             f"{issue['estimated_saved_us'] / 1e3:.3f} |")
        lines += ["", "## Outlier profiles", ""]
        lines += [f"- {o['path']}: mean step {o['mean_step_ms']:.3f} ms > threshold {o['threshold_ms']:.3f} ms"
                  for o in self.outliers] or ["none"]
        for group in self.rank_groups:
            lines += ["", f"## Ranks of {group['directory']} (world size {group['world_size']})", "",
                      "Slow rank(s): " + (", ".join(map(str, group["report"]["slow_ranks"])) or "none") +
                      "; stragglers: " + (", ".join(map(str, group["report"]["stragglers"])) or "none") + "."]
            if group.get("note"):
                lines.append(group["note"])
        if self.errors:
            lines += ["", "## Errors", ""] + [f"- {e['path']}: {e['error']}" for e in self.errors]
        return "\n".join(lines) + "\n"

    def to_text(self) -> str:
        """Aligned plain-text tables (no Markdown), what `pypto fleet analyze` prints by default; durations
        with their unit, long paths cut with "…" keeping their end (to_json keeps everything whole)."""
        ms = lambda v: format_duration(None if v is None else v * 1e6)
        lines = [f"pypto fleet: {len(self.profiles) - len(self.errors)} profile(s) analysed, {len(self.errors)} failed"]
        lat = self.latency
        if lat["count"]:
            lines.append(f"Per-token (per-step) latency over {lat['count']} steps: mean {ms(lat['mean_ms'])}, "
                         f"p50 {ms(lat['p50_ms'])}, p90 {ms(lat['p90_ms'])}, p99 {ms(lat['p99_ms'])}, "
                         f"max {ms(lat['max_ms'])}")
        table = TextTable([Column("PROFILE", keep_end=True), Column("FORMAT"), right("RANK"), right("STEPS"),
                           right("P50"), right("P99"), right("ISSUES")])
        for p in self.profiles:
            if p["ok"]:
                table.add_row([p["path"], p["format"], "-" if p["rank"] is None else p["rank"], p["step_count"],
                               ms(p["latency"]["p50_ms"]), ms(p["latency"]["p99_ms"]), len(p["issues"])])
        lines += ["", "Profiles"] + (table.render() if table else ["  none analysed"])
        if self.top_issues:
            table = TextTable([Column("ISSUE TYPE"), right("COUNT"), right("PROFILES"), right("TOTAL SAVING")])
            for issue in self.top_issues:
                table.add_row([issue["issue_type"], issue["count"], issue["profiles"],
                               format_duration(issue["estimated_saved_us"] * 1e3)])
            lines += ["", "Issue types by total estimated saving"] + table.render()
        lines += ["", "Outlier profiles"]
        lines += [f"  {terminal_safe(o['path'])}: mean step {ms(o['mean_step_ms'])} > threshold {ms(o['threshold_ms'])}"
                  for o in self.outliers] or ["  none"]
        for group in self.rank_groups:
            world = "unknown" if group["world_size"] is None else group["world_size"]
            lines += ["", f"Ranks of {terminal_safe(group['directory'])} (world size {world})",
                      "  slow rank(s): " + (", ".join(map(str, group["report"]["slow_ranks"])) or "none") +
                      "; stragglers: " + (", ".join(map(str, group["report"]["stragglers"])) or "none")]
            if group.get("note"):
                lines.append("  " + terminal_safe(group["note"]))
        if self.errors:
            lines += ["", "Errors"] + [f"  - {terminal_safe(e['path'])}: {terminal_safe(e['error'])}"
                                       for e in self.errors]
        return "\n".join(lines) + "\n"


def _outliers(profiles: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    means = {p["path"]: p["latency"]["mean_ms"] for p in profiles if p["ok"] and p["latency"]["mean_ms"] is not None}
    if len(means) < 3:        # median and MAD of two values cannot single one out
        return []
    median, threshold = ranks_module.robust_upper_limit(means.values(), OUTLIER_MAD_FACTOR, OUTLIER_MIN_EXCESS)
    return [{"path": path, "mean_step_ms": value, "median_ms": median, "threshold_ms": threshold}
            for path, value in sorted(means.items()) if value > threshold]


def _rank_groups(profiles: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Rank profiles of one run: same directory, same world size."""
    by_run: Dict[Any, List[Dict[str, Any]]] = {}
    for p in profiles:
        if p["ok"] and p.get("rank") is not None:
            run_directory = os.path.dirname(p["path"].rstrip("/" + os.sep)) or "."
            by_run.setdefault((run_directory, p.get("world_size")), []).append(p)
    groups = []
    for (run_directory, world_size), members in sorted(by_run.items(), key=lambda kv: str(kv[0])):
        if len(members) < 2:
            continue
        analyses = [ranks_module.RankAnalysis.from_dict(p["rank_analysis"]) for p in members]
        ids = [a.rank for a in analyses]
        note = ""
        if len(set(ids)) != len(ids):
            note = (f"rank ids repeat ({sorted(ids)}): these are several runs, not one; "
                    "analyse each run's directory with `pypto ranks`")
            groups.append({"directory": run_directory, "world_size": world_size,
                           "report": {"slow_ranks": [], "stragglers": []}, "note": note})
            continue
        groups.append({"directory": run_directory, "world_size": world_size,
                       "report": ranks_module.compare_ranks(analyses).to_dict(), "note": note})
    return groups


def reduce_fleet(summaries: Sequence[Dict[str, Any]]) -> FleetReport:
    """Cross-profile views over profile_summary records (in the order given)."""
    summaries = list(summaries)
    ok = [s for s in summaries if s["ok"]]
    latency = latency_stats_ms([v for s in ok for v in s["step_latencies_ms"]])
    op_class_time: Dict[str, int] = {}
    issues: Dict[str, Dict[str, Any]] = {}
    for s in ok:
        for op_class, ns in s["op_class_time_ns"].items():
            op_class_time[op_class] = op_class_time.get(op_class, 0) + ns
        seen = set()
        for issue in s["issues"]:
            entry = issues.setdefault(issue["issue_type"], {"issue_type": issue["issue_type"], "count": 0,
                                                            "profiles": 0, "estimated_saved_us": 0.0})
            entry["count"] += 1
            entry["estimated_saved_us"] += issue["estimated_saved_us"] or 0.0
            if issue["issue_type"] not in seen:
                entry["profiles"] += 1
                seen.add(issue["issue_type"])
    top_issues = sorted(issues.values(), key=lambda e: (-e["estimated_saved_us"], e["issue_type"]))
    return FleetReport(
        profiles=summaries, latency=latency,
        op_class_time_ns=dict(sorted(op_class_time.items(), key=lambda kv: -kv[1])),
        top_issues=top_issues, outliers=_outliers(summaries), rank_groups=_rank_groups(summaries),
        errors=[{"path": s["path"], "error": s["error"]} for s in summaries if not s["ok"]])


# -- the map, on Dask ---------------------------------------------------------------------------

def expand_paths(paths: Sequence[Any]) -> List[str]:
    """A directory that is not itself one profile (an `*_ascend_pt` directory) stands for the profiles in it."""
    expanded: List[str] = []
    for path in map(os.fspath, paths):
        if os.path.isdir(path) and not ranks_module._is_ascend_rank_dir(path):
            try:
                expanded.extend(ranks_module.discover_ranks(path))
                continue
            except Exception:          # a directory the engine may still read (PROF_*, …)
                pass
        expanded.append(path)
    return expanded


def analyze_fleet(paths: Sequence[Any], scheduler: Optional[str] = None,
                  n_workers: Optional[int] = None) -> FleetReport:
    """Map profile_summary over the profiles on Dask workers and reduce on the client."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as error:
        raise ImportError("pypto fleet needs Dask: pip install 'dask[distributed]'") from error
    paths = expand_paths(paths)
    if not paths:
        from .errors import InvalidArgumentError
        raise InvalidArgumentError("pypto fleet: no profile paths given")
    if scheduler:
        with Client(scheduler) as client:
            return reduce_fleet(_map(client, paths))
    with LocalCluster(processes=True, n_workers=n_workers or DEFAULT_LOCAL_WORKERS, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        return reduce_fleet(_map(client, paths))


def _map(client: Any, paths: List[str]) -> List[Dict[str, Any]]:
    futures = client.map(profile_summary, paths, pure=False)
    results = []
    with Progress("pypto fleet", total=len(paths)) as progress:
        for path, future in zip(paths, futures):
            try:
                results.append(future.result())
            except Exception as error:     # the worker died or the task could not run: an error record
                results.append({"path": path, "ok": False, "error": f"{type(error).__name__}: {error}"})
            progress.advance(path)
    return results


# -- command line ---------------------------------------------------------------------------------

def main(argv: Optional[Sequence[str]] = None) -> int:
    """`pypto fleet analyze PATHS... [--scheduler ADDRESS] [--workers N] [--json | --markdown] [--out FILE]`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "fleet":
        argv = argv[1:]
    parser = argparse.ArgumentParser(prog="pypto fleet", description="Analyse many profiles on a Dask cluster.")
    commands = parser.add_subparsers(dest="command", required=True)
    analyze = commands.add_parser("analyze", help="per-profile analysis on the workers, cross-profile views here")
    analyze.add_argument("paths", nargs="+", help="profiles, or directories holding one profile per rank")
    analyze.add_argument("--scheduler", help="Dask scheduler address (default: start a local cluster)")
    analyze.add_argument("--workers", type=int, default=None,
                         help=f"workers of the local cluster (default {DEFAULT_LOCAL_WORKERS})")
    output = analyze.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the JSON document (schema pypto.fleet/1)")
    output.add_argument("--markdown", action="store_true",
                        help="print Markdown (default: aligned plain tables)")
    analyze.add_argument("--out", help="write the report to this file instead of stdout")
    options = parser.parse_args(argv)
    from .errors import PyptoError
    try:
        report = analyze_fleet(options.paths, scheduler=options.scheduler, n_workers=options.workers)
    except (PyptoError, ImportError, OSError) as error:
        print(f"pypto fleet: {error}", file=sys.stderr)
        return 2
    text = report.to_json() + "\n" if options.json else report.to_markdown() if options.markdown else report.to_text()
    if options.out:
        with open(options.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return 0 if len(report.errors) < len(report.profiles) else 1


if __name__ == "__main__":
    sys.exit(main())
