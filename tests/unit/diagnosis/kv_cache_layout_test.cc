// Detector 3 (kv_cache_layout) on the synthetic decode profile: a cache grown by aten::cat every step.
#include <gtest/gtest.h>

#include "analysis/detector.h"
#include "unit/diagnosis/diagnosis_test_helpers.h"

namespace pypto {
namespace {

using testing::RunSpec;

TEST(KvCacheLayout, CatGrownCacheFeedingAttentionIsFound) {
  testing::DecodeSpec s;
  s.kv_cat = true;
  DiagnosticReport r = RunSpec(s, "kv_cache_layout");
  ASSERT_EQ(r.issues.size(), 1u);
  const Issue& i = r.issues[0];
  EXPECT_EQ(i.op_name, "aten::cat");
  EXPECT_EQ(i.evidence.count, 24u);  // K and V x 4 layers x 3 steps
  // Cache [1,32,1023..1025,128] bf16: 2 x bytes per call.
  double expected = 0;
  for (int step = 0; step < 3; ++step) expected += 8 * 2.0 * 32 * (1023 + step) * 128 * 2;
  for (const Metric& m : i.evidence.metrics)
    if (m.name == "needless_bytes_total") EXPECT_DOUBLE_EQ(m.value, expected);
  EXPECT_NE(i.detail.find("1023 -> 1025"), std::string::npos) << i.detail;
  EXPECT_TRUE(RunSpec(testing::DecodeSpec{}, "kv_cache_layout").issues.empty());
}

}  // namespace
}  // namespace pypto
