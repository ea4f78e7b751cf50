// Detector 8 (stream_sync): the host waits for the device inside a step
// (stream / device synchronisation, `.item()`), the device queue drains and
// the device idles until the host launches again.
#include <gtest/gtest.h>

#include <string>

#include "analysis/detector.h"
#include "unit/diagnosis/planted_detector_helpers.h"
#include "unit/planted/planted_profiles.h"
#include "unit/profile_builder.h"

namespace pypto::testing {
namespace {

constexpr char kDetector[] = "stream_sync";

class StreamSync : public ::testing::TestWithParam<PlantedFlavor> {};

// ---------------------------------------------------------------- positive
TEST_P(StreamSync, FoundWithIdleItCauses) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.syncs_per_step = 2;
  k.sync_host_work_us = 80;
  PlantedFacts facts;
  DiagnosticReport r = RunPlanted(k, &facts);
  const Issue* i = FindIssue(r, IssueType::kStreamSync);
  ASSERT_NE(i, nullptr) << Describe(r);
  EXPECT_EQ(i->op_name, GetParam() == PlantedFlavor::kAscend ? "aclrtSynchronizeStream" : "cudaStreamSynchronize");
  EXPECT_EQ(i->op_type, "aten::_local_scalar_dense");  // the `.item()` the sync is called from
  EXPECT_EQ(i->evidence.count, 8u);                    // 2 per step x 4 steps
  // The idle measured equals the idle the builder planted (copy end -> next kernel).
  EXPECT_EQ(i->method, SavingMethod::kMeasuredGap);
  EXPECT_EQ(i->affected_ns, facts.sync_idle_ns);
  EXPECT_EQ(i->saved_ns, facts.sync_idle_ns);
  EXPECT_GT(i->saved_ns, 0);
}

TEST_P(StreamSync, SavingGrowsWithHostWork) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.syncs_per_step = 1;
  k.sync_host_work_us = 20;
  DiagnosticReport weak = RunPlanted(k);
  const Issue* a0 = FindIssue(weak, IssueType::kStreamSync);
  k.sync_host_work_us = 200;
  DiagnosticReport strong = RunPlanted(k);
  const Issue* b = FindIssue(strong, IssueType::kStreamSync);
  ASSERT_NE(b, nullptr);
  if (a0) {  // 20 us of host work may stay under the 1% reporting floor
    EXPECT_LT(a0->saved_ns, b->saved_ns);
    EXPECT_LE(a0->severity, b->severity);
  }
  EXPECT_EQ(b->severity, Severity::kHigh) << Describe(strong);
}

// ---------------------------------------------------------------- negative
// The healthy decoder never syncs inside a step.
TEST_P(StreamSync, HealthyProfileHasNoIssue) {
  DiagnosticReport r = DiagnoseOnly(BuildPlantedProfile(HealthyKnobs(GetParam())), kDetector);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
}

// ---------------------------------------------------------------- threshold
// stream_sync.sync_launch_ratio (MPA: > 0.5 means ASCEND_LAUNCH_BLOCKING):
// 8 syncs against a few hundred launches stay far under 0.5; a threshold under
// the actual ratio makes the issue say that launches are blocking.
TEST_P(StreamSync, SyncLaunchRatioParameterFlagsBlockingLaunches) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.syncs_per_step = 2;
  Profile p = BuildPlantedProfile(k);
  const DiagnosticReport by_default = DiagnoseOnly(p, kDetector);
  const Issue* normal = FindIssue(by_default, IssueType::kStreamSync);
  ASSERT_NE(normal, nullptr);
  EXPECT_EQ(normal->detail.find("sync/launch ratio"), std::string::npos) << normal->detail;
  DiagnosticReport low = DiagnoseOnly(p, kDetector, {{"stream_sync.sync_launch_ratio", 0.001}});
  const Issue* flagged = FindIssue(low, IssueType::kStreamSync);
  ASSERT_NE(flagged, nullptr);
  EXPECT_NE(flagged->detail.find("sync/launch ratio"), std::string::npos) << flagged->detail;
  EXPECT_EQ(flagged->saved_ns, normal->saved_ns);  // the ratio explains, it does not change the idle measured
}

