// What detectors 1-5 (matmul_tiling, attention_memory_bound, kv_cache_layout,
// norm_launch_overhead, host_bound) must report on the HTA and MI300X Kineto
// fixtures. Every figure was derived from the raw trace JSON (json.load of the
// .json.gz: kernel / cpu_op / cuda_runtime events, ProfilerStep windows,
// Input Dims, device busy time as the union of kernel + memcpy + memset
// intervals), as noted next to each expectation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "session/profile_session.h"
#include "analysis/detector.h"
#include "unit/diagnosis/planted_detector_helpers.h"

namespace pypto::testing {
namespace {

const std::vector<std::string> kDetectors1To5 = {"matmul_tiling", "attention_memory_bound", "kv_cache_layout",
                                                 "norm_launch_overhead", "host_bound"};

constexpr char kCpuOnly[] = "kineto/hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz";
constexpr char kSimpleAdd[] =
    "kineto/hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz";
constexpr char kNccl[] = "kineto/hta_nccl_2rank_a100_2024/nccl_data.json.gz";
constexpr char kControl[] = "kineto/hta_trace_diff_control_a100_2022/control.json.gz";
constexpr char kSglangDecode[] = "kineto/tracelens_mi300x_sglang_qwen3_8b_decode/sglang_Qwen3-8B_decode.json.gz";
constexpr char kVllmDecode[] = "kineto/tracelens_mi300x_vllm_decode_cudagraph/graph_execution.json.gz";

// Default options (1% reporting floor): what a user sees.
DiagnosticReport DiagnoseFirstFive(const char* rel) {
  DiagnoseOptions o;
  o.only = kDetectors1To5;
  auto r = DiagnosePath(std::string(PYPTO_FIXTURES_DIR) + "/" + rel, o);
  EXPECT_TRUE(r.ok()) << rel << ": " << r.status().ToString();
  return r.ok() ? std::move(r).value() : DiagnosticReport{};
}

int CountOf(const DiagnosticReport& r, IssueType type) { return static_cast<int>(IssuesOf(r, type).size()); }

// ---------------------------------------------------------------- HTA CPU-only (gloo)
// Raw: 0 kernel events, 4 cpu_op, 11 user_annotation, no deviceProperties.
TEST(KinetoFixtureExpectations, HtaCpuOnlyGlooNothingToReport) {
  DiagnosticReport r = DiagnoseFirstFive(kCpuOnly);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);  // no GEMM, attention, cat, norm or device task at all
  EXPECT_TRUE(HasNoteContaining(r, "host_bound: no device tasks")) << Describe(r);
}

// ---------------------------------------------------------------- HTA critical path (simple add, A100)
TEST(KinetoFixtureExpectations, HtaSimpleAddReportsNothing) {
  DiagnosticReport r = DiagnoseFirstFive(kSimpleAdd);
  // matmul_tiling: 14 GEMM / implicit-GEMM conv kernels, but 0 of 359 cpu_op
  // carry Input Dims (record_shapes off): no roofline, a note.
  EXPECT_EQ(CountOf(r, IssueType::kMatmulTiling), 0);
  EXPECT_TRUE(HasNoteContaining(r, "have no usable shapes")) << Describe(r);
  // No attention kernel, no norm kernel, no Input Dims for cat/copy patterns.
  EXPECT_EQ(CountOf(r, IssueType::kAttentionMemoryBound), 0);
  EXPECT_EQ(CountOf(r, IssueType::kKvCacheLayout), 0);
  EXPECT_EQ(CountOf(r, IssueType::kNormLaunchOverhead), 0);
  // host_bound: no ProfilerStep, one window of 41,579,901 us (first to last
  // event) in which the 79 kernels + 16 memcpy + 3 memset are busy 49,758 us:
  // idle 0.9988, but only 37 gaps (10.6 ms, 0.03% of the window) wait for a
  // cudaLaunchKernel that began after the device went idle. The idle is host
  // work outside kernel launches (set-up, the benchmark loop), not dispatch
  // gaps between kernels: below the 1% minimum share, not reported.
  EXPECT_EQ(CountOf(r, IssueType::kHostBound), 0);
}

// ---------------------------------------------------------------- HTA NCCL 2 ranks (A100)
TEST(KinetoFixtureExpectations, HtaNcclIsHostBoundOnly) {
  DiagnosticReport r = DiagnoseFirstFive(kNccl);
  // 537 cutlass / conv GEMM kernels, but 0 of 14346 cpu_op carry Input Dims.
  EXPECT_EQ(CountOf(r, IssueType::kMatmulTiling), 0);
  EXPECT_TRUE(HasNoteContaining(r, "have no usable shapes")) << Describe(r);
  // A CNN: no attention kernel, no layer / RMS norm kernel, no shapes for cat patterns.
  EXPECT_EQ(CountOf(r, IssueType::kAttentionMemoryBound), 0);
  EXPECT_EQ(CountOf(r, IssueType::kKvCacheLayout), 0);
  EXPECT_EQ(CountOf(r, IssueType::kNormLaunchOverhead), 0);
  // ProfilerStep#4-6: 667,105 us of step time, device busy 157,500 us
  // (union of kernels, NCCL included, and copies): idle 0.7639 > 0.10. The
  // issue stands on the 2,478 gaps whose launch began after the device went
  // idle: 0.5266 of the step (the rest of the idle is waits, not dispatch).
  const Issue* hb = FindIssue(r, IssueType::kHostBound);
  ASSERT_NE(hb, nullptr) << Describe(r);
  EXPECT_NEAR(hb->affected_share, 0.5266, 0.002);
  EXPECT_EQ(hb->evidence.count, 2478u);
  EXPECT_GT(hb->saved_ns, 0);
}

// ---------------------------------------------------------------- HTA trace-diff control (A100, training)
TEST(KinetoFixtureExpectations, HtaControlTilingNormAndHostBound) {
  DiagnosticReport r = DiagnoseFirstFive(kControl);
  // matmul_tiling: the 12 cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1
  // kernels in ProfilerStep#1009-1014 (463-485 us each) run BmmBackward0's
  // aten::bmm [[1024, 647, 96], [1024, 96, 30]] float: 345.7 MB moved, i.e.
  // 222 us at the A100 40 GB's 1.555 TB/s (FLOPs: 3.8 GFLOP, 24 us at TF32)
  // -> memory bound at 222 / ~470 = 0.47 of the roofline, and N = 30 is not
  // a multiple of the 8-element MMA granule. Only group reported.
  ASSERT_EQ(CountOf(r, IssueType::kMatmulTiling), 1) << Describe(r);
  const Issue* mm = FindIssue(r, IssueType::kMatmulTiling);
  EXPECT_NE(mm->op_name.find("cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1"), std::string::npos);
  EXPECT_EQ(mm->evidence.count, 12u);
  EXPECT_NE(mm->detail.find("N=30"), std::string::npos) << mm->detail;
  EXPECT_NE(mm->detail.find("roofline efficiency 0.47"), std::string::npos) << mm->detail;
  EXPECT_EQ(mm->method, SavingMethod::kRoofline);
  EXPECT_GT(mm->saved_ns, 0);
  // A BERT-like training step without attention kernels of their own (bmm +
  // softmax): nothing for attention_memory_bound; no cat feeding attention.
  EXPECT_EQ(CountOf(r, IssueType::kAttentionMemoryBound), 0);
  EXPECT_EQ(CountOf(r, IssueType::kKvCacheLayout), 0);
  // norm_launch_overhead: 162 layer_norm_grad_input_kernel (27 per step x 6),
  // mean 13.63 us each, preceded on stream 7 by 15.87 us of idle whose
  // cudaLaunchKernel began after the previous kernel ended (1.16 x). It is
  // already one fused kernel: a note, the idle is host_bound's below.
  EXPECT_EQ(CountOf(r, IssueType::kNormLaunchOverhead), 0) << Describe(r);
  bool noted = false;
  for (const std::string& n : r.notes)
    noted |= n.find("162 ") != std::string::npos && n.find("layer_norm_grad_input_kernel") != std::string::npos &&
             n.find("1.16 x") != std::string::npos;
  EXPECT_TRUE(noted) << Describe(r);
  // host_bound: 6 steps, 464,946 us, device busy 388,540 us: idle 0.1643 > 0.10;
  // the 1,544 launch-bound gaps are 0.1139 of the steps.
  const Issue* hb = FindIssue(r, IssueType::kHostBound);
  ASSERT_NE(hb, nullptr) << Describe(r);
  EXPECT_NEAR(hb->affected_share, 0.1139, 0.002);
  EXPECT_GT(hb->saved_ns, 0);
}

// ---------------------------------------------------------------- MI300X SGLang decode (graph replay)
TEST(KinetoFixtureExpectations, Mi300xSglangDecode) {
  DiagnosticReport r = DiagnoseFirstFive(kSglangDecode);
  EXPECT_EQ(r.hardware_id, "MI300X");
  // 145 Cijk GEMM and 72 paged_attention kernels, all but a handful replayed
  // by one hipGraphLaunch with no External id: no cpu_op (and so no Input
  // Dims) to model them with, no PMU: notes, no finding.
  EXPECT_EQ(CountOf(r, IssueType::kMatmulTiling), 0);
  EXPECT_EQ(CountOf(r, IssueType::kAttentionMemoryBound), 0);
  EXPECT_TRUE(HasNoteContaining(r, "attention task(s) without PMU ratios and without shapes")) << Describe(r);
  // No aten::cat / transpose + contiguous feeding an attention op.
  EXPECT_EQ(CountOf(r, IssueType::kKvCacheLayout), 0);
  // The 145 aiter add_rmsnorm_quant kernels are graph-replayed back to back:
  // no gap before them began with a later launch.
  EXPECT_EQ(CountOf(r, IssueType::kNormLaunchOverhead), 0);
  // host_bound: window 473,830 us, device busy 9,773 us -> idle 0.979, but
  // 463,295 us of that idle is ONE gap while the host sits in a blocking
  // hipMemcpyWithStream (aten::copy_) of 463,064 us: a wait, not dispatch.
  // Only 5 gaps (398.6 us, 0.08% of the window) wait for a launch: below the
  // 1% minimum share, not reported.
  EXPECT_EQ(CountOf(r, IssueType::kHostBound), 0);
}

// ---------------------------------------------------------------- MI300X vLLM decode (FULL cudagraph)
TEST(KinetoFixtureExpectations, Mi300xVllmDecode) {
  DiagnosticReport r = DiagnoseFirstFive(kVllmDecode);
  // 168 of 169 GEMM / attention kernels are replayed by one hipGraphLaunch
  // (no External id, no shapes): nothing to model.
  EXPECT_EQ(CountOf(r, IssueType::kMatmulTiling), 0);
  EXPECT_EQ(CountOf(r, IssueType::kAttentionMemoryBound), 0);
  EXPECT_EQ(CountOf(r, IssueType::kKvCacheLayout), 0);  // reshape_and_cache_flash writes in place: no cat
  // 49 ck_tile Rmsnorm2dFwd kernels, graph-replayed: no launch gap before them.
  EXPECT_EQ(CountOf(r, IssueType::kNormLaunchOverhead), 0);
  // host_bound: window 19,114 us, device busy 10,718 us -> idle 0.4393.
  // Almost all of it (8,371 us) lies before the first device task, and the
  // host's last event ends at 2,409 us: the device is not waiting for host
  // work there. The 391 gaps between device tasks total 25.5 us and none began
  // with a later launch: not host-bound, a note says how much idle there was.
  EXPECT_EQ(CountOf(r, IssueType::kHostBound), 0);
  EXPECT_TRUE(HasNoteContaining(r, "no gap between kernels waits for a launch")) << Describe(r);
}

}  // namespace
}  // namespace pypto::testing
