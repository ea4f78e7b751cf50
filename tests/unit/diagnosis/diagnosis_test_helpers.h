// A synthetic LLM-decode profile (CUDA-style: operators, launches, kernels on
// one stream, ProfilerStep#N annotations) where each anti-pattern of
// detectors 1-5 can be planted at a chosen strength. Kernel durations are set
// from the cost model on the chosen hardware, so "healthy" means: GEMMs at
// 80% of their roofline, attention streaming its KV cache at 85% of the
// bandwidth (near its memory roofline: nothing to win), host launching
// ahead of the device.
#pragma once

#include <string>

#include "analysis/detector.h"
#include "model/profile.h"

namespace pypto::testing {

inline constexpr char kTestHardware[] = "H100-SXM";

struct DecodeSpec {
  int steps = 3;
  int layers = 4;
  int64_t hidden = 4096;
  int64_t kv_len = 1024;             // cache length at step 0 (grows by one per step)
  double gemm_efficiency = 0.8;      // roofline / measured of the healthy GEMMs
  int64_t odd_n = 0;                 // > 0: plant an lm_head GEMM with this N ...
  double odd_efficiency = 0.8;       // ... at this efficiency
  double attention_memory_share = 0.85; // modeled memory time / measured (healthy: near its memory roofline)
  TimeNs launch_cost_ns = 1000;      // host time per launched op (small: host ahead)
  TimeNs norm_host_delay_ns = 0;     // extra host time before each norm launch
  bool kv_cat = false;               // grow the KV cache by aten::cat before attention
  std::string norm_kernel = "rmsnorm_kernel_bf16";  // the one kernel each aten::rms_norm launches
};

// Builds the profile; `notes` (optional) receives nothing for now.
Profile BuildDecodeProfile(const DecodeSpec& spec);

DiagnoseOptions TestOptions();

// Builds the profile of `spec` and runs only the detector `only` on it
// (TestOptions, min_issue_share 0).
DiagnosticReport RunSpec(const DecodeSpec& spec, const char* only);

}  // namespace pypto::testing
