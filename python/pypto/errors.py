"""Typed exceptions raised by pypto.

The engine reports every failure as a status code and a one-line message that
names the file, the place (byte offset or line) and the reason; the binding
raises the class below that matches the code, with that message.
"""

from __future__ import annotations


class PyptoError(Exception):
    """Base class of every error pypto raises."""


class ProfileFormatError(PyptoError):
    """The input is not a profile format pypto reads, or is malformed beyond recovery."""


class ProfileNotFoundError(PyptoError, FileNotFoundError):
    """The path does not exist, or a directory holds no profile."""


class InvalidArgumentError(PyptoError, ValueError):
    """An argument (option, threshold, step, output path, …) is unusable."""


class LimitExceededError(PyptoError):
    """A safety limit (input size, nesting depth, gzip expansion ratio, …) was hit."""


class PyptoIOError(PyptoError, OSError):
    """The operating system refused a read or a write."""


class CancelledError(PyptoError):
    """The work was cancelled (e.g. Ctrl-C)."""


class InternalError(PyptoError):
    """A bug in pypto; please report it with the message."""


_BY_CODE = {
    "not found": ProfileNotFoundError,
    "invalid argument": InvalidArgumentError,
    "unsupported format": ProfileFormatError,
    "corrupt input": ProfileFormatError,
    "limit exceeded": LimitExceededError,
    "I/O error": PyptoIOError,
    "cancelled": CancelledError,
    "internal error": InternalError,
}


def exception_for_code(code: str) -> type:
    """The exception class for an engine status code name (core/status.cc StatusCodeName)."""
    return _BY_CODE.get(code, PyptoError)


__all__ = [
    "PyptoError", "ProfileFormatError", "ProfileNotFoundError", "InvalidArgumentError",
    "LimitExceededError", "PyptoIOError", "CancelledError", "InternalError", "exception_for_code",
]
