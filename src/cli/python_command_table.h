// The subcommands implemented in the Python package, and the module whose
// main(argv) runs each: the one list the C++ CLI (--help, hand-off to
// `python -m pypto`) and the Python entry point (`pypto._engine.python_commands`,
// read by pypto/__main__.py) both use. Header-only, so the binding reads it
// without linking the CLI.
#pragma once

namespace pypto::cli {

struct PythonCommand {
  const char* name;
  const char* module;
  const char* description;
};

inline constexpr PythonCommand kPythonCommands[] = {
    {"fleet", "pypto.fleet",
     "Analyse many profiles on a Dask cluster (`fleet analyze PATHS [--scheduler ADDRESS]`);\n"
     "implemented in the Python package (pypto.fleet)."},
    {"ranks", "pypto.ranks",
     "Multi-rank analysis of a directory with one profile per rank: slow rank, stragglers,\n"
     "communication per collective and link; implemented in the Python package (pypto.ranks)."},
    {"pipeline", "pypto.pipeline",
     "Run the collect-diagnose-advise pipeline; implemented in the Python package (pypto.pipeline)."},
    {"watch", "pypto.pipeline",
     "Watch a directory for new profiles and analyse them; implemented in the Python package\n"
     "(pypto.pipeline)."},
    {"actions", "pypto.pipeline",
     "List or apply the pipeline's recommended actions; implemented in the Python package\n"
     "(pypto.pipeline)."},
    {"history", "pypto.pipeline",
     "Show the history of analysed runs; implemented in the Python package (pypto.pipeline)."},
};

}  // namespace pypto::cli
