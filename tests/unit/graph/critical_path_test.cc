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
  // No steps, no device: whole window [0,300] µs. Thread 1: A [0,100],
  // B [150,300] -> A 100 + gap 50 + B 150 = 300. Thread 2: C [20,180] starts
  // while A runs (a hand-off from A: A start -> C start) but is shorter, and
  // B ends 120 µs after C, too late to have been waiting for it
  // (kThreadHandOffGapNs), so nothing hands back: the path is thread 1's.
  ProfileBuilder b;
  uint32_t t1 = b.Thread("1");
  uint32_t t2 = b.Thread("2");
  constexpr TimeNs us = 1000;
  uint32_t a = b.Op(t1, "A", 0, 100 * us);
  b.Op(t1, "B", 150 * us, 150 * us);
  b.Op(t2, "C", 20 * us, 160 * us);
  CriticalPath path = PathOf(b.profile, std::nullopt);
  EXPECT_EQ(path.latency_ns, 300 * us);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kHostBound), 300 * us);
  ASSERT_EQ(path.segments.size(), 3u);
  EXPECT_EQ(path.segments[0].host_op, static_cast<int32_t>(a));
  EXPECT_EQ(path.segments[1].host_op, kNoIndex);  // idle host time between roots
  EXPECT_EQ(path.segments[1].dur, 50 * us);
  // Same through the step API: the only step is the whole window.
  StatusOr<OperatorCallGraph> g = OperatorCallGraph::Build(b.profile, SmallTimes());
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(*g->get_critical_path_latency(0), 300 * us);
  EXPECT_FALSE(g->ComputeCriticalPath(size_t{5}).ok());
}

TEST(CriticalPath, WorkerThreadHandsBackToTheWaitingThread) {
  // The main thread (1) runs "backward" [0,1000] ns as one op (the autograd
  // engine runs on thread 2, which the trace does not link to it); thread 2
  // runs op W [100,900] that launches kernel k [200,880] via L [150,160].
  // Before: "backward" was a 1000 ns host-bound leaf, the only chain from 0.
  // Now thread 2's first work is handed off from "backward" (start 0 -> W
  // start 100) and its last work back to it (W end 900 -> backward end 1000,
  // 100 ns later: it was waiting). Both chains reach 1000 from 0; the later
  // predecessor (W's end) wins: backward 0-100, W 100-150, L 150-160, W
  // 160-900 (k ends at 880 and leads nowhere: no sync), backward 900-1000.
  ProfileBuilder b;
  uint32_t t1 = b.Thread("1");
  uint32_t t2 = b.Thread("2");
  uint32_t s = b.Stream(0, 7);
  uint32_t backward = b.Op(t1, "backward", 0, 1000);
  uint32_t w = b.Op(t2, "W", 100, 800);
  b.Runtime(t2, "cudaLaunchKernel", 150, 10, 1);
  b.Kernel(s, "k", 200, 680, 1);
  CriticalPath path = PathOf(b.profile, std::nullopt);
  EXPECT_EQ(path.latency_ns, 1000);
  bool w_on_path = false;
  for (const PathSegment& seg : path.segments) w_on_path |= seg.host_op == static_cast<int32_t>(w);
  EXPECT_TRUE(w_on_path);
  ASSERT_FALSE(path.segments.empty());
  EXPECT_EQ(path.segments.front().host_op, static_cast<int32_t>(backward));
  EXPECT_EQ(path.segments.front().dur, 100);
  EXPECT_EQ(path.segments.back().host_op, static_cast<int32_t>(backward));
  EXPECT_EQ(path.segments.back().dur, 100);
}

