"""The offline pipeline: ingest a directory of profiles into the history database, diagnose, advise,
flag drift, write a review report, and manage the reviewed action set (docs/pipeline.md).

    pypto pipeline DIR [--db PATH] [--report out.html|out.md]     one shot
    pypto watch DIR [--db PATH] [--interval S]                    until SIGINT / SIGTERM
    pypto actions list|approve|reject|export ...                  review, then export approved actions
    pypto history drift|runs|report ...                           read the history

Python: `run_pipeline(dir, db)`, `watch(dir, db, interval_s)`, `main(argv)`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ._progress import Progress
from .drift import DriftResult, detect_drift
from .history import HistoryError, HistoryStore, RunRecord, utc_now

#: History database used when --db is not given: in the current directory, so that a read-only
#: profile directory can be ingested and `actions` / `history` find the same file.
DEFAULT_DB_PATH = "pypto-history.db"
#: Seconds between two directory scans of `watch`. 5 s: a profiler writes a trace in seconds to
#: minutes, and a scan of a directory is cheap; a file must look the same on two scans to be read.
DEFAULT_WATCH_INTERVAL_S = 5.0
#: How often `watch` checks for a stop signal while it sleeps (s).
STOP_CHECK_INTERVAL_S = 0.1
#: Names that mean "still being written" (browser/rsync/profiler temporary files) or "not data".
TEMPORARY_NAME_PATTERNS = (r"^\.", r"~$", r"\.(tmp|temp|part|partial|crdownload|lock|swp)$", r"\.(db|sqlite)-(wal|shm|journal)$")
#: Bytes read at a time when hashing a profile.
HASH_CHUNK_BYTES = 1 << 20
EXIT_OK = 0
EXIT_PARTIAL = 1        # some profiles were quarantined (the others are stored)
EXIT_ERROR = 2          # bad arguments, unusable directory or database
EXIT_DRIFT = 3          # --fail-on-drift and the latest run drifted

#: Action categories of the exported config file, in file order.
ACTION_CATEGORIES = ("env", "tuning_bank", "kv_cache_layout", "norm_fusion", "config")

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


# ------------------------------------------------------------------------------ discovery
def _is_temporary(name: str) -> bool:
    return any(re.search(p, name, re.IGNORECASE) for p in TEMPORARY_NAME_PATTERNS)


def discover_profiles(directory: str, exclude: Iterable[str] = ()) -> List[str]:
    """Profiles in `directory`: every regular file and every sub-directory (a profile directory such as
    `*_ascend_pt` or `PROF_*`), temporary names excluded; oldest first (mtime, then name)."""
    excluded = {os.path.realpath(p) for p in exclude}
    found = []
    for entry in os.scandir(directory):
        if _is_temporary(entry.name) or os.path.realpath(entry.path) in excluded:
            continue
        if entry.is_symlink():
            continue          # the engine refuses symlinks too (io layer: no-follow)
        if entry.is_file() or entry.is_dir():
            found.append((entry.stat().st_mtime_ns, entry.name, entry.path))
    return [p for _, _, p in sorted(found)]


def _walk_files(path: str) -> List[str]:
    if os.path.isfile(path):
        return [path]
    files = []
    for root, dirs, names in os.walk(path):
        dirs.sort()
        files.extend(os.path.join(root, n) for n in sorted(names))
    return files


def content_hash(path: str) -> str:
    """sha256 of a file, or of a directory's files (relative path and content, in sorted order)."""
    h = hashlib.sha256()
    for f in _walk_files(path):
        if os.path.isdir(path):
            h.update(os.path.relpath(f, path).encode("utf-8", "surrogateescape") + b"\0")
        with open(f, "rb") as fh:
            while True:
                chunk = fh.read(HASH_CHUNK_BYTES)
                if not chunk:
                    break
                h.update(chunk)
        h.update(b"\0")
    return "sha256:" + h.hexdigest()


