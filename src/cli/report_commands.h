// `pypto compare`, `pypto report` and `pypto export-sqlite`: options and
// runners. main.cc adds the input options (PATH, --format, …) of report and
// export-sqlite like for every command that reads one profile; compare reads
// two and takes its own positionals.
#pragma once

#include "cli/terminal_progress.h"

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "analysis/detector.h"
#include "importers/importer.h"

namespace pypto::cli {

struct CompareArgs {
  std::string baseline;
  std::string candidate;
  bool json = false;
  bool markdown = false;
  std::string html;            // output file for --html
  bool force = false;
  std::string actions_file;    // applied actions (JSON)
  double alpha = 0.05;
  std::string hardware;
  // --fail-on-regression [PCT]: exit kExitRegression when the candidate's step latency is significantly
  // slower by more than PCT %; the option is given when fail_on_regression->count() > 0.
  std::string regression_pct;
  const CLI::Option* fail_on_regression = nullptr;
};
CLI::App* AddCompareCommand(CLI::App* app, CompareArgs* args);
int RunCompare(const CompareArgs& args);

struct ReportArgs {
  std::string output;
  bool markdown = false;
  bool json = false;
  bool force = false;
  std::string baseline;        // --baseline A: compare A (baseline) with PATH (candidate)
  std::string hardware;
};
CLI::App* AddReportCommand(CLI::App* app, ReportArgs* args);
int RunReport(const ReportArgs& args, const std::string& path, const ImportOptions& import,
              TerminalProgress* progress);

struct ExportSqliteArgs {
  std::string output;
  bool force = false;
  bool no_findings = false;
};
CLI::App* AddExportSqliteCommand(CLI::App* app, ExportSqliteArgs* args);
// The OUT positional; main.cc calls it after adding PATH so that PATH comes first.
void AddExportSqliteOutput(CLI::App* cmd, ExportSqliteArgs* args);
int RunExportSqlite(const ExportSqliteArgs& args, const std::string& path, const ImportOptions& import,
                    TerminalProgress* progress);

}  // namespace pypto::cli
