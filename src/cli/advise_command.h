// `pypto advise`: diagnose, then ranked recommendations from the rule library
// and the artifacts that apply them; `pypto kv-patch`: write the KV-cache
// layout patch for a model config without a profile.
#pragma once

#include "cli/terminal_progress.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "advisor/model_config.h"
#include "analysis/detector.h"
#include "importers/importer.h"

namespace pypto::cli {

struct ModelConfigArgs {
  std::string config_json;      // a transformers config.json
  advisor::ModelConfig model;   // flags (win over config_json and the profile)
};

struct AdviseArgs {
  bool json = false;
  bool markdown = false;
  std::string output_dir;       // -o DIR: artifacts
  bool force = false;
  std::string backend;
  DiagnoseOptions options;
  std::optional<int64_t> step;
  ModelConfigArgs model;
};

CLI::App* AddAdviseCommand(CLI::App* app, AdviseArgs* args);
int RunAdvise(const AdviseArgs& args, const std::string& path, const ImportOptions& import,
              TerminalProgress* progress);

struct KvPatchArgs {
  std::string output;
  bool force = false;
  ModelConfigArgs model;
};

CLI::App* AddKvPatchCommand(CLI::App* app, KvPatchArgs* args);
int RunKvPatch(const KvPatchArgs& args);

}  // namespace pypto::cli
