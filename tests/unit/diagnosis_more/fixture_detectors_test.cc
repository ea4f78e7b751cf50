// Detectors 6-10 together on the real fixtures: every fixture diagnoses
// without failure and with savings inside the step. The per-detector fixture
// expectations live with each detector (tests/unit/diagnosis/<detector>_test.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"
#include "unit/diagnosis/planted_detector_helpers.h"

namespace pypto {
namespace {

const std::vector<std::string> kAll = {"aicpu_fallback", "dynamic_shape_compile", "stream_sync", "no_pipe_bound",
                                       "fusible_sequence"};

TEST(FixtureDetectors, EveryFixtureRunsWithoutFailure) {
  const char* all[] = {
      "ascend/pta_db_level1_alexnet_cann8", "ascend/pta_level1_alexnet_cann8",
      "ascend/pta_advisor_ut_llm_matmul_fa/kernel_details.csv",
      "kineto/tb_plugin_resnet50_torch1.9_v100/worker0.1623143089861.pt.trace.json.gz",
      "kineto/tracelens_mi300x_vllm_decode_cudagraph/graph_execution.json.gz",
      "kineto/tracelens_mi300x_sglang_qwen3_8b_decode/sglang_Qwen3-8B_decode.json.gz",
      "kineto/hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
      "kineto/hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz"};
  for (const char* rel : all) {
    DiagnosticReport r = pypto::testing::DiagnoseFixtureOnly(rel, kAll);
    EXPECT_EQ(r.detectors_run.size(), 5u) << rel;
    for (const Issue& i : r.issues) {
      EXPECT_GE(i.saved_ns, 0) << rel;
      EXPECT_LE(i.saved_ns, r.step_time_ns) << rel << " " << IssueTypeName(i.type) << " " << i.op_name;
    }
  }
  // CPU-only trace: no device tasks -> sync stalls are not measurable (note, no issue).
  DiagnosticReport cpu = pypto::testing::DiagnoseFixtureOnly("kineto/hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", kAll);
  EXPECT_TRUE(cpu.issues.empty());
}

}  // namespace
}  // namespace pypto
