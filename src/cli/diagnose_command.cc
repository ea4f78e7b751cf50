#include "cli/diagnose_command.h"

#include <cstdio>

#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "report/diagnosis_report.h"
#include "session/profile_session.h"

namespace pypto::cli {

CLI::App* AddDiagnoseCommand(CLI::App* app, DiagnoseArgs* args) {
  CLI::App* cmd = app->add_subcommand(
      "diagnose",
      "Find performance anti-patterns against the hardware's peaks, with the evidence rows, the time\n"
      "affected, an estimated saving per issue and the combined speedup. Says whether the profile is\n"
      "training or inference (backward-pass / optimizer ops) and why. Detectors (docs/detectors.md):\n"
      "matmul_tiling, attention_memory_bound, kv_cache_layout, norm_launch_overhead, host_bound,\n"
      "aicpu_fallback, dynamic_shape_compile, stream_sync, no_pipe_bound, fusible_sequence,\n"
      "communication, input_stall. Issues under 1% of the step are dropped (AI CPU ops never).");
  auto* fmt_group = cmd->add_option_group("output");
  fmt_group->add_flag("--json", args->json, "Print JSON (schema \"pypto.diagnose/1\", see docs/json-schema.md)");
  fmt_group->add_flag("--markdown", args->markdown, "Print a Markdown report");
  fmt_group->require_option(0, 1);
  cmd->add_option("--hardware", args->options.hardware_name,
                  "Use this hardware table entry (910B3, H100, MI300X, …) instead of detecting it");
  cmd->add_option("--peak-flops", args->options.ai_core_theoretical_peak,
                  "Matrix peak in FLOP/s replacing the table value (e.g. 3.5e14)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--hbm-bandwidth", args->options.hbm_bandwidth,
                  "Memory bandwidth in B/s replacing the table value (e.g. 1.6e12)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--tiling-utilization-threshold", args->options.tiling_utilization_threshold,
                  "Matmul utilisation below which tiling is examined")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--mem-bottleneck-ratio-threshold", args->options.mem_bottleneck_ratio_threshold,
                  "Memory share of attention time at or above which it is memory bound")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--step", args->step, "Diagnose only step N (ProfilerStep#N / Step Id); default: all steps");
  cmd->add_option("--only", args->options.only,
                  "Run only these detectors (comma-separated names from the list above); default: all")
      ->delimiter(',');
  cmd->footer(ExitCodeHelp());
  return cmd;
}

int RunDiagnose(const DiagnoseArgs& args, const std::string& path, const ImportOptions& import,
                TerminalProgress* progress) {
  StatusOr<std::unique_ptr<ProfileSession>> session = ProfileSession::Open(path, import);
  progress->Working("diagnosing");
  if (Interrupted()) {
    progress->Finish();
    std::fprintf(stderr, "pypto: error: interrupted by Ctrl-C while reading %s\n", path.c_str());
    return kExitCancelled;
  }
  auto fail = [progress](const Status& s) {
    progress->Finish();
    std::fprintf(stderr, "pypto: error: %s\n", s.ToString().c_str());
    return ExitCodeFor(s.code());
  };
  if (!session.ok()) return fail(session.status());
  DiagnoseOptions options = args.options;
  options.step = args.step;
  StatusOr<const DiagnosticReport*> report = (*session)->Diagnosis(options);
  if (!report.ok()) return fail(report.status());
  const std::string text = args.json       ? report::RenderDiagnosisJson(**report)
                           : args.markdown ? report::RenderDiagnosisMarkdown(**report)
                                           : report::RenderDiagnosisText(**report);
  progress->Finish();
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) return fail(IoError("standard output: write failed"));
  return kExitOk;
}

}  // namespace pypto::cli
