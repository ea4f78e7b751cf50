"""Collecting profiles of a model's generate loop: Profiler, TuningSession, ProfileResults.

    import torch
    from pypto.collection import Profiler

    with Profiler(model=model) as prof:          # every forward of `model` becomes one step
        with torch.no_grad():
            model.generate(prompt, max_new_tokens=16)
    results = prof.get_results()
    results.get_latency_stats()                  # p50 / p90 / p99 ms per generated token
    results.call_graph.steps()                   # the engine's view: one step per token

Backends, chosen at run time:
- torch_npu importable and an NPU available: torch_npu.profiler (CPU + NPU activities, AI-core
  PipeUtilization metrics), written by tensorboard_trace_handler as an `*_ascend_pt` directory that
  the engine's Ascend importer reads;
- CUDA available: torch.profiler with CPU + CUDA activities, exported as a Kineto Chrome trace;
- otherwise torch.profiler with the CPU activity, exported as a Kineto Chrome trace.
On torch builds without Kineto (or with PYPTO_FORCE_IN_MEMORY_EVENTS=1) the trace is written from the
profiler's in-memory events, in the Kineto layout, with input shapes and types.

Steps: with a model watched, forward pre/post hooks open and close a `ProfilerStep#N` record_function
around every forward call (N = the forward's index since the profiler started; the engine treats these
as steps) and time the forward with perf_counter_ns (after a device synchronize on CUDA / NPU).
The first forward of each `generate` call is the prefill, the others are decode tokens.

Without a model (`Profiler()` around any code, the brief's form), global module hooks
(torch.nn.modules.module.register_module_forward_pre_hook / register_module_forward_hook) find the
steps: each outermost nn.Module forward call on the thread that opened the profiler is one step, so
HF `generate`, hand-written decode loops and direct `model(x)` calls all give one step per call, and
several `generate` calls in one window give all their tokens. Prefill and decode are told apart by the
query length (input_ids / inputs_embeds / first tensor argument: more than one position = prefill;
one position with cache_position 0 = prefill of a one-token prompt); each prefill starts a new
generate call. `find_steps=False` turns this off (then call step() yourself).

Sampling: `schedule=dict(wait=19, warmup=0, active=1, repeat=0)` (or a torch.profiler.schedule
object) records one forward in 20; each watched forward advances the schedule. Forwards outside the
active window still get their wall time measured (two perf_counter_ns calls and a dict append), so the
latency statistics cover every token while the detailed trace covers only the sampled ones.
`schedule=SamplingBudget(0.01)` (pypto.sampling) spaces the records by their measured cost instead,
so that the profiler costs at most that share of the forwards' time; pause() / resume() take the
hooks off between forwards.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse
import warnings
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from .sampling import SamplingBudget
from .errors import InvalidArgumentError, ProfileNotFoundError, PyptoError

RESULTS_SIDECAR_NAME = "pypto_results.json"
# Tables save() adds to the saved profile (SQLite) for the results.
RESULTS_TABLE = "pypto_results"
TOKEN_STEPS_TABLE = "pypto_token_steps"
SQLITE_MAGIC = b"SQLite format 3\x00"   # the first 16 bytes of every SQLite 3 database (sqlite.org/fileformat.html)
RESULTS_SCHEMA = "pypto.results/1"
SAVED_TRACE_NAME = "trace.json.gz"
SAVED_ASCEND_DIR_NAME = "ascend_profile"
SAVED_SQLITE_NAME = "profile.sqlite"
FORCE_IN_MEMORY_ENV = "PYPTO_FORCE_IN_MEMORY_EVENTS"
STEP_NAME_PREFIX = "ProfilerStep#"           # what torch.profiler writes and the engine reads as steps
TRACE_LEVELS = ("minimal", "operator", "detailed")
SCHEDULE_KEYS = ("wait", "warmup", "active", "repeat", "skip_first")
# A saved sidecar is a few KB per thousand tokens; anything larger is not one (guards `load`).
MAX_SIDECAR_BYTES = 64 * 1024 * 1024
PERCENTILES = (50, 90, 99)
# torch warns once that each schedule cycle starts with no events; pypto exports every cycle itself.
_CYCLE_CLEAR_WARNING = "Warning: Profiler clears events at the end of each cycle"


# --------------------------------------------------------------------------- statistics


def nearest_rank_percentile(sorted_values: Sequence[float], percent: float) -> float:
    """The nearest-rank percentile: the smallest value with at least `percent`% of values at or below it
    (the engine's, as every pypto report computes it)."""
    if not sorted_values:
        raise InvalidArgumentError("percentile of an empty list")
    from ._native import engine
    return engine.nearest_rank_percentile([float(v) for v in sorted_values], float(percent))


def latency_summary(values_ms: Sequence[float]) -> Dict[str, Any]:
    """count, mean, min, max, p50, p90, p99 (nearest rank) of latencies in ms; None values when empty."""
    ordered = sorted(float(v) for v in values_ms)
    if not ordered:
        return {"count": 0, "mean": None, "min": None, "max": None, **{f"p{p}": None for p in PERCENTILES}}
    summary: Dict[str, Any] = {"count": len(ordered), "mean": sum(ordered) / len(ordered),
                               "min": ordered[0], "max": ordered[-1]}
    for p in PERCENTILES:
        summary[f"p{p}"] = nearest_rank_percentile(ordered, p)
    return summary


# --------------------------------------------------------------------------- results


class ProfileResults:
    """What one profiling run produced: the trace, per-token latencies, step phases and settings.

    `forwards` holds one record per watched forward call: index, phase ("prefill" / "decode"),
    latency_ms, recorded (inside the profiler's active window), generate_call, batch, seq_len.
    """

    def __init__(self, trace_path: Optional[str], forwards: Optional[List[Dict[str, Any]]] = None,
                 settings: Optional[Dict[str, Any]] = None, model_config: Optional[Dict[str, Any]] = None,
                 generate_calls: Optional[List[Dict[str, Any]]] = None):
        self.trace_path = trace_path
        self.forwards: List[Dict[str, Any]] = list(forwards or [])
        self.settings: Dict[str, Any] = dict(settings or {})
        self.model_config = model_config
        self.generate_calls: List[Dict[str, Any]] = list(generate_calls or [])
        self._call_graph = None

    # -- latencies
    @property
    def token_latencies_ms(self) -> List[float]:
        """Wall time of every watched forward (one generated token each), in order."""
        return [f["latency_ms"] for f in self.forwards]

    @property
    def step_phases(self) -> List[str]:
        return [f["phase"] for f in self.forwards]

    def get_latency_stats(self) -> Dict[str, Any]:
        """Milliseconds per generated token (nearest-rank percentiles).

        Top level: count, mean, min, max, p50, p90, p99 over all tokens; "prefill" and "decode": the
        same over the first forward of each generate call and over the others; "profiled_tokens": how
        many forwards ran inside the profiler's active window (their latency includes its overhead).
        """
        stats = latency_summary(self.token_latencies_ms)
        stats["prefill"] = latency_summary([f["latency_ms"] for f in self.forwards if f["phase"] == "prefill"])
        stats["decode"] = latency_summary([f["latency_ms"] for f in self.forwards if f["phase"] == "decode"])
        stats["profiled_tokens"] = sum(1 for f in self.forwards if f.get("recorded"))
        stats["unit"] = "ms per generated token"
        return stats

    # -- the trace, through the engine
    @property
    def call_graph(self):
        """The OperatorCallGraph of the trace (loaded by the engine on first use)."""
        if self._call_graph is None:
            if not self.trace_path:
                raise ProfileNotFoundError("these results hold no trace (no forward was inside the profiler's "
                                           "active window, or the profiler recorded nothing)")
            from .graph import load_profile
            self._call_graph = load_profile(self.trace_path)
        return self._call_graph

    # -- save / load
    def to_dict(self) -> Dict[str, Any]:
        return {"schema": RESULTS_SCHEMA, "trace": None, "settings": self.settings, "model_config": self.model_config,
                "forwards": self.forwards, "generate_calls": self.generate_calls,
                "latency_stats": self.get_latency_stats()}

    def save(self, path: Any) -> str:
        """Writes ONE file at exactly `path` (any name; the brief uses "baseline_profile.bin"), replacing
        an existing file as torch.save does, atomically: a temporary file in the same directory, then a
        rename, so a reader never sees half a file and a failed save leaves the old file as it was.

        The file is pypto's saved profile (SQLite, docs/formats/pypto-db.md, what `pypto export-sqlite`
        writes: every command reads it, `pypto analyze FILE` included) plus two tables with these results:
        `pypto_results` (key, value: schema, settings, model config, generate calls, latency stats as
        JSON) and `pypto_token_steps` (one row per forward: index, phase, latency_ms, …).
        `ProfileResults.load(path)` reads it back. Returns the path.
        """
        target = os.fspath(path)
        if os.path.isdir(target):
            raise InvalidArgumentError(f"{target}: is a directory; save() writes one file at the given path "
                                       "(save_directory() writes the directory layout)")
        folder = os.path.dirname(os.path.abspath(target))
        if not os.path.isdir(folder):
            raise ProfileNotFoundError(f"{folder}: no such directory (save() creates the file, not its folders)")
        if self.trace_path and not os.path.exists(self.trace_path):
            raise ProfileNotFoundError(f"{self.trace_path}: the trace of these results no longer exists")
        handle, temporary = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=folder)
        os.close(handle)
        try:
            if self.trace_path:
                self.call_graph.export_to_sqlite(temporary, force=True, findings=False)
            else:
                os.unlink(temporary)   # results without a trace: the two pypto tables alone
            self._write_results_tables(temporary)
            with open(temporary, "rb") as f:
                os.fsync(f.fileno())
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        return target

    def _write_results_tables(self, database: str) -> None:
        import sqlite3
        document = self.to_dict()
        document["trace"] = "this file" if self.trace_path else None
        forwards = document.pop("forwards")
        connection = sqlite3.connect(database)
        try:
            with connection:
                connection.execute(f"DROP TABLE IF EXISTS {RESULTS_TABLE}")
                connection.execute(f"DROP TABLE IF EXISTS {TOKEN_STEPS_TABLE}")
                connection.execute(f"CREATE TABLE {RESULTS_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                connection.executemany(f"INSERT INTO {RESULTS_TABLE} VALUES (?, ?)",
                                       [(k, json.dumps(v, default=str)) for k, v in document.items()])
                connection.execute(
                    f"CREATE TABLE {TOKEN_STEPS_TABLE} (idx INTEGER, phase TEXT, latency_ms REAL, recorded INTEGER, "
                    "generate_call INTEGER, batch INTEGER, seq_len INTEGER)")
                connection.executemany(
                    f"INSERT INTO {TOKEN_STEPS_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(f.get("index"), f.get("phase"), f.get("latency_ms"), int(bool(f.get("recorded"))),
                      f.get("generate_call"), f.get("batch"), f.get("seq_len")) for f in forwards])
        finally:
            connection.close()

    def save_directory(self, path: Any, overwrite: bool = False, with_sqlite: bool = False) -> str:
        """The layout save() wrote before it wrote one file: a directory with the trace (Kineto JSON
        gzipped as trace.json.gz, or the Ascend directory copied) and pypto_results.json (latencies, phases, settings, model config).
        `with_sqlite` also writes the engine's SQLite export (profile.sqlite). Returns the directory.
        """
        directory = os.fspath(path)
        if os.path.exists(directory):
            if not os.path.isdir(directory):
                raise InvalidArgumentError(f"{directory}: exists and is not a directory")
            if os.listdir(directory) and not overwrite:
                raise InvalidArgumentError(f"{directory}: directory is not empty (pass overwrite=True to replace "
                                           "the saved results in it)")
        os.makedirs(directory, exist_ok=True)
        document = self.to_dict()
        if self.trace_path:
            if not os.path.exists(self.trace_path):
                raise ProfileNotFoundError(f"{self.trace_path}: the trace of these results no longer exists")
            if os.path.isdir(self.trace_path):
                target = os.path.join(directory, SAVED_ASCEND_DIR_NAME)
                if os.path.exists(target):
                    shutil.rmtree(target)
                shutil.copytree(self.trace_path, target)
                document["trace"] = SAVED_ASCEND_DIR_NAME
            else:
                target = os.path.join(directory, SAVED_TRACE_NAME)
                with open(self.trace_path, "rb") as source:
                    already_gzip = source.read(2) == b"\x1f\x8b"
                    source.seek(0)
                    if already_gzip:
                        with open(target, "wb") as sink:
                            shutil.copyfileobj(source, sink)
                    else:
                        with gzip.open(target, "wb", compresslevel=6) as sink:
                            shutil.copyfileobj(source, sink)
                document["trace"] = SAVED_TRACE_NAME
            if with_sqlite:
                self.call_graph.export_to_sqlite(os.path.join(directory, SAVED_SQLITE_NAME), force=True,
                                                 findings=False)
                document["sqlite"] = SAVED_SQLITE_NAME
        sidecar = os.path.join(directory, RESULTS_SIDECAR_NAME)
        temporary = sidecar + ".tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=1, default=str)
        os.replace(temporary, sidecar)
        return directory

    @classmethod
    def load(cls, path: Any) -> "ProfileResults":
        """Reads results written by save() (one file), or by save_directory() / an older pypto (the
        directory, or its pypto_results.json)."""
        given = os.fspath(path)
        if not os.path.exists(given):
            raise ProfileNotFoundError(f"{given}: no such file or directory")
        if os.path.isfile(given):
            with open(given, "rb") as f:
                head = f.read(len(SQLITE_MAGIC))
            if head == SQLITE_MAGIC:
                return cls._load_file(given)
        sidecar = os.path.join(given, RESULTS_SIDECAR_NAME) if os.path.isdir(given) else given
        if not os.path.isfile(sidecar):
            raise ProfileNotFoundError(f"{given}: not saved pypto results ({RESULTS_SIDECAR_NAME} is missing)")
        size = os.path.getsize(sidecar)
        if size > MAX_SIDECAR_BYTES:
            raise InvalidArgumentError(f"{sidecar}: {size} bytes, more than a results file holds "
                                       f"({MAX_SIDECAR_BYTES}); not a {RESULTS_SIDECAR_NAME}")
        try:
            with open(sidecar, "r", encoding="utf-8") as f:
                document = json.load(f)
        except UnicodeDecodeError as exc:
            raise InvalidArgumentError(f"{sidecar}: not a {RESULTS_SIDECAR_NAME} (not UTF-8 text: {exc.reason} "
                                       f"at byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise InvalidArgumentError(f"{sidecar}: not a {RESULTS_SIDECAR_NAME} (malformed JSON at line "
                                       f"{exc.lineno}, column {exc.colno}: {exc.msg})") from None
        if not isinstance(document, dict) or document.get("schema") != RESULTS_SCHEMA:
            found = document.get("schema") if isinstance(document, dict) else type(document).__name__
            raise InvalidArgumentError(f"{sidecar}: not a {RESULTS_SIDECAR_NAME} (schema {found!r}, "
                                       f"expected {RESULTS_SCHEMA!r})")
        forwards = document.get("forwards")
        if not isinstance(forwards, list) or not all(
                isinstance(f, dict) and isinstance(f.get("latency_ms"), (int, float)) and f.get("phase") in
                ("prefill", "decode") for f in forwards):
            raise InvalidArgumentError(f"{sidecar}: malformed \"forwards\" (a list of objects with latency_ms "
                                       "and phase prefill/decode expected)")
        trace_path = None
        trace_name = document.get("trace")
        if trace_name is not None:
            if not isinstance(trace_name, str) or os.path.isabs(trace_name) or ".." in trace_name.split("/"):
                raise InvalidArgumentError(f"{sidecar}: \"trace\" must name a file inside the results directory, "
                                           f"got {trace_name!r}")
            trace_path = os.path.join(os.path.dirname(os.path.abspath(sidecar)), trace_name)
            if not os.path.exists(trace_path):
                raise ProfileNotFoundError(f"{trace_path}: the trace named by {sidecar} is missing")
        return cls(trace_path, forwards, document.get("settings") or {}, document.get("model_config"),
                   document.get("generate_calls") or [])

    @classmethod
    def _load_file(cls, path: str) -> "ProfileResults":
        import sqlite3
        uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
        try:
            connection = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as exc:
            raise InvalidArgumentError(f"{path}: not saved pypto results (SQLite: {exc})") from None
        try:
            try:
                rows = connection.execute(f"SELECT key, value FROM {RESULTS_TABLE}").fetchall()
                steps = connection.execute(
                    f"SELECT idx, phase, latency_ms, recorded, generate_call, batch, seq_len FROM {TOKEN_STEPS_TABLE} "
                    "ORDER BY rowid").fetchall()
            except sqlite3.Error as exc:
                raise InvalidArgumentError(f"{path}: not saved pypto results (a SQLite file without the "
                                           f"{RESULTS_TABLE} / {TOKEN_STEPS_TABLE} tables: {exc}); a profile "
                                           "without results loads with pypto.load_profile()") from None
        finally:
            connection.close()
        document: Dict[str, Any] = {}
        for key, value in rows:
            try:
                document[key] = json.loads(value)
            except (TypeError, json.JSONDecodeError):
                raise InvalidArgumentError(f"{path}: table {RESULTS_TABLE}, key {key!r}: not JSON") from None
        if document.get("schema") != RESULTS_SCHEMA:
            raise InvalidArgumentError(f"{path}: not saved pypto results (schema {document.get('schema')!r}, "
                                       f"expected {RESULTS_SCHEMA!r})")
        forwards = []
        for number, (index, phase, latency, recorded, call, batch, seq_len) in enumerate(steps, 1):
            if phase not in ("prefill", "decode") or not isinstance(latency, (int, float)):
                raise InvalidArgumentError(f"{path}: table {TOKEN_STEPS_TABLE}, row {number}: phase must be prefill "
                                           f"or decode and latency_ms a number, got {phase!r}, {latency!r}")
            forwards.append({"index": index, "phase": phase, "latency_ms": float(latency), "recorded": bool(recorded),
                             "generate_call": call, "batch": batch, "seq_len": seq_len})
        trace_path = path if document.get("trace") else None
        return cls(trace_path, forwards, document.get("settings") or {}, document.get("model_config"),
                   document.get("generate_calls") or [])

    def __repr__(self) -> str:
        return (f"ProfileResults(trace_path={self.trace_path!r}, tokens={len(self.forwards)}, "
                f"backend={self.settings.get('backend')!r})")


# --------------------------------------------------------------------------- backend helpers


def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a requirement of collection
        raise PyptoError("pypto.collection needs PyTorch (import torch failed)") from exc
    return torch


def _npu_available() -> bool:
    try:
        import torch_npu  # noqa: F401
    except Exception:
        return False
    torch = _torch()
    return bool(getattr(torch, "npu", None) is not None and torch.npu.is_available())


def detect_backend() -> str:
    """"npu", "cuda" or "cpu": what this machine profiles with."""
    if _npu_available():
        return "npu"
    if _torch().cuda.is_available():
        return "cuda"
    return "cpu"


def _schedule_fields(schedule: Any) -> Optional[Dict[str, int]]:
    if schedule is None or callable(schedule):
        return None
    if not isinstance(schedule, dict):
        raise InvalidArgumentError("schedule must be a dict (wait, warmup, active, repeat, skip_first) or a "
                                   f"torch.profiler.schedule(...) object, not {type(schedule).__name__}")
    unknown = sorted(set(schedule) - set(SCHEDULE_KEYS))
    if unknown:
        raise InvalidArgumentError(f"schedule: unknown keys {unknown} (allowed: {', '.join(SCHEDULE_KEYS)})")
    fields = {"wait": 0, "warmup": 0, "active": 1, "repeat": 0, "skip_first": 0}
    for key, value in schedule.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidArgumentError(f"schedule: {key} must be a non-negative int, got {value!r}")
        fields[key] = value
    if fields["active"] < 1:
        raise InvalidArgumentError("schedule: active must be at least 1")
    return fields


def _first_tensor_shape(args: tuple, kwargs: Dict[str, Any]) -> Optional[tuple]:
    torch = _torch()
    for key in ("input_ids", "inputs_embeds"):
        value = kwargs.get(key)
        if isinstance(value, torch.Tensor):
            return tuple(value.shape)
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, torch.Tensor):
            return tuple(value.shape)
    return None