TEST(CriticalPath, ThreeHundredThreadsHandBackToOneOp) {
  // "backward" [0,10000] ns on thread 1; 300 worker threads, worker i running
  // one op [100 + i, 9000]. Each worker's end hands back to "backward" (the
  // only op of another thread still open at 9000, 1000 ns before its end):
  // 300 edges into backward's end, plus its own start -> end: 301, past the
  // 255 a node's one-byte count of edges in holds. Each worker's start is
  // handed off from the latest op started before it: worker i - 1 (worker 0:
  // backward). Every chain to backward's end spans 0 -> 10000. The node must
  // leave the queue once, after its 301st edge: none dropped, none twice
  // (a wrapping byte count reaches 0 after 45 and again after 301 edges).
  // A kernel [50,60] that nothing launches keeps the profile from being
  // CPU-only (where each leaf op would become a task of its own). Nodes: 2
  // per op and task, 604. Edges: per op and task its start -> end (302); per
  // worker a hand-off in and one back (600).
  ProfileBuilder b;
  b.Kernel(b.Stream(0, 7), "k", 50, 10, 1);
  uint32_t main_thread = b.Thread("1");
  uint32_t backward = b.Op(main_thread, "backward", 0, 10000);
  constexpr int kWorkers = 300;
  for (int i = 0; i < kWorkers; ++i) b.Op(b.Thread(std::to_string(2 + i)), "W", 100 + i, 8900 - i);
  CriticalPath path = PathOf(b.profile, std::nullopt);
  EXPECT_EQ(path.nodes, 604u);
  EXPECT_EQ(path.edges, 902u);
  EXPECT_EQ(path.dropped_nodes, 0u);
  EXPECT_EQ(path.latency_ns, 10000);
  ASSERT_FALSE(path.segments.empty());
  // The later predecessor wins the tie at backward's end: a worker's end
  // (9000) over backward's own start (0), so the path ends with the wait.
  EXPECT_EQ(path.segments.back().host_op, static_cast<int32_t>(backward));
  EXPECT_EQ(path.segments.back().start, 9000);
  EXPECT_EQ(path.segments.back().dur, 1000);
}

TEST(CriticalPath, HeadKeepsTheFirstSegmentsAndEveryTotal) {
  // The worker hand-off profile above: its path is five segments (backward
  // 0-100, W 100-150, L 150-160, W 160-900, backward 900-1000). The head of 2
  // keeps the first two; the head of 0 none; a head longer than the path all
  // five. Latency, count and breakdown are the whole path's in each.
  ProfileBuilder b;
  uint32_t t1 = b.Thread("1");
  uint32_t t2 = b.Thread("2");
  b.Op(t1, "backward", 0, 1000);
  b.Op(t2, "W", 100, 800);
  b.Runtime(t2, "cudaLaunchKernel", 150, 10, 1);
  b.Kernel(b.Stream(0, 7), "k", 200, 680, 1);
  StatusOr<OperatorCallGraph> graph = OperatorCallGraph::Build(b.profile, SmallTimes());
  ASSERT_TRUE(graph.ok());
  StatusOr<CriticalPath> whole = graph->ComputeCriticalPath(std::nullopt);
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(whole->segments.size(), 5u);
  for (size_t keep : {size_t{0}, size_t{2}, size_t{5}, size_t{9}}) {
    StatusOr<CriticalPath> head = graph->ComputeCriticalPathHead(std::nullopt, keep);
    ASSERT_TRUE(head.ok());
    ASSERT_EQ(head->segments.size(), std::min<size_t>(keep, 5));
    for (size_t i = 0; i < head->segments.size(); ++i) {
      EXPECT_EQ(head->segments[i].start, whole->segments[i].start);
      EXPECT_EQ(head->segments[i].dur, whole->segments[i].dur);
      EXPECT_EQ(head->segments[i].host_op, whole->segments[i].host_op);
    }
    EXPECT_EQ(head->segment_count, 5u);
    EXPECT_EQ(head->latency_ns, 1000);
    EXPECT_EQ(head->breakdown_ns, whole->breakdown_ns);
  }
}

