"""Small read-only record type over the engine's JSON objects."""

from __future__ import annotations

from typing import Any, Dict


class Record:
    """Attribute access over one JSON object; `.raw` keeps the whole object."""

    __slots__ = ("raw",)

    def __init__(self, raw: Dict[str, Any]):
        object.__setattr__(self, "raw", raw)

    def __getattr__(self, name: str) -> Any:
        try:
            value = self.raw[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r} "
                                 f"(fields: {', '.join(sorted(self.raw))})") from None
        return Record(value) if isinstance(value, dict) else value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.raw)

    def __repr__(self) -> str:
        keys = ", ".join(f"{k}={self.raw[k]!r}" for k in list(self.raw)[:4])
        return f"{type(self).__name__}({keys}, …)"
