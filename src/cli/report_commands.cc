#include "cli/report_commands.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "compare/compare.h"
#include "io/output_file.h"
#include "report/analysis_summary.h"
#include "report/chrome_trace_export.h"
#include "report/profile_report.h"
#include "report/sqlite_export.h"
#include "session/profile_session.h"

namespace pypto::cli {
namespace {

int Fail(const Status& s) {
  std::fprintf(stderr, "pypto: error: %s\n", s.ToString().c_str());
  return ExitCodeFor(s.code());
}

int PrintText(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) return Fail(IoError("standard output: write failed"));
  return kExitOk;
}

StatusOr<std::vector<AppliedAction>> ReadActions(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open the actions file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseAppliedActions(ss.str(), path);
}

StatusOr<ComparisonReport> RunComparison(const std::string& a, const std::string& b, const ImportOptions& import,
                                         const std::string& hardware, double alpha, const std::string& actions_file) {
  CompareOptions options;
  options.alpha = alpha;
  if (!actions_file.empty()) {
    StatusOr<std::vector<AppliedAction>> actions = ReadActions(actions_file);
    if (!actions.ok()) return actions.status();
    options.actions = std::move(*actions);
  }
  DiagnoseOptions diagnose;
  diagnose.hardware_name = hardware;
  StatusOr<LoadedRun> base = LoadRunForCompare(a, import, diagnose);
  if (!base.ok()) return base.status();
  StatusOr<LoadedRun> cand = LoadRunForCompare(b, import, diagnose);
  if (!cand.ok()) return cand.status();
  return CompareProfiles(base->view(), cand->view(), options);
}

}  // namespace

CLI::App* AddCompareCommand(CLI::App* app, CompareArgs* args) {
  CLI::App* cmd = app->add_subcommand(
      "compare",
      "Compare a baseline run A with a candidate run B of the same workload: per-token (decode step)\n"
      "latency p50/p90/p99 before/after with a Welch t-test against run-to-run noise, ops matched across\n"
      "the runs (tolerant to renamed kernels) with per-op and per-class deltas, issues resolved / remaining /\n"
      "new, and estimated vs measured gain per applied action.");
  cmd->add_option("A", args->baseline, "Baseline profile (before the change)")->required();
  cmd->add_option("B", args->candidate, "Candidate profile (after the change)")->required();
  auto* out = cmd->add_option_group("output");
  out->add_flag("--json", args->json, "Print JSON (schema \"pypto.compare/1\", see docs/json-schema.md)");
  out->add_flag("--markdown", args->markdown, "Print Markdown (default: aligned plain tables, the verdict first)");
  out->add_option("--html", args->html, "Write a self-contained HTML report to this file");
  out->require_option(0, 1);
  cmd->add_flag("--force", args->force, "Overwrite the --html file if it exists");
  cmd->add_option("--actions", args->actions_file,
                  "JSON file of applied actions with their estimated savings (see docs/cli.md); default: the\n"
                  "baseline issues the candidate no longer shows");
  cmd->add_option("--alpha", args->alpha, "Significance level of the t-test")->capture_default_str()->check(CLI::Range(1e-6, 0.5));
  cmd->add_option("--hardware", args->hardware, "Use this hardware table entry for both runs");
  args->fail_on_regression =
      cmd->add_option("--fail-on-regression", args->regression_pct,
                      "Exit with code 10 when the candidate's per-step latency is significantly slower (Welch\n"
                      "t-test at --alpha) by more than PCT % of the baseline (default 0: any significant slowdown);\n"
                      "the report is printed first. A performance gate for CI pipelines.")
          ->expected(0, 1)
          ->type_name("[PCT]");
  cmd->footer(ExitCodeHelp());
  return cmd;
}