TEST(CriticalPath, BlockedThreadJoinsTheWorkerItStartedHoweverLongAfter) {
  // loss.backward() on the main thread [0, 1000] µs; the autograd thread
  // runs W [100, 500] µs, which launches k [200, 300] µs (L [150, 160]); the
  // main thread returns 500 µs after W ends (after untraced work: seen
  // 10.8 ms on a real trace), far past the 100 µs a waiting op normally
  // returns within. The main thread did nothing traced while W ran, and
  // "backward" started W's burst: it was blocked on it. The path runs
  // backward 0-100, W 100-150, L 150-160, W 160-500, backward 500-1000.
  // When the main thread works during W (op X [300, 310] µs), it was not
  // blocked: no join, and W leads nowhere (the main thread's own chain).
  constexpr TimeNs us = 1000;
  for (bool main_thread_busy : {false, true}) {
    ProfileBuilder b;
    uint32_t t1 = b.Thread("1");
    uint32_t t2 = b.Thread("2");
    uint32_t s = b.Stream(0, 7);
    uint32_t backward = b.Op(t1, "backward", 0, 1000 * us);
    if (main_thread_busy) b.Op(t1, "X", 300 * us, 10 * us);
    uint32_t w = b.Op(t2, "W", 100 * us, 400 * us);
    b.Runtime(t2, "cudaLaunchKernel", 150 * us, 10 * us, 1);
    b.Kernel(s, "k", 200 * us, 100 * us, 1);
    CriticalPath path = PathOf(b.profile, std::nullopt);
    EXPECT_EQ(path.latency_ns, 1000 * us);
    bool w_on_path = false;
    for (const PathSegment& seg : path.segments) w_on_path |= seg.host_op == static_cast<int32_t>(w);
    EXPECT_EQ(w_on_path, !main_thread_busy) << "main thread busy: " << main_thread_busy;
    ASSERT_FALSE(path.segments.empty());
    EXPECT_EQ(path.segments.back().host_op, static_cast<int32_t>(backward));
    if (!main_thread_busy) {
      EXPECT_EQ(path.segments.back().dur, 500 * us);
      EXPECT_EQ(Breakdown(path, PathSegmentKind::kLaunchOverhead), 10 * us);
    }
  }
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

TEST(CriticalPath, QueuedKernelsAreDeviceBoundNotLaunchOverhead) {
  // A backlog: the host launches 6 kernels within 70 ns, the device runs them
  // for 600 ns. Step [0,640]. L_i [10 + 10i, 15 + 10i] launches k_i.
  // Stream A: k0 [20,120], k1 [120,220], ..., k4 [420,520]; stream B: k5
  // [520,620], which waited for k4 (an event the trace does not record).
  // cudaDeviceSynchronize [80,630] waits for k5; the step ends at 640.
  // Before: k5's only dependency was its launch, so the path ran host 0-60,
  // launch overhead 60-520 (460 ns, 72 % of the step), k5, sync wait.
  // Now k1..k5 are queued (each starts after its launch returned, when the
  // device work before it ended: k_{i-1}), so their launches are not waits:
  // host 0-10, launch L0 -> k0 10-20, k0..k5 20-620 (600 compute, the
  // k4 -> k5 cross-stream wait 0 ns), sync wait 620-630, host 630-640.
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t stream_a = b.Stream(0, 7);
  uint32_t stream_b = b.Stream(0, 8);
  b.Annotation(t, "ProfilerStep#0", 0, 640);
  for (int i = 0; i < 6; ++i) b.Runtime(t, "cudaLaunchKernel", 10 + 10 * i, 5, i + 1);
  b.Runtime(t, "cudaDeviceSynchronize", 80, 550, 100);
  for (int i = 0; i < 5; ++i) b.Kernel(stream_a, "k", 20 + 100 * i, 100, i + 1);
  uint32_t k5 = b.Kernel(stream_b, "k5", 520, 100, 6);
  CriticalPath path = PathOf(b.profile, 0);
  EXPECT_EQ(path.latency_ns, 640);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kDeviceCompute), 600);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kLaunchOverhead), 10);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kKernelGap), 0);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kSyncWait), 10);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kHostBound), 20);
  EXPECT_EQ(path.queued_tasks, 5u);
  bool k5_on_path = false;
  for (const PathSegment& seg : path.segments) k5_on_path |= seg.device_task == static_cast<int32_t>(k5);
  EXPECT_TRUE(k5_on_path);
}

