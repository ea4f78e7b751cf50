"""This machine as a roofline target: `calibrate()` measures the CPU's fp32 peak FLOP/s and
memory bandwidth (the engine's microbenchmarks, same as `pypto calibrate`) and stores them;
the diagnosis of CPU-only profiles then uses them (MatMul tiling, attention roofline)."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ._native import engine, fspath

DEFAULT_CALIBRATION_SECONDS = float(engine.defaults["calibration_seconds"])  # the CLI's default --seconds


def calibrate(seconds: float = DEFAULT_CALIBRATION_SECONDS, threads: int = 0,
              output: Optional[Any] = None) -> Dict[str, Any]:
    """Measures this machine and stores the result (default: the per-user calibration file)."""
    return dict(engine.calibrate(float(seconds), int(threads), "" if output is None else fspath(output)))


def calibration_path() -> str:
    return engine.calibration_path()


def has_calibration(path: Optional[Any] = None) -> bool:
    return bool(engine.has_calibration("" if path is None else fspath(path)))


def ensure_calibrated(seconds: float = DEFAULT_CALIBRATION_SECONDS) -> Optional[Dict[str, Any]]:
    """Calibrates once: returns the new figures, or None when a calibration already exists."""
    return None if has_calibration() else calibrate(seconds)


__all__ = ["calibrate", "calibration_path", "has_calibration", "ensure_calibrated"]
