// Hardware specs for the roofline: peak FLOP/s per data type and unit, memory
// bandwidth, core counts, on-chip buffers, alignment rules and launch overhead
// of the accelerators pypto diagnoses. The table is data (data/hardware/*.json,
// embedded into the binary at build time; a user file may add or replace
// entries); every value keeps its public source and its marks ((d) derived,
// (u) uncertain) as written in docs/hardware.md.
//
// This layer knows no file format: DetectHardware reads the Profile's device
// rows and attributes (deviceProperties name / numSms, Ascend ai_core_num,
// aic_frequency, NPU_INFO name) that the importers filled.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "hw/dtype.h"
#include "model/profile.h"

namespace pypto {

enum class HardwareFamily : uint8_t { kAscend, kNvidiaGpu, kAmdGpu, kCpu, kOther };
const char* HardwareFamilyName(HardwareFamily family);

// Which unit executes an op. kMatrix = Ascend cube (AIC), NVIDIA tensor
// cores, AMD matrix cores (MFMA); kVector = Ascend vector (AIV / coupled
// vector unit), CUDA cores, AMD vector ALUs, CPU SIMD.
enum class ComputeUnit : uint8_t { kMatrix, kVector };
const char* ComputeUnitName(ComputeUnit unit);

// One peak figure (dense: without 2:4 structured sparsity).
struct PeakFlops {
  ComputeUnit unit = ComputeUnit::kMatrix;
  DType dtype = DType::kUnknown;
  double flops = 0;           // FLOP/s (OP/s for integer types)
  std::string marks;          // "", "d", "u", "d,u"
  std::string source;         // where the number comes from
};

// A value with its provenance (for fields where the source matters to a reader).
struct SourcedValue {
  double value = 0;           // 0 = unknown
  std::string marks;
  std::string source;
  bool known() const { return value > 0; }
};

struct HardwareSpec {
  // ---- identity
  std::string id;                      // canonical table key: "910B3", "H100-SXM", "MI300X", "cpu-generic"
  std::string display_name;            // "Ascend 910B3", "NVIDIA H100 SXM5 80GB"
  HardwareFamily family = HardwareFamily::kOther;
  std::vector<std::string> aliases;    // extra names matched by FindHardware (normalised)

  // ---- compute
  std::vector<PeakFlops> peaks;        // every (unit, dtype) pair the source gives
  SourcedValue clock_hz;               // AI Core clock / boost clock
  int32_t matrix_cores = 0;            // Ascend AIC count, NVIDIA SMs, AMD CUs, CPU cores
  int32_t vector_cores = 0;            // Ascend AIV count (split A2/A3), else 0 (coupled / same as matrix_cores)
  int32_t ai_cpu_cores = 0;            // Ascend AI CPU count, else 0
  bool split_architecture = false;     // Ascend A2/A3: AIC and AIV scheduled separately (MIX = 1:2)
  std::string core_source;

  // ---- memory
  SourcedValue memory_bandwidth;       // B/s (HBM / DRAM)
  SourcedValue link_bandwidth;         // B/s per direction to the other devices of the node (NVLink, PCIe, Infinity Fabric)
  SourcedValue memory_bytes;           // device memory size, bytes
  SourcedValue l2_bytes;               // L2 per chip/die (Ascend), per GPU (NVIDIA), Infinity cache not counted
  // Ascend per-core buffers (0 = unknown).
  SourcedValue ub_bytes;
  SourcedValue l1_bytes;
  SourcedValue l0a_bytes;
  SourcedValue l0b_bytes;
  SourcedValue l0c_bytes;

  // ---- alignment / tiling (0 = no rule known)
  int32_t fractal_elems = 0;           // Ascend cube fractal edge: 16 (16x16 FP16 = 512 B)
  int32_t inner_axis_multiple_elems = 0;  // Ascend MatMul inner axis multiple of 256 elements (advisor "cube affinity")
  int32_t inner_axis_align_bytes = 0;  // Ascend inner axis 512 B aligned
  int32_t attention_dim_multiple = 0;  // Ascend FA head_dim / seq multiple of 128
  int32_t mma_dim_multiple = 0;        // GPU: GEMM dims multiple of this (FP16/BF16 tensor cores: 8 elements = 16 B)
  int32_t mma_dim_multiple_int8 = 0;   // GPU INT8 tensor cores: 16
  int32_t cta_tile_m = 0;              // typical GEMM CTA tile (128 x 128 / 128 x 256): waves are counted in these
  int32_t cta_tile_n = 0;
  std::string alignment_source;

