"""The C++ CLI hands `fleet`, `ranks`, `pipeline`, `watch`, `actions`, `history` to `python -m pypto`,
and `python -m pypto` hands every other command to the C++ binary."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from pypto import __main__ as entry

PYTHON_COMMANDS = ["fleet", "ranks", "pipeline", "watch", "actions", "history"]
NCCL_TRACE = os.path.join("kineto", "hta_nccl_2rank_a100_2024", "nccl_data.json.gz")


def test_help_lists_each_python_command(pypto_cli):
    help_text = subprocess.run([pypto_cli, "--help"], capture_output=True, text=True).stdout
    for command in PYTHON_COMMANDS:
        assert re.search(rf"^  {command} ", help_text, re.MULTILINE), command
    assert help_text.count("implemented in the Python package") == len(PYTHON_COMMANDS)
    assert set(entry.PYTHON_COMMANDS) == set(PYTHON_COMMANDS)


def test_each_python_command_names_a_module_with_main():
    # The CLI's table (src/cli/python_command_table.h) is the one list; each module it names must exist.
    import importlib
    for command, module in entry.PYTHON_COMMANDS.items():
        assert callable(importlib.import_module(module).main), (command, module)


def test_cli_delegates_ranks_with_arguments_untouched(pypto_cli, fixtures, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(os.path.join(fixtures, NCCL_TRACE), run / "rank0.json.gz")
    out = tmp_path / "ranks.json"
    env = dict(os.environ, PYPTO_PYTHON=sys.executable)
    done = subprocess.run([pypto_cli, "ranks", str(run), "--json", "--out", str(out)], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["schema"] == "pypto.ranks/1"


def test_cli_without_a_python_that_has_pypto(pypto_cli, tmp_path):
    env = dict(os.environ, PYPTO_PYTHON=str(tmp_path / "no-such-python"))
    done = subprocess.run([pypto_cli, "fleet", "analyze", "x"], capture_output=True, text=True, env=env)
    assert done.returncode == 3
    assert "implemented in the Python package" in done.stderr and "PYPTO_PYTHON" in done.stderr


def test_python_m_pypto_runs_engine_commands_in_the_binary(fixtures):
    done = subprocess.run([sys.executable, "-m", "pypto", "analyze", "--json", os.path.join(fixtures, NCCL_TRACE)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema"] == "pypto.analyze/1"


def test_python_m_pypto_runs_python_commands_here(capsys):
    assert entry.main(["ranks", "/nonexistent-rank-dir"]) == 2
    assert "not a directory" in capsys.readouterr().err