def file_signature(path: str) -> Tuple[int, int, int]:
    """(files, total bytes, newest mtime ns): equal on two scans = no longer being written."""
    files = _walk_files(path)
    stats = [os.stat(f) for f in files]
    return len(stats), sum(s.st_size for s in stats), max((s.st_mtime_ns for s in stats), default=0)


# ------------------------------------------------------------------------------ extraction
def _length_histogram(lengths: Sequence[int]) -> List[Tuple[int, int, int]]:
    buckets: Dict[int, int] = {}
    for n in lengths:
        low = 0 if n < 1 else 1 << (int(n).bit_length() - 1)
        buckets[low] = buckets.get(low, 0) + 1
    return [(low, max(low * 2, 1), count) for low, count in sorted(buckets.items())]


def _op_groups(loaded: Any, table: Dict[str, Any], mask: Any, source: str) -> List[Dict[str, Any]]:
    """count and total time per (name, op class) of the rows of an engine table selected by `mask`."""
    import numpy as np
    key = (table["name"][mask].astype(np.uint64) << np.uint64(8)) | table["op_class"][mask].astype(np.uint64)
    if key.size == 0:
        return []
    groups, inverse = np.unique(key, return_inverse=True)
    counts = np.bincount(inverse)
    totals = np.zeros(groups.size, dtype=np.int64)
    np.add.at(totals, inverse, table["dur"][mask])
    name_ids = [int(g >> np.uint64(8)) for g in groups]
    names = dict(zip(sorted(set(name_ids)), loaded.strings(sorted(set(name_ids)))))
    classes = list(table["op_class_names"])
    ops = [{"source": source, "op_name": names[name], "op_class": classes[int(g & np.uint64(0xFF))],
            "count": int(count), "total_ns": int(total), "mean_ns": int(total) // max(int(count), 1)}
           for name, g, count, total in zip(name_ids, groups, counts, totals)]
    return sorted(ops, key=lambda op: (op["op_name"], op["op_class"]))


def _op_statistics(graph: Any) -> List[Dict[str, Any]]:
    """count and total time per (name, op class) of device kernels and host operators, from the
    engine's host-op and device-task columns."""
    import numpy as np
    loaded = graph._loaded
    tasks = loaded.device_tasks()
    task_kinds = list(tasks["kind_names"])
    skipped = [task_kinds.index("annotation"), task_kinds.index("sync")]
    ops = _op_groups(loaded, tasks, ~np.isin(tasks["kind"], skipped), "device_kernel")
    host = loaded.host_ops()
    ops += _op_groups(loaded, host, host["kind"] == list(host["kind_names"]).index("operator"), "host_operator")
    return ops


def _request_shapes(graph: Any) -> List[Dict[str, Any]]:
    """batch, query length and KV length per step, as the engine's model-structure analysis read them
    from the attention shapes (the same reading that decides each step's phase)."""
    shapes = []
    for s in graph._loaded.step_shapes():
        if s["batch"] is None and s["query_len"] is None and s["kv_len"] is None:
            continue
        shapes.append({"step_number": s["number"], "phase": s["phase"], "batch": s["batch"],
                       "query_len": s["query_len"], "kv_len": s["kv_len"], "source": "attention input shapes"})
    return shapes


def _action_category(action: Dict[str, Any], hotspot_type: str) -> Optional[str]:
    kind, artifact = action.get("kind", ""), action.get("artifact", "")
    if kind == "env":
        return "env"
    if artifact == "tiling_config" or kind == "command":
        return "tuning_bank"
    if artifact == "kv_cache_patch" or hotspot_type == "kv_cache_layout":
        return "kv_cache_layout" if (artifact or kind == "config") else None
    if artifact == "norm_fusion_plan":
        return "norm_fusion"
    if kind == "config":
        return "config"
    return None         # plain code advice stays in the report: a person applies it


def parse_env_action(text: str) -> Dict[str, Optional[str]]:
    """`export A=1 B=2` / `unset C` lines → {A: "1", B: "2", C: None}; other words are ignored."""
    env: Dict[str, Optional[str]] = {}
    for line in text.replace("&&", "\n").replace(";", "\n").splitlines():
        try:
            words = shlex.split(line, posix=True)
        except ValueError:
            continue
        if not words:
            continue
        if words[0] == "export":
            for w in words[1:]:
                if "=" in w:
                    k, v = w.split("=", 1)
                    env[k] = v
        elif words[0] == "unset":
            for w in words[1:]:
                env[w] = None
    return env


def propose_actions(recommendations: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Actions the automatic part can apply (env, tuning bank, KV-cache layout, norm fusion, config)."""
    proposed = []
    for rec in recommendations:
        hotspot = rec.get("hotspot_type", "")
        for action in rec.get("actions", []):
            category = _action_category(action, hotspot)
            if category is None:
                continue
            payload = {"category": category, "hotspot_type": hotspot, "rule_id": rec.get("rule_id", ""),
                       "action_id": action.get("id", ""), "description": action.get("description", ""),
                       "action": action.get("action", ""), "prerequisite": action.get("prerequisite", ""),
                       "artifact": action.get("artifact", ""), "estimated_saved_us": action.get("estimated_saved_us"),
                       "estimated_speedup": action.get("estimated_speedup")}
            if category == "env":
                payload["env"] = parse_env_action(payload["action"])
            key = f"{category}:{payload['rule_id']}:{payload['action_id']}"
            proposed.append({"action_key": key, "kind": category, "payload": payload})
    return proposed


def extract_run(path: str, digest: str) -> RunRecord:
    """Parses, diagnoses and advises one profile; raises the typed pypto error when it cannot."""
    from .advisor import TuningAdvisor
    from .graph import load_profile

    graph = load_profile(path)
    # The advisor runs the HotspotDetector diagnosis in the same engine call; its report is the
    # DiagnosticReport that HotspotDetector().detect(graph) returns with the default options.
    advice = TuningAdvisor(graph).advise()
    diagnosis = advice.diagnosis.data
    structure = diagnosis.get("structure", {}) or {}
    numbers = (diagnosis.get("steps", {}) or {}).get("numbers", []) or []
    phases = structure.get("step_phases", []) or []
    phase_of = {n: p for n, p in zip(numbers, phases)}
    graph_steps = graph.steps()
    steps = [{"step_number": s.get("number"), "name": s.get("name", ""),
              "phase": phase_of.get(s.get("number"), phase_of.get(-1 if s.get("number") is None else None, "unknown")),
              "latency_ns": int(s.get("latency_ns") or 0)} for s in graph_steps]
    ops, shapes = _op_statistics(graph), _request_shapes(graph)
    from .drift import request_lengths
    per_token = structure.get("per_token_latency", {}) or {}
    recs = advice.data.get("recommendations", [])
    hardware = diagnosis.get("hardware", {}) or {}
    return RunRecord(
        path=os.path.abspath(path), content_hash=digest, format=graph.format, hardware=hardware.get("id") or "",
        step_count=len(graph_steps), decode_step_count=int(structure.get("decode_steps") or 0),
        per_token={k: per_token.get(k) for k in ("p50_ms", "p90_ms", "p99_ms", "mean_ms")},
        prefill_mean_ms=(structure.get("prefill_latency") or {}).get("mean_ms"),
        step_time_us=(diagnosis.get("steps", {}) or {}).get("step_time_us"),
        layers=structure.get("layers") or None,
        estimated_speedup=(diagnosis.get("summary", {}) or {}).get("estimated_combined_speedup"),
        metadata=dict(graph.metadata), steps=steps, op_stats=ops,
        issues=[{"issue_type": i.get("issue_type", ""), "severity": i.get("severity", ""),
                 "op_name": i.get("op_name", "") or "", "op_type": i.get("op_type", "") or "",
                 "phase": i.get("phase", "") or "", "affected_us": i.get("affected_us"),
                 "affected_share": i.get("affected_share"), "estimated_saved_us": i.get("estimated_saved_us"),
                 "detail": i.get("detail", "") or ""} for i in diagnosis.get("issues", [])],
        recommendations=[{"rank": r.get("rank", n + 1), "hotspot_type": r.get("hotspot_type", ""),
                          "rule_id": r.get("rule_id", ""), "severity": r.get("severity", ""),
                          "description": r.get("description", ""), "action": r.get("action", ""),
                          "estimated_speedup": r.get("estimated_speedup"),
                          "estimated_saved_us": r.get("estimated_saved_us"),
                          "raw_json": json.dumps(r, sort_keys=True)} for n, r in enumerate(recs)],
        request_shapes=shapes, length_histogram=_length_histogram(request_lengths(shapes)),
        actions=propose_actions(recs))


# ------------------------------------------------------------------------------ pipeline
@dataclass
class IngestOutcome:
    path: str
    status: str               # stored | skipped | quarantined
    run_id: Optional[int] = None
    error: str = ""


@dataclass
class PipelineResult:
    db_path: str
    outcomes: List[IngestOutcome] = field(default_factory=list)
    drift: Optional[DriftResult] = None
    report_path: Optional[str] = None

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def exit_code(self) -> int:
        return EXIT_PARTIAL if self.count("quarantined") else EXIT_OK

    def to_dict(self) -> Dict[str, Any]:
        return {"schema": "pypto.pipeline/1", "db": self.db_path,
                "stored": self.count("stored"), "skipped": self.count("skipped"),
                "quarantined": self.count("quarantined"),
                "outcomes": [o.__dict__ for o in self.outcomes],
                "drift": self.drift.to_dict() if self.drift else None, "report": self.report_path}


def ingest_one(store: HistoryStore, path: str, known: Dict[str, str], log: Log = _quiet) -> IngestOutcome:
    """Ingests one profile: skipped when its content was seen before, quarantined when it fails."""
    try:
        digest = content_hash(path)
    except OSError as exc:
        return IngestOutcome(path, "skipped", error=f"{path}: cannot be read now ({exc.strerror or exc})")
    if digest in known:
        return IngestOutcome(path, "skipped", error=f"already {'ingested' if known[digest] == 'run' else 'quarantined'}")
    try:
        record = extract_run(path, digest)
        run_id = store.store_run(record)
    except (sqlite3.Error, HistoryError):
        raise                     # the database itself failed: stop, the history is as before this profile
    except KeyboardInterrupt:
        raise
    except Exception as exc:      # noqa: BLE001 - any failure of one profile must not block the others
        message = str(exc) or type(exc).__name__
        if os.path.abspath(path) not in message and path not in message:
            message = f"{path}: {message}"
        store.quarantine(os.path.abspath(path), digest, type(exc).__name__, message)
        known[digest] = "quarantine"
        log(f"quarantined {path}: {type(exc).__name__}: {message}")
        return IngestOutcome(path, "quarantined", error=f"{type(exc).__name__}: {message}")
    known[digest] = "run"
    log(f"stored run {run_id}: {path}")
    return IngestOutcome(path, "stored", run_id=run_id)


def _db_excludes(db_path: str) -> List[str]:
    return [db_path + suffix for suffix in ("", "-wal", "-shm", "-journal")]


def run_pipeline(directory: Any, db: Any = None, report: Any = None, log: Log = _quiet,
                 force_report: bool = True) -> PipelineResult:
    """One shot: ingest every new profile of `directory` into the history `db`, then check drift of the
    latest run and (with `report`) write the review report (.html or .md)."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise NotADirectoryError(f"{directory}: not a directory of profiles")
    db_path = os.fspath(db) if db is not None else DEFAULT_DB_PATH
    result = PipelineResult(db_path)
    with HistoryStore(db_path) as store:
        known = store.known_hashes()
        paths = discover_profiles(directory, exclude=_db_excludes(db_path))
        with Progress("pypto pipeline", total=len(paths)) as progress:
            for path in paths:
                result.outcomes.append(ingest_one(store, path, known, log))
                progress.advance(path)
        result.drift = detect_drift(store)
        if report is not None:
            from .review_report import write_report
            result.report_path = write_report(store, os.fspath(report), drift=result.drift, force=force_report)
    return result


# ------------------------------------------------------------------------------ watch
class _StopFlag:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal_name = ""

    def __call__(self, signum: int, _frame: Any) -> None:
        self.signal_name = signal.Signals(signum).name
        self.event.set()


def watch(directory: Any, db: Any = None, interval_s: float = DEFAULT_WATCH_INTERVAL_S, log: Log = print,
          stop: Optional[threading.Event] = None, report: Any = None) -> int:
    """Polls `directory` every `interval_s` seconds and ingests each profile once it looked the same
    on two scans, until SIGINT/SIGTERM (or `stop` is set); finishes the profile in progress and
    returns EXIT_OK. Signal handlers are installed only when called from the main thread."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise NotADirectoryError(f"{directory}: not a directory of profiles")
    if interval_s <= 0:
        raise ValueError(f"--interval must be > 0 seconds, got {interval_s}")
    db_path = os.fspath(db) if db is not None else DEFAULT_DB_PATH
    flag = _StopFlag()
    stop_event = stop or flag.event
    previous_handlers = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous_handlers[sig] = signal.signal(sig, flag)
    try:
        with HistoryStore(db_path) as store:
            known = store.known_hashes()
            last_seen: Dict[str, Tuple[int, int, int]] = {}
            done: Dict[str, Tuple[int, int, int]] = {}
            log(f"watching {directory} every {interval_s:g} s (history {db_path}); stop with Ctrl-C or SIGTERM")
            while not (stop_event.is_set() or flag.event.is_set()):
                stored_now = 0
                for path in discover_profiles(directory, exclude=_db_excludes(db_path)):
                    if stop_event.is_set() or flag.event.is_set():
                        break
                    try:
                        sig = file_signature(path)
                    except OSError:
                        continue          # vanished between scan and stat
                    stable = last_seen.get(path) == sig
                    last_seen[path] = sig
                    if not stable or done.get(path) == sig:
                        continue
                    outcome = ingest_one(store, path, known, log)
                    if outcome.status != "skipped" or outcome.error.startswith("already"):
                        done[path] = sig
                    stored_now += outcome.status == "stored"
                if stored_now:
                    drift = detect_drift(store)
                    for f in drift.flags:
                        log(f"drift: {f.message}")
                    if report is not None:
                        from .review_report import write_report
                        write_report(store, os.fspath(report), drift=drift, force=True)
                deadline = time.monotonic() + interval_s
                while time.monotonic() < deadline and not (stop_event.is_set() or flag.event.is_set()):
                    time.sleep(min(STOP_CHECK_INTERVAL_S, max(deadline - time.monotonic(), 0)))
        log(f"watch stopped ({flag.signal_name or 'stop requested'})")
        return EXIT_OK
    finally:
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)


# ------------------------------------------------------------------------------ actions
def export_actions(store: HistoryStore, output: str, force: bool = False) -> Dict[str, Any]:
    """Writes the approved actions as a config file (JSON; also valid YAML 1.2, so .yaml works) and
    marks them exported. Refuses to overwrite an existing file unless `force`."""
    approved = [a for a in store.actions() if a["status"] in ("approved", "exported")]
    if not approved:
        raise LookupError(f"{store.path}: no approved action to export (approve with `actions approve ID`)")
    if os.path.lexists(output) and not force:
        raise FileExistsError(f"{output}: exists; pass --force to overwrite")
    config: Dict[str, Any] = {"schema": "pypto.actions/1", "exported_at": utc_now(),
                              "env": {}, "env_unset": []}
    for category in ACTION_CATEGORIES[1:]:
        config[category] = []
    for a in approved:
        p = a["payload"]
        entry = {"id": a["id"], "hotspot_type": p["hotspot_type"], "rule_id": p["rule_id"],
                 "action_id": p["action_id"], "description": p["description"], "action": p["action"],
                 "prerequisite": p["prerequisite"], "artifact": p["artifact"], "reviewer": a["reviewer"],
                 "approved_at": a["reviewed_at"], "source_run_id": a["source_run_id"]}
        if a["kind"] == "env":
            for key, value in (p.get("env") or {}).items():
                if value is None:
                    config["env_unset"].append(key)
                else:
                    config["env"][key] = value
        else:
            config.setdefault(a["kind"], []).append(entry)
    config["actions"] = [{"id": a["id"], "kind": a["kind"], "action": a["payload"]["action"],
                          "reviewer": a["reviewer"]} for a in approved]
    config["env_unset"] = sorted(set(config["env_unset"]))
    text = json.dumps(config, indent=2, sort_keys=False) + "\n"
    directory = os.path.dirname(os.path.abspath(output))
    fd, tmp = tempfile.mkstemp(prefix=".pypto-actions-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if force:
            os.replace(tmp, output)
        else:
            os.link(tmp, output)          # fails if the file appeared meanwhile: never overwrite
            os.unlink(tmp)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    for a in approved:
        if a["status"] == "approved":
            store.set_action_status(a["id"], "exported", allowed_from=("approved",))
    return config


# ------------------------------------------------------------------------------ command line
_DESCRIPTION = """\
The offline pipeline of pypto: ingest profiles into a history database (SQLite), diagnose and advise
each one, flag drift and regressions of the latest run against the earlier ones, write a review
report, and keep the set of automatic actions (env settings, tuning-bank, KV-cache layout, norm
fusion, config) that a person approves before they are exported.

A profile is a file or a profile directory (*_ascend_pt, PROF_*) directly inside DIR. Files whose
content was ingested before are skipped; a profile that fails to parse is quarantined with its
error and does not stop the others. Each profile is stored in one transaction.

exit status: 0 ok, 1 some profiles quarantined, 2 bad arguments / unusable database,
3 drift found (pipeline --fail-on-drift)"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pypto", description=_DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    db_help = f"history database (default: ./{DEFAULT_DB_PATH}); created and upgraded as needed"

    pl = sub.add_parser("pipeline", help="ingest new profiles of DIR once, check drift, optionally report",
                        description="Ingest every new profile of DIR, diagnose and advise it, store it in the "
                                    "history, then compare the latest run with the earlier ones.")
    pl.add_argument("dir", metavar="DIR", help="directory of profiles (files and profile directories)")
    pl.add_argument("--db", default=DEFAULT_DB_PATH, help=db_help)
    pl.add_argument("--report", metavar="FILE", help="write the review report: FILE.html or FILE.md (replaced)")
    pl.add_argument("--json", action="store_true", help="print the result as JSON (schema pypto.pipeline/1)")
    pl.add_argument("--fail-on-drift", action="store_true", help="exit 3 when the latest run drifted")
    pl.add_argument("-q", "--quiet", action="store_true", help="print only the summary")

    w = sub.add_parser("watch", help="keep ingesting new profiles of DIR until SIGINT/SIGTERM",
                       description="Scan DIR every --interval seconds; a profile is read once it looked the same "
                                   "(file count, size, mtime) on two scans. SIGINT/SIGTERM finish the profile in "
                                   "progress and exit 0.")
    w.add_argument("dir", metavar="DIR")
    w.add_argument("--db", default=DEFAULT_DB_PATH, help=db_help)
    w.add_argument("--interval", type=float, default=DEFAULT_WATCH_INTERVAL_S, metavar="S",
                   help=f"seconds between scans (default {DEFAULT_WATCH_INTERVAL_S:g})")
    w.add_argument("--report", metavar="FILE", help="rewrite the review report after each new run")

    a = sub.add_parser("actions", help="review the proposed actions: list, approve, reject, export",
                       description="Actions are proposed from recommendations the automatic part can apply "
                                   "(env settings, tuning bank, KV-cache layout, norm fusion, config). Only "
                                   "approved actions are exported.")
    asub = a.add_subparsers(dest="actions_command", metavar="ACTION")
    asub.required = True
    al = asub.add_parser("list", help="list actions with their status")
    al.add_argument("--db", default=DEFAULT_DB_PATH, help=db_help)
    al.add_argument("--status", choices=("proposed", "approved", "rejected", "exported"))
    al.add_argument("--json", action="store_true")
    for name, verb in (("approve", "approve"), ("reject", "reject")):
        ap = asub.add_parser(name, help=f"{verb} proposed actions by id")
        ap.add_argument("ids", metavar="ID", type=int, nargs="+")
        ap.add_argument("--reviewer", default=os.environ.get("USER", ""), help="who reviewed (default: $USER)")
        ap.add_argument("--db", default=DEFAULT_DB_PATH, help=db_help)
    ae = asub.add_parser("export", help="write the approved actions as a config file (JSON, valid YAML)")
    ae.add_argument("-o", "--output", required=True, metavar="FILE")
    ae.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    ae.add_argument("--db", default=DEFAULT_DB_PATH, help=db_help)

    h = sub.add_parser("history", help="read the history: drift of the latest run, runs, review report")
    hsub = h.add_subparsers(dest="history_command", metavar="WHAT")
    hsub.required = True
    hd = hsub.add_parser("drift", help="drift flags of a run against the runs before it (noise model: docs/pipeline.md)")
    hd.add_argument("--db", default=DEFAULT_DB_PATH, help=db_help)
    hd.add_argument("--run", type=int, help="run id (default: the latest)")
    hd.add_argument("--json", action="store_true")
    hr = hsub.add_parser("runs", help="list runs and quarantined profiles")
    hr.add_argument("--db", default=DEFAULT_DB_PATH, help=db_help)
    hr.add_argument("--json", action="store_true")
    hp = hsub.add_parser("report", help="write the review report (.html or .md)")
    hp.add_argument("-o", "--output", required=True, metavar="FILE")
    hp.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    hp.add_argument("--db", default=DEFAULT_DB_PATH, help=db_help)
    return p


def _fmt_ms(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.3f}"


def _print_drift(drift: Optional[DriftResult], out: Any) -> None:
    if drift is None or drift.run_id is None:
        print("drift: no run in the history", file=out)
        return
    if not drift.flags:
        print(f"drift: run {drift.run_id} vs {len(drift.baseline_run_ids)} earlier runs: nothing beyond the noise "
              f"model", file=out)
    for f in drift.flags:
        print(f"drift [{f.kind}] {f.message}", file=out)
    for n in drift.notes:
        print(f"note: {n}", file=out)


def _require_db(path: str) -> None:
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no history database (run `pypto pipeline DIR --db {path}` first)")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line of the pipeline subcommands; returns the exit status."""
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:           # --help (0) or a usage error (2)
        return int(exc.code or 0)
    out = sys.stdout
    try:
        if args.command == "pipeline":
            log = _quiet if (args.quiet or args.json) else (lambda m: print(m, file=out))
            result = run_pipeline(args.dir, args.db, report=args.report, log=log)
            if args.json:
                print(json.dumps(result.to_dict(), indent=2), file=out)
            else:
                print(f"{result.count('stored')} stored, {result.count('skipped')} skipped, "
                      f"{result.count('quarantined')} quarantined (history {result.db_path})", file=out)
                _print_drift(result.drift, out)
                if result.report_path:
                    print(f"report: {result.report_path}", file=out)
            if args.fail_on_drift and result.drift and result.drift.flags:
                return EXIT_DRIFT
            return result.exit_code
        if args.command == "watch":
            return watch(args.dir, args.db, args.interval, log=lambda m: print(m, file=out, flush=True),
                         report=args.report)
        if args.command == "actions":
            return _actions_command(args, out)
        if args.command == "history":
            return _history_command(args, out)
    except (FileNotFoundError, FileExistsError, NotADirectoryError, LookupError, ValueError, HistoryError,
            sqlite3.Error) as exc:
        message = str(exc)
        if isinstance(exc, KeyError) and exc.args:
            message = str(exc.args[0])
        print(f"pypto {args.command}: error: {message}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_ERROR


def _actions_command(args: argparse.Namespace, out: Any) -> int:
    _require_db(args.db)
    with HistoryStore(args.db) as store:
        if args.actions_command == "list":
            actions = store.actions(args.status)
            if args.json:
                print(json.dumps(actions, indent=2), file=out)
                return EXIT_OK
            if not actions:
                print("no actions" + (f" with status {args.status}" if args.status else ""), file=out)
            for a in actions:
                p = a["payload"]
                reviewer = f" by {a['reviewer']}" if a["reviewer"] else ""
                print(f"{a['id']:>4}  {a['status']:<9}{reviewer}  [{a['kind']}] {p['hotspot_type']}: "
                      f"{p['description']}", file=out)
                for line in p["action"].splitlines():
                    print(f"        {line}", file=out)
            return EXIT_OK
        if args.actions_command in ("approve", "reject"):
            status = "approved" if args.actions_command == "approve" else "rejected"
            for action_id in args.ids:
                store.set_action_status(action_id, status, args.reviewer or None,
                                        allowed_from=("proposed", "approved", "rejected"))
                print(f"action {action_id}: {status}" + (f" by {args.reviewer}" if args.reviewer else ""), file=out)
            return EXIT_OK
        config = export_actions(store, args.output, force=args.force)
        print(f"exported {len(config['actions'])} approved actions to {args.output}", file=out)
        return EXIT_OK


def _history_command(args: argparse.Namespace, out: Any) -> int:
    _require_db(args.db)
    with HistoryStore(args.db) as store:
        if args.history_command == "drift":
            drift = detect_drift(store, args.run)
            if args.json:
                print(json.dumps(drift.to_dict(), indent=2), file=out)
            else:
                _print_drift(drift, out)
            return EXIT_OK
        if args.history_command == "runs":
            runs, quarantined = store.runs(), store.quarantined()
            if args.json:
                print(json.dumps({"runs": runs, "quarantine": quarantined}, indent=2), file=out)
                return EXIT_OK
            for r in runs:
                print(f"{r['id']:>4}  {r['ingested_at']}  {r['format']:<10} steps {r['step_count']:>4}  per-token p50 "
                      f"{_fmt_ms(r['per_token_p50_ms'])} ms  {r['path']}", file=out)
            for q in quarantined:
                print(f"quarantined  {q['quarantined_at']}  {q['path']}: {q['error_type']}: {q['error']}", file=out)
            return EXIT_OK
        from .review_report import write_report
        path = write_report(store, args.output, drift=detect_drift(store), force=args.force)
        print(f"report: {path}", file=out)
        return EXIT_OK


__all__ = ["run_pipeline", "watch", "main", "discover_profiles", "content_hash", "extract_run", "ingest_one",
           "propose_actions", "export_actions", "parse_env_action", "PipelineResult", "IngestOutcome",
           "DEFAULT_DB_PATH", "DEFAULT_WATCH_INTERVAL_S"]
