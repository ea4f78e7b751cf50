// Hardware table, lookup, detection on real fixtures, overrides and calibration.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "hw/hardware.h"
#include "importers/detect.h"

namespace pypto {
namespace {

const std::string kFixtures = PYPTO_FIXTURES_DIR;

TEST(HardwareTable, BuiltinHasEveryFamilyWithSources) {
  const auto& entries = HardwareTable::Builtin().entries();
  ASSERT_GE(entries.size(), 18u);
  for (const char* id : {"910B1", "910B2", "910B3", "910B4", "910C", "910A", "310P3", "V100-SXM2", "A100-SXM4-40GB",
                         "A100-SXM4-80GB", "H100-SXM", "H200", "B200", "MI250", "MI300X", "cpu-generic"}) {
    auto spec = HardwareTable::Builtin().Find(id);
    ASSERT_TRUE(spec.ok()) << id;
    EXPECT_EQ(spec->id, id);
    for (const PeakFlops& p : spec->peaks) EXPECT_FALSE(p.source.empty()) << id << " peak without source";
    if (spec->memory_bandwidth.known()) EXPECT_FALSE(spec->memory_bandwidth.source.empty()) << id;
  }
}

TEST(HardwareTable, FiguresFromTheReference) {
  // hardware.md §3/§4/§5: spot checks of the data file.
  auto b3 = FindHardware("910B3");
  ASSERT_TRUE(b3.ok());
  EXPECT_EQ(b3->matrix_cores, 20);
  EXPECT_EQ(b3->vector_cores, 40);
  EXPECT_DOUBLE_EQ(b3->PeakFor(ComputeUnit::kMatrix, DType::kBf16), 294.9e12);  // 20 x 1.8 GHz x 8192 (d)
  EXPECT_DOUBLE_EQ(b3->memory_bandwidth.value, 1.6e12);
  EXPECT_EQ(b3->ub_bytes.value, 192 * 1024);
  EXPECT_EQ(b3->inner_axis_multiple_elems, 256);
  EXPECT_EQ(b3->fractal_elems, 16);
  EXPECT_NEAR(b3->RidgePoint(), 184.3, 0.1);  // §7: 184

  auto h100 = FindHardware("H100-SXM");
  ASSERT_TRUE(h100.ok());
  EXPECT_DOUBLE_EQ(h100->PeakFor(ComputeUnit::kMatrix, DType::kBf16), 989.4e12);
  EXPECT_DOUBLE_EQ(h100->memory_bandwidth.value, 3.35e12);
  EXPECT_EQ(h100->matrix_cores, 132);
  EXPECT_NEAR(h100->RidgePoint(), 295.3, 0.1);  // §7: 295

  auto v100 = FindHardware("V100");
  ASSERT_TRUE(v100.ok());
  EXPECT_EQ(v100->PeakFor(ComputeUnit::kMatrix, DType::kBf16), 0);  // no BF16 on Volta
  const PeakFlops* used = nullptr;
  EXPECT_DOUBLE_EQ(v100->PeakForOp(ComputeUnit::kMatrix, DType::kBf16, &used), 125e12);  // stated fallback to FP16
  ASSERT_NE(used, nullptr);
  EXPECT_EQ(used->dtype, DType::kFp16);

  auto mi = FindHardware("MI300X");
  ASSERT_TRUE(mi.ok());
  EXPECT_DOUBLE_EQ(mi->PeakFor(ComputeUnit::kMatrix, DType::kFp16), 1307.4e12);
  EXPECT_DOUBLE_EQ(mi->PeakFor(ComputeUnit::kVector, DType::kFp32), 163.4e12);
  EXPECT_EQ(mi->matrix_cores, 304);
}

TEST(HardwareTable, TolerantNames) {
  struct Case { const char* name; const char* id; };
  for (Case c : {Case{"910B3", "910B3"}, Case{"Ascend910B3", "910B3"}, Case{"Ascend 910B4", "910B4"},
                 Case{"NVIDIA H100 80GB HBM3", "H100-SXM"}, Case{"A100-SXM4-80GB", "A100-SXM4-80GB"},
                 Case{"NVIDIA A100-PG509-200", "A100-SXM4-40GB"}, Case{"Tesla V100-DGXS-32GB", "V100-SXM2"},
                 Case{"AMD Instinct MI300X", "MI300X"}, Case{"NVIDIA H200", "H200"}, Case{"h100 pcie", "H100-PCIE"}}) {
    auto spec = FindHardware(c.name);
    ASSERT_TRUE(spec.ok()) << c.name << ": " << spec.status().ToString();
    EXPECT_EQ(spec->id, c.id) << c.name;
    EXPECT_FALSE(spec->selection.empty());
  }
  // A SKU-less Ascend name takes the stated default, with a note saying so.
  auto b = FindHardware("Ascend910B");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->id, std::string(kDefaultAscend910BSku));
  ASSERT_FALSE(b->notes.empty());
  EXPECT_NE(b->notes[0].find("default"), std::string::npos);
  // By prefix, with a note.
  auto nvl = FindHardware("NVIDIA H100 NVL");
  ASSERT_TRUE(nvl.ok());
  EXPECT_EQ(nvl->id, "H100-SXM");
  EXPECT_NE(nvl->selection.find("prefix"), std::string::npos);
  EXPECT_FALSE(FindHardware("Quadro K600").ok());
  EXPECT_FALSE(FindHardware("").ok());
}

struct DetectCase {
  const char* path;
  const char* id;
};

// Device names / SM counts seen in the fixtures (deviceProperties, NPU_INFO).
TEST(DetectHardware, Fixtures) {
  for (DetectCase c : {
           // deviceProperties name "NVIDIA H100 80GB HBM3", numSms 132
           DetectCase{"kineto/tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "H100-SXM"},
           // "NVIDIA A100-PG509-200" (the 40 GB SXM4 board; totalGlobalMem 42297524224)
           DetectCase{"kineto/hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz",
                      "A100-SXM4-40GB"},
           DetectCase{"kineto/hta_nccl_2rank_a100_2024/nccl_data.json.gz", "A100-SXM4-40GB"},
           // "AMD Instinct MI300X", numSms 304
           DetectCase{"kineto/tracelens_mi300x_sglang_qwen3_8b_decode/sglang_Qwen3-8B_decode.json.gz", "MI300X"},
           // ROCm with an empty name: numSms 304 decides
           DetectCase{"kineto/tracelens_mi300x_vllm_decode_cudagraph/graph_execution.json.gz", "MI300X"},
           // "Tesla V100-DGXS-32GB"
           DetectCase{"kineto/tb_plugin_resnet50_torch1.9_v100/worker0.1623143089861.pt.trace.json.gz", "V100-SXM2"},
           // NPU_INFO name "Ascend910B" (no SKU digit), and COMPUTE_TASK_INFO has 11
           // AI_CORE tasks with blockDim 24 and 54 AI_VECTOR_CORE tasks with 48:
           // more than the default 910B3's 20 AIC / 40 AIV -> 910B2 (24 / 48)
           DetectCase{"ascend/pta_db_level1_alexnet_cann8", "910B2"},
           // kernel_details only: no chip name -> default SKU with a note
           DetectCase{"ascend/pta_level2_llm_cann83", "910B3"},
       }) {
    auto profile = LoadProfile(kFixtures + "/" + c.path);
    ASSERT_TRUE(profile.ok()) << c.path << ": " << profile.status().ToString();
    HardwareSpec spec = DetectHardware(*profile);
    EXPECT_EQ(spec.id, c.id) << c.path << " selection: " << spec.selection;
    EXPECT_FALSE(spec.selection.empty());
  }
}

TEST(DetectHardware, ByNumSmsWhenNameIsEmpty) {
  auto profile = LoadProfile(kFixtures + "/kineto/tracelens_mi300x_vllm_decode_cudagraph/graph_execution.json.gz");
  ASSERT_TRUE(profile.ok());
  HardwareSpec spec = DetectHardware(*profile);
  EXPECT_NE(spec.selection.find("numSms 304"), std::string::npos) << spec.selection;
}

TEST(DetectHardware, AscendRuntimeFactsReplaceTableValues) {
  Profile p;
  p.devices.rows.push_back(DeviceRow{0, DeviceKind::kNpu, p.Intern("Ascend910B")});
  p.attributes.Add(OwnerKind::kDevice, 0, p.Intern("ai_core_num"), p.Intern("24"), 24);
  p.attributes.Add(OwnerKind::kDevice, 0, p.Intern("aic_frequency"), p.Intern("1650"), std::nan(""));
  HardwareSpec spec = DetectHardware(p);
  EXPECT_EQ(spec.matrix_cores, 24);
  EXPECT_DOUBLE_EQ(spec.clock_hz.value, 1650e6);
  // 24 AIC x 1.65 GHz x 8192 FLOP/cycle (MPA operator_mfu formula) = 324.4 TFLOP/s
  EXPECT_DOUBLE_EQ(spec.PeakFor(ComputeUnit::kMatrix, DType::kBf16), 24 * 1650e6 * 8192);
  EXPECT_DOUBLE_EQ(spec.PeakFor(ComputeUnit::kMatrix, DType::kInt8), 24 * 1650e6 * 16384);
}

// An Ascend profile naming only "Ascend910B" gets the default 910B3 (20 AIC /
// 40 AIV), with `tasks` AI_CORE tasks with Block Dim `dim` each.
Profile AscendWithBlockDims(int32_t dim, int tasks) {
  Profile p;
  p.devices.rows.push_back(DeviceRow{0, DeviceKind::kNpu, p.Intern("Ascend910B")});
  const uint32_t track = p.DeviceTrack("0", "stream 1", 0, 1);
  for (int i = 0; i < tasks; ++i) {
    DeviceTaskRow row;
    row.name = p.Intern("MatMulV2");
    row.ts = 1000 * i;
    row.dur = 500;
    row.track = track;
    row.kind = DeviceTaskKind::kKernel;
    row.core_type = p.Intern("AI_CORE");
    row.block_dim = dim;
    p.device_tasks.Add(row);
  }
  return p;
}

TEST(DetectHardware, AscendBlockDimAboveTheAssumedChipPicksOneThatFits) {
  // 3 MatMuls on 24 cube cores: more than 910B3's 20, so the chip is not a
  // 910B3; 910B2 (24 AIC / 48 AIV) is the first A2 SKU they fit.
  HardwareSpec spec = DetectHardware(AscendWithBlockDims(24, 3));
  EXPECT_EQ(spec.id, "910B2") << spec.selection;
  EXPECT_EQ(spec.matrix_cores, 24);
  EXPECT_NE(spec.selection.find("Block Dim up to 24"), std::string::npos) << spec.selection;
}

TEST(DetectHardware, AscendBlockDimNoChipFitsIsSaidLoudly) {
  // 64 cube cores fit no table entry: the figures are flagged unreliable.
  HardwareSpec spec = DetectHardware(AscendWithBlockDims(64, 5));
  bool flagged = false;
  for (const std::string& note : spec.notes) flagged |= note.rfind("UNRELIABLE: kernels ran with Block Dim up to 64", 0) == 0;
  EXPECT_TRUE(flagged);
}

TEST(DetectHardware, AscendOneOddBlockDimIsNoEvidence) {
  // Two tasks are below kMinTasksForCoreEvidence (3): the default stays.
  HardwareSpec spec = DetectHardware(AscendWithBlockDims(24, 2));
  EXPECT_EQ(spec.id, "910B3");
}

TEST(DetectHardware, OverridesByNameAndFigures) {
  Profile p;  // empty: would be a CPU
  HardwareOverrides o;
  o.name = "910B3";
  o.peak_flops = 256e12;          // HotspotDetector(ai_core_theoretical_peak=256e12, …)
  o.memory_bandwidth = 1.9e12;    // HotspotDetector(…, hbm_bandwidth=1.9e12)
  HardwareSpec spec = DetectHardware(p, o);
  EXPECT_EQ(spec.id, "910B3");
  EXPECT_DOUBLE_EQ(spec.PeakFor(ComputeUnit::kMatrix, DType::kBf16), 256e12);
  EXPECT_DOUBLE_EQ(spec.PeakFor(ComputeUnit::kMatrix, DType::kFp16), 256e12);
  EXPECT_DOUBLE_EQ(spec.memory_bandwidth.value, 1.9e12);
  EXPECT_NE(spec.selection.find("user choice"), std::string::npos);
}

class TempHome : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("pypto_hw_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const char* old = std::getenv("XDG_CONFIG_HOME");
    old_xdg_ = old ? old : "";
    had_xdg_ = old != nullptr;
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

TEST_F(TempHome, CalibrationMeasuresAndRoundTrips) {
  CalibrationOptions o;
  o.compute_seconds = 0.2;
  o.bandwidth_seconds = 0.1;
  o.bandwidth_buffer_bytes = 16 << 20;
  auto r = CalibrateThisMachine(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // A measurement, not a speed check (make bench measures speed): positive
  // and finite, and below any CPU's 100 TFLOP/s and 10 TB/s (a unit slip
  // would overshoot). No lower floor: under ASan + UBSan + coverage at -O1
  // on a loaded 2-core box the GEMM measured 5.6e7 FLOP/s, under a 1e8 floor.
  EXPECT_TRUE(std::isfinite(r->fp32_flops) && r->fp32_flops > 0);
  EXPECT_LT(r->fp32_flops, 1e14);
  EXPECT_TRUE(std::isfinite(r->fp32_gemm_flops) && r->fp32_gemm_flops > 0);
  EXPECT_LT(r->fp32_gemm_flops, 1e14);
  EXPECT_TRUE(std::isfinite(r->memory_bandwidth) && r->memory_bandwidth > 0);
  EXPECT_LT(r->memory_bandwidth, 1e13);
  EXPECT_FALSE(r->method.empty());

  EXPECT_EQ(DefaultCalibrationPath(), (dir_ / "pypto" / "calibration.json").string());
  EXPECT_EQ(LoadCalibration().status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(SaveCalibration(*r).ok());
  auto back = LoadCalibration();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_NEAR(back->fp32_flops, r->fp32_flops, r->fp32_flops * 1e-6);
  EXPECT_NEAR(back->memory_bandwidth, r->memory_bandwidth, r->memory_bandwidth * 1e-6);
  EXPECT_EQ(back->threads, r->threads);

  // A CPU-only profile now gets the calibrated CPU.
  Profile cpu_only;
  HardwareSpec spec = DetectHardware(cpu_only);
  EXPECT_EQ(spec.id, "cpu-calibrated");
  EXPECT_NEAR(spec.PeakForOp(ComputeUnit::kVector, DType::kFp32), r->fp32_flops, r->fp32_flops * 1e-6);
  EXPECT_NEAR(spec.memory_bandwidth.value, r->memory_bandwidth, r->memory_bandwidth * 1e-6);
}

TEST_F(TempHome, CpuOnlyWithoutCalibrationIsGeneric) {
  auto profile = LoadProfile(kFixtures + "/kineto/hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  ASSERT_TRUE(profile.ok());
  HardwareSpec spec = DetectHardware(*profile);
  EXPECT_EQ(spec.id, "cpu-generic");
  EXPECT_EQ(spec.HeadlinePeak(), 0);  // no invented CPU figures
}

TEST_F(TempHome, BrokenCalibrationFileIsAnError) {
  std::filesystem::create_directories(dir_ / "pypto");
  std::ofstream(dir_ / "pypto" / "calibration.json") << "{\"pypto_calibration\": 1, \"fp32_flops\": -3}";
  auto r = LoadCalibration();
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
}

TEST_F(TempHome, UserTableExtendsAndOverrides) {
  std::filesystem::create_directories(dir_ / "pypto");
  std::ofstream(dir_ / "pypto" / "hardware.json") << R"({"entries": [
    {"id": "910B3-lab", "extends": "910B3", "aliases": ["lab npu"],
     "memory_bandwidth": {"value": 1.5e12, "source": "measured in our lab"}}]})";
  auto spec = FindHardware("lab npu");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->id, "910B3-lab");
  EXPECT_DOUBLE_EQ(spec->memory_bandwidth.value, 1.5e12);
  EXPECT_EQ(spec->memory_bandwidth.source, "measured in our lab");
  EXPECT_EQ(spec->matrix_cores, 20);  // inherited
  // The builtin entry is unchanged.
  EXPECT_DOUBLE_EQ(FindHardware("910B3")->memory_bandwidth.value, 1.6e12);
}

TEST(HardwareTable, ParseErrorsNameThePlace) {
  auto bad = HardwareTable::Parse(R"({"entries": [{"id": "x", "peaks": [{"unit": "cube", "dtype": "fp16", "flops": 1}]}]})",
                                  "user.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("user.json: entries[0]"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(HardwareTable::Parse("not json", "x").ok());
}

}  // namespace
}  // namespace pypto
