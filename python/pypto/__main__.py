"""`python -m pypto <command> ...`: the Python commands run here, every other command runs in the
C++ `pypto` binary with the same arguments (so `python -m pypto analyze X` works too).

Python commands: `fleet` (pypto.fleet), `ranks` (pypto.ranks), and `pipeline`, `watch`, `actions`,
`history` (pypto.pipeline). The C++ CLI hands these same commands to `python -m pypto`.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import List, Optional, Sequence

from ._native import engine

#: command -> module whose main(argv) handles it (argv starts with the command name): the C++ CLI's
#: list (src/cli/python_command_table.h), which hands these same commands to `python -m pypto`.
PYTHON_COMMANDS = dict(engine.python_commands)

#: Exit status when a command cannot be run at all (the C++ CLI's kExitNotFound).
EXIT_NOT_FOUND = 3

_BINARY_NAME = "pypto"


def find_cli_binary() -> Optional[str]:
    """The C++ `pypto` installed next to this interpreter (a venv's bin directory), else the release
    build of a source tree (build/release/pypto beside python/)."""
    candidates = [os.path.join(os.path.dirname(sys.executable), _BINARY_NAME)]
    source_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    candidates.append(os.path.join(source_root, "build", "release", _BINARY_NAME))
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _run_python_command(argv: List[str]) -> int:
    module_name = PYTHON_COMMANDS[argv[0]]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise
        print(f"pypto: error: `pypto {argv[0]}` needs {module_name}, which this installation of pypto lacks",
              file=sys.stderr)
        return EXIT_NOT_FOUND
    return int(module.main(argv) or 0)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in PYTHON_COMMANDS:
        return _run_python_command(argv)
    binary = find_cli_binary()
    if binary is None:
        print("pypto: error: the pypto command-line binary was not found next to this Python "
              f"({os.path.dirname(sys.executable)}) nor in a source tree's build/release/; install the package "
              "(`pip install .`) or build it (`make build`)", file=sys.stderr)
        return EXIT_NOT_FOUND
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(binary, [binary, *argv])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
