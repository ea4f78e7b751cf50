// `pypto calibrate`: measures this machine's fp32 peak FLOP/s (FMA loop and
// blocked SGEMM) and memory bandwidth (CalibrateThisMachine) and stores them
// (SaveCalibration) so later runs on CPU-only profiles use the measured
// figures instead of the generic CPU entry (DetectHardware).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "hw/hardware.h"

namespace pypto::cli {

// Upper bound of --seconds: a typo guard (a minute is far more than the
// measurements need to settle).
inline constexpr double kMaxCalibrationSeconds = 60.0;

struct CalibrateArgs {
  std::string output;   // file to write; empty = the default location
  double seconds = kDefaultCalibrationSeconds;
  int threads = 0;      // 0 = all hardware threads
};

CLI::App* AddCalibrateCommand(CLI::App* app, CalibrateArgs* args);
int RunCalibrate(const CalibrateArgs& args);

}  // namespace pypto::cli
