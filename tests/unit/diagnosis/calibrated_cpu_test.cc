// `pypto diagnose` on a CPU-only profile uses the calibration stored by
// `pypto calibrate` (SaveCalibration at the default location, here under a
// temporary XDG_CONFIG_HOME): the hardware is the calibrated CPU with the
// measured figures; without the file the generic CPU has no figures and a
// note says to calibrate.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "analysis/detector.h"
#include "hw/hardware.h"

namespace pypto {
namespace {

class CalibratedCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("pypto_diag_cal_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const char* old = std::getenv("XDG_CONFIG_HOME");
    had_xdg_ = old != nullptr;
    old_xdg_ = old ? old : "";
    setenv("XDG_CONFIG_HOME", dir_.c_str(), 1);
    unsetenv("PYPTO_HARDWARE_FILE");
  }
  void TearDown() override {
    if (had_xdg_) setenv("XDG_CONFIG_HOME", old_xdg_.c_str(), 1);
    else unsetenv("XDG_CONFIG_HOME");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::string old_xdg_;
  bool had_xdg_ = false;
};

// A CPU-only PyTorch run: two steps of aten::mm on the host thread, no device.
Profile CpuOnlyProfile() {
  Profile p;
  const uint32_t thread = p.TrackFor("100", "1", TrackKind::kHostThread);
  p.metadata["format"] = "synthetic";
  TimeNs ts = 1'000'000;
  for (int step = 0; step < 2; ++step) {
    HostOpRow a;
    a.name = p.Intern("ProfilerStep#" + std::to_string(step));
    a.category = p.Intern("user_annotation");
    a.kind = HostOpKind::kUserAnnotation;
    a.track = thread;
    a.ts = ts;
    a.dur = 3'000'000;
    p.host_ops.Add(a);
    for (int i = 0; i < 2; ++i) {
      HostOpRow o;
      o.name = p.Intern("aten::mm");
      o.category = p.Intern("cpu_op");
      o.kind = HostOpKind::kOperator;
      o.track = thread;
      o.ts = ts + 100'000 + i * 1'400'000;
      o.dur = 1'000'000;
      o.input_dims = p.Intern("[[64, 1024], [1024, 1024]]");
      o.input_types = p.Intern("[\"float\", \"float\"]");
      p.host_ops.Add(o);
    }
    ts += 3'500'000;
  }
  return p;
}

TEST_F(CalibratedCpu, DiagnoseUsesTheStoredCalibration) {
  {
    Profile p = CpuOnlyProfile();
    auto r = Diagnose(p, DiagnoseOptions{});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->hardware_id, "cpu-generic");
    bool note = false;
    for (const std::string& n : r->notes) note |= n.find("pypto calibrate") != std::string::npos;
    EXPECT_TRUE(note);
  }
  CalibrationResult cal;
  cal.host = "testhost";
  cal.cpu_model = "Test CPU";
  cal.threads = 2;
  cal.fp32_flops = 123e9;
  cal.fp32_gemm_flops = 80e9;
  cal.memory_bandwidth = 17e9;
  cal.method = "test figures";
  cal.measured_at = "2025-01-01T00:00:00Z";
  ASSERT_TRUE(SaveCalibration(cal).ok());
  ASSERT_TRUE(std::filesystem::exists(dir_ / "pypto" / "calibration.json"));
  Profile p = CpuOnlyProfile();
  auto r = Diagnose(p, DiagnoseOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->hardware_id, "cpu-calibrated");
  EXPECT_EQ(r->hardware_name, "Test CPU");
  EXPECT_NE(r->hardware_selection.find("calibration of testhost"), std::string::npos) << r->hardware_selection;
  EXPECT_DOUBLE_EQ(r->peak_flops, 123e9);
  EXPECT_DOUBLE_EQ(r->memory_bandwidth, 17e9);
  for (const std::string& n : r->notes) EXPECT_EQ(n.find("pypto calibrate` to measure"), std::string::npos) << n;
}

TEST_F(CalibratedCpu, MeasuredCalibrationIsUsed) {
  CalibrationOptions o;
  o.compute_seconds = 0.1;
  o.bandwidth_seconds = 0.05;
  o.bandwidth_buffer_bytes = 8 << 20;
  auto cal = CalibrateThisMachine(o);
  ASSERT_TRUE(cal.ok()) << cal.status().ToString();
  ASSERT_TRUE(SaveCalibration(*cal).ok());
  Profile p = CpuOnlyProfile();
  auto r = Diagnose(p, DiagnoseOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->hardware_id, "cpu-calibrated");
  // The file keeps the figures to 1e-6 relative (JSON text).
  EXPECT_NEAR(r->peak_flops / cal->fp32_flops, 1.0, 1e-6);
  EXPECT_NEAR(r->memory_bandwidth / cal->memory_bandwidth, 1.0, 1e-6);
}

}  // namespace
}  // namespace pypto