namespace {

// The percent --fail-on-regression allows: nullopt when the option is not given, 0 when given without a
// value, nullopt with *bad set for a value that is not a percent >= 0.
std::optional<double> AllowedRegressionPct(const CompareArgs& args, bool* bad) {
  *bad = false;
  if (args.fail_on_regression == nullptr || args.fail_on_regression->count() == 0) return std::nullopt;
  if (args.regression_pct.empty()) return 0.0;
  char* end = nullptr;
  const double pct = std::strtod(args.regression_pct.c_str(), &end);
  *bad = end == args.regression_pct.c_str() || *end != '\0' || !(pct >= 0) || !std::isfinite(pct);
  return *bad ? std::nullopt : std::optional<double>(pct);
}

// The --fail-on-regression gate: kExitRegression (with the reason on stderr) when the step latency is
// significantly slower than the baseline by more than the allowed percent, else kExitOk.
int RegressionGate(std::optional<double> allowed_pct, const ComparisonReport& rep) {
  if (!allowed_pct) return kExitOk;
  const SignificanceTest& t = rep.step_latency;
  const double slower_pct = t.relative_delta * 100.0;
  if (!t.significant || !(t.delta > 0) || !(slower_pct > *allowed_pct)) return kExitOk;
  std::fprintf(stderr,
               "pypto compare: regression: per-step latency %.3f -> %.3f ms, %.1f %% slower (p = %.2g), "
               "over the %.1f %% allowed by --fail-on-regression\n",
               t.mean_baseline / 1e6, t.mean_candidate / 1e6, slower_pct, t.p_value, *allowed_pct);
  return kExitRegression;
}

}  // namespace

int RunCompare(const CompareArgs& args) {
  bool bad_pct = false;
  const std::optional<double> allowed_pct = AllowedRegressionPct(args, &bad_pct);
  if (bad_pct) {
    std::fprintf(stderr, "pypto compare: error: --fail-on-regression %s: expected a percent >= 0, e.g. 5\n",
                 args.regression_pct.c_str());
    return kExitInvalidArgument;
  }
  if (!args.html.empty()) {
    if (Status s = io::CheckOutputPath(args.html, args.force); !s.ok()) return Fail(s);
  }
  ImportOptions import;
  import.cancel = InterruptFlag();
  // Both runs are read, then compared: the line shows the work and its time.
  TerminalProgress progress("pypto compare");
  progress.Working("reading and comparing both runs");
  StatusOr<ComparisonReport> rep = RunComparison(args.baseline, args.candidate, import, args.hardware, args.alpha, args.actions_file);
  progress.Finish();
  if (Interrupted()) {
    std::fprintf(stderr, "pypto: error: interrupted by Ctrl-C\n");
    return kExitCancelled;
  }
  if (!rep.ok()) return Fail(rep.status());
  if (!args.html.empty()) {
    if (Status s = io::WriteTextFile(args.html, rep->to_html(), args.force); !s.ok()) return Fail(s);
    std::printf("wrote %s\n", args.html.c_str());
    return RegressionGate(allowed_pct, *rep);
  }
  const int printed = PrintText(args.json ? rep->to_json() : args.markdown ? rep->to_markdown() : rep->to_text());
  return printed != kExitOk ? printed : RegressionGate(allowed_pct, *rep);
}

CLI::App* AddReportCommand(CLI::App* app, ReportArgs* args) {
  CLI::App* cmd = app->add_subcommand(
      "report",
      "Write one self-contained report file (HTML by default; no network, inline charts): step timeline,\n"
      "time by op class and core type, a roofline of the ops against the hardware's ceilings, top issues\n"
      "with evidence and recommendations. With --baseline A, PATH is compared with A (before/after).");
  cmd->add_option("-o,--output", args->output, "File to write (report.html)")->required();
  auto* fmt_group = cmd->add_option_group("format");
  fmt_group->add_flag("--markdown", args->markdown, "Write Markdown instead of HTML");
  fmt_group->add_flag("--json", args->json, "Write JSON (schema \"pypto.report/1\", or \"pypto.compare/1\" with --baseline)");
  fmt_group->require_option(0, 1);
  cmd->add_flag("--force", args->force, "Overwrite the output if it exists (default: refuse)");
  cmd->add_option("--baseline", args->baseline, "Baseline profile: write a comparison of it (before) with PATH (after)");
  cmd->add_option("--hardware", args->hardware, "Use this hardware table entry (910B3, H100, …) instead of detecting it");
  cmd->footer(ExitCodeHelp());
  return cmd;
}