// ---------------------------------------------------------------- degraded
// No device tasks (lost device rows): the idle a sync causes cannot be
// measured, a note and no issue.
TEST_P(StreamSync, NoDeviceTasksGivesANoteAndNoIssue) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.syncs_per_step = 2;
  Profile p = BuildPlantedProfile(k);
  for (DeviceTaskKind& kind : p.device_tasks.kind) kind = DeviceTaskKind::kAnnotation;  // no work rows left
  DiagnosticReport r = DiagnoseOnly(p, kDetector);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "no device tasks in the analysed steps")) << Describe(r);
}

// ---------------------------------------------------------------- the cap
// A sync that blocks 1 us, then 1 ms of device idle while the host does other
// work (a DataLoader, a pageable copy): the sync is blamed for at most the
// 1 us it held the host, the rest is said as host work after the return.
TEST(StreamSyncCap, ASyncIsBlamedForAtMostTheTimeItBlocked) {
  ProfileBuilder b;
  const uint32_t stream = b.Stream(7);
  b.Host("ProfilerStep#1", HostOpKind::kUserAnnotation, 0, 2000);
  b.Host("cudaLaunchKernel", HostOpKind::kRuntime, 10, 5, /*correlation=*/1);
  b.Task(stream, "gemm", DeviceTaskKind::kKernel, 20, 480, 1);             // busy 20..500 us
  b.Host("cudaStreamSynchronize", HostOpKind::kRuntime, 499, 1);           // returns at 500 us
  b.Host("cudaLaunchKernel", HostOpKind::kRuntime, 1495, 5, /*correlation=*/2);
  b.Task(stream, "gemm", DeviceTaskKind::kKernel, 1500, 400, 2);           // idle 500..1500 us
  DiagnosticReport r = DiagnoseOnly(b.p, kDetector);
  const Issue* sync = FindIssueByOp(r, IssueType::kStreamSync, "cudaStreamSynchronize");
  ASSERT_NE(sync, nullptr) << Describe(r);
  EXPECT_EQ(sync->affected_ns, 1000);   // the 1 us the host was blocked
  EXPECT_EQ(sync->saved_ns, 1000);
  EXPECT_NE(sync->detail.find("999.0 us more idle in those gaps is host work"), std::string::npos) << sync->detail;
}

INSTANTIATE_TEST_SUITE_P(Flavors, StreamSync, ::testing::Values(PlantedFlavor::kKinetoCuda, PlantedFlavor::kAscend),
                         [](const auto& info) { return FlavorName(info.param); });

// ---------------------------------------------------------------- real fixtures
TEST(StreamSyncFixtures, TraceViewItemAndDeviceSyncs) {
  // Raw JSON, inside ProfilerStep#1: aclrtSynchronizeStream x4,
  // aclrtSynchronizeStreamWithTimeout x2, aclrtSynchronizeDevice x1 (a second
  // one starts after the step). 45 aten::_local_scalar_dense, 2 of which hold
  // an aclrtSynchronize* call on the same thread -> 43 counted as .item() syncs.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/pta_trace_view_2024/trace_view.json", {kDetector});
  const Issue* item = FindIssueByOp(r, IssueType::kStreamSync, "aten::_local_scalar_dense");
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->evidence.count, 43u);
  EXPECT_GT(item->affected_ns, 0);
  const Issue* dev = FindIssueByOp(r, IssueType::kStreamSync, "aclrtSynchronizeDevice");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->evidence.count, 1u);
  for (const Issue* i : IssuesOf(r, IssueType::kStreamSync)) {
    EXPECT_EQ(i->saved_ns, i->affected_ns);  // measured idle, claimed as step idle
    EXPECT_GT(i->affected_ns, 0);
  }
}

TEST(StreamSyncFixtures, StreamWaitEventIsNotAHostSync) {
  // cudaStreamWaitEvent orders streams on the GPU; the host does not block.
  for (const char* rel : {"kineto/hta_nccl_2rank_a100_2024/nccl_data.json.gz",
                          "kineto/hta_trace_diff_control_a100_2022/control.json.gz"}) {
    DiagnosticReport r = DiagnoseFixtureOnly(rel, {kDetector});
    EXPECT_EQ(FindIssueByOp(r, IssueType::kStreamSync, "cudaStreamWaitEvent"), nullptr) << rel;
  }
}

