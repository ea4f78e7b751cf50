// The planted-profile builder itself: healthy profiles are healthy (device
// busy, no idle share), knobs change what they say they change.
#include <gtest/gtest.h>

#include "graph/call_graph.h"
#include "unit/planted/planted_profiles.h"

namespace pypto::testing {
namespace {

double IdleShare(const OperatorCallGraph& g) {
  TimeNs busy = 0, span = 0;
  for (size_t i = 0; i < g.Steps().size(); ++i) {
    const StepInfo& s = g.Steps()[i];
    span += s.latency_ns();
    for (const BusyTime& b : g.DeviceBusyTimes(TimeWindow{s.cpu.start, std::max(s.cpu.end, s.device_end)}))
      busy += b.busy_ns;
  }
  return span > 0 ? 1.0 - double(busy) / double(span) : 1.0;
}

class PlantedBuilderTest : public ::testing::TestWithParam<PlantedFlavor> {};

TEST_P(PlantedBuilderTest, HealthyDecodeIsDeviceBound) {
  PlantedFacts facts;
  Profile p = BuildPlantedProfile(HealthyKnobs(GetParam()), &facts);
  auto g = OperatorCallGraph::Build(p);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->Steps().size(), 4u);
  EXPECT_EQ(facts.steps, 4);
  // Every kernel has its launcher and operator.
  EXPECT_EQ(g->stats().tasks_attributed_by_nesting, p.device_tasks.size());
  // 1 embedding + 4 layers x 12 ops + norm + lm_head + argmax per step.
  EXPECT_EQ(p.device_tasks.size(), 4u * (1 + 4 * 12 + 3));
  EXPECT_LT(IdleShare(*g), 0.06);
}

TEST_P(PlantedBuilderTest, HostOverheadMakesTheDeviceIdle) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.host_overhead_us = 40;
  Profile p = BuildPlantedProfile(k);
  auto g = OperatorCallGraph::Build(p);
  ASSERT_TRUE(g.ok());
  EXPECT_GT(IdleShare(*g), 0.2);
}

TEST_P(PlantedBuilderTest, SyncsStallTheDevice) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.syncs_per_step = 2;
  PlantedFacts facts;
  Profile p = BuildPlantedProfile(k, &facts);
  EXPECT_EQ(facts.sync_calls, 8u);
  // idle after each sync ≥ host work after it
  EXPECT_GE(facts.sync_idle_ns, 8 * 50'000);
}

INSTANTIATE_TEST_SUITE_P(Flavors, PlantedBuilderTest,
                         ::testing::Values(PlantedFlavor::kKinetoCuda, PlantedFlavor::kAscend),
                         [](const auto& info) { return info.param == PlantedFlavor::kAscend ? "Ascend" : "KinetoCuda"; });

}  // namespace
}  // namespace pypto::testing
