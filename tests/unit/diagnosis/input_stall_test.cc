// Detector 12 (input_stall): the device idles while the host is in the
// DataLoader, and copies from pageable host memory. Expected figures come from
// the raw rows, derived in the comments.
#include <gtest/gtest.h>

#include <string>

#include "analysis/detector.h"
#include "unit/diagnosis/planted_detector_helpers.h"

namespace pypto::testing {
namespace {

constexpr char kDetector[] = "input_stall";
constexpr char kFetch[] = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
constexpr char kPageableHtoD[] = "Memcpy HtoD (Pageable -> Device)";

const Issue* IssueOfKind(const DiagnosticReport& r, std::string_view op_type) {
  for (const Issue* i : IssuesOf(r, IssueType::kInputStall))
    if (i->op_type == op_type) return i;
  return nullptr;
}

// ---------------------------------------------------------------- real fixtures
TEST(InputStallFixtures, ResNet50DataLoaderBoundStepsNameTheLoader) {
  // worker0.pt.trace.json.gz (torch 1.8, V100): each of ProfilerStep#5..#10
  // opens with enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ of
  // 45652, 43830, 42919, 62863, 40366 and 44108 us (sum 279738 us). The device
  // idle inside those ranges, the ranges minus the union of every Kernel,
  // Memcpy and Memset row (a dozen lines of Python over the JSON), is
  // 188537 us. Each step then copies the batch from pageable memory: 6 x
  // 19267584 B + 6 x 256 B = 115607040 B in 12 Memcpy HtoD (Pageable ->
  // Device) rows of 12734 us together, none beside a kernel.
  DiagnosticReport r = DiagnoseFixtureOnly("kineto/kineto_resnet50_torch18_v100_dataloader_bound", {kDetector});
  const Issue* loader = IssueOfKind(r, "dataloader");
  ASSERT_NE(loader, nullptr) << Describe(r);
  EXPECT_EQ(loader->evidence.count, 6u);
  EXPECT_EQ(loader->evidence.total_ns, 279738'000);
  EXPECT_EQ(loader->affected_ns, 188537'000);
  EXPECT_EQ(loader->saved_ns, 188537'000);
  EXPECT_EQ(loader->severity, Severity::kHigh);  // 188.5 of 928.8 ms of steps: 20 %

  const Issue* copies = IssueOfKind(r, "memcpy");
  ASSERT_NE(copies, nullptr) << Describe(r);
  EXPECT_EQ(copies->evidence.count, 12u);
  EXPECT_EQ(copies->affected_ns, 12734'000);
  EXPECT_EQ(copies->saved_ns, 12734'000);
  EXPECT_NE(copies->detail.find("115.6 MB at 9.1 GB/s"), std::string::npos) << copies->detail;
}

TEST(InputStallFixtures, OneTimeWeightUploadIsNotAPerStepCost) {
  // HTA's AlexNet benchmark: the 16 pageable copies are model.to('cuda') under
  // [param|cuda], 55 ms in a 43.5 s window without ProfilerStep marks; no
  // DataLoader. The copies are in the one analysed window, so they are
  // reported, at 0.1 % of it (under the 1 % cut a user sees).
  DiagnosticReport r = DiagnoseFixtureOnly("kineto/hta_alexnet_a100_pageable_memcpy", {kDetector});
  EXPECT_EQ(IssueOfKind(r, "dataloader"), nullptr) << Describe(r);
  const Issue* copies = IssueOfKind(r, "memcpy");
  ASSERT_NE(copies, nullptr) << Describe(r);
  EXPECT_EQ(copies->evidence.count, 16u);
  EXPECT_LT(copies->affected_share, 0.01);
}

// ---------------------------------------------------------------- built profiles
TEST(InputStall, IdleInsideTheFetchIsTheStall) {
  // Step [0, 1000] us. The previous step's kernel runs [0, 100] while the
  // host fetches the next batch [0, 300]; the step's kernels run [320, 900].
  // Idle inside the fetch: 300 - 100 = 200 us.
  ProfileBuilder b;
  const uint32_t stream = b.Stream(7);
  b.Host("ProfilerStep#1", HostOpKind::kUserAnnotation, 0, 1000);
  b.Host(kFetch, HostOpKind::kUserAnnotation, 0, 300);
  b.Host("cudaLaunchKernel", HostOpKind::kRuntime, 305, 5, 1);
  b.Task(stream, "k_previous", DeviceTaskKind::kKernel, 0, 100);
  b.Task(stream, "k1", DeviceTaskKind::kKernel, 320, 580, 1);
  DiagnosticReport r = DiagnoseOnly(b.p, kDetector);
  const Issue* loader = IssueOfKind(r, "dataloader");
  ASSERT_NE(loader, nullptr) << Describe(r);
  EXPECT_EQ(loader->affected_ns, 200'000);
  EXPECT_EQ(loader->saved_ns, 200'000);
  EXPECT_EQ(loader->evidence.total_ns, 300'000);
}

TEST(InputStall, FetchUnderBusyDeviceIsOnlyANote) {
  // The fetch [100, 300] lies under a kernel [50, 400]: the device never waits.
  ProfileBuilder b;
  const uint32_t stream = b.Stream(7);
  b.Host("ProfilerStep#1", HostOpKind::kUserAnnotation, 0, 500);
  b.Host(kFetch, HostOpKind::kUserAnnotation, 100, 200);
  b.Task(stream, "k1", DeviceTaskKind::kKernel, 50, 350);
  DiagnosticReport r = DiagnoseOnly(b.p, kDetector);
  EXPECT_TRUE(IssuesOf(r, IssueType::kInputStall).empty()) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "while the device stayed busy: not a stall")) << Describe(r);
}

TEST(InputStall, WithoutDeviceTheWholeFetchWaits) {
  // CPU only: the compute thread waits for the whole fetch [10, 60].
  ProfileBuilder b;
  b.Host("ProfilerStep#1", HostOpKind::kUserAnnotation, 0, 200);
  b.Host(kFetch, HostOpKind::kUserAnnotation, 10, 50);
  b.Host("aten::mm", HostOpKind::kOperator, 70, 100);
  DiagnosticReport r = DiagnoseOnly(b.p, kDetector);
  const Issue* loader = IssueOfKind(r, "dataloader");
  ASSERT_NE(loader, nullptr) << Describe(r);
  EXPECT_EQ(loader->affected_ns, 50'000);
}

TEST(InputStall, PageableCopyBesideAKernelIsPartlyHidden) {
  // Step [0, 400]: pageable copy [100, 150] on stream 7 (1 MB), a kernel
  // [120, 200] on stream 8. Covered by the copy: 50 us; with no kernel
  // beside it: [100, 120] = 20 us. A second pageable copy at 600 us lies
  // after the step: a note, not counted.
  ProfileBuilder b;
  const uint32_t copy_stream = b.Stream(7);
  const uint32_t compute = b.Stream(8);
  b.Host("ProfilerStep#1", HostOpKind::kUserAnnotation, 0, 400);
  b.Task(copy_stream, kPageableHtoD, DeviceTaskKind::kMemcpy, 100, 50, kNoId, 1'000'000);
  b.Task(compute, "k1", DeviceTaskKind::kKernel, 120, 80);
  b.Task(copy_stream, kPageableHtoD, DeviceTaskKind::kMemcpy, 600, 10, kNoId, 1000);
  DiagnosticReport r = DiagnoseOnly(b.p, kDetector);
  const Issue* copies = IssueOfKind(r, "memcpy");
  ASSERT_NE(copies, nullptr) << Describe(r);
  EXPECT_EQ(copies->evidence.count, 1u);
  EXPECT_EQ(copies->affected_ns, 50'000);
  EXPECT_EQ(copies->saved_ns, 20'000);
  EXPECT_NE(copies->detail.find("1.0 MB at 20.0 GB/s"), std::string::npos) << copies->detail;  // 1e6 B / 50 us
  EXPECT_TRUE(HasNoteContaining(r, "1 pageable-memory copies")) << Describe(r);
}

TEST(InputStall, PinnedCopiesAreNotFlagged) {
  ProfileBuilder b;
  const uint32_t stream = b.Stream(7);
  b.Host("ProfilerStep#1", HostOpKind::kUserAnnotation, 0, 400);
  b.Task(stream, "Memcpy HtoD (Pinned -> Device)", DeviceTaskKind::kMemcpy, 100, 50, kNoId, 1'000'000);
  DiagnosticReport r = DiagnoseOnly(b.p, kDetector);
  EXPECT_TRUE(IssuesOf(r, IssueType::kInputStall).empty()) << Describe(r);
}

}  // namespace
}  // namespace pypto::testing
