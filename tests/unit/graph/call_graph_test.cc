// Nesting, linking, steps, busy time and aggregates on hand-built profiles.
// Times are ns; expected figures are worked out in the comments.
#include "graph/call_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

#include "unit/graph/graph_test_helpers.h"

namespace pypto {
namespace {

using testing::ProfileBuilder;

OperatorCallGraph BuildOrDie(Profile& profile, const GraphOptions& options = {}) {
  StatusOr<OperatorCallGraph> graph = OperatorCallGraph::Build(profile, options);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(graph).value();
}

TEST(Nesting, ParentsAndDepthsOnOneThread) {
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t a = b.Op(t, "A", 0, 100'000);
  uint32_t c = b.Op(t, "C", 20'000, 10'000);  // added out of order on purpose
  uint32_t bb = b.Op(t, "B", 10'000, 40'000);
  uint32_t d = b.Op(t, "D", 50'000, 40'000);
  uint32_t e = b.Op(b.Thread("2"), "E", 20'000, 10'000);  // other thread: never nested in A
  OperatorCallGraph g = BuildOrDie(b.profile);
  const HostOpTable& h = b.profile.host_ops;
  EXPECT_EQ(h.parent[a], kNoIndex);
  EXPECT_EQ(h.parent[bb], static_cast<int32_t>(a));
  EXPECT_EQ(h.parent[c], static_cast<int32_t>(bb));
  EXPECT_EQ(h.parent[d], static_cast<int32_t>(a));
  EXPECT_EQ(h.parent[e], kNoIndex);
  EXPECT_EQ(h.depth[a], 0);
  EXPECT_EQ(h.depth[bb], 1);
  EXPECT_EQ(h.depth[c], 2);
  EXPECT_EQ(h.depth[d], 1);
  EXPECT_EQ(g.stats().max_depth, 2u);
  ASSERT_EQ(g.Children(a).size(), 2u);
  EXPECT_EQ(g.Children(a)[0], bb);
  EXPECT_EQ(g.Children(a)[1], d);
  EXPECT_EQ(g.stats().partial_overlaps, 0u);
  EXPECT_EQ(g.stats().rounding_overlaps, 0u);
}

TEST(Nesting, RoundingOverlapWithinToleranceIsNested) {
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t a = b.Op(t, "A", 0, 100'000);
  uint32_t child = b.Op(t, "child", 60'000, 40'400);    // ends 400 ns after A: rounding
  uint32_t next = b.Op(t, "next", 99'700, 50'000);      // starts 300 ns before A ends: a sibling
  OperatorCallGraph g = BuildOrDie(b.profile);
  const HostOpTable& h = b.profile.host_ops;
  EXPECT_EQ(h.parent[child], static_cast<int32_t>(a));
  EXPECT_EQ(h.parent[next], kNoIndex);
  EXPECT_EQ(g.stats().rounding_overlaps, 2u);
  EXPECT_EQ(g.stats().partial_overlaps, 0u);
}

TEST(Nesting, TruePartialOverlapIsCountedAndMadeRoot) {
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t p = b.Op(t, "P", 0, 10'000);
  uint32_t q = b.Op(t, "Q", 5'000, 10'000);   // 5 µs inside P, ends 5 µs after it
  uint32_t r = b.Op(t, "R", 6'000, 1'000);    // inside P and Q: nested in Q, the innermost
  uint32_t s = b.Op(t, "S", 12'000, 1'000);   // after P, inside Q
  uint32_t u = b.Op(t, "U", 20'000, 1'000);   // after both: a root
  OperatorCallGraph g = BuildOrDie(b.profile);
  const HostOpTable& h = b.profile.host_ops;
  EXPECT_EQ(g.stats().partial_overlaps, 1u);
  EXPECT_EQ(h.parent[q], kNoIndex);
  EXPECT_EQ(h.depth[q], 0);
  EXPECT_EQ(h.parent[r], static_cast<int32_t>(q));
  EXPECT_EQ(h.depth[r], 1);
  EXPECT_EQ(h.parent[s], static_cast<int32_t>(q));
  EXPECT_EQ(h.parent[u], kNoIndex);
  EXPECT_EQ(h.parent[p], kNoIndex);
}

TEST(SelfTime, DurationMinusUnionOfChildren) {
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t a = b.Op(t, "A", 0, 100'000);
  uint32_t c1 = b.Op(t, "B", 10'000, 40'000);
  b.Op(t, "inner", 20'000, 5'000);               // grandchild: already inside B
  uint32_t c2 = b.Op(t, "B", 50'000, 40'000);
  OperatorCallGraph g = BuildOrDie(b.profile);
  // A: 100 µs − (B 10..50 ∪ B 50..90 = 80 µs) = 20 µs; B#1: 40 − 5 = 35 µs.
  EXPECT_EQ(g.SelfTime(a), 20'000);
  EXPECT_EQ(g.SelfTime(c1), 35'000);
  EXPECT_EQ(g.SelfTime(c2), 40'000);
  EXPECT_EQ(g.TotalTime(a), 100'000);
  std::vector<HostOpAggregate> top = g.TopHostOpsBySelfTime();
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(b.profile.Str(top[0].name), "B");
  EXPECT_EQ(top[0].count, 2u);
  EXPECT_EQ(top[0].self_ns, 75'000);
  EXPECT_EQ(top[0].total_ns, 80'000);
  EXPECT_EQ(top[0].mean_ns, 40'000);
  EXPECT_EQ(b.profile.Str(top[1].name), "A");
  EXPECT_EQ(g.OpCount(), 4u);
  EXPECT_EQ(g.get_op_count(), 4u);
}

TEST(Linking, CorrelationNestingAndExternalIdFallbacks) {
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 7);
  uint32_t mm = b.Op(t, "aten::mm", 0, 100'000, /*external_id=*/7);
  uint32_t launch = b.Runtime(t, "cudaLaunchKernel", 10'000, 10'000, /*correlation=*/1, 7);
  uint32_t k1 = b.Kernel(s, "gemm", 30'000, 50'000, 1);
  // Runtime call outside any op: falls back to its External id (7 -> aten::mm).
  uint32_t loose = b.Runtime(t, "cudaLaunchKernel", 200'000, 10'000, 2, 7);
  uint32_t k2 = b.Kernel(s, "gemm", 220'000, 10'000, 2);
  // No runtime partner but an External id: attributed to aten::mm.
  uint32_t k3 = b.Task(s, "gemm", 300'000, 10'000, kNoId, DeviceTaskKind::kKernel, 7);
  // Launched before the window: correlation without partner, no External id.
  uint32_t k4 = b.Kernel(s, "early", 400'000, 10'000, 99);
  // Runtime call with a correlation but no device task (a sync).
  b.Runtime(t, "cudaStreamSynchronize", 90'000, 5'000, 5);
  OperatorCallGraph g = BuildOrDie(b.profile);

  EXPECT_EQ(g.LauncherOf(k1), static_cast<int32_t>(launch));
  EXPECT_EQ(g.OperatorOf(k1), static_cast<int32_t>(mm));
  EXPECT_EQ(g.LinkOf(k1), TaskLink::kNesting);
  EXPECT_EQ(g.LauncherOf(k2), static_cast<int32_t>(loose));
  EXPECT_EQ(g.OperatorOf(k2), static_cast<int32_t>(mm));
  EXPECT_EQ(g.LinkOf(k2), TaskLink::kExternalId);
  EXPECT_EQ(g.LauncherOf(k3), kNoIndex);
  EXPECT_EQ(g.OperatorOf(k3), static_cast<int32_t>(mm));
  EXPECT_EQ(g.LinkOf(k3), TaskLink::kExternalId);
  EXPECT_EQ(g.LauncherOf(k4), kNoIndex);
  EXPECT_EQ(g.OperatorOf(k4), kNoIndex);
  EXPECT_EQ(g.LinkOf(k4), TaskLink::kNone);
  EXPECT_EQ(b.profile.device_tasks.launcher[k1], static_cast<int32_t>(launch));

  ASSERT_EQ(g.TasksOfOp(mm).size(), 3u);
  EXPECT_EQ(g.TasksOfOp(mm)[0], k1);
  ASSERT_EQ(g.TasksLaunchedBy(launch).size(), 1u);
  EXPECT_EQ(g.TasksLaunchedBy(launch)[0], k1);
  EXPECT_EQ(g.DeviceSelfTime(mm), 70'000);   // 50 + 10 + 10 µs
  EXPECT_EQ(g.EnclosingOperator(launch), static_cast<int32_t>(mm));

  const GraphStats& st = g.stats();
  EXPECT_EQ(st.tasks_linked_by_correlation, 2u);
  EXPECT_EQ(st.tasks_with_unmatched_correlation, 1u);
  EXPECT_EQ(st.tasks_without_correlation, 1u);
  EXPECT_EQ(st.tasks_attributed_by_nesting, 1u);
  EXPECT_EQ(st.tasks_attributed_by_external_id, 2u);
  EXPECT_EQ(st.tasks_unattributed, 1u);
  EXPECT_EQ(st.runtime_calls, 3u);
  EXPECT_EQ(st.runtime_calls_without_task, 1u);
  EXPECT_EQ(st.runtime_calls_without_operator, 0u);
}

// TasksOfOp / TasksLaunchedBy find a host op's rows through a block index of
// 64 host ops: 200 operators, each with a launch call inside (host rows
// alternate, so 400 rows, 7 blocks), a kernel for two ops in three and a
// second one for every fifth. Every host op's answer must be the tasks whose
// OperatorOf / LauncherOf is that op, in time order, including ops on both
// sides of each block boundary.
TEST(Linking, TasksOfEveryHostOpAcrossIndexBlocks) {
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 7);
  for (int i = 0; i < 200; ++i) {
    const TimeNs at = TimeNs{i} * 100'000;
    b.Op(t, "aten::op", at, 50'000);
    b.Runtime(t, "cudaLaunchKernel", at + 10'000, 5'000, i + 1);
    if (i % 3 != 0) b.Kernel(s, "k", at + 20'000, 5'000, i + 1);
    if (i % 5 == 0) b.Kernel(s, "k2", at + 30'000, 5'000, i + 1);
  }
  OperatorCallGraph g = BuildOrDie(b.profile);
  const DeviceTaskTable& d = b.profile.device_tasks;
  size_t tasks_found = 0, launched_found = 0;
  for (uint32_t h = 0; h < b.profile.host_ops.size(); ++h) {
    std::vector<uint32_t> of_op, launched;
    for (uint32_t k = 0; k < d.size(); ++k) {  // the kernels were added in time order
      if (g.OperatorOf(k) == static_cast<int32_t>(h)) of_op.push_back(k);
      if (g.LauncherOf(k) == static_cast<int32_t>(h)) launched.push_back(k);
    }
    const auto tasks = g.TasksOfOp(h);
    EXPECT_EQ(std::vector<uint32_t>(tasks.begin(), tasks.end()), of_op) << "host op " << h;
    const auto by_launch = g.TasksLaunchedBy(h);
    EXPECT_EQ(std::vector<uint32_t>(by_launch.begin(), by_launch.end()), launched) << "host op " << h;
    tasks_found += tasks.size();
    launched_found += by_launch.size();
  }
  // 133 ops with a kernel (i % 3 != 0) + 40 with a second one (i % 5 == 0): 173 tasks, each found once.
  EXPECT_EQ(d.size(), 173u);
  EXPECT_EQ(tasks_found, 173u);
  EXPECT_EQ(launched_found, 173u);
}

TEST(Linking, RuntimeUnderAnnotationOnlyFallsBackToAnnotation) {
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 7);
  uint32_t ann = b.Annotation(t, "my_region", 0, 100'000);
  b.Runtime(t, "cudaMemcpyAsync", 10'000, 5'000, 3);
  uint32_t copy = b.Task(s, "Memcpy HtoD", 20'000, 5'000, 3, DeviceTaskKind::kMemcpy);
  OperatorCallGraph g = BuildOrDie(b.profile);
  EXPECT_EQ(g.OperatorOf(copy), static_cast<int32_t>(ann));
  EXPECT_EQ(g.LinkOf(copy), TaskLink::kNesting);
}

TEST(Linking, GraphLaunchMarksAllItsTasks) {
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 3);
  uint32_t fwd = b.Op(t, "forward", 0, 1'000'000);
  uint32_t gl = b.Runtime(t, "hipGraphLaunch", 10'000, 20'000, 10);
  b.Runtime(t, "hipLaunchKernel", 40'000, 5'000, 11);
  uint32_t k0 = b.Kernel(s, "a", 50'000, 10'000, 10);
  uint32_t k1 = b.Kernel(s, "b", 60'000, 10'000, 10);
  uint32_t k2 = b.Kernel(s, "c", 70'000, 10'000, 10);
  uint32_t k3 = b.Kernel(s, "d", 80'000, 10'000, 11);
  OperatorCallGraph g = BuildOrDie(b.profile);
  for (uint32_t k : {k0, k1, k2}) {
    EXPECT_TRUE(g.IsGraphLaunched(k));
    EXPECT_EQ(b.profile.device_tasks.graph_launched[k], 1);
    EXPECT_EQ(g.LauncherOf(k), static_cast<int32_t>(gl));
    EXPECT_EQ(g.OperatorOf(k), static_cast<int32_t>(fwd));
  }
  EXPECT_FALSE(g.IsGraphLaunched(k3));
  EXPECT_EQ(g.stats().graph_launches, 1u);
  EXPECT_EQ(g.stats().graph_launched_tasks, 3u);
  EXPECT_EQ(g.TasksLaunchedBy(gl).size(), 3u);
  EXPECT_EQ(g.TasksOfOp(fwd).size(), 4u);
}

TEST(Linking, AscendTasksOnlyNeedNoLinks) {
  ProfileBuilder b;
  uint32_t s1 = b.Stream(0, 1);
  uint32_t s2 = b.Stream(0, 2);
  b.Task(s1, "MatMul", 0, 100, kNoId, DeviceTaskKind::kKernel, kNoId, "AI_CORE");
  b.Task(s2, "MatMul", 50, 100, kNoId, DeviceTaskKind::kKernel, kNoId, "AI_CORE");
  b.Task(s1, "Add", 200, 100, kNoId, DeviceTaskKind::kKernel, kNoId, "AI_VECTOR_CORE");
  OperatorCallGraph g = BuildOrDie(b.profile);
  EXPECT_EQ(g.stats().tasks_without_correlation, 3u);
  EXPECT_EQ(g.stats().tasks_unattributed, 3u);
  EXPECT_EQ(g.OpCount(), 3u);  // device-only: one operator per compute task
  ASSERT_EQ(g.Steps().size(), 1u);
  EXPECT_EQ(g.Steps()[0].source, "whole window");
  EXPECT_EQ(g.Steps()[0].device_start, 0);
  EXPECT_EQ(g.Steps()[0].device_end, 300);
  EXPECT_EQ(g.Steps()[0].latency_ns(), 300);
  // AI_CORE: [0,100] ∪ [50,150] = 150 ns; AI_VECTOR_CORE 100 ns; device busy 250 ns; window 300 ns.
  std::vector<BusyTime> cores = g.AiCoreUtilization();
  ASSERT_EQ(cores.size(), 2u);
  std::map<std::string, BusyTime> by_label;
  for (const BusyTime& c : cores) by_label[c.label] = c;
  EXPECT_EQ(by_label["AI_CORE"].busy_ns, 150);
  EXPECT_EQ(by_label["AI_CORE"].task_sum_ns, 200);
  EXPECT_EQ(by_label["AI_CORE"].task_count, 2u);
  EXPECT_DOUBLE_EQ(by_label["AI_CORE"].share, 150.0 / 250.0);
  EXPECT_DOUBLE_EQ(by_label["AI_CORE"].utilization, 150.0 / 300.0);
  EXPECT_EQ(by_label["AI_VECTOR_CORE"].busy_ns, 100);
  EXPECT_DOUBLE_EQ(by_label["AI_VECTOR_CORE"].share, 100.0 / 250.0);
}

// The per-window busy time starts its scan by binary search (the latest end so
// far of each device's rows): on rows made to defeat it (a long row that
// starts first and spans every window, zero-length rows on window edges, rows
// sharing a start) every window gives what the plain rule gives, worked here
// directly: the union of the rows clipped to the window, rows counted when the
// clipped part is non-empty or is a zero-length row starting inside it.
TEST(DeviceBusyTimes, EveryWindowMatchesTheClippedUnionOfItsRows) {
  ProfileBuilder b;
  const uint32_t d1a = b.Stream(1, 0), d1b = b.Stream(1, 1), d2 = b.Stream(2, 0);
  struct Row { uint32_t stream; TimeNs ts, dur; };
  const std::vector<Row> rows = {
      {d1a, 0, 1000},  // spans every window below
      {d1a, 100, 50}, {d1b, 120, 0}, {d1b, 200, 0}, {d1a, 200, 100}, {d1b, 200, 30},
      {d1a, 450, 10}, {d1b, 600, 400}, {d2, 50, 20}, {d2, 300, 0}, {d2, 300, 300}, {d2, 900, 5},
  };
  for (const Row& r : rows) b.Task(r.stream, "k", r.ts, r.dur);
  OperatorCallGraph g = BuildOrDie(b.profile);
  const std::vector<TimeNs> edges = {0, 50, 100, 120, 150, 200, 230, 300, 450, 460, 600, 900, 905, 1000, 1100};
  for (TimeNs start : edges) {
    for (TimeNs end : edges) {
      if (end < start) continue;
      std::map<int32_t, std::pair<uint64_t, std::vector<std::pair<TimeNs, TimeNs>>>> expected;
      for (const Row& r : rows) {
        const TimeNs s = std::max(r.ts, start), e = std::min(r.ts + r.dur, end);
        if (e < s || (e == s && (r.ts < start || r.ts >= end))) continue;
        auto& [count, parts] = expected[b.profile.tracks.device[r.stream]];
        ++count;
        parts.push_back({s, e});
      }
      std::map<int32_t, std::pair<uint64_t, TimeNs>> got;
      for (const BusyTime& busy : g.DeviceBusyTimes(TimeWindow{start, end}))
        got[busy.device] = {busy.task_count, busy.busy_ns};
      ASSERT_EQ(got.size(), expected.size()) << "window [" << start << ", " << end << "]";
      for (auto& [device, entry] : expected) {
        auto& [count, parts] = entry;
        std::sort(parts.begin(), parts.end());
        TimeNs union_ns = 0, reach = std::numeric_limits<TimeNs>::min();
        for (auto [s, e] : parts) {
          if (e <= reach) continue;
          union_ns += e - std::max(s, reach);
          reach = e;
        }
        EXPECT_EQ(got[device].first, count) << "device " << device << " window [" << start << ", " << end << "]";
        EXPECT_EQ(got[device].second, union_ns) << "device " << device << " window [" << start << ", " << end << "]";
      }
    }
  }
}

TEST(Utilization, OneFigureOverComputeUnits) {
  ProfileBuilder b;
  uint32_t s1 = b.Stream(0, 1);
  uint32_t s2 = b.Stream(0, 2);
  uint32_t s3 = b.Stream(1, 1);
  b.Task(s1, "MatMul", 0, 100, kNoId, DeviceTaskKind::kKernel, kNoId, "AI_CORE");
  b.Task(s2, "Add", 50, 100, kNoId, DeviceTaskKind::kKernel, kNoId, "AI_VECTOR_CORE");
  b.Task(s1, "Unique", 300, 100, kNoId, DeviceTaskKind::kKernel, kNoId, "AI_CPU");  // not a compute unit
  b.Task(s2, "copy", 200, 100, kNoId, DeviceTaskKind::kMemcpy);                   // not a compute unit
  b.Task(s3, "MatMul", 0, 400, kNoId, DeviceTaskKind::kKernel, kNoId, "AI_CORE");
  OperatorCallGraph g = BuildOrDie(b.profile);
  // Window [0, 400]: device 0 compute busy [0,150] = 150 ns, device 1 400 ns; (150 + 400) / (2 x 400).
  EXPECT_DOUBLE_EQ(g.ComputeUnitUtilization(), 550.0 / 800.0);
  // A window of its own: [100, 200] -> device 0 [100,150] = 50, device 1 100; (50 + 100) / (2 x 100).
  EXPECT_DOUBLE_EQ(g.ComputeUnitUtilization(TimeWindow{100, 200}), 150.0 / 200.0);
  ProfileBuilder empty;
  empty.Task(empty.Stream(0, 1), "copy", 0, 100, kNoId, DeviceTaskKind::kMemcpy);
  EXPECT_DOUBLE_EQ(BuildOrDie(empty.profile).ComputeUnitUtilization(), 0.0);
}

TEST(Steps, FromProfilerStepAnnotations) {
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 7);
  b.Annotation(t, "ProfilerStep#4", 1'000'000, 1'000'000);
  b.Annotation(t, "ProfilerStep#3", 0, 1'000'000);
  b.Runtime(t, "cudaLaunchKernel", 900'000, 10'000, 1);
  b.Kernel(s, "late", 1'100'000, 100'000, 1);          // launched in step 3, runs in step 4's time
  b.Runtime(t, "cudaLaunchKernel", 1'500'000, 10'000, 2);
  b.Kernel(s, "k", 1'510'000, 100'000, 2);
  b.Task(s, "ProfilerStep#3", 0, 1'000'000, kNoId, DeviceTaskKind::kAnnotation);  // not work
  OperatorCallGraph g = BuildOrDie(b.profile);
  const std::vector<StepInfo>& steps = g.Steps();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].number, 3);
  EXPECT_EQ(steps[0].source, "ProfilerStep annotation");
  EXPECT_EQ(steps[0].cpu.start, 0);
  EXPECT_EQ(steps[0].cpu.end, 1'000'000);
  EXPECT_EQ(steps[0].device_start, 1'100'000);
  EXPECT_EQ(steps[0].device_end, 1'200'000);
  EXPECT_EQ(steps[0].device_task_count, 1u);
  EXPECT_EQ(steps[0].latency_ns(), 1'200'000);
  EXPECT_EQ(steps[1].number, 4);
  EXPECT_EQ(steps[1].device_start, 1'510'000);
  EXPECT_EQ(steps[1].device_end, 1'610'000);
  // Step 3's kernel ran until 1.2 ms, into step 4's host span [1.0, 2.0] ms:
  // step 4's own time starts there (0.8 ms), so 3 + 4 = the 2.0 ms window.
  EXPECT_EQ(steps[1].period_start, 1'200'000);
  EXPECT_EQ(steps[1].latency_ns(), 800'000);
}

TEST(Steps, HostRunningAheadIsNotCountedTwice) {
  // The host launches each step's 250 µs kernel and moves on: step 1 [0,100]
  // µs launches k1 [50,300], step 2 [100,200] launches k2 [300,550], step 3
  // [200,300] launches k3 [550,800]. Spans from start to last kernel end
  // would be 300 + 450 + 600 = 1350 µs in an 800 µs profile. Each step's
  // time starts when the previous step's device work ends: 300, 250, 250 =
  // 800 µs, the device's iteration period after the first.
  ProfileBuilder b;
  uint32_t t = b.Thread();
  uint32_t s = b.Stream(0, 7);
  constexpr TimeNs us = 1000;
  for (int i = 0; i < 3; ++i) {
    b.Annotation(t, "ProfilerStep#" + std::to_string(i + 1), i * 100 * us, 100 * us);
    b.Runtime(t, "cudaLaunchKernel", i * 100 * us + 10 * us, 10 * us, i + 1);
    b.Kernel(s, "k", (i == 0 ? 50 : 300 + (i - 1) * 250) * us, 250 * us, i + 1);
  }
  OperatorCallGraph g = BuildOrDie(b.profile);
  const std::vector<StepInfo>& steps = g.Steps();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].latency_ns(), 300 * us);
  EXPECT_EQ(steps[1].latency_ns(), 250 * us);
  EXPECT_EQ(steps[2].latency_ns(), 250 * us);
  TimeNs sum = 0;
  for (const StepInfo& step : steps) sum += step.latency_ns();
  EXPECT_EQ(sum, 800 * us);  // the window: first start to last kernel end
  // Per-step busy time over the steps' spans: each kernel once, 3 x 250 µs =
  // the profile's 750 µs. Over spans from each step's start to its last
  // kernel's end it was 250 + 450 + 600 = 1300 µs (k1 in all three).
  TimeNs busy = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i > 0) EXPECT_GE(steps[i].span().start, steps[i - 1].span().end);
    for (const BusyTime& device : g.DeviceBusyTimes(steps[i].span())) busy += device.busy_ns;
  }
  EXPECT_EQ(busy, 750 * us);
}

TEST(Steps, ProfileStepTableWinsAndWholeWindowIsTheFallback) {
  ProfileBuilder b;
  uint32_t t = b.Thread();
  b.Annotation(t, "ProfilerStep#1", 0, 1'000);
  b.Op(t, "aten::add", 5'000, 1'000);
  {
    OperatorCallGraph g = BuildOrDie(b.profile);
    ASSERT_EQ(g.Steps().size(), 1u);
    EXPECT_EQ(g.Steps()[0].number, 1);
  }
  StepRow row;
  row.number = 9;
  row.ts = 0;
  row.dur = 6'000;
  row.source = b.profile.Intern("step_trace_time.csv");
  b.profile.steps.rows.push_back(row);
  OperatorCallGraph g = BuildOrDie(b.profile);
  ASSERT_EQ(g.Steps().size(), 1u);
  EXPECT_EQ(g.Steps()[0].number, 9);
  EXPECT_EQ(g.Steps()[0].source, "step_trace_time.csv");
  EXPECT_EQ(g.Steps()[0].latency_ns(), 6'000);

  ProfileBuilder plain;
  plain.Op(plain.Thread(), "aten::add", 5'000, 1'000);
  plain.Op(plain.Thread(), "aten::mul", 7'000, 1'000);
  GraphOptions host_only;
  host_only.cpu_ops_as_device_tasks = false;  // no CPU compute tasks: no device time at all
  auto built = OperatorCallGraph::Build(plain.profile, host_only);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  OperatorCallGraph whole = std::move(*built);
  ASSERT_EQ(whole.Steps().size(), 1u);
  EXPECT_EQ(whole.Steps()[0].source, "whole window");
  EXPECT_EQ(whole.Steps()[0].cpu.start, 5'000);
  EXPECT_EQ(whole.Steps()[0].cpu.end, 8'000);
  EXPECT_EQ(whole.Steps()[0].device_start, kNoTime);
}

// CPU-only profiles: the outermost operator doing its own work is a compute
// task of a "cpu" device, linked to that operator.
TEST(CpuComputeTasks, OutermostOperatorDoingItsOwnWork) {
  ProfileBuilder b;
  uint32_t th = b.Thread();
  b.Op(th, "aten::linear", 0, 1'000'000);             // all its time inside aten::mm
  b.Op(th, "aten::t", 10'000, 20'000);                // leaf
  uint32_t mm = b.Op(th, "aten::mm", 40'000, 950'000); // its own GEMM around a tiny resolve_conj
  b.Op(th, "aten::resolve_conj", 50'000, 5'000);
  b.Op(th, "aten::add", 2'000'000, 100'000);          // leaf
  OperatorCallGraph g = BuildOrDie(b.profile);
  const DeviceTaskTable& d = b.profile.device_tasks;
  ASSERT_EQ(d.size(), 3u);
  std::vector<std::string> names;
  for (size_t t = 0; t < d.size(); ++t) names.emplace_back(b.profile.Str(d.name[t]));
  EXPECT_EQ(names, (std::vector<std::string>{"aten::t", "aten::mm", "aten::add"}));
  EXPECT_EQ(g.OperatorOf(1), static_cast<int32_t>(mm));
  EXPECT_EQ(g.stats().cpu_compute_tasks, 3u);
  ASSERT_EQ(b.profile.devices.size(), 1u);
  EXPECT_EQ(b.profile.devices.rows[0].kind, DeviceKind::kCpu);
  EXPECT_EQ(g.Steps()[0].device_start, 10'000);
  EXPECT_GT(g.TotalDeviceBusyNs(), 0);
}

TEST(BusyTime, UnionAcrossOverlappingStreams) {
  ProfileBuilder b;
  uint32_t s7 = b.Stream(0, 7);
  uint32_t s8 = b.Stream(0, 8);
  uint32_t other = b.Stream(1, 7);
  b.Kernel(s7, "a", 0, 100);
  b.Kernel(s7, "b", 120, 30);
  b.Kernel(s8, "c", 100, 100);
  b.Task(s8, "Memcpy DtoD", 150, 100, kNoId, DeviceTaskKind::kMemcpy);
  b.Task(s7, "Stream Sync", 0, 1'000, kNoId, DeviceTaskKind::kSync);      // excluded
  b.Task(s7, "ProfilerStep#1", 0, 1'000, kNoId, DeviceTaskKind::kAnnotation);  // excluded
  b.Kernel(other, "d", 500, 100);
  OperatorCallGraph g = BuildOrDie(b.profile);
  // Device 0: [0,100] ∪ [120,150] ∪ [100,200] ∪ [150,250] = [0,250]; window [0,1000].
  std::vector<BusyTime> devices = g.DeviceBusyTimes();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].device, 0);
  EXPECT_EQ(devices[0].busy_ns, 250);
  EXPECT_EQ(devices[0].task_sum_ns, 330);
  EXPECT_EQ(devices[0].task_count, 4u);
  EXPECT_DOUBLE_EQ(devices[0].utilization, 0.25);
  EXPECT_EQ(devices[1].busy_ns, 100);
  EXPECT_EQ(g.TotalDeviceBusyNs(), 350);
  // Streams: 7 -> 130 ns, 8 -> [100,250] = 150 ns.
  std::vector<BusyTime> streams = g.StreamBusyTimes();
  ASSERT_EQ(streams.size(), 3u);
  EXPECT_EQ(streams[0].stream, 7);
  EXPECT_EQ(streams[0].busy_ns, 130);
  EXPECT_EQ(streams[1].stream, 8);
  EXPECT_EQ(streams[1].busy_ns, 150);
  // A window clips: [50,150] on device 0 -> [50,150] fully covered = 100 ns.
  std::vector<BusyTime> clipped = g.DeviceBusyTimes(TimeWindow{50, 150});
  ASSERT_EQ(clipped.size(), 1u);
  EXPECT_EQ(clipped[0].busy_ns, 100);
  EXPECT_DOUBLE_EQ(clipped[0].utilization, 1.0);

  std::vector<DeviceTaskAggregate> top = g.TopDeviceTasksByTotalTime(2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(b.profile.Str(top[0].name), "a");  // 100 ns, ties broken by name id (a before c)
  EXPECT_EQ(top[0].total_ns, 100);
  EXPECT_DOUBLE_EQ(top[0].share_of_busy, 100.0 / 350.0);
  std::vector<DeviceTaskKindTotal> kinds = g.DeviceTaskKindTotals();
  ASSERT_EQ(kinds.size(), 4u);  // kernel, memcpy, sync, annotation
  EXPECT_EQ(kinds[0].kind, DeviceTaskKind::kKernel);
  EXPECT_EQ(kinds[0].count, 4u);
  EXPECT_EQ(kinds[0].total_ns, 330);
  EXPECT_EQ(kinds[1].kind, DeviceTaskKind::kMemcpy);
  EXPECT_EQ(kinds[1].total_ns, 100);
}

TEST(BusyTime, KindSharesCountNestedRowsOnce) {
  // A collective's span [0,100] with its HCCL sub-tasks [10,40] and [50,90]
  // (the DB writes both), a second "Notify Wait" [20,35] on another plane at
  // the same time, then a kernel [100,150] on another stream. Device busy =
  // 150. Communication: total 100 + 30 + 40 + 15 = 185 (summed), busy 100
  // (the union) -> 100/150 = 66.7 %; kernel 50/150 = 33.3 %. Summed, the
  // collective read 123 % of the busy time. "Notify Wait": total 45, busy 30
  // ([10,40] covers [20,35]) -> 20 %.
  ProfileBuilder b;
  uint32_t hccl = b.Stream(0, 2);
  uint32_t compute = b.Stream(0, 7);
  b.Task(hccl, "hcom_allReduce_", 0, 100, kNoId, DeviceTaskKind::kCommunication);
  b.Task(hccl, "Notify Wait", 10, 30, kNoId, DeviceTaskKind::kCommunication);
  b.Task(hccl, "SDMA", 50, 40, kNoId, DeviceTaskKind::kCommunication);
  b.Task(b.Stream(0, 3), "Notify Wait", 20, 15, kNoId, DeviceTaskKind::kCommunication);
  b.Kernel(compute, "MatMul", 100, 50);
  OperatorCallGraph g = BuildOrDie(b.profile);
  std::map<DeviceTaskKind, DeviceTaskKindTotal> by_kind;
  for (const DeviceTaskKindTotal& k : g.DeviceTaskKindTotals()) by_kind[k.kind] = k;
  EXPECT_EQ(by_kind[DeviceTaskKind::kCommunication].total_ns, 185);
  EXPECT_EQ(by_kind[DeviceTaskKind::kCommunication].busy_ns, 100);
  EXPECT_NEAR(by_kind[DeviceTaskKind::kCommunication].share_of_busy, 100.0 / 150.0, 1e-12);
  EXPECT_EQ(by_kind[DeviceTaskKind::kKernel].busy_ns, 50);
  EXPECT_NEAR(by_kind[DeviceTaskKind::kKernel].share_of_busy, 50.0 / 150.0, 1e-12);
  bool found = false;
  for (const DeviceTaskAggregate& a : g.TopDeviceTasksByTotalTime(0)) {
    if (b.profile.Str(a.name) != "Notify Wait") continue;
    found = true;
    EXPECT_EQ(a.count, 2u);
    EXPECT_EQ(a.total_ns, 45);
    EXPECT_EQ(a.busy_ns, 30);
    EXPECT_NEAR(a.share_of_busy, 30.0 / 150.0, 1e-12);
  }
  EXPECT_TRUE(found);
}

TEST(BusyTime, NameAndKindUnionsArePerDeviceThenSummed) {
  // "gemm" on device 0 at [0,100] and [50,150] (two streams, overlapping) and
  // on device 1 at [0,100], added out of time order: busy = union per device,
  // summed = 150 + 100 = 250 ns (total 300). "copy" on device 1 at [200,230]
  // is a memcpy: 30 ns; the kernel kind's busy equals gemm's, 250 ns.
  ProfileBuilder b;
  b.Kernel(b.Stream(1, 7), "gemm", 0, 100);
  b.Kernel(b.Stream(0, 8), "gemm", 50, 100);
  b.Kernel(b.Stream(0, 7), "gemm", 0, 100);
  b.Task(b.Stream(1, 7), "copy", 200, 30, kNoId, DeviceTaskKind::kMemcpy);
  OperatorCallGraph g = BuildOrDie(b.profile);
  std::map<std::string, DeviceTaskAggregate> by_name;
  for (const DeviceTaskAggregate& a : g.TopDeviceTasksByTotalTime(0)) by_name[std::string(b.profile.Str(a.name))] = a;
  EXPECT_EQ(by_name["gemm"].total_ns, 300);
  EXPECT_EQ(by_name["gemm"].busy_ns, 250);
  EXPECT_EQ(by_name["copy"].busy_ns, 30);
  std::map<DeviceTaskKind, DeviceTaskKindTotal> by_kind;
  for (const DeviceTaskKindTotal& k : g.DeviceTaskKindTotals()) by_kind[k.kind] = k;
  EXPECT_EQ(by_kind[DeviceTaskKind::kKernel].busy_ns, 250);
  EXPECT_EQ(by_kind[DeviceTaskKind::kMemcpy].busy_ns, 30);
}

TEST(Build, EmptyProfileAndBadColumns) {
  Profile empty;
  StatusOr<OperatorCallGraph> g = OperatorCallGraph::Build(empty);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->Steps().size(), 1u);
  EXPECT_TRUE(g->DeviceBusyTimes().empty());
  StatusOr<TimeNs> latency = g->CriticalPathLatency();
  ASSERT_TRUE(latency.ok());
  EXPECT_EQ(*latency, 0);

  ProfileBuilder b;
  b.Op(b.Thread(), "x", 0, 10);
  b.profile.host_ops.dur.pop_back();
  EXPECT_FALSE(OperatorCallGraph::Build(b.profile).ok());
}

// Times no one clock of a profile gives are refused with the reason, before any
// figure subtracts them (UBSan found end - start overflowing on a fuzzed pypto
// database: a task at -7.7e18 ns and one at 1.7e18 ns).
TEST(Build, TimesSpanningMoreThanThirtyDaysOrEndingPastInt64AreRefused) {
  ProfileBuilder mixed;
  const uint32_t s = mixed.Stream(0, 7);
  mixed.Task(s, "k", -7'710'444'037'034'999'937, 1000);
  mixed.Task(s, "k", 1'736'410'576'395'017'500, 1000);
  StatusOr<OperatorCallGraph> g = OperatorCallGraph::Build(mixed.profile);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(g.status().message().find("more than 30 days"), std::string::npos) << g.status().ToString();

  // 31 days between two rows: refused; 29 days: a (long) profile, accepted.
  constexpr TimeNs kDay = 86'400'000'000'000;
  ProfileBuilder long_gap;
  const uint32_t s2 = long_gap.Stream(0, 7);
  long_gap.Task(s2, "k", 0, 1000);
  long_gap.Task(s2, "k", 31 * kDay, 1000);
  EXPECT_FALSE(OperatorCallGraph::Build(long_gap.profile).ok());
  ProfileBuilder ok_gap;
  const uint32_t s3 = ok_gap.Stream(0, 7);
  ok_gap.Task(s3, "k", 0, 1000);
  ok_gap.Task(s3, "k", 29 * kDay, 1000);
  EXPECT_TRUE(OperatorCallGraph::Build(ok_gap.profile).ok());

  ProfileBuilder past_end;
  past_end.Task(past_end.Stream(0, 7), "k", INT64_MAX - 10, 1000);
  StatusOr<OperatorCallGraph> e = OperatorCallGraph::Build(past_end.profile);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("ends past the largest int64"), std::string::npos) << e.status().ToString();
}

}  // namespace
}  // namespace pypto