TEST(CriticalPath, KernelWaitingForItsLaunchKeepsLaunchOverhead) {
  // The device is idle when the launch returns: k1 [30,40] after L1 [20,25],
  // its predecessor k0 ended at 18. The launch is the wait (not queued):
  // host 0-5, L0's call 5-10 (a launch call: launch overhead), host 10-20,
  // L1 start -> k1 start 20-30 (launch overhead), k1 30-40, sync wait 40-41
  // (cudaDeviceSynchronize [26,41]), host 41-50 (step end).
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 7);
  b.Annotation(t, "ProfilerStep#0", 0, 50);
  b.Runtime(t, "cudaLaunchKernel", 5, 5, 1);
  b.Runtime(t, "cudaLaunchKernel", 20, 5, 2);
  b.Kernel(s, "k0", 12, 6, 1);
  b.Kernel(s, "k1", 30, 10, 2);
  b.Runtime(t, "cudaDeviceSynchronize", 26, 15, 3);
  CriticalPath path = PathOf(b.profile, 0);
  EXPECT_EQ(path.queued_tasks, 0u);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kLaunchOverhead), 15);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kSyncWait), 1);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kDeviceCompute), 10);
}

TEST(CriticalPath, TaskStartingBeforeItsLaunchIsClockSkewNotABrokenEdge) {
  // CANN DB exports link tasks to their launch by connectionId, and the
  // device clock can run ahead: k1 [18,28] is linked to the launch L1 at
  // [20,25], 2 ns before it. The launch edge L1 start -> k1 start goes back
  // in time: left out and counted as one skewed launch of 2 ns, not as a
  // skipped edge. k1 is still reached through its stream (k0 [8,16]).
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 7);
  b.Annotation(t, "ProfilerStep#0", 0, 40);
  b.Runtime(t, "cudaLaunchKernel", 5, 2, 1);
  b.Runtime(t, "cudaLaunchKernel", 20, 5, 2);
  b.Kernel(s, "k0", 8, 8, 1);
  b.Kernel(s, "k1", 18, 10, 2);
  CriticalPath path = PathOf(b.profile, 0);
  EXPECT_EQ(path.skewed_launches, 1u);
  EXPECT_EQ(path.max_launch_skew_ns, 2);
  EXPECT_EQ(path.skipped_edges, 0u);
  EXPECT_EQ(path.latency_ns, 40);
}

TEST(CriticalPath, ItemWaitingForACollectiveIsASyncWait) {
  // Step [0,1010]: L [10,15] launches an all-reduce [20,990] on the NCCL
  // stream; aten::item [30,1000] (no runtime call under it in the trace)
  // blocks until it is done. Before: the 970 ns item was host-bound.
  // Now aten::item is a sync call: host 0-10, launch 10-20, all-reduce
  // 20-990 (communication), sync wait 990-1000, host 1000-1010.
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 9);
  b.Annotation(t, "ProfilerStep#0", 0, 1010);
  b.Runtime(t, "cudaLaunchKernel", 10, 5, 1);
  uint32_t item = b.Op(t, "aten::item", 30, 970);
  b.Task(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, 970, 1, DeviceTaskKind::kCommunication);
  CriticalPath path = PathOf(b.profile, 0);
  EXPECT_EQ(path.latency_ns, 1010);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kCommunication), 970);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kSyncWait), 10);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kHostBound), 20);
  ASSERT_FALSE(path.segments.empty());
  const PathSegment& wait = path.segments[path.segments.size() - 2];
  EXPECT_EQ(wait.kind, PathSegmentKind::kSyncWait);
  EXPECT_EQ(wait.host_op, static_cast<int32_t>(item));
}

TEST(CriticalPath, ItemInACpuOnlyProfileIsHostWork) {
  // No device tasks: aten::item is CPU work like any other op (a CPU compute
  // task), never a wait. Whole window [0,100], one op.
  ProfileBuilder b;
  uint32_t t = b.Thread();
  b.Op(t, "aten::item", 0, 100);
  CriticalPath path = PathOf(b.profile, std::nullopt);
  EXPECT_EQ(path.latency_ns, 100);
  EXPECT_EQ(Breakdown(path, PathSegmentKind::kSyncWait), 0);
}

}  // namespace
}  // namespace pypto
