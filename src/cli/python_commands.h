// Subcommands implemented in the Python package (`pypto fleet`, `pypto ranks`,
// `pypto pipeline`, …): the CLI lists them in --help and hands the untouched
// argument vector to `<python> -m pypto`, which owns their options.
#pragma once

#include <CLI/CLI.hpp>

namespace pypto::cli {

// True when argv[1] names a command implemented in Python.
bool IsPythonCommand(const char* name);

// Registers the Python commands on `app` so that they appear in --help (their
// arguments pass through unparsed).
void AddPythonCommands(CLI::App* app);

// Replaces this process with `<python> -m pypto argv[1..]`. The interpreter is
// $PYPTO_PYTHON if set, else python3 / python next to this executable (a venv's
// bin directory), else python3 on PATH; the first one that can import pypto is
// used. Returns an exit code only when none can (after printing why).
int RunPythonCommand(int argc, char** argv);

}  // namespace pypto::cli
