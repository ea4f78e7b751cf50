// The pypto command line: parses arguments, calls the engine, prints, and maps
// Status codes to exit codes. No analysis happens here (see report/).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <future>
#include <string>

#include <fmt/format.h>

#include "cli/advise_command.h"
#include "cli/calibrate_command.h"
#include "cli/diagnose_command.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/python_commands.h"
#include "cli/report_commands.h"
#include "cli/terminal_progress.h"
#include "importers/detect.h"
#include "io/limits.h"
#include "io/output_file.h"
#include "model/phase_timer.h"
#include "report/analysis_json.h"
#include "report/analysis_summary.h"
#include "report/analysis_text.h"
#include "report/chrome_trace_export.h"
#include "session/profile_session.h"

namespace pypto::cli {
namespace {

constexpr char kProgramDescription[] =
    "pypto: performance tuning for LLM inference.\n"
    "Reads profiler output of PyTorch (Kineto traces from CUDA, ROCm and CPU runs, *.json or *.json.gz)\n"
    "and Huawei Ascend NPUs (*_ascend_pt directories, msprof PROF_* and msprof op output), builds the operator call\n"
    "graph and reports where the time goes.";

constexpr char kInputHelp[] =
    "Profile to read: a file (PyTorch/Kineto trace .json/.json.gz, Ascend CSV/JSON/DB) or a directory\n"
    "holding one (e.g. *_ascend_pt/, PROF_*/, OPPROF_*/) or one trace per rank of a job (merged);\n"
    "the format is detected from the content";

// Upper bound of --top: a typo guard, far above any table a terminal shows.
constexpr size_t kMaxTopRows = 100000;

constexpr char kExamples[] =
    "Examples:\n"
    "  pypto analyze worker0.pt.trace.json.gz\n"
    "  pypto analyze --json --step 5 rank0_ascend_pt/\n"
    "  pypto export-trace worker0.pt.trace.json.gz -o worker0.perfetto.json\n";

// Options every command that reads a profile accepts.
struct InputOptions {
  std::string path;
  std::string format;
  std::string cann_version;
  bool follow_symlinks = false;
  uint64_t max_input_bytes = io::kDefaultMaxInputBytes;
};

std::vector<std::string> ImporterNames() {
  std::vector<std::string> names;
  for (const Importer* importer : AllImporters()) names.emplace_back(importer->name());
  return names;
}

void AddInputOptions(CLI::App* command, InputOptions* input) {
  command->add_option("PATH", input->path, kInputHelp)->required();
  command->add_option("--format", input->format, "Skip detection and read PATH as this format")
      ->check(CLI::IsMember(ImporterNames()));
  command->add_option("--cann-version", input->cann_version,
                      "CANN version of an Ascend profile (e.g. 8.3.RC1) when the profile does not record it");
  command->add_flag("--follow-symlinks", input->follow_symlinks,
                    "Follow symbolic links in PATH (default: refuse them)");
  command->add_option("--max-input-bytes", input->max_input_bytes,
                      "Refuse input files larger than this many bytes (compressed size for .gz)")
      ->capture_default_str();
}

int PrintError(const Status& status) {
  std::fprintf(stderr, "pypto: error: %s\n", status.ToString().c_str());
  return ExitCodeFor(status.code());
}

int PrintInterrupted(const std::string& path) {
  std::fprintf(stderr, "pypto: error: interrupted by Ctrl-C while reading %s\n", path.c_str());
  return kExitCancelled;
}

ImportOptions MakeImportOptions(const InputOptions& input, TerminalProgress* progress) {
  ImportOptions options;
  options.forced_format = input.format;
  options.cann_version = input.cann_version;
  options.limits.follow_symlinks = input.follow_symlinks;
  options.limits.max_input_bytes = input.max_input_bytes;
  options.progress = [progress](uint64_t done, uint64_t total) { progress->Update(done, total); };
  options.cancel = InterruptFlag();
  return options;
}

std::string ProgressLabel(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return "reading " + (slash == std::string::npos ? path : path.substr(slash + 1));
}

struct AnalyzeArgs {
  InputOptions input;
  bool json = false;
  std::optional<int64_t> step;
  size_t top = report::kDefaultTopRows;
  bool all_steps = false;
};

int RunAnalyze(const AnalyzeArgs& args) {
  TerminalProgress progress(ProgressLabel(args.input.path));
  report::SummaryOptions options;
  options.step_number = args.step;
  options.top_rows = args.top;
  StatusOr<report::AnalysisSummary> summary = [&]() -> StatusOr<report::AnalysisSummary> {
    PhaseTimer total_timer("analyze (import+graph+summary)");
    PYPTO_ASSIGN_OR_RETURN(std::unique_ptr<ProfileSession> session,
                           ProfileSession::Open(args.input.path, MakeImportOptions(args.input, &progress)));
    // Many steps are summarised with their latency per phase, which the
    // structure analysis decides (it runs only then, beside the summary's
    // critical paths; with --step after them, so that a wrong step fails first).
    const bool phases = session->graph().Steps().size() > report::kStepsListedInFull;
    std::future<void> structure_ready;
    if (phases && !args.step) structure_ready = session->PrepareStructure();
    progress.Working("critical paths and summary");
    PhaseTimer summary_timer("summary");
    PYPTO_ASSIGN_OR_RETURN(report::AnalysisSummary s, report::SummarizeAnalysis(session->graph(), options));
    if (phases) {
      if (structure_ready.valid()) structure_ready.get();
      const StatusOr<ModelStructure>& structure = session->Structure();
      if (structure.ok()) report::AddPhaseLatencies(*structure, &s);
    }
    return s;
  }();
  progress.Finish();
  if (Interrupted()) return PrintInterrupted(args.input.path);
  if (!summary.ok()) return PrintError(summary.status());
  const std::string text =
      args.json ? report::RenderAnalysisJson(*summary)
                : report::RenderAnalysisText(*summary, report::AnalysisTextOptions{.all_steps = args.all_steps});
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) return PrintError(IoError("standard output: write failed"));
  return kExitOk;
}

struct ExportArgs {
  InputOptions input;
  std::string output;
  bool force = false;
};

int RunExportTrace(const ExportArgs& args) {
  // Refuse an existing output before a possibly long import.
  if (Status check = io::CheckOutputPath(args.output, args.force); !check.ok()) return PrintError(check);
  TerminalProgress progress(ProgressLabel(args.input.path));
  StatusOr<std::unique_ptr<ProfileSession>> session =
      ProfileSession::Open(args.input.path, MakeImportOptions(args.input, &progress));
  progress.Finish();
  if (Interrupted()) return PrintInterrupted(args.input.path);
  if (!session.ok()) return PrintError(session.status());
  Status written = report::ExportChromeTraceFile((*session)->graph(), {}, args.output, args.force);
  if (!written.ok()) return PrintError(written);
  std::printf("wrote %s (open it in ui.perfetto.dev or chrome://tracing)\n", args.output.c_str());
  return kExitOk;
}

}  // namespace