int RunReport(const ReportArgs& args, const std::string& path, const ImportOptions& import,
              TerminalProgress* progress) {
  if (Status s = io::CheckOutputPath(args.output, args.force); !s.ok()) {
    progress->Finish();
    return Fail(s);
  }
  std::string text;
  if (!args.baseline.empty()) {
    StatusOr<ComparisonReport> rep = RunComparison(args.baseline, path, import, args.hardware, kDefaultSignificanceAlpha, "");
    progress->Finish();
    if (Interrupted()) return kExitCancelled;
    if (!rep.ok()) return Fail(rep.status());
    text = args.json ? rep->to_json() : args.markdown ? rep->to_markdown() : rep->to_html();
  } else {
    report::ReportOptions options;
    options.diagnose.hardware_name = args.hardware;
    StatusOr<report::ProfileReportData> data = [&]() -> StatusOr<report::ProfileReportData> {
      PYPTO_ASSIGN_OR_RETURN(std::unique_ptr<ProfileSession> session, ProfileSession::Open(path, import));
      progress->Working("diagnosing and drawing the report");
      return report::CollectProfileReport(*session, options);
    }();
    progress->Finish();
    if (Interrupted()) return kExitCancelled;
    if (!data.ok()) return Fail(data.status());
    text = args.json ? report::RenderProfileJson(*data)
           : args.markdown ? report::RenderProfileMarkdown(*data)
                           : report::RenderProfileHtml(*data);
  }
  if (Status s = io::WriteTextFile(args.output, text, args.force); !s.ok()) return Fail(s);
  std::printf("wrote %s\n", args.output.c_str());
  return kExitOk;
}

CLI::App* AddExportSqliteCommand(CLI::App* app, ExportSqliteArgs* args) {
  CLI::App* cmd = app->add_subcommand(
      "export-sqlite",
      "Write the profile model (tracks, host ops, device tasks with links and op classes, steps, devices,\n"
      "attributes, metadata, data loss) and the findings (issues with metrics and evidence rows,\n"
      "recommendations) as SQLite tables; see docs/sqlite-schema.md.");
  cmd->add_flag("--force", args->force, "Overwrite OUT if it exists (default: refuse)");
  cmd->add_flag("--no-findings", args->no_findings, "Skip the diagnosis (issues tables stay empty)");
  cmd->footer(ExitCodeHelp());
  return cmd;
}

void AddExportSqliteOutput(CLI::App* cmd, ExportSqliteArgs* args) {
  cmd->add_option("OUT", args->output, "Database file to write (OUT.db)")->required();
}

int RunExportSqlite(const ExportSqliteArgs& args, const std::string& path, const ImportOptions& import,
                    TerminalProgress* progress) {
  if (Status s = io::CheckOutputPath(args.output, args.force); !s.ok()) {
    progress->Finish();
    return Fail(s);
  }
  StatusOr<std::unique_ptr<ProfileSession>> session = ProfileSession::Open(path, import);
  StatusOr<const DiagnosticReport*> diagnosis = static_cast<const DiagnosticReport*>(nullptr);
  progress->Working(args.no_findings ? "writing" : "diagnosing");
  if (session.ok() && !args.no_findings) diagnosis = (*session)->Diagnosis();
  progress->Finish();
  if (Interrupted()) return kExitCancelled;
  if (!session.ok()) return Fail(session.status());
  if (!diagnosis.ok()) return Fail(diagnosis.status());
  StatusOr<report::SqliteExportStats> stats =
      report::ExportSqlite((*session)->graph(), *diagnosis, args.output, args.force);
  if (!stats.ok()) return Fail(stats.status());
  std::printf("wrote %s (%llu host ops, %llu device tasks, %llu steps, %llu issues)\n", args.output.c_str(),
              static_cast<unsigned long long>(stats->host_ops), static_cast<unsigned long long>(stats->device_tasks),
              static_cast<unsigned long long>(stats->steps), static_cast<unsigned long long>(stats->issues));
  return kExitOk;
}

}  // namespace pypto::cli
