// `pypto diagnose`: options and runner (the input options PATH, --format …
// are added by main.cc like for every command that reads a profile).
#pragma once

#include "cli/terminal_progress.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "analysis/detector.h"
#include "importers/importer.h"

namespace pypto::cli {

struct DiagnoseArgs {
  bool json = false;
  bool markdown = false;
  DiagnoseOptions options;
  std::optional<int64_t> step;
};

// Adds the subcommand and its own options; returns it so main.cc can add the input options.
CLI::App* AddDiagnoseCommand(CLI::App* app, DiagnoseArgs* args);

// Loads `path` with `import`, diagnoses and prints. `progress` (fed bytes by
// `import`) shows the diagnosis after the import and is erased before output.
int RunDiagnose(const DiagnoseArgs& args, const std::string& path, const ImportOptions& import,
                TerminalProgress* progress);

}  // namespace pypto::cli