  // ---- launch
  SourcedValue launch_overhead_us;     // typical host cost to launch one kernel/task, µs

  // ---- how this spec was chosen (DetectHardware / overrides), for the report
  std::string selection;               // "deviceProperties name 'NVIDIA H100 80GB HBM3' -> H100-SXM"
  std::vector<std::string> notes;      // defaults taken, runtime values applied, overrides
  std::string source_summary;          // the entry's main sources, one line

  // Peak FLOP/s of (unit, dtype); 0 when the table has no such figure.
  double PeakFor(ComputeUnit unit, DType dtype) const;
  // Peak to use for an op of `dtype` on `unit`: the exact entry, else a stated
  // fallback (FP8 -> FP16 matrix, TF32/FP32 matrix -> FP32 vector, unknown ->
  // FP16/BF16 matrix). `used` (optional) receives which entry was taken.
  double PeakForOp(ComputeUnit unit, DType dtype, const PeakFlops** used = nullptr) const;
  // The headline peak: matrix BF16, else matrix FP16, else vector FP32.
  double HeadlinePeak() const;
  // Ridge point (FLOP/B) of the headline peak: peak / bandwidth; 0 if unknown.
  double RidgePoint() const;
  bool known() const { return !id.empty(); }
};

// ------------------------------------------------------------------ the table

class HardwareTable {
 public:
  // The table built into pypto (data/hardware/hardware.json). Parsed once.
  static const HardwareTable& Builtin();
  // Parses a table from JSON text (the format of data/hardware/hardware.json;
  // see docs/hardware.md). `origin` names the text in error messages.
  static StatusOr<HardwareTable> Parse(std::string_view json, std::string_view origin);
  // Adds or replaces (same id) the entries of another table; a user entry with
  // "extends": "<id>" starts from that entry and overrides only its fields.
  Status Merge(const HardwareTable& other);

  // Tolerant lookup: case, spaces, dashes and vendor words ("Ascend", "NVIDIA",
  // "AMD Instinct", "Tesla") ignored; memory suffixes ("80GB HBM3",
  // "-SXM4-80GB") matched against aliases, then the longest id/alias that is a
  // prefix of the name wins. NotFound when nothing matches.
  StatusOr<HardwareSpec> Find(std::string_view name) const;
  const std::vector<HardwareSpec>& entries() const { return entries_; }

