// Detector 11 (communication): collectives the step waits for (exposed
// communication), wait vs transfer, and the rank the others wait for. Expected
// figures come from the raw rows, derived in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include <string>

#include "session/profile_session.h"
#include "analysis/detector.h"
#include "unit/diagnosis/planted_detector_helpers.h"

namespace pypto::testing {
namespace {

constexpr char kDetector[] = "communication";

double MetricOf(const Issue& issue, std::string_view name) {
  for (const pypto::Metric& m : issue.evidence.metrics)
    if (m.name == name) return m.value;
  return -1;
}

// ---------------------------------------------------------------- real fixtures
TEST(CommunicationFixtures, PipelineStagesNameTheRankTheOthersWaitFor) {
  // Ranks 1 and 3 of one CANN 8.3 job (pipeline parallel), step 13 of each.
  // step_trace_time.csv, rank 1: Computing 230903.72, Communication(Not
  // Overlapped) 441708.38, Free 136819.56 us (sum 809431.66); rank 3 (written
  // as Device_id 5, placed as device 3): Computing 401131.70, CnO 261498.44,
  // Free 147520.20 us. communication.json of rank 1: Wait Time(ms) over its ops
  // 164.051 (p2p) + 6.735 (collective) = 170.786 ms; HCCS Transit Time 0.8025
  // + 92.13192 = 92.934 ms. Rank 1 waits in send/recv for rank 3, which
  // computes 401.1 ms against 230.9 ms: spread (401131.70 - 230903.72) /
  // 316017.71 = 53.9 % > 5 %: device 3 is the cause, not device 1.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/pta_level2_llm_pp2dp2_ranks1_3", {kDetector});
  const Issue* rank1 = FindIssueByOp(r, IssueType::kCommunication, "hcom_batchSendRecv__764_4_1");
  ASSERT_NE(rank1, nullptr) << Describe(r);
  EXPECT_NEAR(double(rank1->affected_ns), 441708380.0, 1000.0);
  EXPECT_NEAR(MetricOf(*rank1, "exposed_share"), 441708.38 / 809431.66, 1e-4);
  EXPECT_NEAR(MetricOf(*rank1, "wait_share"), 170.786 / (170.786 + 92.934), 1e-3);
  EXPECT_NE(rank1->detail.find("mostly waiting for a peer rank"), std::string::npos) << rank1->detail;
  // Overlap can hide at most the step's compute: min(441708.38, 230903.72).
  EXPECT_NEAR(double(rank1->saved_ns), 230903720.0, 1000.0);

  const Issue* imbalance = nullptr;
  for (const Issue* i : IssuesOf(r, IssueType::kCommunication))
    if (i->op_type == "rank imbalance") imbalance = i;
  ASSERT_NE(imbalance, nullptr) << Describe(r);
  EXPECT_EQ(imbalance->op_name, "device 3");
  EXPECT_NEAR(MetricOf(*imbalance, "compute_spread"), (401131.70 - 230903.72) / 316017.71, 1e-4);
  // Balanced, the slow stage computes the mean: 401131.70 - 316017.71 us saved.
  EXPECT_NEAR(double(imbalance->saved_ns), (401131.70 - 316017.71) * 1000.0, 1000.0);
}

TEST(CommunicationFixtures, Cann83ExposedCommunicationMatchesStepTraceTime) {
  // step_trace_time.csv: Computing 231290.1, CnO 420174.26, Free 158558.0 us.
  // Exposed 420174.26 / 810022.36 = 51.9 %; only whole collectives in
  // kernel_details (COMMUNICATION core, no HCCL sub-tasks, no
  // communication.json): wait and transfer cannot be split, and it says so.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/pta_level2_llm_cann83", {kDetector});
  auto issues = IssuesOf(r, IssueType::kCommunication);
  ASSERT_EQ(issues.size(), 1u) << Describe(r);
  EXPECT_NEAR(double(issues[0]->affected_ns), 420174260.0, 1000.0);
  EXPECT_NEAR(MetricOf(*issues[0], "exposed_share"), 420174.26 / 810022.36, 1e-4);
  EXPECT_NE(issues[0]->detail.find("one rank given: wait and transfer are not told apart"), std::string::npos)
      << issues[0]->detail;
  EXPECT_NEAR(double(issues[0]->saved_ns), 231290100.0, 1000.0);
  EXPECT_EQ(issues[0]->op_name, "hcom_batchSendRecv__128_4_1");  // the longest, 158.553 ms
}

TEST(CommunicationFixtures, DbNotifyWaitIsWaitingNotTransfer) {
  // DB export, two ranks: the HCCL sub-tasks are TASK rows (COMMUNICATION_TASK_INFO)
  // named Notify Wait (waiting for the peer) and SDMA / others (moving data).
  // Both ranks expose > 70 % of their step and wait > 95 % of it; their
  // compute is the same (8.844 vs 8.832 ms): no rank is the cause.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/pta_db_level0_2rank_allreduce", {kDetector});
  auto issues = IssuesOf(r, IssueType::kCommunication);
  ASSERT_EQ(issues.size(), 2u) << Describe(r);
  for (const Issue* i : issues) {
    EXPECT_EQ(i->op_type, "exposed communication");
    EXPECT_GT(MetricOf(*i, "wait_share"), 0.9) << i->detail;
  }
  EXPECT_TRUE(HasNoteContaining(r, "spreads 0.1% across 2 devices")) << Describe(r);
}

TEST(CommunicationFixtures, OverlappedNcclIsOnlyANote) {
  // HTA's 2-rank DDP ResNet: the NCCL all-reduces (46.9 ms) run under the
  // backward's kernels and the host; none is on the critical path.
  DiagnosticReport r = DiagnoseFixtureOnly("kineto/hta_nccl_2rank_a100_2024", {kDetector});
  for (const Issue* i : IssuesOf(r, IssueType::kCommunication)) EXPECT_NE(i->op_type, "exposed communication");
  // Small messages: of the 21 NCCL kernels in the steps, the 6 broadcasts
  // (Float and Long) carry under 1 MB ("In msg nelems" x dtype), 114.334 us
  // of kernel time; listed only with every finding kept (0.02 % of the step).
  const Issue* small = FindIssueByOp(r, IssueType::kCommunication, "the device NCCL transfers");
  ASSERT_NE(small, nullptr) << Describe(r);
  EXPECT_EQ(small->evidence.count, 6u);
  EXPECT_NEAR(double(small->affected_ns) / 1e3, 114.334, 0.01);
  EXPECT_NE(small->detail.find("6 of 21 NCCL collective messages (29%) are under 1 MB"), std::string::npos) << small->detail;
  EXPECT_TRUE(HasNoteContaining(r, "exposed communication 0.0% of the step")) << Describe(r);
  // nccl-tests busBw of the 15 all-reduce kernels in the steps: "In msg
  // nelems" x 4 B (dtype Float) x 2(n-1)/n with "Group size" 2, summed, over
  // their 46762.159 us: 6.56 GB/s, 2 % of the A100's 300 GB/s per direction.
  EXPECT_TRUE(HasNoteContaining(r, "15 allreduce kernel(s), 46762.2 us in all: bus bandwidth 6.6 GB/s = 2% of the "
                                   "300 GB/s per-direction link of A100-SXM4-40GB"))
      << Describe(r);
}

TEST(CommunicationFixtures, UnevenComputeWithoutWaitingIsNoImbalance) {
  // HTA's sampled 2-rank trace: device 1 runs 136.0 ms of kernels per step,
  // device 0 105.2 ms (26 % spread), but both steps are host-bound and no
  // collective is on device 0's critical path: nothing waits for device 1.
  DiagnosticReport r = DiagnoseFixtureOnly("kineto/hta_sampled_2rank_nccl_w128", {kDetector});
  for (const Issue* i : IssuesOf(r, IssueType::kCommunication)) EXPECT_NE(i->op_type, "rank imbalance") << i->detail;
  EXPECT_TRUE(HasNoteContaining(r, "no rank holds the others")) << Describe(r);
}

TEST(CommunicationFixtures, SmallPacketsFromTheSizeDistribution) {
  // communication.json, step50: the HCCS Size Distribution entries ({size MB:
  // [count, ms]}) of every op give 56 transfers, 42 of them under 16 MB, whose
  // times add up to 12.110062 ms (a few lines of Python over the file): 75 %
  // small > 20 % (msprof-analyze packet.yaml). No saving is claimed.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/pta_level1_alexnet_cann8", {kDetector});
  const Issue* packets = nullptr;
  for (const Issue* i : IssuesOf(r, IssueType::kCommunication))
    if (i->op_type == "small packets") packets = i;
  ASSERT_NE(packets, nullptr) << Describe(r);
  EXPECT_EQ(packets->evidence.count, 42u);
  EXPECT_NEAR(double(packets->affected_ns), 12110062.0, 1000.0);
  EXPECT_NEAR(MetricOf(*packets, "small_share"), 42.0 / 56.0, 1e-9);
  EXPECT_EQ(packets->saved_ns, 0);
}

TEST(CommunicationFixtures, UnalignedSdmaTransfersAreCountedFromTheTaskSizes) {
  // COMMUNICATION_TASK_INFO joined to TASK by globalTaskId: 4 SDMA sub-tasks
  // of at least 512 B whose size is not a multiple of 512 (1937312 B: 416
  // left over, twice; 1162496 B: 256, twice) last 139.503 + 101.002 + 103.362
  // + 191.044 = 534.911 us; the 4-byte ones (a scalar) are not counted. At
  // 0.35 % of the step it is a note, not an issue.
  DiagnosticReport all = DiagnoseFixtureOnly("ascend/pta_db_level1_alexnet_cann8", {kDetector});  // no share cut
  const Issue* aligned = nullptr;
  for (const Issue* i : IssuesOf(all, IssueType::kCommunication))
    if (i->op_type == "byte alignment") aligned = i;
  ASSERT_NE(aligned, nullptr) << Describe(all);
  EXPECT_EQ(aligned->evidence.count, 4u);
  EXPECT_NEAR(double(aligned->affected_ns), 534911.0, 10.0);
  DiagnoseOptions o;  // what a user sees: the 1 % cut
  o.only = {kDetector};
  auto r = DiagnosePath(std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_db_level1_alexnet_cann8", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const Issue* i : IssuesOf(*r, IssueType::kCommunication)) EXPECT_NE(i->op_type, "byte alignment");
  EXPECT_TRUE(HasNoteContaining(*r, "4 HCCL SDMA (Memcpy / Reduce_Inline) task(s) move sizes that are not a multiple "
                                    "of 512 B (e.g. 1937312 B), 534.9 us in all"))
      << Describe(*r);
}

// ---------------------------------------------------------------- built profile
TEST(Communication, NcclOnTheCriticalPathIsExposed) {
  // One CUDA step [0, 600] us: k1 [20, 120] on stream 7, the all-reduce
  // ncclKernel [120, 420] on stream 20 (it waits for k1), k2 [420, 520] on
  // stream 7 (it waits for the all-reduce), cudaDeviceSynchronize returns at
  // 525. The path runs k1 -> all-reduce -> k2: 300 us of communication in the
  // 600 us step (50 % > 10 %). Compute is k1 + k2 = 200 us, so overlap hides
  // at most 200 us.
  ProfileBuilder b;
  const uint32_t compute = b.Stream(7);
  const uint32_t comm = b.Stream(20);
  b.Host("ProfilerStep#1", HostOpKind::kUserAnnotation, 0, 600);
  b.Host("cudaLaunchKernel", HostOpKind::kRuntime, 10, 5, 1);
  b.Host("cudaLaunchKernel", HostOpKind::kRuntime, 20, 5, 2);
  b.Host("cudaLaunchKernel", HostOpKind::kRuntime, 30, 5, 3);
  b.Host("cudaDeviceSynchronize", HostOpKind::kRuntime, 40, 485, 4);
  b.Task(compute, "k1", DeviceTaskKind::kKernel, 20, 100, 1);
  b.Task(comm, "ncclKernel_AllReduce_RING_LL_Sum_float", DeviceTaskKind::kCommunication, 120, 300, 2);
  b.Task(compute, "k2", DeviceTaskKind::kKernel, 420, 100, 3);
  DiagnosticReport r = DiagnoseOnly(b.p, kDetector);
  auto issues = IssuesOf(r, IssueType::kCommunication);
  ASSERT_EQ(issues.size(), 1u) << Describe(r);
  EXPECT_EQ(issues[0]->affected_ns, 300'000);
  EXPECT_NEAR(MetricOf(*issues[0], "exposed_share"), 0.5, 1e-9);
  EXPECT_EQ(issues[0]->saved_ns, 200'000);
  EXPECT_EQ(issues[0]->op_name, "ncclKernel_AllReduce_RING_LL_Sum_float");
  EXPECT_NE(issues[0]->detail.find("communication on the critical path"), std::string::npos) << issues[0]->detail;
}

TEST(Communication, NcclWaitIsTheTimeBeforeTheLastRankArrives) {
  // Two ranks (devices 0 and 1) in one step [0, 1000] us. The same all-reduce
  // kernel starts at 100 us on rank 0 and at 400 us on rank 1 (rank 1
  // computed k1 until 400), and ends at 500 us on both. Rank 0 waited
  // 400 - 100 = 300 us of its 400 us kernel for rank 1, and moved data for
  // 100 us (wait share 0.75); rank 1 waited 0 and moved data 100 us. A second
  // all-reduce ending 1 ms apart on the two ranks is not matched (clocks not
  // comparable).
  ProfileBuilder b;
  const uint32_t r0_comm = b.Stream(20, 0), r0_comp = b.Stream(7, 0);
  const uint32_t r1_comm = b.Stream(20, 1), r1_comp = b.Stream(7, 1);
  // Each rank's step as its profiler's breakdown gives it (step_trace_time
  // style): 3 ms, of which 1 ms communication not overlapped.
  for (int32_t device : {0, 1}) {
    StepRow row;
    row.number = 1;
    row.name = b.p.Intern("step 1");
    row.ts = 0;
    row.dur = 3'000'000;
    row.device = device;
    row.source = b.p.Intern("step_trace_time.csv");
    row.computing = 500'000;
    row.communication_not_overlapped = 1'000'000;
    row.free = 1'500'000;
    b.p.steps.rows.push_back(row);
  }
  b.Task(r0_comp, "k0", DeviceTaskKind::kKernel, 0, 100);
  b.Task(r0_comm, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", DeviceTaskKind::kCommunication, 100, 400);
  b.Task(r1_comp, "k1", DeviceTaskKind::kKernel, 0, 400);
  b.Task(r1_comm, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", DeviceTaskKind::kCommunication, 400, 100);
  b.Task(r0_comm, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", DeviceTaskKind::kCommunication, 1000, 100);
  b.Task(r1_comm, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", DeviceTaskKind::kCommunication, 2000, 100);
  DiagnosticReport r = DiagnoseOnly(b.p, kDetector);
  const Issue* rank0 = nullptr;
  const Issue* rank1 = nullptr;
  for (const Issue* i : IssuesOf(r, IssueType::kCommunication)) {
    if (i->op_type != "exposed communication") continue;
    if (i->detail.starts_with("device 0")) rank0 = i;
    if (i->detail.starts_with("device 1")) rank1 = i;
  }
  ASSERT_NE(rank0, nullptr) << Describe(r);
  ASSERT_NE(rank1, nullptr) << Describe(r);
  EXPECT_NE(rank0->detail.find("wait 300.0 us (in its collectives before the last rank arrived, 1 collective "
                               "kernel(s) matched across 2 ranks, 1 not matched) vs transfer 100.0 us"),
            std::string::npos)
      << rank0->detail;
  EXPECT_NEAR(MetricOf(*rank0, "wait_share"), 0.75, 1e-9);  // 300 / (300 + 100)
  EXPECT_NEAR(MetricOf(*rank1, "wait_share"), 0.0, 1e-9);   // the last to arrive waits for no one
}

TEST(Communication, ALinkUnderFourFifthsOfTheFastestIsSlow) {
  // communication_matrix of one device, step 1, two HCCS links: 0-1 moves
  // 100 MB in 5 ms (20 GB/s), 0-2 moves 100 MB in 10 ms (10 GB/s, half the
  // fastest: slow); at 20 GB/s it would take 5 ms, so it costs 5 ms more.
  // A LOCAL row (on-chip copy) and a 0.5 MB link are not judged.
  ProfileBuilder b;
  const uint32_t stream = b.Stream(20, 0);
  b.Host("ProfilerStep#1", HostOpKind::kUserAnnotation, 0, 30000);
  b.Task(stream, "k", DeviceTaskKind::kKernel, 0, 100);
  b.p.devices.rows.push_back(DeviceRow{0, DeviceKind::kNpu, kEmptyStr});
  auto field = [&](const std::string& link, const std::string& name, const std::string& text, double number) {
    b.p.attributes.Add(OwnerKind::kDevice, 0,
                       b.p.Intern("communication_matrix/step1/allreduce-total@1/" + link + "/" + name),
                       b.p.Intern(text), number);
  };
  auto link = [&](const std::string& name, const std::string& transport, double mb, double ms) {
    field(name, "Transport Type", transport, std::nan(""));
    field(name, "Transit Size(MB)", std::to_string(mb), mb);
    field(name, "Transit Time(ms)", std::to_string(ms), ms);
  };
  link("0-1", "HCCS", 100, 5);
  link("0-2", "HCCS", 100, 10);
  link("0-3", "HCCS", 0.5, 5);
  link("0-0", "LOCAL", 500, 1);
  DiagnosticReport r = DiagnoseOnly(b.p, kDetector);
  EXPECT_TRUE(HasNoteContaining(r, "HCCS links (communication_matrix): device 0 link 0-1 20.0 GB/s, device 0 link 0-2 "
                                   "10.0 GB/s; slow: device 0 link 0-2 (under 80% of the fastest, 20.0 GB/s): 5.0 ms "
                                   "more than at the fastest link's bandwidth"))
      << Describe(r);
}

}  // namespace
}  // namespace pypto::testing