int Main(int argc, char** argv) {
  // Commands implemented in Python get the argument vector untouched.
  if (argc > 1 && IsPythonCommand(argv[1])) return RunPythonCommand(argc, argv);

  CLI::App app{kProgramDescription, "pypto"};
  app.set_version_flag("--version", std::string("pypto ") + PYPTO_VERSION);
  app.require_subcommand(1);
  app.footer(std::string(kExamples) + "\n" + ExitCodeHelp());

  AnalyzeArgs analyze_args;
  CLI::App* analyze = app.add_subcommand(
      "analyze",
      "Summarise a profile: format and versions, devices, steps and their latency, device utilization\n"
      "(per device, stream and Ascend core type), top host operators by self time, top device kernels\n"
      "by total time, the critical path and its breakdown, op count, and data-loss counters.");
  AddInputOptions(analyze, &analyze_args.input);
  analyze->add_flag("--json", analyze_args.json,
                    "Print JSON (schema \"pypto.analyze/1\", see docs/json-schema.md) instead of tables");
  analyze->add_option("--step", analyze_args.step,
                      "Restrict the per-step figures (critical path, utilization) to step N "
                      "(ProfilerStep#N / Step Id); default: the whole profile");
  analyze->add_flag("--steps", analyze_args.all_steps,
                    fmt::format("List every step (default: over {} steps, their latency p50/p90/p99 and the first and "
                                "{} slowest)", report::kStepsListedInFull, report::kSlowestStepsShown));
  analyze->add_option("--top", analyze_args.top, "Rows in the top host-op and device-kernel tables")
      ->capture_default_str()
      ->check(CLI::Range(size_t{0}, kMaxTopRows));
  analyze->footer(ExitCodeHelp());

  ExportArgs export_args;
  CLI::App* export_trace = app.add_subcommand(
      "export-trace",
      "Write a Chrome/Perfetto trace (JSON) of any profile pypto reads: host threads and device streams,\n"
      "operators and kernels with their args, launch flows, and the critical path as its own row.");
  AddInputOptions(export_trace, &export_args.input);
  export_trace->add_option("-o,--output", export_args.output, "Trace file to write (OUT.json)")->required();
  export_trace->add_flag("--force", export_args.force, "Overwrite OUT if it exists (default: refuse)");
  export_trace->footer(ExitCodeHelp());

  DiagnoseArgs diagnose_args;
  InputOptions diagnose_input;
  CLI::App* diagnose = AddDiagnoseCommand(&app, &diagnose_args);
  AddInputOptions(diagnose, &diagnose_input);

  AdviseArgs advise_args;
  InputOptions advise_input;
  CLI::App* advise = AddAdviseCommand(&app, &advise_args);
  AddInputOptions(advise, &advise_input);
  KvPatchArgs kv_patch_args;
  CLI::App* kv_patch = AddKvPatchCommand(&app, &kv_patch_args);

  CompareArgs compare_args;
  CLI::App* compare = AddCompareCommand(&app, &compare_args);
  ReportArgs report_args;
  InputOptions report_input;
  CLI::App* report_cmd = AddReportCommand(&app, &report_args);
  AddInputOptions(report_cmd, &report_input);
  ExportSqliteArgs sqlite_args;
  InputOptions sqlite_input;
  CLI::App* export_sqlite = AddExportSqliteCommand(&app, &sqlite_args);
  AddInputOptions(export_sqlite, &sqlite_input);
  AddExportSqliteOutput(export_sqlite, &sqlite_args);
  CalibrateArgs calibrate_args;
  CLI::App* calibrate = AddCalibrateCommand(&app, &calibrate_args);
  AddPythonCommands(&app);

  if (argc <= 1) {
    std::fputs(app.help().c_str(), stderr);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pypto: error: %s (run 'pypto --help' for usage)\n", e.what());
    return kExitUsage;
  }

  InstallInterruptHandler();
  if (analyze->parsed()) return RunAnalyze(analyze_args);
  if (export_trace->parsed()) return RunExportTrace(export_args);
  if (diagnose->parsed()) {
    TerminalProgress progress(ProgressLabel(diagnose_input.path));
    return RunDiagnose(diagnose_args, diagnose_input.path, MakeImportOptions(diagnose_input, &progress),
                       &progress);
  }
  if (advise->parsed()) {
    TerminalProgress progress(ProgressLabel(advise_input.path));
    return RunAdvise(advise_args, advise_input.path, MakeImportOptions(advise_input, &progress),
                     &progress);
  }
  if (kv_patch->parsed()) return RunKvPatch(kv_patch_args);
  if (compare->parsed()) return RunCompare(compare_args);
  if (report_cmd->parsed()) {
    TerminalProgress progress(ProgressLabel(report_input.path));
    return RunReport(report_args, report_input.path, MakeImportOptions(report_input, &progress),
                     &progress);
  }
  if (export_sqlite->parsed()) {
    TerminalProgress progress(ProgressLabel(sqlite_input.path));
    return RunExportSqlite(sqlite_args, sqlite_input.path, MakeImportOptions(sqlite_input, &progress),
                           &progress);
  }
  if (calibrate->parsed()) return RunCalibrate(calibrate_args);
  return kExitUsage;
}

}  // namespace pypto::cli

int main(int argc, char** argv) { return pypto::cli::Main(argc, argv); }
