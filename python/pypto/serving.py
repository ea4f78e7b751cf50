"""Continuous profiling inside a running service: profile one sampled call now and then.

    from pypto.serving import ServingProfiler

    sampler = ServingProfiler("/var/lib/myservice/profiles",
                              quiet=lambda: request_queue.qsize() == 0)
    sampler.attach(model)            # wraps model.generate (or model.forward when there is none)
    ...                              # the service runs as before, from as many threads as it likes
    sampler.stats()                  # samples taken, skipped, failures, bytes on disk, overhead estimate
    sampler.close()

A *step* is one call of the wrapped function (one `generate` request, one `forward`, one call of a
function wrapped with `wrap` / `@profiled`). Sampling policy: a sample is due when `every_n_steps`
calls or `every_seconds` seconds have passed since the last sample (whichever comes first); a due
sample is taken on the next call for which the `quiet` predicate returns True (no predicate: always
quiet). While the service is busy the sample stays due and the predicate is asked again on each
call, so it must be cheap. Only one call is profiled at a time; every other call, from any thread,
goes straight to the wrapped function (one lock, one clock read and two perf_counter reads).

The sampled call runs under pypto.collection.Profiler. When a model is known (attach(model) or
wrap(fn, model=model)) each forward of that model inside the call is one step (ProfilerStep#N, the
first forward of a generate being the prefill); otherwise the whole call is annotated as
ProfilerStep#0. The Profiler's hooks ignore forwards of other threads, and torch's CPU profiler
records the sampling thread only, so concurrent requests do not leak into the sample.

Each sample is written to `output_dir` as `pypto_sample_<UTC time>_<seq>.json.gz`: the Kineto
Chrome trace that torch.profiler exported, gzipped, which `pypto.load_profile(path)` and the
pipeline read. The file is written under a hidden temporary name and renamed, so a reader never
sees a partial file. After each write, the oldest sample files are deleted until at most
`max_files` remain and they total at most `max_disk_bytes`; files whose names do not match the
sample-file pattern are never touched.

Errors inside profiling (profiler start / stop, export, disk full, a raising `quiet` predicate) never
reach the service: the call's own result is returned, or its own exception raised, unchanged; the
profiling error is logged through `logging` (logger "pypto.serving") and counted in stats().
See docs/serving.md.
"""

from __future__ import annotations

import datetime
import functools
import gzip
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from .collection import STEP_NAME_PREFIX, TRACE_LEVELS, Profiler
from .errors import InvalidArgumentError

LOGGER = logging.getLogger("pypto.serving")

# Defaults of the sampling policy, from the issue: "every 1000 steps or 300 s, whichever first,
# only when quiet". At ~20 ms per decode step that is one sampled request in a few minutes.
DEFAULT_EVERY_N_STEPS = 1000
DEFAULT_EVERY_SECONDS = 300.0
# Disk budget: a CPU operator-level sample of one 16-token generate of the example Llama is
# ~0.1-0.3 MB gzipped (measured); 100 files / 256 MiB keep days of samples at the default rate.
DEFAULT_MAX_FILES = 100
DEFAULT_MAX_DISK_BYTES = 256 * 1024 * 1024
# Kineto traces compress ~10x; level 6 is gzip's own default (speed / size balance).
GZIP_LEVEL = 6

SAMPLE_FILE_PREFIX = "pypto_sample_"
SAMPLE_FILE_SUFFIX = ".json.gz"
SAMPLE_TIME_FORMAT = "%Y%m%dT%H%M%S.%fZ"        # UTC, sortable as text
SAMPLE_SEQ_DIGITS = 6
SAMPLE_FILE_PATTERN = re.compile(r"^pypto_sample_(\d{8}T\d{6}\.\d{6}Z)_(\d{6,})\.json\.gz$")
TEMPORARY_FILE_SUFFIX = ".partial"              # hidden name ".<final name>.partial" while writing
WORK_DIR_PREFIX = "pypto_serving_"
ATTACHABLE_METHODS = ("generate", "forward")


def sample_file_name(when_utc: datetime.datetime, seq: int) -> str:
    """`pypto_sample_<YYYYmmddTHHMMSS.ffffffZ>_<seq>.json.gz` (seq zero-padded to 6 digits)."""
    return f"{SAMPLE_FILE_PREFIX}{when_utc.strftime(SAMPLE_TIME_FORMAT)}_{seq:0{SAMPLE_SEQ_DIGITS}d}{SAMPLE_FILE_SUFFIX}"


