#include "cli/calibrate_command.h"

#include <cstdio>

#include <fmt/format.h>

#include "cli/exit_codes.h"
#include "hw/hardware.h"

namespace pypto::cli {

CLI::App* AddCalibrateCommand(CLI::App* app, CalibrateArgs* args) {
  CLI::App* c = app->add_subcommand(
      "calibrate",
      "Measure this machine's fp32 peak FLOP/s (FMA loop and blocked SGEMM) and memory bandwidth\n"
      "(STREAM-triad-like) and store them; `pypto diagnose` then uses them for CPU-only profiles.");
  c->add_option("-o,--output", args->output,
                "Calibration file to write (default: $XDG_CONFIG_HOME/pypto/calibration.json, else "
                "~/.config/pypto/calibration.json)");
  c->add_option("--seconds", args->seconds, "Measurement time in seconds (2/3 compute, 1/3 bandwidth)")
      ->capture_default_str()
      ->check(CLI::Range(0.05, kMaxCalibrationSeconds));
  c->add_option("--threads", args->threads, "Threads to measure with (0 = all hardware threads)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  c->footer(ExitCodeHelp());
  return c;
}

int RunCalibrate(const CalibrateArgs& args) {
  const CalibrationOptions options = CalibrationOptionsFor(args.seconds, args.threads);
  std::fprintf(stderr, "pypto: measuring this machine for about %.1f s...\n", args.seconds);
  StatusOr<CalibrationResult> result = CalibrateThisMachine(options);
  if (!result.ok()) {
    std::fprintf(stderr, "pypto: error: %s\n", result.status().ToString().c_str());
    return ExitCodeFor(result.status().code());
  }
  const std::string path = args.output.empty() ? DefaultCalibrationPath() : args.output;
  if (path.empty()) {
    std::fprintf(stderr, "pypto: error: no place to store the calibration: set XDG_CONFIG_HOME or HOME, or pass "
                         "--output\n");
    return kExitInvalidArgument;
  }
  Status saved = SaveCalibration(*result, path);
  if (!saved.ok()) {
    std::fprintf(stderr, "pypto: error: %s\n", saved.ToString().c_str());
    return ExitCodeFor(saved.code());
  }
  const CalibrationResult& r = *result;
  std::string out;
  out += fmt::format("CPU: {} ({} threads, host {})\n", r.cpu_model.empty() ? "unknown model" : r.cpu_model,
                     r.threads, r.host);
  out += fmt::format("fp32 peak (FMA loop):    {:.2f} GFLOP/s\n", r.fp32_flops / 1e9);
  out += fmt::format("fp32 SGEMM (blocked):    {:.2f} GFLOP/s\n", r.fp32_gemm_flops / 1e9);
  out += fmt::format("memory bandwidth:        {:.2f} GB/s\n", r.memory_bandwidth / 1e9);
  out += fmt::format("method: {}\n", r.method);
  out += fmt::format("measured at {}; stored in {}\n", r.measured_at, path);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    std::fprintf(stderr, "pypto: error: standard output: write failed\n");
    return kExitIoError;
  }
  return kExitOk;
}

}  // namespace pypto::cli
