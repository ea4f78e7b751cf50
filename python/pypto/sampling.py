"""Sampling by an overhead budget: which forwards a Profiler records in detail.

    budget = pypto.SamplingBudget(0.01)       # recording may cost 1 % of the work time
    with pypto.Profiler(model=model, schedule=budget) as prof:
        serve(model)                          # every forward timed, a few recorded in detail
    print(prof.get_results().settings["sampling"])

A fixed schedule (record one forward in 20) costs what it costs: on a CPU decoder of 7 ms a token,
each recorded forward pays about 12 ms of profiler start, Kineto stop and trace export on top of
its own slowdown, so one in 20 costs about 10 % of the token time. SamplingBudget measures those
costs as they happen and records the next forward only once the forwards of its phase (prefill,
decode) have done enough work that everything the profiler has cost in that phase, plus one more
record, stays within `budget` of that phase's work time: the per-forward hooks count too, so when
they alone use up the budget no further forward of the phase is recorded. Over a window long enough to hold a few records the profiler's cost
therefore stays within the budget. The first record comes at forward `first`
whatever it costs, so a new SamplingBudget always yields a detailed step, and the results say what
that cost. One SamplingBudget passed to several Profiler windows in turn keeps its account across
them (then a window may record nothing in detail and still time every forward).

What a record costs, as measured by the Profiler and kept in `settings["sampling"]["cost_ms"]`:
  startup           the first start in the process: the profiler's one-time initialisation (kept
                    out of cost_pct and of the spacing; it is paid once whatever the schedule)
  start             the profiler's prepare and enable before the recorded forward
  stop              the profiler's disable after it (Kineto collecting the events)
  export            writing the cycle's trace (part of the stop, timed apart)
  recorded_forward  how much longer the recorded forward ran than the median of the last
                    unrecorded forwards of the same phase (prefill / decode)
  between_forwards  the schedule's work at every other forward (a few microseconds each)
  hooks             the step hooks' own time at every forward (two clock readings and a record)
"""

from __future__ import annotations

import collections
from typing import Any, Deque, Dict, Optional

from .errors import InvalidArgumentError

# Share of the work time (the watched forwards' own wall time) recording may cost by default (a
# fraction). Source: issue 18 of this project, "default sampling costs <= 1 % of per-token time";
# the brief asks for < 3 %.
DEFAULT_SAMPLING_BUDGET = 0.01
# The forward recorded first in a window (its index; 0 is the first forward). 1 skips the first
# call, which pays one-time costs (lazy initialisation, a generate's prefill) that are not typical.
DEFAULT_FIRST_RECORDED_FORWARD = 1
# Unrecorded forwards per phase whose median wall time is the reference a recorded forward's
# slowdown is measured against (a count; 8 keeps it recent and steady on a noisy 2-core machine).
REFERENCE_FORWARDS = 8
COST_PARTS = ("startup", "start", "stop", "export", "recorded_forward", "between_forwards", "hooks")
# Whether a profiler has started in this process: the first start pays the profiler's one-time
# initialisation (about 1 s for Kineto on the 2-core machine), kept apart as "startup".
_started_in_process = False


def _median(values: Any) -> float:
    from ._native import engine
    return engine.nearest_rank_percentile(sorted(float(v) for v in values), 50.0)


