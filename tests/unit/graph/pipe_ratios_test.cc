// Pipe-ratio aggregates per op type (graph/pipe_ratios.h) on the torch_npu
// level-1 AlexNet fixture. Every expected figure was computed by hand from
// ASCEND_PROFILER_OUTPUT/kernel_details.csv with python csv.DictReader: rows
// grouped by `Type` (else `Name`), tasks counted when at least one `*_ratio`
// cell is a number, each ratio averaged as sum(ratio * Duration(us)) /
// sum(Duration(us)).
#include <gtest/gtest.h>

#include <string>

#include "graph/pipe_ratios.h"
#include "importers/detect.h"

namespace pypto {
namespace {

const std::string kFixtures = PYPTO_FIXTURES_DIR;

const PipeRatioAggregate* Find(const std::vector<PipeRatioAggregate>& rows, const std::string& op_type) {
  for (const PipeRatioAggregate& row : rows)
    if (row.op_type == op_type) return &row;
  return nullptr;
}

double Ratio(const PipeRatioAggregate& row, const std::string& key) {
  for (const PipeRatioMean& r : row.ratios)
    if (r.key == key) return r.mean;
  ADD_FAILURE() << "no ratio " << key << " for " << row.op_type;
  return -1;
}

TEST(PipeRatios, KeyRule) {
  EXPECT_TRUE(IsPipeRatioKey("aic_mac_ratio"));
  EXPECT_TRUE(IsPipeRatioKey("aiv_mte2_ratio"));
  EXPECT_FALSE(IsPipeRatioKey("aic_mac_time(us)"));
  EXPECT_FALSE(IsPipeRatioKey("_ratio"));
  EXPECT_FALSE(IsPipeRatioKey("aic_icache_miss_rate"));
}

TEST(PipeRatios, AlexNetLevel1KernelDetails) {
  auto profile = LoadProfile(kFixtures + "/ascend/pta_level1_alexnet_cann8");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  const std::vector<PipeRatioAggregate> rows = PipeRatiosByOpType(*profile);
  ASSERT_GE(rows.size(), 6u);
  // Sorted by total time: ForeachAddList 1959.079 us (3 tasks), TransData
  // 1423.202 us (57), MatMulV2 921.498 us (8), Conv2D 723.434 us (5).
  EXPECT_EQ(rows[0].op_type, "ForeachAddList");
  EXPECT_EQ(rows[1].op_type, "TransData");
  EXPECT_EQ(rows[2].op_type, "MatMulV2");
  EXPECT_EQ(rows[3].op_type, "Conv2D");

  const PipeRatioAggregate* matmul = Find(rows, "MatMulV2");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->count, 8u);
  EXPECT_NEAR(static_cast<double>(matmul->total_ns), 921498, 8);  // µs -> ns, rounding per row
  // The nine ratio columns of kernel_details.csv (CANN 8.0 header).
  EXPECT_EQ(matmul->ratios.size(), 9u);
  EXPECT_NEAR(Ratio(*matmul, "aic_mac_ratio"), 0.190891, 1e-5);
  EXPECT_NEAR(Ratio(*matmul, "aic_mte2_ratio"), 0.886516, 1e-5);
  EXPECT_NEAR(Ratio(*matmul, "aic_scalar_ratio"), 0.313168, 1e-5);
  EXPECT_NEAR(Ratio(*matmul, "aiv_vec_ratio"), 0.0, 1e-12);  // AI_CORE task: vector ratios written as 0.0

  const PipeRatioAggregate* conv = Find(rows, "Conv2D");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->count, 5u);
  EXPECT_NEAR(Ratio(*conv, "aic_mac_ratio"), 0.690846, 1e-5);

  const PipeRatioAggregate* trans = Find(rows, "TransData");
  ASSERT_NE(trans, nullptr);
  EXPECT_EQ(trans->count, 57u);
  EXPECT_NEAR(Ratio(*trans, "aiv_mte2_ratio"), 0.345989, 1e-5);
  EXPECT_NEAR(Ratio(*trans, "aiv_vec_ratio"), 0.141329, 1e-5);
}

}  // namespace
}  // namespace pypto