def _phase_from_inputs(shape: Optional[tuple], kwargs: Dict[str, Any], first: bool) -> str:
    """prefill / decode of one outermost forward from its query length (see the module docstring)."""
    if shape is not None and len(shape) >= 2:
        if shape[1] > 1:
            return "prefill"
        position = kwargs.get("cache_position")
        torch = _torch()
        if isinstance(position, torch.Tensor) and position.numel() > 0:
            return "prefill" if int(position.reshape(-1)[0]) == 0 else "decode"
        past = kwargs.get("past_key_values", ...)
        if past is None:
            return "prefill"
        get_length = getattr(past, "get_seq_length", None)
        if callable(get_length):
            try:
                return "decode" if get_length() > 1 else "prefill"
            except Exception:
                pass
        return "decode"
    return "prefill" if first else "decode"


def _calls_from_found_steps(forwards: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """generate-call records (first_forward, forwards, wall_ms) from steps split at each prefill."""
    calls: List[Dict[str, Any]] = []
    for f in forwards:
        number = f.get("generate_call")
        if number is None:
            return []
        while len(calls) <= number:
            calls.append({"first_forward": f["index"], "forwards": 0, "wall_ms": 0.0})
        calls[number]["forwards"] += 1
        calls[number]["wall_ms"] += f["latency_ms"]
    for c in calls:
        c["wall_ms_source"] = "sum of the call's forward times (generate itself not wrapped)"
    return [c for c in calls if c["forwards"]]


def model_fingerprint(model: Any) -> str:
    """Identifies a model across save/load within reason: class, config and parameter count (SHA-256).

    Module swaps that keep the weights (norm fusion, the KV-cache patch) keep the fingerprint."""
    import hashlib
    parts = [type(model).__module__ + "." + type(model).__qualname__]
    config = _model_config_dict(model)
    if config:
        parts.append(json.dumps({k: v for k, v in config.items() if k not in ("_attn_implementation_autoset",
                                                                           "_attn_implementation")},
                                sort_keys=True, default=str))
    try:
        parts.append(str(sum(int(p.numel()) for p in model.parameters())))
    except Exception:
        pass
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def _model_config_dict(model: Any) -> Optional[Dict[str, Any]]:
    config = getattr(model, "config", None)
    if config is None:
        return None
    if hasattr(config, "to_dict"):
        config = config.to_dict()
    elif not isinstance(config, dict) and hasattr(config, "__dict__"):
        config = vars(config)
    if not isinstance(config, dict):
        return None
    plain = {k: v for k, v in config.items() if isinstance(v, (str, int, float, bool)) or v is None}
    if "torch_dtype" in config and not isinstance(config["torch_dtype"], (str, type(None))):
        plain["torch_dtype"] = str(config["torch_dtype"]).replace("torch.", "")
    return plain


def _event_trace_name(event: Any) -> str:
    """The event's name as recorded: events() renames "ProfilerStep#N" to "ProfilerStep*" but keeps trace_name."""
    return getattr(event, "trace_name", None) or event.name


def _plain_nested(value: Any) -> Any:
    """Tuples / lists of ints (nested) as JSON lists; anything else as []."""
    if isinstance(value, (list, tuple)):
        return [_plain_nested(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return []


def write_events_as_kineto_trace(events: Any, path: str, time_offset_us: float = 0.0,
                                 metadata: Optional[Dict[str, Any]] = None) -> int:
    """Writes torch profiler in-memory events (FunctionEvent list) as a Kineto-style Chrome trace.

    Each event becomes a complete ("X") event: cat "user_annotation" for record_function ranges
    (ProfilerStep#N among them), "cpu_op" for operators, with args "Input Dims", "Input type",
    "Sequence number", "External id". Times are microseconds (+ time_offset_us). Returns the count.
    """
    pid = os.getpid()
    trace_events: List[Dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0, "args": {"name": "python"}}]
    for event in events:
        interval = getattr(event, "time_range", None)
        if interval is None:
            continue
        start, end = float(interval.start), float(interval.end)
        args: Dict[str, Any] = {"External id": int(getattr(event, "id", 0) or 0)}
        # structured_* keep tensor lists (aten::cat's inputs) that input_shapes flattens to [].
        shapes = getattr(event, "structured_input_shapes", None) or getattr(event, "input_shapes", None)
        if shapes:
            args["Input Dims"] = _plain_nested(shapes)
        dtypes = getattr(event, "input_dtypes", None)
        if dtypes:
            args["Input type"] = [str(t) if t is not None else "" for t in dtypes]
        strides = getattr(event, "structured_input_strides", None)
        if strides:
            args["Input Strides"] = _plain_nested(strides)
        concrete = getattr(event, "concrete_inputs", None)
        if concrete and any(c is not None for c in concrete):
            args["Concrete Inputs"] = ["" if c is None else str(c) for c in concrete]
        sequence_number = getattr(event, "sequence_nr", -1)
        if sequence_number is not None and sequence_number >= 0:
            args["Sequence number"] = int(sequence_number)
        name = _event_trace_name(event)
        annotation = bool(getattr(event, "is_user_annotation", False)) or name.startswith(STEP_NAME_PREFIX)
        trace_events.append({
            "ph": "X", "cat": "user_annotation" if annotation else "cpu_op", "name": name,
            "pid": pid, "tid": int(getattr(event, "thread", 0) or 0),
            "ts": round(start + time_offset_us, 3), "dur": round(max(0.0, end - start), 3), "args": args})
    document = {"schemaVersion": 1, "displayTimeUnit": "ms", "record_shapes": 1,
                "traceName": os.path.basename(path), "traceEvents": trace_events}
    if metadata:
        document["pypto_writer"] = metadata
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, separators=(",", ":"))
    return len(trace_events) - 1


def merge_kineto_traces(paths: Sequence[str], output: str) -> str:
    """Concatenates the events of several Kineto Chrome traces (one per schedule cycle) into one file.

    Timestamps are made comparable through each file's baseTimeNanoseconds (the first file's base is
    kept); other top-level keys come from the first file.
    """
    merged: Optional[Dict[str, Any]] = None
    base_ns = 0
    for path in paths:
        with open(path, "r", encoding="utf-8") as f:
            document = json.load(f)
        events = document.get("traceEvents", [])
        this_base = int(document.get("baseTimeNanoseconds", 0) or 0)
        if merged is None:
            merged = document
            base_ns = this_base
            continue
        shift_us = (this_base - base_ns) / 1000.0
        if shift_us:
            for event in events:
                if isinstance(event.get("ts"), (int, float)):
                    event["ts"] = event["ts"] + shift_us
        merged["traceEvents"].extend(e for e in events if e.get("ph") != "M")
    if merged is None:
        raise InvalidArgumentError("merge_kineto_traces: no trace to merge")
    with open(output, "w", encoding="utf-8") as f:
        json.dump(merged, f, separators=(",", ":"))
    return output


# --------------------------------------------------------------------------- the profiler


class Profiler:
    """Context manager that profiles what runs inside it; `get_results()` afterwards.

    device_id: the accelerator to synchronise for per-token timing (CUDA / NPU); recorded.
    trace_level: "minimal" (operators without shapes; Ascend Level0), "operator" (operators with
      shapes; Ascend Level1, the default), "detailed" (plus Python stacks and modules; Ascend Level2).
    capture_memory_access: the profiler's memory events (profile_memory).
    capture_ai_core_usage: Ascend AI-core pipe utilization metrics (AiCMetrics.PipeUtilization).
    output_dir: where the trace goes (a new temporary directory when None).
    schedule: dict(wait=, warmup=, active=, repeat=, skip_first=) or a torch.profiler.schedule object.
    record_shapes / with_stack: as torch.profiler (record_shapes is forced off by trace_level="minimal").
    model: a torch.nn.Module whose forward calls become steps (or call watch(model) later).
    find_steps: without `model`, every outermost nn.Module forward inside the block is one step
      (global module hooks; see the module docstring). False: no step finding (call step()).
    """

    def __init__(self, device_id: int = 0, trace_level: str = "operator", capture_memory_access: bool = True,
                 capture_ai_core_usage: bool = True, *, output_dir: Any = None, schedule: Any = None,
                 record_shapes: bool = True, with_stack: bool = False, model: Any = None,
                 backend: Optional[str] = None, find_steps: bool = True,
                 _force_in_memory: Optional[bool] = None):
        if trace_level not in TRACE_LEVELS:
            raise InvalidArgumentError(f"trace_level must be one of {', '.join(TRACE_LEVELS)}, got {trace_level!r}")
        if not isinstance(device_id, int) or device_id < 0:
            raise InvalidArgumentError(f"device_id must be a non-negative int, got {device_id!r}")
        if backend is not None and backend not in ("npu", "cuda", "cpu"):
            raise InvalidArgumentError(f"backend must be npu, cuda or cpu, got {backend!r}")
        self.device_id = device_id
        self.trace_level = trace_level
        self.capture_memory_access = bool(capture_memory_access)
        self.capture_ai_core_usage = bool(capture_ai_core_usage)
        self.schedule = schedule
        self._schedule_fields = _schedule_fields(schedule)
        # A SamplingBudget schedule is told what each forward and each record costs.
        self._budget: Optional[SamplingBudget] = schedule if isinstance(schedule, SamplingBudget) else None
        self._last_export_ns = 0
        self._paused = False
        self._paused_models: List[Any] = []
        self.record_shapes = bool(record_shapes) and trace_level != "minimal"
        self.with_stack = bool(with_stack) or trace_level == "detailed"
        self._requested_output_dir = None if output_dir is None else os.fspath(output_dir)
        self.output_dir: Optional[str] = None
        self._requested_backend = backend
        self.backend: Optional[str] = None
        if _force_in_memory is None:
            _force_in_memory = os.environ.get(FORCE_IN_MEMORY_ENV, "") not in ("", "0")
        self._force_in_memory = bool(_force_in_memory)
        self.in_memory_events = False
        self._torch_profiler: Any = None
        self._cycle_traces: List[str] = []
        self._cycle_alignments: List[Optional[float]] = []
        self._watched: List[Any] = []          # (model ref, handles, generate patch)
        self._forwards: List[Dict[str, Any]] = []
        self._generate_calls: List[Dict[str, Any]] = []
        self._open_step: Optional[Dict[str, Any]] = None
        self._forward_count = 0
        self._failed_forwards = 0
        self._pending_prefill = False
        self._any_generate_wrapped = False
        self._generate_calls_found = 0   # prefills seen by the global step finding
        self._model_config: Optional[Dict[str, Any]] = None
        self._watched_any = False
        self._active = False
        self._results: Optional[ProfileResults] = None
        self._initial_model = model
        self.find_steps = bool(find_steps)
        self._global_handles: List[Any] = []
        self._global_thread: Optional[int] = None
        self._root_reentry = 0
        self._roots: Dict[int, Dict[str, Any]] = {}   # id(module) -> class, forwards, weakref
        self._step_starts_us: Dict[int, float] = {}

    # -- context manager
    def __enter__(self) -> "Profiler":
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.stop()

    def start(self) -> None:
        if self._active:
            raise InvalidArgumentError("this Profiler is already running")
        self.backend = self._requested_backend or detect_backend()
        self.in_memory_events = self.backend != "npu" and (
            self._force_in_memory or not _torch().autograd.kineto_available())
        self.output_dir = self._requested_output_dir or tempfile.mkdtemp(prefix="pypto_profile_")
        os.makedirs(self.output_dir, exist_ok=True)
        if self._budget is not None:
            self._budget._window_started()   # before the profiler asks the schedule for step 0
        if self.backend == "npu":
            self._torch_profiler = self._make_npu_profiler()
        else:
            self._torch_profiler = self._make_torch_profiler()
        self._active = True
        try:
            global_steps = self._initial_model is None and self.find_steps
            if (self._initial_model is not None or global_steps) and self._own_step_annotations():
                self._torch_profiler.record_steps = False   # the forwards are the steps
            self._torch_profiler.start()
            if self._initial_model is not None:
                self.watch(self._initial_model)
            elif global_steps:
                self._install_global_hooks()
        except BaseException:
            self._active = False
            self._remove_hooks()
            raise

    def stop(self) -> None:
        if not self._active:
            return
        self._active = False
        self._paused = False
        self._paused_models = []
        try:
            self._close_open_step()
        finally:
            self._remove_hooks()
            self._remove_global_hooks()
            recording = self._recording_now()
            started_ns = time.perf_counter_ns()
            self._last_export_ns = 0
            self._torch_profiler.stop()
            if self._budget is not None and recording:
                # The last forward was recorded: its stop and export come now, outside the forwards.
                self._budget._advanced(time.perf_counter_ns() - started_ns, True, False, self._last_export_ns)
        self._results = self._build_results()

    def step(self) -> None:
        """Advances the schedule by one step (done for you per forward of a watched model)."""
        if not self._active:
            raise InvalidArgumentError("Profiler.step() outside the profiler's `with` block")
        self._advance_schedule()

    def _advance_schedule(self) -> int:
        """Advances the torch profiler one step; returns the nanoseconds it took."""
        started_ns = time.perf_counter_ns()
        budget = self._budget
        if (budget is not None and not budget._in_cycle and not budget._wants_record(0)
                and self._own_step_annotations()):
            # Nothing to start or stop: torch's step() (about 10 us, more right after a forward) is skipped;
            # a SamplingBudget decides by its own account, not by torch's step count. Not on torch_npu with a
            # schedule, whose step() numbers the Ascend steps (forward k must stay its step k).
            elapsed_ns = time.perf_counter_ns() - started_ns
            budget._advanced(elapsed_ns, False, False, 0)
            return elapsed_ns
        recording = self._recording_now() if budget is not None else False
        self._last_export_ns = 0
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_CYCLE_CLEAR_WARNING)
            self._torch_profiler.step()
        elapsed_ns = time.perf_counter_ns() - started_ns
        if self._budget is not None:
            self._budget._advanced(elapsed_ns, recording, self._recording_now(), self._last_export_ns)
        return elapsed_ns

    # -- pausing
    def pause(self) -> None:
        """Stops watching forwards until resume(): nothing is timed or recorded meanwhile, and the hooks are
        taken off the model, so paused forwards run as without a profiler. A record in progress is finished
        first. Call it between forwards."""
        if not self._active:
            raise InvalidArgumentError("pause() outside the profiler's `with` block")
        if self._open_step is not None:
            raise InvalidArgumentError("pause() inside a forward call; call it between forwards")
        if self._paused:
            return
        if self._recording_now() and self.schedule is not None and self._budget is None:
            raise InvalidArgumentError(
                "pause() while the schedule records; pause between its active steps, or use "
                "schedule=SamplingBudget(...), whose record pause() can finish")
        if self._budget is not None:
            self._budget._pause()             # no record while paused
            if self._recording_now():
                self._advance_schedule()      # the record in progress: its stop and export, now
        if self._recording_now():
            raise InvalidArgumentError("pause() needs a schedule (the profiler records every step without one)")
        self._paused_models = [entry["model"]() for entry in self._watched]
        self._remove_hooks()
        self._remove_global_hooks()
        self._paused = True

    def resume(self) -> None:
        """Watches forwards again after pause()."""
        if not self._active:
            raise InvalidArgumentError("resume() outside the profiler's `with` block")
        if not self._paused:
            return
        self._paused = False
        if self._budget is not None:
            self._budget._resume()
        models, self._paused_models = [m for m in self._paused_models if m is not None], []
        for model in models:
            self.watch(model)
        if not models and self._global_thread is not None:
            self._watch_for_outermost_forward()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """`with prof.paused():` runs the block as without a profiler (pause() ... resume())."""
        self.pause()
        try:
            yield
        finally:
            self.resume()

    def get_results(self) -> ProfileResults:
        if self._active:
            raise InvalidArgumentError("get_results() inside the profiler's `with` block; call it after the block")
        if self._results is None:
            raise InvalidArgumentError("the profiler has not run yet (use it as `with Profiler(...) as prof:`)")
        return self._results

    # -- backends
    def _make_torch_profiler(self):
        torch = _torch()
        from torch.profiler import ProfilerActivity, profile
        activities = [ProfilerActivity.CPU]
        if self.backend == "cuda":
            activities.append(ProfilerActivity.CUDA)
        schedule = self._torch_schedule(torch.profiler.schedule)
        return profile(activities=activities, schedule=schedule, on_trace_ready=self._on_trace_ready,
                       record_shapes=self.record_shapes, profile_memory=self.capture_memory_access,
                       with_stack=self.with_stack, with_modules=self.trace_level == "detailed")

    def _make_npu_profiler(self):
        """torch_npu.profiler with CPU + NPU activities, written as `<output_dir>/*_ascend_pt` (Ascend docs:
        torch_npu.profiler.profile, _ExperimentalConfig, tensorboard_trace_handler)."""
        import inspect

        import torch_npu
        npu_profiler = torch_npu.profiler
        level = {"minimal": npu_profiler.ProfilerLevel.Level0, "operator": npu_profiler.ProfilerLevel.Level1,
                 "detailed": npu_profiler.ProfilerLevel.Level2}[self.trace_level]
        wanted = {"profiler_level": level, "l2_cache": False, "data_simplification": False}
        if self.capture_ai_core_usage:
            wanted["aic_metrics"] = npu_profiler.AiCMetrics.PipeUtilization
        accepted = inspect.signature(npu_profiler._ExperimentalConfig).parameters
        experimental = npu_profiler._ExperimentalConfig(**{k: v for k, v in wanted.items() if k in accepted})
        schedule = self._torch_schedule(npu_profiler.schedule)
        handler = npu_profiler.tensorboard_trace_handler(self.output_dir)
        return npu_profiler.profile(
            activities=[npu_profiler.ProfilerActivity.CPU, npu_profiler.ProfilerActivity.NPU],
            schedule=schedule, on_trace_ready=handler, record_shapes=self.record_shapes,
            profile_memory=self.capture_memory_access, with_stack=self.with_stack,
            experimental_config=experimental)

    def _torch_schedule(self, make_schedule: Callable[..., Any]):
        if self.schedule is None:
            return None
        if self._schedule_fields is None:
            return self.schedule  # a schedule callable given by the caller
        return make_schedule(**self._schedule_fields)

    def _on_trace_ready(self, torch_profiler: Any) -> None:
        started_ns = time.perf_counter_ns()
        try:
            self._write_cycle_trace(torch_profiler)
        finally:
            self._last_export_ns = time.perf_counter_ns() - started_ns

    def _write_cycle_trace(self, torch_profiler: Any) -> None:
        cycle = len(self._cycle_traces)
        path = os.path.join(self.output_dir, f"pypto_trace_cycle{cycle}.json")
        if self.in_memory_events:
            events = torch_profiler.events()
            alignment = self._alignment_us(events)
            write_events_as_kineto_trace(events, path, alignment or 0.0,
                                         metadata={"source": "torch profiler in-memory events", "cycle": cycle})
            self._cycle_alignments.append(alignment)
        else:
            torch_profiler.export_chrome_trace(path)
        self._cycle_traces.append(path)

    def _alignment_us(self, events: Any) -> Optional[float]:
        """Offset that puts in-memory event times (relative to the cycle start) on perf_counter's clock,
        from the first ProfilerStep#N event whose start time we measured."""
        for event in events:
            name = _event_trace_name(event)
            if name.startswith(STEP_NAME_PREFIX):
                try:
                    number = int(name[len(STEP_NAME_PREFIX):])
                except ValueError:
                    continue
                if number in self._step_starts_us:
                    return self._step_starts_us[number] - float(event.time_range.start)
        return None

    # -- steps from a watched model
    def watch(self, model: Any) -> None:
        """Makes every forward call of `model` one profiler step (ProfilerStep#N) and times it."""
        torch = _torch()
        if not isinstance(model, torch.nn.Module):
            raise InvalidArgumentError(f"watch() needs a torch.nn.Module, got {type(model).__name__}")
        if not self._active:
            raise InvalidArgumentError("watch() outside the profiler's `with` block (or pass model= to Profiler)")
        if any(entry["model"]() is model for entry in self._watched):
            return
        if self._global_thread is not None:
            if self._open_step is not None:
                raise InvalidArgumentError("watch() inside a forward call; call it between forwards")
            self._remove_global_hooks()   # the watched model's forwards are the steps from now on
            self._global_thread = None
        torch_profiler = self._torch_profiler
        if self._own_step_annotations() and getattr(torch_profiler, "record_steps", False):
            # The profiler opened its own ProfilerStep#0 at start: the forwards are the steps instead.
            if getattr(torch_profiler, "step_rec_fn", None) is not None:
                torch_profiler.step_rec_fn.__exit__(None, None, None)
                torch_profiler.step_rec_fn = None
            torch_profiler.record_steps = False
        handles = [model.register_forward_pre_hook(self._before_forward, with_kwargs=True),
                   model.register_forward_hook(self._after_forward, always_call=True)]
        entry = {"model": weakref.ref(model), "handles": handles, "generate": None}
        generate = getattr(model, "generate", None)
        if callable(generate):
            had_instance_attribute = "generate" in model.__dict__
            previous = model.__dict__.get("generate")

            def generate_with_phase(*args: Any, **kwargs: Any) -> Any:
                self._pending_prefill = True
                started = time.perf_counter_ns()
                first_forward = self._forward_count
                try:
                    return generate(*args, **kwargs)
                finally:
                    self._generate_calls.append({
                        "first_forward": first_forward, "forwards": self._forward_count - first_forward,
                        "wall_ms": (time.perf_counter_ns() - started) / 1e6})
                    self._pending_prefill = False

            model.__dict__["generate"] = generate_with_phase
            entry["generate"] = (had_instance_attribute, previous)
            self._any_generate_wrapped = True
        self._watched.append(entry)
        self._watched_any = True
        self._roots.setdefault(id(model), {"ref": weakref.ref(model), "class": type(model).__name__,
                                           "fingerprint": model_fingerprint(model), "forwards": None})
        if self._model_config is None:
            self._model_config = _model_config_dict(model)

    # -- steps found without a model handle
    # A global forward pre-hook sees the start of every outermost forward. Any global hook sends every
    # nn.Module call down torch's slow path (about 7 us per call measured, 9 % of a small model's token),
    # so the hook is removed while a step runs: the outermost module gets its own pre/post hooks
    # (kept for the window) that count re-entry and close the step, which puts the global hook back.
    def _install_global_hooks(self) -> None:
        from torch.nn.modules import module as nn_module
        self._register_global_pre_hook = nn_module.register_module_forward_pre_hook
        self._global_thread = threading.get_ident()
        self._watch_for_outermost_forward()

    def _watch_for_outermost_forward(self) -> None:
        if not self._global_handles:
            self._global_handles = [self._register_global_pre_hook(self._global_before_forward)]

    def _remove_global_hooks(self) -> None:
        while self._global_handles:
            self._global_handles.pop().remove()
        for root in self._roots.values():
            for handle in root.pop("handles", ()):
                handle.remove()

    def _global_before_forward(self, module: Any, args: tuple) -> None:
        if self._open_step is not None:
            return                         # a module outside the open step's root on another path
        if threading.get_ident() != self._global_thread:
            return                         # steps are the forwards of the profiling thread
        root = self._roots.get(id(module))
        if root is None or root["ref"]() is not module:
            root = self._roots[id(module)] = {"ref": weakref.ref(module), "class": type(module).__name__,
                                              "fingerprint": model_fingerprint(module), "forwards": 0}
            if self._model_config is None:
                self._model_config = _model_config_dict(module)
        if not root.get("handles"):
            root["handles"] = [
                module.register_forward_pre_hook(self._root_before_forward),
                module.register_forward_hook(self._root_after_forward, with_kwargs=True, always_call=True)]
        entered_ns = time.perf_counter_ns()
        schedule_ns = 0
        if self._forward_count > 0 and self.schedule is not None:
            schedule_ns = self._advance_schedule()
        self._begin_step(module, phase=None, shape=None, generate_call=None, entered=False, root=root,
                         hook_entered_ns=entered_ns + schedule_ns)
        self._root_reentry = 0
        self._remove_global_hooks_only()   # inner modules take torch's fast path during the step

    def _remove_global_hooks_only(self) -> None:
        while self._global_handles:
            self._global_handles.pop().remove()

    def _root_before_forward(self, module: Any, args: tuple) -> None:
        step = self._open_step
        if step is None or step["module"] is not module:
            return
        if not step["entered"]:
            step["entered"] = True         # the call the global hook opened the step for
        else:
            self._root_reentry += 1        # the outermost module called again inside itself

    def _root_after_forward(self, module: Any, args: tuple, *rest: Any) -> None:
        # (kwargs, output) after a forward; torch passes only (output) when the forward raised.
        kwargs, output = (rest[0], rest[1]) if len(rest) == 2 else ({}, rest[0] if rest else None)
        step = self._open_step
        if step is None or step["module"] is not module:
            return
        if self._root_reentry:
            self._root_reentry -= 1
            return
        shape = _first_tensor_shape(args, kwargs)
        phase = _phase_from_inputs(shape, kwargs, first=step["index"] == 0)
        if phase == "prefill" or self._generate_calls_found == 0:
            self._generate_calls_found += 1
        step["phase"], step["shape"] = phase, shape
        step["generate_call"] = self._generate_calls_found - 1
        step["root"]["forwards"] += 1
        try:
            self._after_forward(module, args, output)
        finally:
            if self._active and not self._watched:
                self._watch_for_outermost_forward()

    def _own_step_annotations(self) -> bool:
        """Whether the hooks write ProfilerStep#N themselves. torch_npu with a schedule marks its steps
        itself on each step() (the Ascend step ids its analysis uses): forward k is its step k there too."""
        return not (self.backend == "npu" and self.schedule is not None)

    def _synchronize(self) -> None:
        if self.backend == "cuda":
            _torch().cuda.synchronize(self.device_id)
        elif self.backend == "npu":
            _torch().npu.synchronize(self.device_id)

    def _before_forward(self, module: Any, args: tuple, kwargs: Dict[str, Any]) -> None:
        if self._open_step is not None:
            return  # a nested call of the same model (e.g. a sub-forward): part of the open step
        entered_ns = time.perf_counter_ns()
        index = self._forward_count
        shape = _first_tensor_shape(args, kwargs)
        if self._any_generate_wrapped:
            phase = "prefill" if self._pending_prefill else "decode"
        else:
            phase = "prefill" if index == 0 or (shape is not None and len(shape) >= 2 and shape[1] > 1) else "decode"
        if self._budget is not None:
            self._budget._expect(phase)    # before the schedule is asked whether to record this forward
        schedule_ns = 0
        if index > 0 and self.schedule is not None:
            schedule_ns = self._advance_schedule()
        self._pending_prefill = False
        self._begin_step(module, phase=phase, shape=shape, generate_call=len(self._generate_calls),
                         hook_entered_ns=entered_ns + schedule_ns)

    def _begin_step(self, module: Any, **step: Any) -> None:
        """Opens step number `_forward_count` (synchronising the device first, so the step's time is its
        own) with its ProfilerStep#N annotation; `step` holds the caller's fields of the open step."""
        index = self._forward_count
        self._synchronize()
        recording = self._recording_now()
        # The step annotation only matters while the profiler records; outside the active window the
        # forward pays for two perf_counter_ns calls and this bookkeeping alone.
        record = (_torch().profiler.record_function(f"{STEP_NAME_PREFIX}{index}")
                  if recording and self._own_step_annotations() else None)
        started_ns = time.perf_counter_ns()
        if record is not None:
            record.__enter__()
            self._step_starts_us[index] = started_ns / 1000.0
        self._open_step = {"index": index, "record": record, "started_ns": started_ns, "module": module,
                           "recorded": recording, **step}
        self._forward_count += 1

    def _after_forward(self, module: Any, args: tuple, output: Any) -> None:
        step = self._open_step
        if step is None or step["module"] is not module:
            return
        self._open_step = None
        if output is None and sys.exc_info()[1] is not None:
            # Called by torch while the forward's exception propagates (always_call): not a token.
            if step["record"] is not None:
                step["record"].__exit__(None, None, None)
            self._failed_forwards += 1
            return
        self._synchronize()
        if step["record"] is not None:
            step["record"].__exit__(None, None, None)
        ended_ns = time.perf_counter_ns()
        elapsed_ns = ended_ns - step["started_ns"]
        shape = step["shape"]
        self._forwards.append({
            "index": step["index"], "phase": step["phase"], "latency_ms": elapsed_ns / 1e6,
            "recorded": step["recorded"], "generate_call": step["generate_call"],
            "batch": shape[0] if shape else None, "seq_len": shape[1] if shape and len(shape) > 1 else None})
        if self._budget is not None:
            # The hooks' own time: before the forward (less the schedule's step) and this bookkeeping.
            hooks_ns = step["started_ns"] - step.get("hook_entered_ns", step["started_ns"])
            hooks_ns += time.perf_counter_ns() - ended_ns
            self._budget._forward_done(elapsed_ns, step["phase"], step["recorded"], hooks_ns)

    def _recording_now(self) -> bool:
        action = getattr(self._torch_profiler, "current_action", None)
        if action is None:
            return True
        return "RECORD" in str(action)

    def _close_open_step(self) -> None:
        step, self._open_step = self._open_step, None
        if step is not None and step["record"] is not None:
            step["record"].__exit__(None, None, None)

    def _remove_hooks(self) -> None:
        while self._watched:
            entry = self._watched.pop()
            for handle in entry["handles"]:
                handle.remove()
            model = entry["model"]()
            if model is not None and entry["generate"] is not None:
                had_instance_attribute, previous = entry["generate"]
                if had_instance_attribute:
                    model.__dict__["generate"] = previous
                else:
                    model.__dict__.pop("generate", None)

    # -- results
    def _build_results(self) -> ProfileResults:
        torch = _torch()
        trace_path: Optional[str] = None
        if self.backend == "npu":
            produced = sorted(d for d in os.listdir(self.output_dir) if d.endswith("_ascend_pt"))
            trace_path = os.path.join(self.output_dir, produced[-1]) if produced else None
        elif len(self._cycle_traces) == 1:
            trace_path = self._cycle_traces[0]
        elif self._cycle_traces:
            trace_path = merge_kineto_traces(self._cycle_traces, os.path.join(self.output_dir, "pypto_trace.json"))
        settings = {
            "backend": self.backend, "torch_version": torch.__version__, "device_id": self.device_id,
            "device": self._device_name(), "trace_level": self.trace_level,
            "schedule": self._schedule_fields if self.schedule is None or self._schedule_fields is not None
            else repr(self.schedule),
            "record_shapes": self.record_shapes, "with_stack": self.with_stack,
            "capture_memory_access": self.capture_memory_access, "capture_ai_core_usage": self.capture_ai_core_usage,
            "trace_source": "in-memory events" if self.in_memory_events else (
                "torch_npu tensorboard_trace_handler" if self.backend == "npu" else "kineto export_chrome_trace"),
            "schedule_cycles": len(self._cycle_traces) if self.backend != "npu" else None,
            "sampling": self._budget.summary() if self._budget is not None else None,
            "failed_forwards": self._failed_forwards,
            "step_finding": "model hooks" if self._initial_model is not None or self._watched_any else (
                "global module hooks (outermost forward = one step)" if self.find_steps else "none"),
            "stepped_modules": [{"class": r["class"], "fingerprint": r["fingerprint"], "forwards": r["forwards"]}
                                for r in self._roots.values()],
            "python": platform.python_version(), "host": platform.node(),
        }
        generate_calls = self._generate_calls or _calls_from_found_steps(self._forwards)
        return ProfileResults(trace_path, self._forwards, settings, self._model_config, generate_calls)

    def _device_name(self) -> str:
        torch = _torch()
        try:
            if self.backend == "cuda":
                return torch.cuda.get_device_name(self.device_id)
            if self.backend == "npu":
                return torch.npu.get_device_name(self.device_id)
        except Exception:
            pass
        return platform.processor() or platform.machine() or "cpu"