def list_sample_files(directory: str) -> List[Tuple[str, int]]:
    """The sample files in `directory` (regular files named like sample_file_name), oldest first,
    as (path, size in bytes)."""
    found = []
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    for name in names:
        match = SAMPLE_FILE_PATTERN.match(name)
        if match is None:
            continue
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if not os.path.isfile(path) or os.path.islink(path):
            continue
        found.append(((match.group(1), int(match.group(2))), path, info.st_size))
    found.sort()
    return [(path, size) for _, path, size in found]


class _ThreadScopedProfiler(Profiler):
    """A Profiler whose step hooks see only the forwards of the thread that created it.

    Other threads keep calling the same model during a sample; their forwards must neither become
    steps nor disturb the open step, and their generate calls must not mark the sampling thread's next
    forward as a prefill (the generate wrapper of Profiler.watch sets _pending_prefill).
    """

    def __init__(self, *args: Any, **kwargs: Any):
        self._sampling_thread = threading.get_ident()
        self._per_thread = threading.local()
        super().__init__(*args, **kwargs)

    @property
    def _pending_prefill(self) -> bool:
        return getattr(self._per_thread, "pending_prefill", False)

    @_pending_prefill.setter
    def _pending_prefill(self, value: bool) -> None:
        self._per_thread.pending_prefill = value

    @property
    def _generate_calls(self) -> List[Dict[str, Any]]:
        calls = getattr(self._per_thread, "generate_calls", None)
        if calls is None:
            calls = self._per_thread.generate_calls = []
        return calls

    @_generate_calls.setter
    def _generate_calls(self, value: List[Dict[str, Any]]) -> None:
        self._per_thread.generate_calls = value

    def _before_forward(self, module: Any, args: tuple, kwargs: Dict[str, Any]) -> None:
        if threading.get_ident() == self._sampling_thread:
            super()._before_forward(module, args, kwargs)

    def _after_forward(self, module: Any, args: tuple, output: Any) -> None:
        if threading.get_ident() == self._sampling_thread:
            super()._after_forward(module, args, output)


