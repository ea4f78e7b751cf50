"""OperatorCallGraph: a parsed profile with its operator call graph.

Built by pypto.parser.CANNProfileParser (or load_profile) for every format
pypto reads; wraps the engine's graph: op count, AI-core / device
utilization, critical path, steps, the analysis summary, Chrome trace export.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ._native import engine, fspath


class OperatorCallGraph:
    """Host operators, the device tasks they launch, steps and busy times of one profile."""

    def __init__(self, loaded: "engine.LoadedProfile", source_path: str):
        self._loaded = loaded
        self.source_path = source_path

    # -- what the brief names
    def get_op_count(self) -> int:
        """Operators (host ops of kind operator, or device ops of Ascend exports without host rows)."""
        return int(self._loaded.op_count())

    def get_ai_core_utilization(self, step: Optional[int] = None) -> float:
        """One figure in [0, 1]: how busy the compute units were over the window (the whole profile, or
        the step with index `step` of steps()).

        The engine's ComputeUnitUtilization: the union of the compute tasks' intervals (AI Core, AI
        Vector and MIX cores on Ascend, kernels on GPUs, operators doing their own work on CPU; not
        AI CPU, copies or communication) per device, summed over the devices that ran such tasks and
        divided by (those devices x the window). Per device and core type: get_ai_core_utilization_details().
        """
        return float(self._loaded.compute_unit_utilization(step))

    def get_ai_core_utilization_details(self, step: Optional[int] = None) -> List[Dict[str, Any]]:
        """Busy time per device and core type (AI_CORE, AI_VECTOR_CORE, AI_CPU; kernels on GPUs).

        Each entry: device, label (core type), busy_ns, window_ns, utilization (busy / window),
        share (of the device's busy time), task_count. `step` is an index into steps().
        """
        return list(self._loaded.ai_core_utilization(step))

    def get_device_busy_times(self, step: Optional[int] = None) -> List[Dict[str, Any]]:
        return list(self._loaded.device_busy_times(step))

    def get_critical_path_latency(self, step: Optional[int] = None) -> float:
        """Critical path length in milliseconds (whole profile, or the step with this index)."""
        return self._loaded.critical_path_latency_ns(step) / 1e6

    # -- the rows themselves, as numpy columns (no export round trip)
    def host_ops(self) -> Dict[str, Any]:
        """Host operators: ts, dur (int64 ns), kind (index into kind_names), track, name and input_dims
        (string ids: strings()), op_class (index into op_class_names)."""
        return dict(self._loaded.host_ops())

    def device_tasks(self) -> Dict[str, Any]:
        """Device tasks: ts, dur (int64 ns), kind (index into kind_names), track, device, name (string id),
        op_class (index into op_class_names)."""
        return dict(self._loaded.device_tasks())

    def attributes(self, owner_kind: str = "", key_prefix: str = "") -> Dict[str, Any]:
        """Attributes (PMU ratios, kernel arguments, Ascend communication fields …) of one owner kind
        (host_op, device_task, track, device, step; all when empty) whose key starts with `key_prefix`:
        owner (row of the owner's table), key and text (string ids), number (NaN when not numeric),
        decimals. Text id 0 with a number means the source wrote the number in its shortest form
        (decimals -1: "81431", "0.599") or in fixed notation with `decimals` digits ("0.000")."""
        return dict(self._loaded.attributes(owner_kind, key_prefix))

    def strings(self, ids: Any) -> List[str]:
        """The strings of these ids (the tables' name, key, text and input_dims columns)."""
        return list(self._loaded.strings([int(i) for i in ids]))

    def export_to_chrome_trace(self, path: Any, force: bool = False,
                               critical_path_step: Optional[int] = None) -> str:
        """Writes a Chrome/Perfetto trace (JSON) with the critical path marked; returns the path."""
        out = fspath(path)
        self._loaded.export_chrome_trace(out, force, critical_path_step)
        return out

    # -- more
    @property
    def format(self) -> str:
        return self._loaded.metadata.get("format", "")

    @property
    def metadata(self) -> Dict[str, str]:
        return dict(self._loaded.metadata)

    @property
    def data_loss(self) -> Dict[str, Any]:
        """Reason → (count, first location, kind, severity) of what the importer could not use.

        kind is the loss kind's stable id ("row_skipped", "truncated", …) and severity "low", "medium"
        or "high" (the loss kinds of docs/json-schema.md)."""
        return dict(self._loaded.data_loss)

    @property
    def notes(self) -> List[str]:
        return list(self._loaded.notes)

    def steps(self) -> List[Dict[str, Any]]:
        """Steps (ProfilerStep#N, Ascend step ids, or the whole window) with latency_ns."""
        return list(self._loaded.steps())

    def summary(self, step: Optional[int] = None, top: int = 0) -> Dict[str, Any]:
        """The `pypto analyze --json` document (schema pypto.analyze/1, docs/json-schema.md).

        `step` is a step number (ProfilerStep#N), as on the command line.
        """
        return self._loaded.analysis(step, top)

    def to_text(self, step: Optional[int] = None, top: int = 0) -> str:
        """The `pypto analyze` terminal report."""
        return self._loaded.analysis_text(step, top)

    def export_to_sqlite(self, path: Any, force: bool = False, findings: bool = True) -> Dict[str, int]:
        """Writes the model (and the diagnosis when `findings`) as SQLite (docs/sqlite-schema.md)."""
        return dict(self._loaded.export_sqlite(fspath(path), force, findings))

    def report(self, path: Any = None, format: str = "html", force: bool = False, **diagnose: Any) -> str:
        """The `pypto report` document (html, markdown or json); written to `path` when given."""
        text = self._loaded.report(diagnose, format)
        if path is not None:
            engine.write_text_file(fspath(path), text, force)
        return text

    def __repr__(self) -> str:
        return f"OperatorCallGraph({self.source_path!r}, format={self.format!r}, ops={self.get_op_count()})"


def load_profile(path: Any, format: Optional[str] = None, cann_version: Optional[str] = None,
                 follow_symlinks: bool = False, max_input_bytes: Optional[int] = None) -> OperatorCallGraph:
    """Reads any profile pypto supports (format detected from the content) into an OperatorCallGraph.

    Raises ProfileNotFoundError, ProfileFormatError, LimitExceededError, … with the engine's message.
    Ctrl-C stops a long import (KeyboardInterrupt).
    """
    p = fspath(path)
    loaded = engine.load_profile(p, format or "", cann_version or "", bool(follow_symlinks), int(max_input_bytes or 0))
    return OperatorCallGraph(loaded, p)
