// Shared statistics: expected values from printed tables.
#include "analysis/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace pypto {
namespace {

TEST(Statistics, NearestRankPercentile) {
  // 1..10: p50 = the 5th value (ceil(0.5 * 10) = 5), p90 = 9th, p99 = ceil(9.9) = 10th, p0 = the minimum.
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(NearestRankPercentile(v, 50), 5);
  EXPECT_EQ(NearestRankPercentile(v, 90), 9);
  EXPECT_EQ(NearestRankPercentile(v, 99), 10);
  EXPECT_EQ(NearestRankPercentile(v, 0), 1);
  EXPECT_EQ(NearestRankPercentile(v, 100), 10);
  EXPECT_EQ(NearestRankPercentile({7}, 50), 7);
  EXPECT_TRUE(std::isnan(NearestRankPercentile({}, 50)));
}

TEST(Statistics, StudentTAgainstTables) {
  // Two-sided critical values (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2):
  // t(0.975, 10) = 2.228, t(0.975, 1) = 12.706, t(0.995, 30) = 2.750.
  EXPECT_NEAR(StudentTTwoSidedQuantile(0.05, 10), 2.228139, 1e-6);
  EXPECT_NEAR(StudentTTwoSidedQuantile(0.05, 1), 12.706205, 1e-6);
  EXPECT_NEAR(StudentTTwoSidedQuantile(0.01, 30), 2.749996, 1e-6);
  // And back: P(|T| >= 2.228139) with 10 df is 0.05.
  EXPECT_NEAR(StudentTTwoSidedP(2.228139, 10), 0.05, 1e-6);
  EXPECT_NEAR(StudentTTwoSidedP(-2.228139, 10), 0.05, 1e-6);
  EXPECT_DOUBLE_EQ(StudentTTwoSidedP(0, 5), 1.0);
  EXPECT_EQ(StudentTTwoSidedP(std::numeric_limits<double>::infinity(), 5), 0.0);
  // Fractional df (Welch): between its neighbours (fewer df, heavier tails, larger p).
  const double p = StudentTTwoSidedP(2.0, 7.5);
  EXPECT_GT(StudentTTwoSidedP(2.0, 7), p);
  EXPECT_LT(StudentTTwoSidedP(2.0, 8), p);
}

TEST(Statistics, OutOfRangeArgumentsGiveNaNNotExceptions) {
  EXPECT_TRUE(std::isnan(StudentTTwoSidedP(1.0, 0)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedP(std::nan(""), 3)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedQuantile(0, 3)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedQuantile(1, 3)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedQuantile(0.05, -1)));
}

TEST(MedianAndRobustSigma, TheOutlierDoesNotMoveTheCentreOrTheSpread) {
  // 10, 11, 12, 13, 100: median 12; |x - 12| = 2, 1, 0, 1, 88 -> median 1; sigma 1.4826.
  RobustSpread odd = MedianAndRobustSigma({100, 10, 12, 11, 13});
  EXPECT_DOUBLE_EQ(odd.median, 12.0);
  EXPECT_DOUBLE_EQ(odd.sigma, 1.4826);
  // Even count: the mean of the two middle values. 1, 2, 4, 10: median 3; deviations 2, 1, 1, 7 ->
  // median (1 + 2) / 2 = 1.5; sigma 1.5 x 1.4826 = 2.2239.
  RobustSpread even = MedianAndRobustSigma({10, 1, 4, 2});
  EXPECT_DOUBLE_EQ(even.median, 3.0);
  EXPECT_NEAR(even.sigma, 2.2239, 1e-12);
  RobustSpread none = MedianAndRobustSigma({});
  EXPECT_TRUE(std::isnan(none.median));
  EXPECT_TRUE(std::isnan(none.sigma));
}

TEST(KolmogorovSmirnov, DistanceOfTheEmpiricalDistributionsAndItsPValue) {
  // a = 1 2 3 4, b = 3 4 5 6 (given unsorted): the ECDFs after x = 1, 2, 3, 4 are a 1/4 2/4 3/4 1 and
  // b 0 0 1/4 2/4 -> D = 0.5. n = 4 x 4 / 8 = 2; lambda = (sqrt 2 + 0.12 + 0.11 / sqrt 2) x 0.5 =
  // 0.8059977; p = 2 sum_k (-1)^(k-1) exp(-2 k^2 lambda^2) = 0.5344157 (the series summed by hand to k = 4).
  KolmogorovSmirnovTest r = KolmogorovSmirnov({4, 1, 3, 2}, {6, 3, 5, 4});
  ASSERT_TRUE(r.testable);
  EXPECT_DOUBLE_EQ(r.d, 0.5);
  EXPECT_NEAR(r.p_value, 0.5344157, 1e-6);
  EXPECT_EQ(r.n_a, 4u);
  EXPECT_EQ(r.n_b, 4u);
  // Identical samples: D = 0, lambda 0 below the series' range -> p = 1.
  KolmogorovSmirnovTest same = KolmogorovSmirnov({1, 2, 2, 3}, {3, 2, 1, 2});
  EXPECT_DOUBLE_EQ(same.d, 0.0);
  EXPECT_DOUBLE_EQ(same.p_value, 1.0);
  // Disjoint samples of 50: D = 1, lambda = (5 + 0.12 + 0.022) = 5.142 -> p = 2 exp(-52.9) ~ 2e-23.
  std::vector<double> low, high;
  for (int i = 0; i < 50; ++i) {
    low.push_back(i);
    high.push_back(100 + i);
  }
  KolmogorovSmirnovTest apart = KolmogorovSmirnov(low, high);
  EXPECT_DOUBLE_EQ(apart.d, 1.0);
  EXPECT_LT(apart.p_value, 1e-20);
  EXPECT_GT(apart.p_value, 0.0);
  EXPECT_FALSE(KolmogorovSmirnov({}, {1.0}).testable);
}

TEST(HolmAdjustedPValues, StepDownInTheInputOrder) {
  // p = 0.01, 0.04, 0.03 (m = 3). Sorted: 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04, raised to the
  // 0.06 before it. Back in the input's order: 0.03, 0.06, 0.06.
  std::vector<double> adjusted = HolmAdjustedPValues({0.01, 0.04, 0.03});
  ASSERT_EQ(adjusted.size(), 3u);
  EXPECT_NEAR(adjusted[0], 0.03, 1e-12);
  EXPECT_NEAR(adjusted[1], 0.06, 1e-12);
  EXPECT_NEAR(adjusted[2], 0.06, 1e-12);
  // Two metrics at p 0.04 each (the A/A rounds under load): each alone below 0.05, together 0.08 each.
  std::vector<double> pair = HolmAdjustedPValues({0.04, 0.04});
  EXPECT_NEAR(pair[0], 0.08, 1e-12);
  EXPECT_NEAR(pair[1], 0.08, 1e-12);
  // Capped at 1; a NaN p counts as 1; one test is left as it is; none gives none.
  std::vector<double> capped = HolmAdjustedPValues({0.6, std::nan(""), 0.001});
  EXPECT_NEAR(capped[2], 0.003, 1e-12);
  EXPECT_DOUBLE_EQ(capped[0], 1.0);
  EXPECT_DOUBLE_EQ(capped[1], 1.0);
  EXPECT_DOUBLE_EQ(HolmAdjustedPValues({0.2})[0], 0.2);
  EXPECT_TRUE(HolmAdjustedPValues({}).empty());
}

}  // namespace
}  // namespace pypto