 private:
  std::vector<HardwareSpec> entries_;
};

// Builtin table merged with the user's file when one exists
// ($PYPTO_HARDWARE_FILE, else $XDG_CONFIG_HOME/pypto/hardware.json, else
// ~/.config/pypto/hardware.json). A broken user file is reported in the notes
// of every spec found through it, never fatal.
StatusOr<HardwareSpec> FindHardware(std::string_view name);

// Normalises a device name for matching ("NVIDIA H100 80GB HBM3" -> "h10080gbhbm3").
std::string NormalizeHardwareName(std::string_view name);

// ------------------------------------------------------------------ detection

// Overrides from the user (CLI flags, HotspotDetector(ai_core_theoretical_peak,
// hbm_bandwidth)). A figure > 0 replaces the detected one and is noted.
struct HardwareOverrides {
  std::string name;               // force a table entry ("910B3", "H100")
  double peak_flops = 0;          // replaces the headline matrix peak (BF16 and FP16), FLOP/s
  double memory_bandwidth = 0;    // B/s
  std::string table_path;         // extra table file merged over the builtin (and the user file)
  std::string calibration_path;   // calibration file instead of the default location
};

// Default SKU when a profile says only "Ascend910B" (NPU_INFO name, no digit):
// 910B3 is the 20-AIC part matched by the public Ascend fixtures; the choice is
// written in the spec's notes, and runtime ai_core_num / aic_frequency (when
// present) still replace its core count and clock.
inline constexpr std::string_view kDefaultAscend910BSku = "910B3";

// Picks the spec for the profile's first accelerator device:
//   1. overrides.name when set;
//   2. CUDA/ROCm deviceProperties `name` (tolerant match), else `numSms`
//      (unique SM/CU count in the table: 132 -> H100-SXM, 108 -> A100, 304 -> MI300X …);
//   3. Ascend device name / chip attributes (Ascend910B3, 910B → default SKU);
//      runtime ai_core_num, aiv_num, aic_frequency replace table values and
//      the cube peak is recomputed as cores × f × 8192 (FP16/BF16) / 16384 (INT8);
//   4. CPU-only profile: the calibrated CPU (calibration file) else generic CPU.
// Then overrides.peak_flops / memory_bandwidth. Never fails: the fallback is
// the generic entry of the family with a note saying so. `selection` says how.
// True when the profile has device tasks (other than step annotations and
// syncs) that do not run on a CPU device: an accelerator ran them even when
// the profile names no device.
bool HasAcceleratorTasks(const Profile& profile);

HardwareSpec DetectHardware(const Profile& profile, const HardwareOverrides& overrides = {});

// Applies figure overrides to a spec (used by DetectHardware; exposed for front ends).
void ApplyHardwareOverrides(const HardwareOverrides& overrides, HardwareSpec* spec);

// ------------------------------------------------------------------ calibration

struct CalibrationOptions {
  double compute_seconds = 1.0;    // time budget of the FLOP/s measurement
  double bandwidth_seconds = 0.5;  // time budget of the bandwidth measurement
  int threads = 0;                 // 0 = std::thread::hardware_concurrency()
  size_t bandwidth_buffer_bytes = 0;  // per array; 0 = 64 MiB (well above common L3 sizes)
};

struct CalibrationResult {
  std::string host;                // hostname
  std::string cpu_model;           // /proc/cpuinfo "model name" when readable
  int threads = 0;
  double fp32_flops = 0;           // best of the runs, FLOP/s (FMA loop over registers, all threads)
  double fp32_gemm_flops = 0;      // blocked SGEMM, FLOP/s (what a real kernel gets)
  double memory_bandwidth = 0;     // STREAM-triad-like, B/s (counts 3 arrays x 8 B per element... see docs)
  std::string method;              // one line: how each figure was measured
  std::string measured_at;         // ISO-8601 UTC
  int version = 1;
};

// Default total measurement time, s: the CalibrationOptions defaults (1.0 s
// compute + 0.5 s bandwidth) together.
inline constexpr double kDefaultCalibrationSeconds = 1.5;

// A total time budget split as the defaults split it: 2/3 on the FLOP/s
// measurement, 1/3 on bandwidth (`pypto calibrate --seconds`, pypto.calibrate()).
CalibrationOptions CalibrationOptionsFor(double total_seconds, int threads);

// Measures this machine (≈ compute_seconds + bandwidth_seconds). Fails only if
// threads cannot start or memory cannot be allocated.
StatusOr<CalibrationResult> CalibrateThisMachine(const CalibrationOptions& options = {});
// Default calibration file: $XDG_CONFIG_HOME/pypto/calibration.json, else
// $HOME/.config/pypto/calibration.json; empty when neither variable is set.
std::string DefaultCalibrationPath();
// Writes JSON to `path` (default location when empty), creating the folder.
Status SaveCalibration(const CalibrationResult& result, const std::string& path = "");
// Reads the file written by SaveCalibration; NotFound when absent.
StatusOr<CalibrationResult> LoadCalibration(const std::string& path = "");
// The generic CPU entry with the calibrated figures (peaks from fp32_gemm_flops /
// fp32_flops, bandwidth measured), selection saying so.
// fp32 lanes of one vector register (the GEMM micro-kernel's N/K blocking
// unit on CPUs): 512-bit AVX-512, 256-bit AVX2, 128-bit SSE / NEON.
inline constexpr int32_t kFp32LanesAvx512 = 16;
inline constexpr int32_t kFp32LanesAvx2 = 8;
inline constexpr int32_t kFp32LanesSse = 4;
inline constexpr int32_t kFp32LanesNeon = 4;
// This machine's widest supported width.
int32_t CpuFp32Lanes();

HardwareSpec CalibratedCpuSpec(const CalibrationResult& result);

}  // namespace pypto