# --------------------------------------------------------------------------- session


class TuningSession:
    """A series of profiling runs with the same settings (baseline, candidate, …).

        session = TuningSession(device_id=0)
        with session.profiling(model=model):
            model.generate(prompt, max_new_tokens=16)
        baseline = session.get_profile_data()

    cannon_profiling / cann_profiling: profile the device too (False: host operators only).
    capture_memory: the profiler's memory events. Other keyword arguments go to Profiler
    (output_dir, schedule, record_shapes, with_stack, capture_ai_core_usage, backend).
    """

    def __init__(self, device_id: int = 0, cannon_profiling: Optional[bool] = None, trace_level: str = "operator",
                 capture_memory: bool = True, *, cann_profiling: Optional[bool] = None, **profiler_options: Any):
        if cannon_profiling is not None and cann_profiling is not None and cannon_profiling != cann_profiling:
            raise InvalidArgumentError("cannon_profiling and cann_profiling are the same argument; pass one")
        chosen = cann_profiling if cann_profiling is not None else cannon_profiling
        self.cann_profiling = True if chosen is None else bool(chosen)
        unknown = sorted(set(profiler_options) - {"output_dir", "schedule", "record_shapes", "with_stack",
                                                  "capture_ai_core_usage", "backend", "find_steps",
                                                  "_force_in_memory"})
        if unknown:
            raise InvalidArgumentError(f"TuningSession: unknown keyword arguments {unknown}")
        if trace_level not in TRACE_LEVELS:
            raise InvalidArgumentError(f"trace_level must be one of {', '.join(TRACE_LEVELS)}, got {trace_level!r}")
        self.device_id = device_id
        self.trace_level = trace_level
        self.capture_memory = bool(capture_memory)
        self.profiler_options = profiler_options
        self.runs: List[ProfileResults] = []
        self._current: Optional[Profiler] = None

    @property
    def cannon_profiling(self) -> bool:
        return self.cann_profiling

    @contextlib.contextmanager
    def profiling(self, model: Any = None, **overrides: Any) -> Iterator[Profiler]:
        """Profiles the block; the results become get_profile_data() (and are appended to runs)."""
        if self._current is not None:
            raise InvalidArgumentError("TuningSession.profiling() is already active; runs cannot nest")
        options = dict(self.profiler_options)
        options.update(overrides)
        if not self.cann_profiling:
            options["backend"] = "cpu" if options.get("backend") in (None, "npu") else options["backend"]
            options.setdefault("capture_ai_core_usage", False)
        output_dir = options.pop("output_dir", None)
        if output_dir is not None:
            output_dir = os.path.join(os.fspath(output_dir), f"run{len(self.runs)}")
        profiler = Profiler(self.device_id, self.trace_level, self.capture_memory,
                            options.pop("capture_ai_core_usage", True), output_dir=output_dir, model=model, **options)
        self._current = profiler
        try:
            with profiler:
                yield profiler
        finally:
            self._current = None
        self.runs.append(profiler.get_results())

    def step(self) -> None:
        """Advances the active run's schedule (needed only when no model is watched)."""
        if self._current is None:
            raise InvalidArgumentError("TuningSession.step() outside `with session.profiling(...)`")
        self._current.step()

    def get_profile_data(self, run: int = -1) -> ProfileResults:
        """The results of the last run (or of run number `run`)."""
        if not self.runs:
            raise InvalidArgumentError("no profiling run has finished yet (use `with session.profiling(model=...)`)")
        try:
            return self.runs[run]
        except IndexError:
            raise InvalidArgumentError(f"run {run} does not exist ({len(self.runs)} runs so far)") from None


__all__ = ["Profiler", "TuningSession", "ProfileResults", "detect_backend", "latency_summary",
           "nearest_rank_percentile", "write_events_as_kineto_trace", "merge_kineto_traces",
           "RESULTS_SIDECAR_NAME", "FORCE_IN_MEMORY_ENV"]
