// The graph on real Kineto traces (fixtures shared next to the repository).
// Expected figures were counted from the raw JSON with a python one-off:
// gzip.open + json.load, then for "X" events: runtime calls (cat cuda_runtime /
// cuda_driver) indexed by args.correlation, kernels (cat "kernel") counted as
// linked when their args.correlation is in that index.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "graph/call_graph.h"
#include "importers/detect.h"

namespace pypto {
namespace {

const std::string kFixtures = PYPTO_FIXTURES_DIR;

// HTA's critical-path example (79 kernels, no ProfilerStep), used by several tests.
const std::string kSimpleAddTrace = "kineto/hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz";

bool FixtureMissing(const std::string& relative) { return !std::filesystem::exists(kFixtures + "/" + relative); }

StatusOr<Profile> LoadFixture(const std::string& relative) {
  return LoadProfile(kFixtures + "/" + relative);
}

// A fixture's profile and call graph; the profile lives on the heap because
// the graph keeps a pointer to it. Null members (and a test failure) when the
// fixture does not load or the graph does not build.
struct FixtureGraph {
  std::unique_ptr<Profile> profile;
  std::unique_ptr<OperatorCallGraph> graph;
};

FixtureGraph LoadGraph(const std::string& relative) {
  FixtureGraph out;
  StatusOr<Profile> profile = LoadFixture(relative);
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  if (!profile.ok()) return out;
  out.profile = std::make_unique<Profile>(std::move(profile).value());
  StatusOr<OperatorCallGraph> graph = OperatorCallGraph::Build(*out.profile);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  if (graph.ok()) out.graph = std::make_unique<OperatorCallGraph>(std::move(graph).value());
  return out;
}

uint64_t CountKind(const Profile& p, DeviceTaskKind kind, bool with_launcher) {
  uint64_t n = 0;
  for (size_t t = 0; t < p.device_tasks.size(); ++t) {
    if (p.device_tasks.kind[t] == kind && (!with_launcher || p.device_tasks.launcher[t] >= 0)) ++n;
  }
  return n;
}

TEST(KinetoFixture, HtaSimpleAddA100AllKernelsLinked) {
  const std::string& path = kSimpleAddTrace;
  if (FixtureMissing(path)) GTEST_SKIP() << "fixture missing";
  const FixtureGraph loaded = LoadGraph(path);
  ASSERT_TRUE(loaded.graph);
  const OperatorCallGraph& g = *loaded.graph;
  const Profile* profile = loaded.profile.get();
  // python: 79 "kernel" events, all 79 with a runtime partner; 359 cpu_op.
  EXPECT_EQ(CountKind(*profile, DeviceTaskKind::kKernel, false), 79u);
  EXPECT_EQ(CountKind(*profile, DeviceTaskKind::kKernel, true), 79u);
  EXPECT_EQ(g.OpCount(), 359u);
  // python: memcpy 16 + memset 3 also all linked; no graph launches; no ProfilerStep.
  EXPECT_EQ(CountKind(*profile, DeviceTaskKind::kMemcpy, true), 16u);
  EXPECT_EQ(CountKind(*profile, DeviceTaskKind::kMemset, true), 3u);
  EXPECT_EQ(g.stats().graph_launched_tasks, 0u);
  ASSERT_EQ(g.Steps().size(), 1u);
  EXPECT_EQ(g.Steps()[0].source, "whole window");
  // Every linked kernel has an operator (its launch lies inside an aten op).
  for (size_t t = 0; t < profile->device_tasks.size(); ++t) {
    if (profile->device_tasks.kind[t] == DeviceTaskKind::kKernel) {
      EXPECT_NE(g.OperatorOf(static_cast<uint32_t>(t)), kNoIndex) << "task " << t;
    }
  }
  // The critical path is a consistent chain within the window.
  StatusOr<CriticalPath> critical = g.ComputeCriticalPath(size_t{0});
  ASSERT_TRUE(critical.ok());
  TimeNs sum = 0;
  for (const PathSegment& s : critical->segments) sum += s.dur;
  EXPECT_EQ(sum, critical->latency_ns);
  EXPECT_GT(critical->latency_ns, 0);
  EXPECT_LE(critical->latency_ns, g.WholeWindow().duration());
  EXPECT_EQ(critical->dropped_nodes, 0u);
}

TEST(KinetoFixture, TraceLensMi300xSglangGraphLaunch) {
  const std::string path = "kineto/tracelens_mi300x_sglang_qwen3_8b_decode/sglang_Qwen3-8B_decode.json.gz";
  if (FixtureMissing(path)) GTEST_SKIP() << "fixture missing";
  const FixtureGraph loaded = LoadGraph(path);
  ASSERT_TRUE(loaded.graph);
  const OperatorCallGraph& g = *loaded.graph;
  const Profile* profile = loaded.profile.get();
  // python: 555 kernels, all with a runtime partner; 544 share the correlation
  // (92178) of the single hipGraphLaunch; 11 come from ordinary launches.
  EXPECT_EQ(CountKind(*profile, DeviceTaskKind::kKernel, false), 555u);
  EXPECT_EQ(CountKind(*profile, DeviceTaskKind::kKernel, true), 555u);
  EXPECT_EQ(g.stats().graph_launches, 1u);
  EXPECT_EQ(g.stats().graph_launched_tasks, 544u);
  // python: no cpu_op encloses the hipGraphLaunch; the innermost enclosing
  // user_annotation is "step[DECODE bs=32]", so the replayed kernels go there.
  const Profile& p = *profile;
  for (size_t t = 0; t < p.device_tasks.size(); ++t) {
    if (!g.IsGraphLaunched(static_cast<uint32_t>(t))) continue;
    const int32_t op = g.OperatorOf(static_cast<uint32_t>(t));
    ASSERT_NE(op, kNoIndex);
    EXPECT_EQ(p.Str(p.host_ops.name[op]), "step[DECODE bs=32]");
    EXPECT_EQ(p.Str(p.host_ops.name[g.LauncherOf(static_cast<uint32_t>(t))]), "hipGraphLaunch");
  }
  StatusOr<TimeNs> latency = g.CriticalPathLatency();
  ASSERT_TRUE(latency.ok());
  EXPECT_GT(*latency, 0);
  EXPECT_LE(*latency, g.WholeWindow().duration());
}

// Every step's path computed together (several threads, one step's DAG each)
// is exactly the path --step N computes on its own, and the segments of a kept
// path add up to what the totals say.
TEST(KinetoFixture, EveryStepPathEqualsEachStepOnItsOwn) {
  for (const std::string path : {"kineto/hta_trace_diff_control_a100_2022/control.json.gz",
                                  "kineto/hta_nccl_2rank_a100_2024/nccl_data.json.gz"}) {
    if (FixtureMissing(path)) GTEST_SKIP() << "fixture missing";
    const FixtureGraph loaded = LoadGraph(path);
    ASSERT_TRUE(loaded.graph);
    const OperatorCallGraph& g = *loaded.graph;
    ASSERT_GE(g.Steps().size(), 3u) << path;
    EXPECT_TRUE(g.HasSeparateHostSteps()) << path;
    const std::vector<CriticalPath> every = g.ComputeEveryStepCriticalPathTotals();
    ASSERT_EQ(every.size(), g.Steps().size());
    for (size_t i = 0; i < every.size(); ++i) {
      StatusOr<CriticalPath> one = g.ComputeCriticalPath(i);
      ASSERT_TRUE(one.ok());
      EXPECT_EQ(every[i].latency_ns, one->latency_ns) << path << " step " << i;
      EXPECT_EQ(every[i].breakdown_ns, one->breakdown_ns) << path << " step " << i;
      EXPECT_EQ(every[i].segment_count, one->segments.size()) << path << " step " << i;
      EXPECT_EQ(every[i].nodes, one->nodes);
      EXPECT_EQ(every[i].edges, one->edges);
      EXPECT_TRUE(every[i].segments.empty());
      TimeNs sum = 0;
      for (const PathSegment& s : one->segments) sum += s.dur;
      EXPECT_EQ(sum, one->latency_ns);
      // A step's path lies inside the profile.
      EXPECT_GE(one->path_start, g.WholeWindow().start);
      EXPECT_LE(one->path_end, g.WholeWindow().end);
    }
  }
}

// DeviceSelfTime (summed on demand from the op's tasks) and the per-name
// device time of TopHostOpsBySelfTime agree with a direct sum over the tasks.
// A trace without ProfilerStep marks is one step, the whole window; that
// step's path is the whole profile's (the last instant included), so the
// summary's path and the diagnosis' step path are one computation. Expected:
// the path computed on its own with segments, whose durations add up to it.
TEST(KinetoFixture, WholeWindowStepPathIsTheProfilesPath) {
  for (const std::string path : {kSimpleAddTrace, std::string("kineto/tracelens_mi300x_sglang_qwen3_8b_decode")}) {
    if (FixtureMissing(path)) GTEST_SKIP() << "fixture missing";
    const FixtureGraph loaded = LoadGraph(path);
    ASSERT_TRUE(loaded.graph) << path;
    const OperatorCallGraph& g = *loaded.graph;
    ASSERT_EQ(g.Steps().size(), 1u) << path;
    ASSERT_EQ(g.Steps()[0].source, "whole window") << path;
    StatusOr<CriticalPath> whole = g.ComputeCriticalPath();  // segments kept: not from the totals cache
    ASSERT_TRUE(whole.ok());
    TimeNs sum = 0;
    for (const PathSegment& s : whole->segments) sum += s.dur;
    EXPECT_EQ(sum, whole->latency_ns) << path;
    for (int call = 0; call < 2; ++call) {  // the second call is answered from the cache
      const std::vector<CriticalPath> step = g.ComputeStepCriticalPathTotals({0});
      ASSERT_EQ(step.size(), 1u);
      EXPECT_EQ(step[0].latency_ns, whole->latency_ns) << path;
      EXPECT_EQ(step[0].breakdown_ns, whole->breakdown_ns) << path;
      EXPECT_EQ(step[0].segment_count, whole->segments.size()) << path;
      StatusOr<CriticalPath> totals = g.ComputeCriticalPathTotals();
      ASSERT_TRUE(totals.ok());
      EXPECT_EQ(totals->latency_ns, whole->latency_ns) << path;
    }
  }
}

TEST(KinetoFixture, DeviceSelfTimeIsTheSumOfTheOpsTasks) {
  const std::string& path = kSimpleAddTrace;
  if (FixtureMissing(path)) GTEST_SKIP() << "fixture missing";
  const FixtureGraph loaded = LoadGraph(path);
  ASSERT_TRUE(loaded.graph);
  const OperatorCallGraph& g = *loaded.graph;
  const Profile* profile = loaded.profile.get();
  const DeviceTaskTable& d = profile->device_tasks;
  std::vector<TimeNs> expected(profile->host_ops.size(), 0);
  TimeNs all = 0;
  for (size_t t = 0; t < d.size(); ++t) {
    if (g.OperatorOf(t) < 0 || d.kind[t] == DeviceTaskKind::kAnnotation || d.kind[t] == DeviceTaskKind::kSync) continue;
    expected[g.OperatorOf(t)] += d.dur[t];
    all += d.dur[t];
  }
  ASSERT_GT(all, 0);
  for (size_t op = 0; op < expected.size(); ++op) EXPECT_EQ(g.DeviceSelfTime(op), expected[op]) << op;
  TimeNs by_name = 0;
  for (const HostOpAggregate& a : g.TopHostOpsBySelfTime(0, HostOpKind::kOperator)) by_name += a.device_ns;
  TimeNs by_operator = 0;
  for (size_t op = 0; op < expected.size(); ++op)
    if (profile->host_ops.kind[op] == HostOpKind::kOperator) by_operator += expected[op];
  EXPECT_EQ(by_name, by_operator);
}

}  // namespace
}  // namespace pypto
