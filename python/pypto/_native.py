"""Access to the compiled engine (pypto._engine) with a clear error when it is missing."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional

try:
    from . import _engine as engine  # noqa: F401  (re-exported)
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "pypto's compiled engine (pypto._engine) is missing: install the package with "
        "`pip install .` from the source tree, or run `make build` there"
    ) from exc


def diagnose_options(**kwargs: Any) -> Dict[str, Any]:
    """Keyword arguments for the engine's diagnosis, without the unset ones."""
    return {k: v for k, v in kwargs.items() if v is not None}


def model_config_json(model_config: Any) -> str:
    """A transformers config, a dict, a path to config.json, or None → JSON text for the engine."""
    if model_config is None:
        return ""
    if isinstance(model_config, (str, os.PathLike)):
        with open(model_config, "r", encoding="utf-8") as f:
            return f.read()
    if hasattr(model_config, "to_dict"):
        model_config = model_config.to_dict()
    if hasattr(model_config, "config") and hasattr(model_config.config, "to_dict"):
        model_config = model_config.config.to_dict()
    if not isinstance(model_config, dict):
        raise TypeError("model_config must be a transformers config, a dict, a path to config.json or None, "
                        f"not {type(model_config).__name__}")
    plain = {k: v for k, v in model_config.items() if isinstance(v, (str, int, float, bool)) or v is None}
    if "torch_dtype" in model_config and not isinstance(model_config["torch_dtype"], str):
        plain["torch_dtype"] = str(model_config["torch_dtype"]).replace("torch.", "")
    return json.dumps(plain)


def fspath(path: Any) -> str:
    return os.fspath(path)


def optional_int(value: Optional[int]) -> Optional[int]:
    return None if value is None else int(value)
