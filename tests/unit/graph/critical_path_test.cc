// Critical path on small hand-built DAGs; each expected path is derived in the
// comment above the assertions (times in ns).
#include <gtest/gtest.h>

#include "graph/call_graph.h"
#include "unit/graph/graph_test_helpers.h"

namespace pypto {
namespace {

using testing::ProfileBuilder;

TimeNs Breakdown(const CriticalPath& path, PathSegmentKind kind) {
  return path.breakdown_ns[static_cast<size_t>(kind)];
}

// The hand-made times below are a few hundred ns, so the 1 µs rounding
// tolerance of nesting would swallow them: use 1 ns here.
GraphOptions SmallTimes() {
  GraphOptions options;
  options.nesting_tolerance_ns = 1;
  return options;
}

CriticalPath PathOf(Profile& profile, std::optional<size_t> step) {
  StatusOr<OperatorCallGraph> graph = OperatorCallGraph::Build(profile, SmallTimes());
  EXPECT_TRUE(graph.ok());
  StatusOr<CriticalPath> path = graph->ComputeCriticalPath(step);
  EXPECT_TRUE(path.ok()) << path.status().ToString();
  return std::move(path).value();
}

TEST(CriticalPath, HostBoundStep) {
  // Step [0,100]: op A [10,40] launches k [30,35] via L [20,25]; op B [50,90].
  // The device finishes at 35, long before the host: the whole step is the
  // host chain: step 0-10, A 10-20, L 20-25 (launch call), A 25-40, step 40-50,
  // B 50-90, step 90-100.
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 7);
  uint32_t step = b.Annotation(t, "ProfilerStep#0", 0, 100);
  uint32_t a = b.Op(t, "A", 10, 30);
  uint32_t l = b.Runtime(t, "cudaLaunchKernel", 20, 5, 1);
  b.Kernel(s, "k", 30, 5, 1);
  uint32_t bb = b.Op(t, "B", 50, 40);
  CriticalPath path = PathOf(b.profile, 0);
  EXPECT_EQ(path.latency_ns, 100);
  EXPECT_EQ(path.path_start, 0);
  EXPECT_EQ(path.path_end, 100);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kHostBound), 95);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kLaunchOverhead), 5);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kDeviceCompute), 0);
  ASSERT_EQ(path.segments.size(), 7u);
  EXPECT_EQ(path.segments[0].host_op, static_cast<int32_t>(step));
  EXPECT_EQ(path.segments[1].host_op, static_cast<int32_t>(a));
  EXPECT_EQ(path.segments[2].host_op, static_cast<int32_t>(l));
  EXPECT_EQ(path.segments[2].kind, PathSegmentKind::kLaunchOverhead);
  EXPECT_EQ(path.segments[2].start, 20);
  EXPECT_EQ(path.segments[2].dur, 5);
  EXPECT_EQ(path.segments[5].host_op, static_cast<int32_t>(bb));
  EXPECT_EQ(path.segments[5].dur, 40);
}

TEST(CriticalPath, DeviceBoundStepWithSyncWait) {
  // Step [0,200]: L1 [10,15] launches k1 [40,100]; L2 [20,25] launches k2
  // [110,185] on the same stream; cudaDeviceSynchronize [30,190] waits for k2.
  // Host and device chains both reach the sync end at 190 with length 190; the
  // sync end is held back by k2 (ends at 185, later than the call start 30), and
  // k2's start by k1's end (100, later than L2's start 20). Path:
  //   step 0-10 host, launch L1->k1 10-40, k1 40-100, gap 100-110, k2 110-185,
  //   sync wait 185-190, step 190-200 host.
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 7);
  b.Annotation(t, "ProfilerStep#0", 0, 200);
  b.Runtime(t, "cudaLaunchKernel", 10, 5, 1);
  b.Runtime(t, "cudaLaunchKernel", 20, 5, 2);
  uint32_t sync = b.Runtime(t, "cudaDeviceSynchronize", 30, 160, 3);
  uint32_t k1 = b.Kernel(s, "k1", 40, 60, 1);
  uint32_t k2 = b.Kernel(s, "k2", 110, 75, 2);
  CriticalPath path = PathOf(b.profile, 0);
  EXPECT_EQ(path.latency_ns, 200);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kHostBound), 20);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kLaunchOverhead), 30);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kDeviceCompute), 135);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kKernelGap), 10);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kSyncWait), 5);
  ASSERT_EQ(path.segments.size(), 7u);
  EXPECT_EQ(path.segments[2].device_task, static_cast<int32_t>(k1));
  EXPECT_EQ(path.segments[3].kind, PathSegmentKind::kKernelGap);
  EXPECT_EQ(path.segments[4].device_task, static_cast<int32_t>(k2));
  EXPECT_EQ(path.segments[5].kind, PathSegmentKind::kSyncWait);
  EXPECT_EQ(path.segments[5].host_op, static_cast<int32_t>(sync));
  EXPECT_EQ(path.segments[5].start, 185);
}