class SamplingBudget:
    """A schedule for Profiler(schedule=...): one forward recorded at a time, as often as `budget` (a
    fraction of the work time, default 0.01) allows. `first`: index of the first recorded forward.

    One SamplingBudget may serve several Profiler windows in turn (say one per request): its work and
    cost carry over, so the budget holds across them. The Profiler reports to it; the figures are
    in `summary()` and in the results' settings["sampling"]."""

    def __init__(self, budget: float = DEFAULT_SAMPLING_BUDGET, first: int = DEFAULT_FIRST_RECORDED_FORWARD):
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not 0.0 < float(budget) <= 1.0:
            raise InvalidArgumentError(f"SamplingBudget: budget must be a fraction in (0, 1], got {budget!r}")
        if isinstance(first, bool) or not isinstance(first, int) or first < 0:
            raise InvalidArgumentError(f"SamplingBudget: first must be a non-negative int, got {first!r}")
        self.budget = float(budget)
        self.first = first
        self.forwards = 0
        self.recorded = 0
        self.work_ns = 0                   # the forwards' own wall time, recorded ones without their slowdown
        self.cost_ns: Dict[str, int] = {part: 0 for part in COST_PARTS}
        self._forced_off = False
        self._in_cycle = False             # a record started and its stop not yet seen
        self._cycle_ns = 0                 # cost of the open cycle so far
        self._last_cycle_ns = 0            # cost of the last finished cycle
        self._last_cycle_phase = ""        # and the phase that paid for it
        self._window_forwards = 0          # forwards since the Profiler window began (for `first`)
        self._reference: Dict[str, Deque[int]] = {}
        # Per phase (prefill, decode, "" when unknown): a record's cost is paid by the forwards of its phase,
        # so that the decode tokens, where most records fall, stay within the budget themselves instead of
        # borrowing the prefills' long work time.
        self._phase_forwards: Dict[str, int] = {}
        self._phase_work_ns: Dict[str, int] = {}
        self._phase_spent_ns: Dict[str, int] = {}
        self._phase_records: Dict[str, int] = {}
        self._phase_last_cycle_ns: Dict[str, int] = {}
        self._expected_phase = ""          # the coming forward's phase, as far as known
        self._cycle_phase = ""

    def __repr__(self) -> str:
        return f"SamplingBudget(budget={self.budget}, first={self.first})"

    # -- the torch.profiler schedule
    def __call__(self, step: int) -> Any:
        from torch.profiler import ProfilerAction
        return ProfilerAction.RECORD_AND_SAVE if self._wants_record(step) else ProfilerAction.NONE

    def _wants_record(self, step: int) -> bool:
        # `step` is torch's count of step() calls; the window's forward count is the one that matters.
        if self._forced_off or self._in_cycle:
            return False                   # never two records back to back: the stop comes first
        if self.recorded == 0:
            return self._window_forwards >= self.first
        phase = self._expected_phase
        return self.budget * self._phase_work_ns.get(phase, 0) - self._phase_spent_ns.get(phase, 0) >= \
            self._next_cost_ns(phase)

    def _next_cost_ns(self, phase: str) -> float:
        """What recording the coming forward of `phase` is expected to cost: the last record of that phase's; for
        a phase not recorded yet, the last record's scaled by how much longer this phase's forwards run than
        that record's phase's. (Priced at a decode record's cost, a prefill was recorded as soon as 1 % of
        the prefill work covered ~40 ms; tracing a 900 ms prefill of the demo's Llama cost ~440 ms, 3.4 % of
        the prefill work of its run.)"""
        own = self._phase_last_cycle_ns.get(phase)
        if own is not None:
            return own
        mine, theirs = self._mean_forward_ns(phase), self._mean_forward_ns(self._last_cycle_phase)
        if mine > 0 and theirs > 0:
            return self._last_cycle_ns * mine / theirs
        return self._last_cycle_ns

    def _mean_forward_ns(self, phase: str) -> float:
        forwards = self._phase_forwards.get(phase, 0)
        return self._phase_work_ns.get(phase, 0) / forwards if forwards else 0.0

    def _charge(self, part: str, ns: int, phase: str) -> None:
        self.cost_ns[part] += ns
        if part != "startup":
            self._phase_spent_ns[phase] = self._phase_spent_ns.get(phase, 0) + ns

    def _spent_ns(self) -> int:
        return sum(ns for part, ns in self.cost_ns.items() if part != "startup")

    # -- what the Profiler reports
    def _window_started(self) -> None:
        self._forced_off = False
        self._window_forwards = 0

    def _expect(self, phase: Optional[str]) -> None:
        """The Profiler knows the coming forward's phase (before the schedule is asked about it)."""
        self._expected_phase = phase or ""

    def _advanced(self, elapsed_ns: int, recording_before: bool, recording_after: bool, export_ns: int) -> None:
        """One schedule step took `elapsed_ns` (the export of a trace, `export_ns`, included)."""
        if recording_after and not recording_before:
            global _started_in_process
            self._cycle_phase = self._expected_phase
            self._charge("start" if _started_in_process else "startup", elapsed_ns, self._cycle_phase)
            # The spacing goes by what the next record will cost: not the one-time start-up.
            self._cycle_ns = elapsed_ns if _started_in_process else 0
            _started_in_process = True
            self._in_cycle = True
        elif recording_before and not recording_after:
            self._stopped(elapsed_ns, export_ns)
        else:
            self._charge("between_forwards", elapsed_ns, self._expected_phase)

    def _stopped(self, elapsed_ns: int, export_ns: int) -> None:
        phase = self._cycle_phase
        self._charge("stop", max(0, elapsed_ns - export_ns), phase)
        self._charge("export", export_ns, phase)
        self._cycle_ns += elapsed_ns
        self._last_cycle_ns = self._cycle_ns
        self._last_cycle_phase = phase
        self._phase_last_cycle_ns[phase] = self._cycle_ns
        self._phase_records[phase] = self._phase_records.get(phase, 0) + 1
        self._in_cycle = False
        self.recorded += 1

    def _forward_done(self, wall_ns: int, phase: Optional[str], recorded: bool, hooks_ns: int) -> None:
        phase = phase or ""
        self.forwards += 1
        self._window_forwards += 1
        self._phase_forwards[phase] = self._phase_forwards.get(phase, 0) + 1
        self._charge("hooks", hooks_ns, phase)
        reference = self._reference.get(phase)
        if reference is None:
            reference = self._reference[phase] = collections.deque(maxlen=REFERENCE_FORWARDS)
        work_ns = wall_ns
        if recorded:
            if phase != self._cycle_phase:
                # The phase came out different from the one expected: its forwards pay for this record.
                moved = self._cycle_ns
                self._phase_spent_ns[self._cycle_phase] = self._phase_spent_ns.get(self._cycle_phase, 0) - moved
                self._phase_spent_ns[phase] = self._phase_spent_ns.get(phase, 0) + moved
                self._cycle_phase = phase
            slowdown = max(0, wall_ns - int(_median(reference))) if reference else 0
            self._charge("recorded_forward", slowdown, phase)
            self._cycle_ns += slowdown
            work_ns -= slowdown
        else:
            reference.append(wall_ns)
        self.work_ns += work_ns
        self._phase_work_ns[phase] = self._phase_work_ns.get(phase, 0) + work_ns
        self._expected_phase = phase       # until told otherwise, the next forward is like this one

    def _pause(self) -> None:
        self._forced_off = True

    def _resume(self) -> None:
        self._forced_off = False

    # -- figures
    def summary(self) -> Dict[str, Any]:
        """budget, forwards, recorded, work_ms, cost_ms per part, cost_pct (all parts but startup over the work),
        cost_per_record_ms (start + stop + export + recorded_forward per record), and by_phase: per phase
        (prefill, decode, unknown) its forwards, records, work_ms, cost_ms and cost_pct, each within the budget
        once the phase has had room for a few records."""
        cost_ms = {part: ns / 1e6 for part, ns in self.cost_ns.items()}
        total_ms = self._spent_ns() / 1e6
        work_ms = self.work_ns / 1e6
        per_record = sum(cost_ms[p] for p in ("start", "stop", "export", "recorded_forward"))
        by_phase = {}
        for phase, forwards in self._phase_forwards.items():
            phase_work_ms = self._phase_work_ns.get(phase, 0) / 1e6
            phase_cost_ms = self._phase_spent_ns.get(phase, 0) / 1e6
            by_phase[phase or "unknown"] = {
                "forwards": forwards, "recorded": self._phase_records.get(phase, 0), "work_ms": phase_work_ms,
                "cost_ms": phase_cost_ms,
                "cost_pct": (phase_cost_ms / phase_work_ms * 100.0) if phase_work_ms > 0 else None}
        return {"budget": self.budget, "forwards": self.forwards, "recorded": self.recorded, "work_ms": work_ms,
                "cost_ms": cost_ms, "cost_pct": (total_ms / work_ms * 100.0) if work_ms > 0 else None,
                "cost_per_record_ms": (per_record / self.recorded) if self.recorded else None,
                "by_phase": by_phase}


__all__ = ["SamplingBudget", "DEFAULT_SAMPLING_BUDGET", "DEFAULT_FIRST_RECORDED_FORWARD"]
