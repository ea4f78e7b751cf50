"""Progress of long Python commands (fleet, ranks, pipeline) on stderr.

One line, rewritten in place ("pypto ranks: 3/8 profiles, rank_3_ascend_pt"), only when stderr is a
terminal and PYPTO_NO_PROGRESS is unset: logs and pipes stay clean. The C++ commands show the same
kind of line while they read a profile.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Optional, TextIO


class Progress:
    def __init__(self, label: str, total: Optional[int] = None, unit: str = "profiles",
                 stream: Optional[TextIO] = None, enabled: Optional[bool] = None):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)()) and not os.environ.get("PYPTO_NO_PROGRESS")
        self.enabled = enabled
        self.done = 0
        self._lock = threading.Lock()
        self._width = 0

    def advance(self, item: str = "") -> None:
        """One more item done (thread-safe); `item` names it."""
        with self._lock:
            self.done += 1
            if not self.enabled:
                return
            count = f"{self.done}/{self.total}" if self.total else str(self.done)
            line = f"{self.label}: {count} {self.unit}" + (f", {os.path.basename(item.rstrip('/'))}" if item else "")
            line = line[:120]
            self.stream.write("\r" + line + " " * max(0, self._width - len(line)))
            self.stream.flush()
            self._width = len(line)

    def finish(self) -> None:
        with self._lock:
            if self.enabled and self._width:
                self.stream.write("\r" + " " * self._width + "\r")
                self.stream.flush()
            self._width = 0

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.finish()