TEST(CriticalPath, CpuOnlyProfileIsTheHostChain) {
  // No steps, no device: whole window [0,300]. Thread 1: A [0,100], B [150,300]
  // -> A 100 + gap 50 + B 150 = 300. Thread 2: C [20,200] is shorter (180).
  ProfileBuilder b;
  uint32_t t1 = b.Thread("1");
  uint32_t t2 = b.Thread("2");
  uint32_t a = b.Op(t1, "A", 0, 100);
  b.Op(t1, "B", 150, 150);
  b.Op(t2, "C", 20, 180);
  CriticalPath path = PathOf(b.profile, std::nullopt);
  EXPECT_EQ(path.latency_ns, 300);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kHostBound), 300);
  ASSERT_EQ(path.segments.size(), 3u);
  EXPECT_EQ(path.segments[0].host_op, static_cast<int32_t>(a));
  EXPECT_EQ(path.segments[1].host_op, kNoIndex);  // idle host time between roots
  EXPECT_EQ(path.segments[1].dur, 50);
  // Same through the step API: the only step is the whole window.
  StatusOr<OperatorCallGraph> g = OperatorCallGraph::Build(b.profile, SmallTimes());
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(*g->get_critical_path_latency(0), 300);
  EXPECT_FALSE(g->ComputeCriticalPath(size_t{5}).ok());
}

TEST(CriticalPath, DeviceOnlyProfileIsTheLongestStream) {
  // Ascend-like: tasks only. Stream 1: t1 [0,100], gap 50, t2 (HCCL) [150,500]
  // = 500. Stream 2: t3 [0,400] = 400. No cross-stream edges.
  ProfileBuilder b;
  uint32_t s1 = b.Stream(0, 1);
  uint32_t s2 = b.Stream(0, 2);
  uint32_t t1 = b.Task(s1, "MatMul", 0, 100, kNoId, DeviceTaskKind::kKernel, kNoId, "AI_CORE");
  uint32_t t2 = b.Task(s1, "hcom_allReduce_", 150, 350, kNoId, DeviceTaskKind::kCommunication, kNoId, "HCCL");
  b.Task(s2, "Add", 0, 400, kNoId, DeviceTaskKind::kKernel, kNoId, "AI_VECTOR_CORE");
  CriticalPath path = PathOf(b.profile, std::nullopt);
  EXPECT_EQ(path.latency_ns, 500);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kDeviceCompute), 100);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kKernelGap), 50);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kCommunication), 350);
  ASSERT_EQ(path.segments.size(), 3u);
  EXPECT_EQ(path.segments[0].device_task, static_cast<int32_t>(t1));
  EXPECT_EQ(path.segments[2].device_task, static_cast<int32_t>(t2));
}

TEST(CriticalPath, KernelsOutlivingTheHostExtendTheStep) {
  // Step [0,100] launches k [50,400] via L [40,45] and never syncs: the path
  // runs host 0-40, launch 40-50, kernel 50-400 = 400.
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 7);
  b.Annotation(t, "ProfilerStep#1", 0, 100);
  b.Runtime(t, "cudaLaunchKernel", 40, 5, 1);
  b.Kernel(s, "k", 50, 350, 1);
  CriticalPath path = PathOf(b.profile, 0);
  EXPECT_EQ(path.latency_ns, 400);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kHostBound), 40);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kLaunchOverhead), 10);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kDeviceCompute), 350);
}

}  // namespace
}  // namespace pypto