double MetricOf(const Issue& i, std::string_view name) {
  for (const Metric& m : i.evidence.metrics)
    if (m.name == name) return m.value;
  return -1;
}

TEST(StreamSyncFixtures, BlockingCopyWhileTheDeviceWaitsForUntracedWork) {
  // Raw JSON (sglang decode, MI300X): the host sits in hipMemcpyWithStream
  // from ts 4909914216566.336 for 463063.75 us (a 256 B DtoH copy, called
  // from aten::copy_). The device runs nothing from the call's start until
  // resolve_future_token_i at 4909914679584.875: 4 kernels and the copy then
  // run back to back until 4909914679613.677, 16 us before the call returns.
  // Its stream had been told to wait on an event (hipStreamWaitEvent at
  // 4909914216306.588) whose producer is not in the trace. Idle inside the
  // call before the gap its return ends in: 4909914679584.875 -
  // 4909914216566.336 = 463018.539 us; reported, not claimed as a saving.
  DiagnosticReport r = DiagnoseFixtureOnly("kineto/tracelens_mi300x_sglang_qwen3_8b_decode/sglang_Qwen3-8B_decode.json.gz",
                                           {kDetector});
  const Issue* copy = FindIssueByOp(r, IssueType::kStreamSync, "hipMemcpyWithStream");
  ASSERT_NE(copy, nullptr) << Describe(r);
  EXPECT_EQ(copy->evidence.count, 1u);
  EXPECT_EQ(MetricOf(*copy, "blocking_copies"), 1);
  EXPECT_NEAR(MetricOf(*copy, "device_idle_inside_calls_us"), 463018.539, 0.01);
  EXPECT_LT(copy->saved_ns, copy->affected_ns / 1000);  // the idle inside is not a claimed saving
  EXPECT_EQ(copy->severity, Severity::kHigh);           // 97.7 % of the 473.8 ms window
  EXPECT_NE(copy->detail.find("work the trace does not show"), std::string::npos) << copy->detail;
}

TEST(StreamSyncFixtures, CopiesToPageableMemoryBlockTheHost) {
  // Raw JSON (HTA trace-diff control, A100): 60 gpu_memcpy rows "Memcpy DtoH
  // (Device -> Pageable)", each launched by a cudaMemcpyAsync (correlation
  // ids match) that holds the host 75663 us in all: a copy to pageable memory
  // returns only when done, so each is a sync point whatever its name says.
  DiagnosticReport r = DiagnoseFixtureOnly("kineto/hta_trace_diff_control_a100_2022/control.json.gz", {kDetector});
  const Issue* copies = FindIssueByOp(r, IssueType::kStreamSync, "cudaMemcpyAsync");
  ASSERT_NE(copies, nullptr) << Describe(r);
  EXPECT_EQ(copies->evidence.count, 60u);
  EXPECT_EQ(copies->evidence.total_ns, 75663000);
  EXPECT_EQ(MetricOf(*copies, "blocking_copies"), 60);
  // The device stays busy with queued work through most of them: the idle
  // they cause is small (well under 1 % of the 465 ms of six steps), so by
  // default it is a note, not a finding.
  EXPECT_LT(copies->affected_share, 0.01);
  DiagnoseOptions defaults;
  defaults.only = {kDetector};
  auto listed = DiagnosePath(std::string(PYPTO_FIXTURES_DIR) + "/kineto/hta_trace_diff_control_a100_2022/control.json.gz",
                             defaults);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(FindIssueByOp(*listed, IssueType::kStreamSync, "cudaMemcpyAsync"), nullptr);
  EXPECT_TRUE(HasNoteContaining(*listed, "under the 1% listing share")) << Describe(*listed);
}

TEST(StreamSyncFixtures, CpuOnlyTraceIsOnlyANote) {
  // CPU-only trace: no device tasks -> sync stalls are not measurable (note, no issue).
  DiagnosticReport r =
      DiagnoseFixtureOnly("kineto/hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", {kDetector});
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "no device tasks")) << Describe(r);
}

}  // namespace
}  // namespace pypto::testing