class ServingProfiler:
    """Profiles a sampled call of a service's generate / forward function; see the module docstring.

    output_dir: where sample files go (created if missing).
    every_n_steps / every_seconds: a sample is due after this many calls / seconds since the last one
      (whichever first). Both None: DEFAULT_EVERY_N_STEPS and DEFAULT_EVERY_SECONDS. One given: that
      one alone. The first sample is due after the first interval, not on the first call.
    quiet: callable returning True when the service can afford a profiled call (e.g.
      `lambda: queue.qsize() == 0`); None: always.
    max_disk_bytes / max_files: rotation limits over the sample files in output_dir.
    trace_level: as pypto.collection.Profiler ("minimal", "operator", "detailed").
    capture_memory_access: the profiler's memory events (off by default: they add overhead and size).
    profiler_options: other keyword arguments for Profiler (device_id, backend, record_shapes, ...).
    clock: seconds, monotonic (time.monotonic); tests pass a fake clock.
    """

    def __init__(self, output_dir: Any, every_n_steps: Optional[int] = None, every_seconds: Optional[float] = None,
                 quiet: Optional[Callable[[], bool]] = None, max_disk_bytes: int = DEFAULT_MAX_DISK_BYTES,
                 max_files: int = DEFAULT_MAX_FILES, trace_level: str = "operator",
                 capture_memory_access: bool = False, profiler_options: Optional[Dict[str, Any]] = None,
                 clock: Callable[[], float] = time.monotonic):
        if every_n_steps is None and every_seconds is None:
            every_n_steps, every_seconds = DEFAULT_EVERY_N_STEPS, DEFAULT_EVERY_SECONDS
        if every_n_steps is not None and (not isinstance(every_n_steps, int) or isinstance(every_n_steps, bool)
                                          or every_n_steps < 1):
            raise InvalidArgumentError(f"every_n_steps must be a positive int or None, got {every_n_steps!r}")
        if every_seconds is not None and (isinstance(every_seconds, bool) or not isinstance(every_seconds, (int, float))
                                          or not every_seconds > 0):
            raise InvalidArgumentError(f"every_seconds must be a positive number or None, got {every_seconds!r}")
        if quiet is not None and not callable(quiet):
            raise InvalidArgumentError(f"quiet must be a callable returning bool, got {type(quiet).__name__}")
        if not isinstance(max_files, int) or max_files < 1:
            raise InvalidArgumentError(f"max_files must be a positive int, got {max_files!r}")
        if not isinstance(max_disk_bytes, int) or max_disk_bytes < 1:
            raise InvalidArgumentError(f"max_disk_bytes must be a positive int (bytes), got {max_disk_bytes!r}")
        if trace_level not in TRACE_LEVELS:
            raise InvalidArgumentError(f"trace_level must be one of {', '.join(TRACE_LEVELS)}, got {trace_level!r}")
        options = dict(profiler_options or {})
        reserved = sorted(set(options) & {"output_dir", "model", "schedule", "trace_level"})
        if reserved:
            raise InvalidArgumentError(f"profiler_options: {reserved} are set by ServingProfiler itself")
        self.output_dir = os.fspath(output_dir)
        os.makedirs(self.output_dir, exist_ok=True)
        self.every_n_steps = every_n_steps
        self.every_seconds = None if every_seconds is None else float(every_seconds)
        self.quiet = quiet
        self.max_disk_bytes = max_disk_bytes
        self.max_files = max_files
        self.trace_level = trace_level
        self.profiler_options = {"capture_memory_access": bool(capture_memory_access), **options}
        self._clock = clock
        self._lock = threading.Lock()          # guards the counters below (held for a few µs)
        self._per_thread = threading.local()   # .in_sample: this thread is running the sampled call
        self._sampling = False                 # a sample is being decided or taken (one at a time)
        self._closed = False
        self._started_at = clock()
        self._last_sample_at = self._started_at
        self._steps_since_sample = 0
        existing = list_sample_files(self.output_dir)
        self._next_seq = 1 + max((int(SAMPLE_FILE_PATTERN.match(os.path.basename(p)).group(2))
                                  for p, _ in existing), default=0)
        self._attached: List[Tuple[Any, str, bool, Any]] = []   # (model, method, had attribute, previous)
        self._counts = {"steps": 0, "samples_taken": 0, "samples_written": 0, "skipped_not_quiet": 0, "skipped_sample_running": 0,
                        "failures": 0, "files_deleted": 0}
        self._unsampled_seconds = 0.0
        self._sampled_seconds = 0.0
        self._profiling_extra_seconds = 0.0
        self._last_error: Optional[str] = None
        self._last_sample_path: Optional[str] = None

    # ------------------------------------------------------------------ wrapping
    def wrap(self, fn: Callable[..., Any], model: Any = None) -> Callable[..., Any]:
        """`fn` with sampling. With `model` (a torch.nn.Module that fn runs), each forward of the model
        inside a sampled call is one step of the trace; without, the sampled call is one step."""
        if not callable(fn):
            raise InvalidArgumentError(f"wrap() needs a callable, got {type(fn).__name__}")

        @functools.wraps(fn)
        def sampled(*args: Any, **kwargs: Any) -> Any:
            return self._call(fn, model, None, args, kwargs)

        sampled.serving_profiler = self   # type: ignore[attr-defined]
        return sampled

    def attach(self, model: Any, method: Optional[str] = None) -> Any:
        """Wraps `model.generate` (or `model.forward` when the model has no generate, or `method`) with
        sampling, as an instance attribute; detach() or close() restores it. Returns the model."""
        if method is None:
            method = "generate" if callable(getattr(model, "generate", None)) else "forward"
        if method not in ATTACHABLE_METHODS:
            raise InvalidArgumentError(f"attach(): method must be one of {', '.join(ATTACHABLE_METHODS)}, "
                                       f"got {method!r}")
        original = getattr(model, method, None)
        if not callable(original):
            raise InvalidArgumentError(f"attach(): {type(model).__name__} has no callable {method}()")
        if any(entry[0] is model and entry[1] == method for entry in self._attached):
            return model
        had_attribute = method in model.__dict__
        previous = model.__dict__.get(method)
        if method == "generate":
            # The sampled call goes through model.generate again, so that Profiler.watch's generate
            # wrapper (installed for the sample) sees it and labels the first forward as the prefill.
            def reenter(*args: Any, **kwargs: Any) -> Any:
                return getattr(model, "generate")(*args, **kwargs)

            def sampled(*args: Any, **kwargs: Any) -> Any:
                if getattr(self._per_thread, "in_sample", False):
                    return original(*args, **kwargs)
                return self._call(original, model, reenter, args, kwargs)
        else:
            # A forward is called by the module's __call__, whose hooks already ran: the call is one
            # step, annotated by us, without watching the model.
            def sampled(*args: Any, **kwargs: Any) -> Any:
                return self._call(original, None, None, args, kwargs)
        functools.update_wrapper(sampled, original)
        sampled.serving_profiler = self   # type: ignore[attr-defined]
        model.__dict__[method] = sampled
        self._attached.append((model, method, had_attribute, previous))
        return model

    def detach(self, model: Any) -> None:
        """Restores the methods attach() wrapped on `model`."""
        keep = []
        for entry in self._attached:
            attached_model, method, had_attribute, previous = entry
            if attached_model is not model:
                keep.append(entry)
                continue
            if had_attribute:
                model.__dict__[method] = previous
            else:
                model.__dict__.pop(method, None)
        self._attached = keep

    def close(self) -> None:
        """Detaches every model; wrapped functions keep working and pass every call through."""
        with self._lock:
            self._closed = True
        for model in {id(entry[0]): entry[0] for entry in self._attached}.values():
            self.detach(model)

    def __enter__(self) -> "ServingProfiler":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    # ------------------------------------------------------------------ policy
    def _claim_sample(self) -> bool:
        """Counts the step; True when this call is the one to profile (the caller then owns the sample)."""
        with self._lock:
            self._counts["steps"] += 1
            self._steps_since_sample += 1
            if self._closed:
                return False
            due = ((self.every_n_steps is not None and self._steps_since_sample >= self.every_n_steps) or
                   (self.every_seconds is not None and self._clock() - self._last_sample_at >= self.every_seconds))
            if not due:
                return False
            if self._sampling:
                self._counts["skipped_sample_running"] += 1
                return False
            self._sampling = True
        if self._service_is_quiet():
            with self._lock:
                self._steps_since_sample = 0
                self._last_sample_at = self._clock()
            return True
        with self._lock:
            self._counts["skipped_not_quiet"] += 1
            self._sampling = False
        return False

    def _service_is_quiet(self) -> bool:
        if self.quiet is None:
            return True
        try:
            return bool(self.quiet())
        except Exception as exc:
            self._record_failure("the quiet predicate raised", exc)
            return False

    # ------------------------------------------------------------------ calls
    def _call(self, fn: Callable[..., Any], model: Any, reenter: Optional[Callable[..., Any]],
              args: tuple, kwargs: Dict[str, Any]) -> Any:
        if getattr(self._per_thread, "in_sample", False) or not self._claim_sample():
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                with self._lock:
                    self._unsampled_seconds += elapsed
        started = time.perf_counter()
        try:
            return self._sampled_call(fn, model, reenter, args, kwargs)
        finally:
            elapsed = time.perf_counter() - started
            with self._lock:
                self._sampling = False
                self._sampled_seconds += elapsed
                unsampled_calls = self._counts["steps"] - self._counts["samples_taken"] - 1
                typical = self._unsampled_seconds / unsampled_calls if unsampled_calls > 0 else 0.0
                self._profiling_extra_seconds += max(0.0, elapsed - typical)
                self._counts["samples_taken"] += 1

    def _sampled_call(self, fn: Callable[..., Any], model: Any, reenter: Optional[Callable[..., Any]],
                      args: tuple, kwargs: Dict[str, Any]) -> Any:
        work_dir = None
        profiler = None
        try:
            work_dir = tempfile.mkdtemp(prefix=WORK_DIR_PREFIX)
            profiler = _ThreadScopedProfiler(trace_level=self.trace_level, output_dir=work_dir, model=model,
                                             **self.profiler_options)
            profiler.start()
        except Exception as exc:
            self._record_failure("starting the profiler failed", exc)
            profiler = None
            if work_dir is not None:
                shutil.rmtree(work_dir, ignore_errors=True)
        if profiler is None:
            return fn(*args, **kwargs)
        self._per_thread.in_sample = True
        step = None
        try:
            if model is None:
                step = _record_function(f"{STEP_NAME_PREFIX}0")
            target = reenter if reenter is not None else fn
            return target(*args, **kwargs)
        finally:
            self._per_thread.in_sample = False
            if step is not None:
                try:
                    step.__exit__(None, None, None)
                except Exception as exc:  # pragma: no cover - torch internals
                    self._record_failure("closing the step annotation failed", exc)
            self._finish_sample(profiler, work_dir)

    def _finish_sample(self, profiler: Profiler, work_dir: str) -> None:
        """Stops the profiler, writes the sample file, rotates. Never raises."""
        try:
            profiler.stop()
            trace_path = profiler.get_results().trace_path
            if trace_path is None:
                raise InvalidArgumentError("the profiler produced no trace")
            if os.path.isdir(trace_path):
                raise InvalidArgumentError(f"{trace_path}: the profiler wrote a directory (Ascend output); "
                                           "pypto.serving writes single Kineto trace files only")
            self._last_sample_path = self._write_sample(trace_path)
            with self._lock:
                self._counts["samples_written"] += 1
            self._rotate()
        except Exception as exc:
            self._record_failure("writing the sample failed", exc)
        finally:
            shutil.rmtree(work_dir, ignore_errors=True)

    def _write_sample(self, trace_path: str) -> str:
        """Gzips the trace to a hidden temporary name in output_dir, then renames it (atomic)."""
        name = sample_file_name(datetime.datetime.now(datetime.timezone.utc), self._next_seq)
        self._next_seq += 1
        final = os.path.join(self.output_dir, name)
        temporary = os.path.join(self.output_dir, f".{name}{TEMPORARY_FILE_SUFFIX}")
        try:
            with open(trace_path, "rb") as source:
                already_gzip = source.read(2) == b"\x1f\x8b"
                source.seek(0)
                with open(temporary, "wb") as sink:
                    if already_gzip:
                        shutil.copyfileobj(source, sink)
                    else:
                        with gzip.GzipFile(filename="", mode="wb", fileobj=sink, compresslevel=GZIP_LEVEL,
                                           mtime=0) as packed:
                            shutil.copyfileobj(source, packed)
                    sink.flush()
                    os.fsync(sink.fileno())
            os.replace(temporary, final)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
        return final

    def _rotate(self) -> None:
        """Deletes the oldest sample files until count <= max_files and total bytes <= max_disk_bytes."""
        files = list_sample_files(self.output_dir)
        total = sum(size for _, size in files)
        while files and (len(files) > self.max_files or total > self.max_disk_bytes):
            path, size = files.pop(0)
            if not files:
                LOGGER.warning("pypto.serving: sample %s (%d bytes) alone exceeds max_disk_bytes=%d; deleted",
                               path, size, self.max_disk_bytes)
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            total -= size
            with self._lock:
                self._counts["files_deleted"] += 1

    def _record_failure(self, what: str, exc: BaseException) -> None:
        message = f"{what}: {type(exc).__name__}: {exc}"
        LOGGER.warning("pypto.serving: %s (the service call is unaffected)", message, exc_info=exc)
        with self._lock:
            self._counts["failures"] += 1
            self._last_error = message

    # ------------------------------------------------------------------ stats
    def stats(self) -> Dict[str, Any]:
        """Counters and an overhead estimate.

        steps: calls seen; samples_taken: calls profiled; samples_written: sample files written (a
        sample whose profiling failed is taken, not written); skipped_not_quiet: calls at which a sample was due but the
        quiet predicate said no; skipped_sample_running: due calls that found another sample in progress;
        failures (and last_error); files_on_disk / bytes_on_disk: the sample files in output_dir now;
        files_deleted by rotation; last_sample_path.
        overhead_fraction: profiling_extra_seconds / (total seconds inside wrapped calls), where
        profiling_extra_seconds sums, per sample, the sampled call's wall time minus the mean time of
        an unsampled call (an estimate: request sizes vary).
        """
        files = list_sample_files(self.output_dir)
        with self._lock:
            result: Dict[str, Any] = dict(self._counts)
            total_seconds = self._unsampled_seconds + self._sampled_seconds
            result.update({
                "files_on_disk": len(files), "bytes_on_disk": sum(size for _, size in files),
                "last_error": self._last_error, "last_sample_path": self._last_sample_path,
                "profiling_extra_seconds": self._profiling_extra_seconds,
                "seconds_in_calls": total_seconds,
                "overhead_fraction": self._profiling_extra_seconds / total_seconds if total_seconds > 0 else 0.0,
                "policy": {"every_n_steps": self.every_n_steps, "every_seconds": self.every_seconds,
                           "quiet": self.quiet is not None, "max_files": self.max_files,
                           "max_disk_bytes": self.max_disk_bytes, "trace_level": self.trace_level},
            })
        return result


def _record_function(name: str):
    import torch
    record = torch.profiler.record_function(name)
    record.__enter__()
    return record


def profiled(output_dir: Any, model: Any = None, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator form: `@profiled(dir, every_n_steps=100)` on a service's generate function. The
    ServingProfiler is the wrapped function's `.serving_profiler` (for stats() and close())."""
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        return ServingProfiler(output_dir, **options).wrap(fn, model=model)
    return decorate


__all__ = ["ServingProfiler", "profiled", "sample_file_name", "list_sample_files", "DEFAULT_EVERY_N_STEPS",
           "DEFAULT_EVERY_SECONDS", "DEFAULT_MAX_FILES", "DEFAULT_MAX_DISK_BYTES", "SAMPLE_FILE_PATTERN"]
