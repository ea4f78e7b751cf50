// Detector 8 (stream_sync): the host waits for the device inside a step
// (stream / device synchronisation, `.item()`), the device queue drains and
// the device idles until the host launches again.
#include <gtest/gtest.h>

#include <string>

#include "analysis/detector.h"
#include "unit/diagnosis/planted_detector_helpers.h"
#include "unit/planted/planted_profiles.h"

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

TEST(StreamSyncFixtures, CpuOnlyTraceIsOnlyANote) {
  // CPU-only trace: no device tasks -> sync stalls are not measurable (note, no issue).
  DiagnosticReport r =
      DiagnoseFixtureOnly("kineto/hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", {kDetector});
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "no device tasks")) << Describe(r);
}

}  // namespace
}  // namespace pypto::testing
