"""CANNProfileParser: any supported profile → OperatorCallGraph.

The name comes from the brief; it reads every format pypto supports (Ascend
*_ascend_pt / msprof PROF_* / trace_view.json / profiler .db, PyTorch Kineto
traces of CUDA / ROCm / CPU runs, pypto's own saved profiles), detected from
the content.
"""

from __future__ import annotations

from typing import Any, Optional

from .graph import OperatorCallGraph, load_profile


class CANNProfileParser:
    """Parses a profile path (file or directory), or the ProfileResults of a pypto run
    (TuningSession.get_profile_data(), Profiler.get_results()).

    cannon_version / cann_version: the CANN version when the profile does not record it
    (e.g. "8.0.RC2"); selects the column adapters of older CSV exports.
    model_arch: an optional hint ("llama", "qwen", …) kept for the analyzers; never required.
    """

    def __init__(self, profile_data_path: Any, cannon_version: Optional[str] = None,
                 model_arch: Optional[str] = None, *, cann_version: Optional[str] = None,
                 format: Optional[str] = None, follow_symlinks: bool = False,
                 max_input_bytes: Optional[int] = None):
        if cannon_version and cann_version and cannon_version != cann_version:
            raise ValueError("cannon_version and cann_version are the same argument; pass one")
        self.profile_data_path = profile_data_path
        self.cann_version = cann_version or cannon_version
        self.model_arch = model_arch
        self.format = format
        self.follow_symlinks = follow_symlinks
        self.max_input_bytes = max_input_bytes

    def parse(self) -> OperatorCallGraph:
        """The OperatorCallGraph of the profile (the brief's name: parse_to_call_graph)."""
        results_graph = getattr(self.profile_data_path, "call_graph", None)
        if isinstance(results_graph, OperatorCallGraph):
            graph = results_graph        # ProfileResults (TuningSession.get_profile_data()): its trace
        else:
            graph = load_profile(self.profile_data_path, format=self.format, cann_version=self.cann_version,
                                 follow_symlinks=self.follow_symlinks, max_input_bytes=self.max_input_bytes)
        graph.model_arch = self.model_arch
        return graph

    # The brief's name and spelling variants.
    parse_to_call_graph = parse
    build_call_graph = parse
    parse_profile = parse


__all__ = ["CANNProfileParser", "OperatorCallGraph", "load_profile"]
